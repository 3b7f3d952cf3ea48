"""Every tensor of a block from the model's own forward pass (explorer/model/trace.py) and
explorer.block_trace, against independent references: torch's TransformerEncoderLayer and
MultiheadAttention with the same weights, LayerNorm's closed form, the formulas by hand, and the
README's table of names and shapes."""

import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import explorer as ex
from explorer.analysis.block import block_trace, block_trace_of, traceable_models
from explorer.model.attention import causal_mask
from explorer.model.building import seeded
from explorer.model.positional import RotaryEmbedding, sinusoidal_encoding
from explorer.model.transformer import EncoderLayer, Transformer, TransformerConfig
from explorer.training.pretrained import load_model

D, HEADS, D_FF, T = 16, 4, 24, 6
CORE = "coreference-sinusoidal-h4-l2"
SENTENCE = "the animal didn't cross the street because it was too tired"
README = Path(__file__).resolve().parents[2] / "README.md"


def _layer(norm: str, seed: int = 0) -> EncoderLayer:
    with seeded(seed):
        layer = EncoderLayer(D, HEADS, D_FF, norm=norm).double().eval()
        for ln in (layer.attn_norm, layer.ffn_norm):  # non-trivial scales, so a mixed-up norm shows
            if norm != "none":
                ln.weight.data.uniform_(0.5, 1.5)
                ln.bias.data.uniform_(-0.5, 0.5)
    return layer


def _x(seed: int = 1) -> torch.Tensor:
    return torch.randn(2, T, D, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


def _torch_layer(ours: EncoderLayer, norm: str, load_torch_mha) -> torch.nn.TransformerEncoderLayer:
    theirs = torch.nn.TransformerEncoderLayer(D, HEADS, D_FF, dropout=0.0, batch_first=True,
                                              norm_first=(norm == "pre")).double()
    load_torch_mha(theirs.self_attn, ours.self_attn)
    with torch.no_grad():
        for dst, src in ((theirs.linear1, ours.ffn.linear1), (theirs.linear2, ours.ffn.linear2),
                         (theirs.norm1, ours.attn_norm), (theirs.norm2, ours.ffn_norm)):
            dst.weight.copy_(src.weight)
            dst.bias.copy_(src.bias)
    return theirs.eval()


# --- the layer's trace against torch ---------------------------------------------------------------


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_layer_and_each_sublayer_equal_torch_transformer_encoder_layer(norm, load_torch_mha):
    ours, x = _layer(norm), _x()
    theirs = _torch_layer(ours, norm, load_torch_mha)
    with torch.no_grad():
        out, trace = ours(x)
        expected = theirs(x)
        # Torch's own sub-layers, step by step, in the order norm_first says.
        if norm == "pre":
            a_in = theirs.norm1(x)
            a_out = theirs.self_attn(a_in, a_in, a_in, need_weights=False)[0]
            a_sum = x + a_out
            f_in = theirs.norm2(a_sum)
            f_out = theirs.linear2(F.relu(theirs.linear1(f_in)))
            f_sum = a_sum + f_out
        else:
            a_out = theirs.self_attn(x, x, x, need_weights=False)[0]
            a_sum = x + a_out
            f_in = theirs.norm1(a_sum)
            f_out = theirs.linear2(F.relu(theirs.linear1(f_in)))
            f_sum = f_in + f_out
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(f_sum if norm == "pre" else theirs.norm2(f_sum), expected)  # the steps add up
    attn, ffn = trace.attention_sublayer, trace.ffn_sublayer
    torch.testing.assert_close(attn.output, a_out)
    torch.testing.assert_close(attn.residual_sum, a_sum)
    torch.testing.assert_close(ffn.input, a_sum if norm == "pre" else f_in)
    torch.testing.assert_close(ffn.output, f_out)
    torch.testing.assert_close(ffn.residual_sum, f_sum)
    if norm == "pre":
        torch.testing.assert_close(attn.normed_input, theirs.norm1(x))
        torch.testing.assert_close(ffn.normed_input, f_in)
        assert attn.normed_sum is None and ffn.normed_sum is None
    else:
        torch.testing.assert_close(attn.normed_sum, f_in)
        torch.testing.assert_close(ffn.normed_sum, expected)
        assert attn.normed_input is None and ffn.normed_input is None
    assert trace.hidden is out is ffn.result  # what leaves the layer is the last step's tensor itself


@pytest.mark.parametrize("masked", [False, True])
def test_attention_heads_equal_torch_multihead_attention(masked, load_torch_mha):
    ours, x = _layer("post").self_attn, _x(2)
    theirs = load_torch_mha(torch.nn.MultiheadAttention(D, HEADS, batch_first=True).double(), ours).eval()
    mask = causal_mask(T) if masked else None
    with torch.no_grad():
        out, trace = ours(x, mask=mask)
        # torch's attn_mask is True where attention is NOT allowed: the opposite convention.
        expected, weights = theirs(x, x, x, attn_mask=None if mask is None else ~mask,
                                   need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(trace.projected, expected)
    torch.testing.assert_close(trace.weights, weights)  # (B, heads, T, T), per head
    assert trace.projected is out


def test_q_k_v_concat_and_output_by_hand():
    layer, x = _layer("pre"), _x(3)
    with torch.no_grad():
        _, trace = layer(x)
    attn = trace.self_attention
    ln = trace.attention_sublayer.normed_input
    m = layer.self_attn
    head_dim = D // HEADS

    def heads(t):  # (B, T, d) → (B, heads, T, head_dim): feature block h is head h
        return t.reshape(2, T, HEADS, head_dim).permute(0, 2, 1, 3)

    for name, proj in (("q", m.q_proj), ("k", m.k_proj), ("v", m.v_proj)):
        torch.testing.assert_close(getattr(attn, name), heads(ln @ proj.weight.T + proj.bias))
    scores = attn.q @ attn.k.transpose(-2, -1) / math.sqrt(head_dim)
    torch.testing.assert_close(attn.scaled_scores, scores)
    torch.testing.assert_close(attn.output, torch.softmax(scores, -1) @ attn.v)
    # Concatenation: head h's output fills features h·head_dim … (h+1)·head_dim − 1 of each token.
    for h in range(HEADS):
        assert torch.equal(attn.concatenated[..., h * head_dim:(h + 1) * head_dim], attn.output[:, h])
    torch.testing.assert_close(attn.projected, attn.concatenated @ m.out_proj.weight.T + m.out_proj.bias)


def test_q_and_k_are_traced_after_rope_v_is_not_rotated():
    head_dim = D // HEADS
    m, x = _layer("pre").self_attn, _x(6)
    with torch.no_grad():
        _, trace = m(x, rotary=RotaryEmbedding(head_dim))
    positions = torch.arange(T, dtype=torch.float64)[:, None]
    theta = 10000.0 ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    turn = torch.polar(torch.ones(T, head_dim // 2, dtype=torch.float64), positions * theta)  # e^{i·p·θ_j}

    def rotated(t):  # each (2j, 2j+1) pair as a complex number, times e^{i·p·θ_j}
        pairs = torch.view_as_complex(t.reshape(*t.shape[:-1], head_dim // 2, 2).contiguous())
        return torch.view_as_real(pairs * turn).flatten(-2)

    def heads(t):
        return t.reshape(2, T, HEADS, head_dim).permute(0, 2, 1, 3)

    torch.testing.assert_close(trace.q, rotated(heads(m.q_proj(x))))
    torch.testing.assert_close(trace.k, rotated(heads(m.k_proj(x))))
    torch.testing.assert_close(trace.v, heads(m.v_proj(x)))


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_layernorm_is_its_closed_form_per_token_over_features(norm):
    layer, x = _layer(norm), _x(4)
    with torch.no_grad():
        _, trace = layer(x)
    step = trace.attention_sublayer
    before, after = (x, step.normed_input) if norm == "pre" else (step.residual_sum, step.normed_sum)
    ln = layer.attn_norm
    for b in range(2):
        for t in range(T):
            row = before[b, t].tolist()
            mean = sum(row) / D
            var = sum((v - mean) ** 2 for v in row) / D  # biased: over the features, as LayerNorm
            by_hand = [(v - mean) / math.sqrt(var + ln.eps) * g + c
                       for v, g, c in zip(row, ln.weight.tolist(), ln.bias.tolist(), strict=True)]
            torch.testing.assert_close(after[b, t], torch.tensor(by_hand, dtype=torch.float64))


def test_ffn_hidden_is_relu_of_pre_activation_and_residuals_are_exact_sums():
    layer, x = _layer("pre"), _x(5)
    with torch.no_grad():
        _, trace = layer(x)
    ffn = trace.ffn
    assert ffn is trace.ffn_sublayer.inner
    assert ffn.hidden_pre.shape == ffn.hidden.shape == (2, T, D_FF)
    assert torch.equal(ffn.hidden, torch.clamp(ffn.hidden_pre, min=0))
    zeros = int((ffn.hidden == 0).sum())
    assert zeros == int((ffn.hidden_pre <= 0).sum())
    assert 0 < zeros < ffn.hidden.numel()  # random weights: some but not all units are off
    for step in (trace.attention_sublayer, trace.ffn_sublayer):
        assert torch.equal(step.residual_sum, step.input + step.output)


def test_traces_hold_the_forward_pass_tensors_themselves():
    config = TransformerConfig(vocab_size=11, d_model=D, n_heads=HEADS, n_layers=2, norm="pre", max_len=8)
    with seeded(0):
        model = Transformer(config).eval()
    with torch.no_grad():
        logits, trace = model(torch.tensor([[1, 2, 3, 4]]))
    first, second = trace.layers
    assert first.attention_sublayer.input is trace.encoder_input is trace.encoder_embedding.output
    assert first.attention_sublayer.inner is first.self_attention
    assert first.ffn_sublayer.input is first.attention_sublayer.result
    assert second.attention_sublayer.input is first.hidden
    torch.testing.assert_close(model.lm_head(trace.encoder_output), logits)
    torch.testing.assert_close(trace.encoder_output, model.encoder.final_norm(second.hidden))


def test_embedding_parts_are_the_scaled_rows_and_the_sinusoid():
    loaded = load_model(CORE)
    bt = block_trace(CORE, SENTENCE)
    d = loaded.model.config.d_model
    table = loaded.model.encoder.embed.weight.numpy()
    np.testing.assert_allclose(bt["token_embedding"], table[list(bt.ids)] * math.sqrt(d), rtol=1e-6)
    np.testing.assert_allclose(bt["position_embedding"], sinusoidal_encoding(len(bt.tokens), d), atol=1e-6)
    np.testing.assert_array_equal(bt["input"], bt["token_embedding"] + bt["position_embedding"])


# --- block_trace -----------------------------------------------------------------------------------

PRE_LAYER = ("attn_norm", "q", "k", "v", "scores", "weights", "heads_out", "concat", "attn_out", "attn_residual",
             "ffn_norm", "ffn_hidden_pre", "ffn_hidden", "ffn_out", "ffn_residual")
POST_LAYER = ("q", "k", "v", "scores", "weights", "heads_out", "concat", "attn_out", "attn_residual", "attn_norm",
              "ffn_hidden_pre", "ffn_hidden", "ffn_out", "ffn_residual", "ffn_norm")


def _flow(layer_names, n_layers, final_norm):
    inner = [f"layers.{i}.{n}" for i in range(n_layers) for n in layer_names]
    return ("token_embedding", "position_embedding", "input", *inner, *(["final_norm"] if final_norm else []),
            "logits", "probabilities")


def _post_norm_model():
    config = TransformerConfig(vocab_size=13, d_model=D, n_heads=HEADS, n_layers=3, norm="post", d_ff=D_FF,
                               max_len=10)
    with seeded(0):
        return Transformer(config).eval().requires_grad_(False)


def test_names_follow_the_data_in_pre_and_post_norm_models():
    pre = block_trace(CORE, SENTENCE)
    assert pre.norm == "pre" and pre.names == _flow(PRE_LAYER, 2, final_norm=True)
    assert pre.layer(1) == PRE_LAYER
    post = block_trace_of(_post_norm_model(), [1, 5, 2, 7])
    assert post.norm == "post" and post.names == _flow(POST_LAYER, 3, final_norm=False)
    assert post.tokens == ("1", "5", "2", "7")


def test_block_trace_logits_are_the_models_own_and_probabilities_its_softmax():
    loaded = load_model(CORE)
    bt = block_trace(CORE, "The dog didn't catch the cat, because it was too slow.")
    assert bt.tokens == ("the", "dog", "didn't", "catch", "the", "cat", "because", "it", "was", "too", "slow")
    with torch.no_grad():
        logits, trace = loaded.model(torch.tensor([loaded.task.encode(list(bt.tokens))]))
    np.testing.assert_array_equal(bt["logits"], logits[0].numpy())
    np.testing.assert_array_equal(bt["layers.1.weights"], trace.layers[1].self_attention.weights[0].numpy())
    np.testing.assert_allclose(bt["probabilities"].sum(-1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(bt["probabilities"], torch.softmax(logits[0].double(), -1).numpy(), atol=1e-6)
    # the last LayerNorm and the output layer, applied by hand to the trace, give the logits
    head = loaded.model.lm_head
    np.testing.assert_allclose(bt["final_norm"] @ head.weight.numpy().T + head.bias.numpy(), bt["logits"],
                               atol=1e-4)
    # at "it" the likeliest word is the referent the task defines (the grammar's answer, not the model's)
    assert loaded.task.decode([bt["probabilities"][7].argmax()]) == loaded.task.expected_output(list(bt.tokens))


def test_shipped_heads_equal_torch_multihead_attention_on_the_traced_input(load_torch_mha):
    loaded = load_model(CORE)
    bt = block_trace(CORE, SENTENCE)
    for i, layer in enumerate(loaded.model.encoder.layers):
        ours = layer.self_attn
        theirs = load_torch_mha(torch.nn.MultiheadAttention(ours.d_model, ours.n_heads, batch_first=True), ours)
        x = torch.from_numpy(bt[f"layers.{i}.attn_norm"].copy())[None]
        with torch.no_grad():
            out, weights = theirs.eval()(x, x, x, need_weights=True, average_attn_weights=False)
        np.testing.assert_allclose(bt[f"layers.{i}.attn_out"], out[0].numpy(), atol=1e-5)
        np.testing.assert_allclose(bt[f"layers.{i}.weights"], weights[0].numpy(), atol=1e-6)
        np.testing.assert_array_equal(bt[f"layers.{i}.attn_residual"],
                                      bt[f"layers.{i - 1}.ffn_residual" if i else "input"] + bt[f"layers.{i}.attn_out"])
        hidden = bt[f"layers.{i}.ffn_hidden"]
        np.testing.assert_array_equal(hidden, np.maximum(bt[f"layers.{i}.ffn_hidden_pre"], 0))


def test_a_decoder_is_traced_with_its_causal_mask():
    bt = block_trace("induction-sinusoidal-h2-l2", "t3 t7 t1 t3 t7")
    scores, weights = bt["layers.0.scores"], bt["layers.0.weights"]
    above = np.triu(np.ones((5, 5), dtype=bool), k=1)
    assert np.isneginf(scores[:, above]).all() and np.isfinite(scores[:, ~above]).all()
    assert (weights[:, above] == 0).all()
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-6)


def _readme_table() -> dict[str, str]:
    """The README's block_trace table: name → shape, as written."""
    rows = re.findall(r"^\| `([^`]+)` \| (\([^)]*\)) \|", README.read_text(), flags=re.M)
    assert rows, "the README has no block_trace table"
    return dict(rows)


def _shape(written: str, sizes: dict[str, int]) -> tuple[int, ...]:
    return tuple(sizes[part.strip()] for part in written.strip("()").split(","))


@pytest.mark.parametrize("which", ["shipped pre-norm", "post-norm", "decoder"])
def test_every_name_has_the_shape_the_readme_table_says(which):
    if which == "post-norm":
        model = _post_norm_model()
        bt = block_trace_of(model, [1, 5, 2, 7, 3])
    else:
        name = CORE if which.startswith("shipped") else "induction-sinusoidal-h2-l2"
        model = load_model(name).model
        bt = block_trace(name, SENTENCE if name == CORE else "t1 t2 t3 t1")
    c = model.config
    sizes = {"T": len(bt.tokens), "d": c.d_model, "heads": c.n_heads, "head_dim": c.d_model // c.n_heads,
             "d_ff": c.ff_dim, "vocab": c.output_vocab_size}
    table = _readme_table()
    for name in bt.names:
        key = re.sub(r"^layers\.\d+\.", "layers.{i}.", name)
        assert key in table, f"{name} is missing from the README's table"
        assert bt[name].shape == _shape(table[key], sizes), name
        assert bt[name].dtype == np.float32


def test_the_readme_table_lists_no_name_a_trace_lacks():
    listed = set(_readme_table())
    made = {re.sub(r"^layers\.\d+\.", "layers.{i}.", n)
            for n in (*block_trace(CORE, SENTENCE).names, *block_trace_of(_post_norm_model(), [1, 2]).names)}
    assert listed == made


# --- what block_trace refuses, and what it hands out -----------------------------------------------


def test_unknown_words_raise_a_value_error_naming_the_words_the_model_knows():
    with pytest.raises(ValueError, match="'zebra'") as raised:
        block_trace(CORE, "the zebra didn't cross the street")
    task = load_model(CORE).task
    assert all(w in str(raised.value) for w in task.vocab if not w.startswith("<"))
    with pytest.raises(ValueError, match="'<pad>'"):  # a marker the model places itself is no input
        block_trace("induction-sinusoidal-h2-l2", "t1 <pad> t2")
    with pytest.raises(ValueError, match="at most 12 words"):
        block_trace(CORE, " ".join(["the"] * 13))
    with pytest.raises(ValueError, match="no words"):
        block_trace(CORE, " ... ")


def test_only_one_stack_models_are_traced():
    assert CORE in traceable_models() and "reverse-sinusoidal-h4-l2" not in traceable_models()
    with pytest.raises(ValueError, match="one of"):
        block_trace("reverse-sinusoidal-h4-l2", "A B C")
    with pytest.raises(ValueError, match="encoder–decoder"):
        block_trace_of(load_model("reverse-sinusoidal-h4-l2").model, [1, 2, 3])


def test_arrays_are_read_only_copies_and_lookups_name_the_alternatives():
    bt = block_trace(CORE, SENTENCE)
    with pytest.raises(ValueError):
        bt["position_embedding"][0, 0] = 1.0  # the model's position table stays out of reach
    assert load_model(CORE).model.encoder.position.table[0, 1] == 1.0  # cos(0): untouched
    with pytest.raises(KeyError, match=r"layers\.0\.q"):
        bt["layers.0.query"]
    assert "final_norm" in bt and "cross" not in bt
    with pytest.raises(IndexError):
        bt.layer(2)


def test_block_trace_is_public():
    assert ex.block_trace is block_trace and ex.BlockTrace is type(block_trace(CORE, SENTENCE))
