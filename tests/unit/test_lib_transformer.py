"""explorer.model.transformer against torch.nn.Transformer*Layer and model-level properties."""

import math

import pytest
import torch
import torch.nn.functional as F

from explorer.model.attention import causal_mask
from explorer.model.positional import ENCODINGS
from explorer.model.transformer import (
    ARCHITECTURES,
    DecoderLayer,
    EncoderLayer,
    Transformer,
    TransformerConfig,
)

D, HEADS, D_FF = 12, 3, 20


def _randomise_norms(*norms):
    """Give LayerNorms non-trivial scales so that mixing them up cannot go unnoticed."""
    with torch.no_grad():
        for norm in norms:
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)


def _copy_linear(dst, src):
    with torch.no_grad():
        dst.weight.copy_(src.weight)
        dst.bias.copy_(src.bias)


def _copy_norm(dst, src):
    with torch.no_grad():
        dst.weight.copy_(src.weight)
        dst.bias.copy_(src.bias)


def _torch_encoder_layer(ours, norm, load_torch_mha):
    theirs = torch.nn.TransformerEncoderLayer(
        D, HEADS, D_FF, dropout=0.0, batch_first=True, norm_first=(norm == "pre")
    ).double()
    load_torch_mha(theirs.self_attn, ours.self_attn)
    _copy_linear(theirs.linear1, ours.ffn.linear1)
    _copy_linear(theirs.linear2, ours.ffn.linear2)
    _copy_norm(theirs.norm1, ours.attn_norm)
    _copy_norm(theirs.norm2, ours.ffn_norm)
    return theirs.eval()


def _torch_decoder_layer(ours, norm, load_torch_mha):
    theirs = torch.nn.TransformerDecoderLayer(
        D, HEADS, D_FF, dropout=0.0, batch_first=True, norm_first=(norm == "pre")
    ).double()
    load_torch_mha(theirs.self_attn, ours.self_attn)
    load_torch_mha(theirs.multihead_attn, ours.cross_attn)
    _copy_linear(theirs.linear1, ours.ffn.linear1)
    _copy_linear(theirs.linear2, ours.ffn.linear2)
    _copy_norm(theirs.norm1, ours.attn_norm)
    _copy_norm(theirs.norm2, ours.cross_norm)
    _copy_norm(theirs.norm3, ours.ffn_norm)
    return theirs.eval()


# --- layers vs torch ------------------------------------------------------------------------------


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("causal", [False, True])
def test_encoder_layer_matches_torch(load_torch_mha, norm, causal):
    torch.manual_seed(0)
    ours = EncoderLayer(D, HEADS, D_FF, norm=norm).double().eval()
    _randomise_norms(ours.attn_norm, ours.ffn_norm)
    theirs = _torch_encoder_layer(ours, norm, load_torch_mha)
    x = torch.randn(2, 5, D, dtype=torch.float64)
    with torch.no_grad():
        out, trace = ours(x, mask=causal_mask(5) if causal else None)
        expected = theirs(x, src_mask=~causal_mask(5) if causal else None)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(trace.hidden, out)
    assert trace.self_attention.weights.shape == (2, HEADS, 5, 5)
    assert trace.cross_attention is None


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_decoder_layer_matches_torch(load_torch_mha, norm):
    torch.manual_seed(1)
    ours = DecoderLayer(D, HEADS, D_FF, norm=norm).double().eval()
    _randomise_norms(ours.attn_norm, ours.cross_norm, ours.ffn_norm)
    theirs = _torch_decoder_layer(ours, norm, load_torch_mha)
    x = torch.randn(2, 4, D, dtype=torch.float64)
    memory = torch.randn(2, 7, D, dtype=torch.float64)
    with torch.no_grad():
        out, trace = ours(x, memory, self_mask=causal_mask(4))
        expected = theirs(x, memory, tgt_mask=~causal_mask(4))
    torch.testing.assert_close(out, expected)
    assert trace.self_attention.weights.shape == (2, HEADS, 4, 4)
    assert trace.cross_attention.weights.shape == (2, HEADS, 4, 7)


def test_decoder_layer_memory_padding_matches_torch(load_torch_mha):
    torch.manual_seed(2)
    ours = DecoderLayer(D, HEADS, D_FF).double().eval()
    theirs = _torch_decoder_layer(ours, "post", load_torch_mha)
    x = torch.randn(2, 4, D, dtype=torch.float64)
    memory = torch.randn(2, 6, D, dtype=torch.float64)
    valid = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]], dtype=torch.bool)
    with torch.no_grad():
        out, trace = ours(x, memory, self_mask=causal_mask(4), memory_mask=valid[:, None, None, :])
        expected = theirs(x, memory, tgt_mask=~causal_mask(4), memory_key_padding_mask=~valid)
    torch.testing.assert_close(out, expected)
    assert torch.all(trace.cross_attention.weights[1, ..., 4:] == 0)


def _mha_by_hand(mha, x):
    """The explorer MHA's weights run through torch's functional multi-head attention."""
    out, _ = F.multi_head_attention_forward(
        x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), D, HEADS,
        torch.cat([mha.q_proj.weight, mha.k_proj.weight, mha.v_proj.weight]),
        torch.cat([mha.q_proj.bias, mha.k_proj.bias, mha.v_proj.bias]),
        None, None, False, 0.0, mha.out_proj.weight, mha.out_proj.bias, training=False, need_weights=False,
    )
    return out.transpose(0, 1)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_residual_false_is_plain_sublayer_chain(norm):
    torch.manual_seed(3)
    layer = EncoderLayer(D, HEADS, D_FF, norm=norm, residual=False).double().eval()
    n1, n2 = layer.attn_norm, layer.ffn_norm
    _randomise_norms(n1, n2)
    x = torch.randn(2, 5, D, dtype=torch.float64)

    def ln(norm_module, h):
        return F.layer_norm(h, (D,), norm_module.weight, norm_module.bias, eps=1e-5)

    def ffn(h):
        return F.linear(F.relu(F.linear(h, layer.ffn.linear1.weight, layer.ffn.linear1.bias)),
                        layer.ffn.linear2.weight, layer.ffn.linear2.bias)

    with torch.no_grad():
        out, _ = layer(x)
        if norm == "post":
            expected = ln(n2, ffn(ln(n1, _mha_by_hand(layer.self_attn, x))))
        else:
            expected = ffn(ln(n2, _mha_by_hand(layer.self_attn, ln(n1, x))))
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize("norm", ["post", "pre", "none"])
@pytest.mark.parametrize("residual", [True, False])
def test_rewired_layer_shares_the_weights_and_leaves_the_original_alone(norm, residual):
    torch.manual_seed(4)
    original = EncoderLayer(D, HEADS, D_FF).double().eval()
    _randomise_norms(original.attn_norm, original.ffn_norm)
    x = torch.randn(2, 5, D, dtype=torch.float64)
    with torch.no_grad():
        before, _ = original(x)
        layer = original.rewired(norm, residual)
        after, _ = original(x)
        out, _ = layer(x)
    torch.testing.assert_close(after, before, rtol=0, atol=0)
    assert (original.norm, original.residual) == ("post", True) and (layer.norm, layer.residual) == (norm, residual)
    assert layer.self_attn is original.self_attn and layer.ffn is original.ffn and not layer.training
    assert isinstance(layer.attn_norm, torch.nn.Identity) == (norm == "none")
    assert all(p.device.type == "cpu" for p in layer.parameters())
    fresh = EncoderLayer(D, HEADS, D_FF, norm=norm, residual=residual).double().eval()
    missing, unexpected = fresh.load_state_dict(original.state_dict(), strict=False)
    assert not missing and (unexpected == [] if norm != "none" else len(unexpected) == 4)
    with torch.no_grad():
        torch.testing.assert_close(out, fresh(x)[0], rtol=0, atol=0)
    if norm == "none":
        with pytest.raises(ValueError, match="no LayerNorms"):
            layer.rewired("post")
    with pytest.raises(ValueError, match="norm must be one of"):
        original.rewired("batch")


# --- the full model -------------------------------------------------------------------------------

B, T, T_OUT = 2, 6, 4


def _model(architecture, encoding, seed=0, **overrides):
    torch.manual_seed(seed)
    settings = dict(vocab_size=11, d_model=16, n_heads=2, n_layers=2, architecture=architecture,
                    encoding=encoding, max_len=10, d_ff=24)
    settings.update(overrides)
    return Transformer(TransformerConfig(**settings)).eval()


def _tokens(T_len=T, seed=0, vocab=11):
    return torch.randint(0, vocab, (B, T_len), generator=torch.Generator().manual_seed(seed))


def _run(model, tokens, target=None, **kwargs):
    with torch.no_grad():
        return model(tokens, target, **kwargs) if target is not None else model(tokens, **kwargs)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_model_logits_and_trace_shapes(architecture, encoding):
    model = _model(architecture, encoding, target_vocab_size=7)
    tokens = _tokens()
    if architecture == "encoder-decoder":
        logits, trace = _run(model, tokens, _tokens(T_OUT, seed=1, vocab=7))
        assert logits.shape == (B, T_OUT, 7)
        assert len(trace.encoder_layers) == len(trace.decoder_layers) == 2
        assert trace.layers is trace.decoder_layers
        for layer in trace.encoder_layers:
            assert layer.self_attention.weights.shape == (B, 2, T, T)
        for layer in trace.decoder_layers:
            assert layer.self_attention.weights.shape == (B, 2, T_OUT, T_OUT)
            assert layer.cross_attention.weights.shape == (B, 2, T_OUT, T)
            assert layer.hidden.shape == (B, T_OUT, 16)
    else:
        logits, trace = _run(model, tokens)
        assert logits.shape == (B, T, 11)  # target_vocab_size only applies to encoder-decoder
        assert len(trace.layers) == 2
        for layer in trace.layers:
            assert layer.self_attention.weights.shape == (B, 2, T, T)
            assert layer.cross_attention is None
            assert layer.hidden.shape == (B, T, 16)
    assert torch.isfinite(logits).all()
    for layer in trace.layers:
        weights = layer.self_attention.weights
        torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_decoder_only_is_causal(encoding):
    model = _model("decoder", encoding)
    tokens = _tokens()
    changed = tokens.clone()
    changed[:, 4] = (changed[:, 4] + 1) % 11
    logits, trace = _run(model, tokens)
    logits2, _ = _run(model, changed)
    torch.testing.assert_close(logits[:, :4], logits2[:, :4], rtol=0, atol=1e-6)
    assert not torch.allclose(logits[:, 4:], logits2[:, 4:], atol=1e-4)
    upper = torch.ones(T, T, dtype=torch.bool).triu(1)
    for layer in trace.layers:
        assert torch.all(layer.self_attention.weights[..., upper] == 0)
        assert torch.all(layer.self_attention.weights[..., ~upper] > 0)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_encoder_only_sees_later_tokens(encoding):
    model = _model("encoder", encoding)
    tokens = _tokens()
    changed = tokens.clone()
    changed[:, -1] = (changed[:, -1] + 1) % 11
    logits, trace = _run(model, tokens)
    logits2, _ = _run(model, changed)
    for position in range(T - 1):
        assert not torch.allclose(logits[:, position], logits2[:, position], atol=1e-4)
    assert torch.all(trace.layers[0].self_attention.weights > 0)


@pytest.mark.parametrize("encoding", ["sinusoidal", "alibi", "t5", "rope"])
def test_causal_flag_masks_an_encoder(encoding):
    model = _model("encoder", encoding)
    tokens = _tokens()
    logits, trace = _run(model, tokens, causal=True)
    upper = torch.ones(T, T, dtype=torch.bool).triu(1)
    for layer in trace.layers:
        assert torch.all(layer.self_attention.weights[..., upper] == 0)
    changed = tokens.clone()
    changed[:, -1] = (changed[:, -1] + 1) % 11
    logits2, _ = _run(model, changed, causal=True)
    torch.testing.assert_close(logits[:, :-1], logits2[:, :-1], rtol=0, atol=1e-6)


@pytest.mark.parametrize("encoding", ["sinusoidal", "rope", "t5"])
def test_encoder_decoder_target_is_causal_and_sees_whole_source(encoding):
    model = _model("encoder-decoder", encoding)
    source, target = _tokens(), _tokens(T_OUT, seed=1)
    logits, _ = _run(model, source, target)
    changed_target = target.clone()
    changed_target[:, 2] = (changed_target[:, 2] + 1) % 11
    logits2, _ = _run(model, source, changed_target)
    torch.testing.assert_close(logits[:, :2], logits2[:, :2], rtol=0, atol=1e-6)
    changed_source = source.clone()
    changed_source[:, -1] = (changed_source[:, -1] + 1) % 11
    logits3, _ = _run(model, changed_source, target)
    for position in range(T_OUT):
        assert not torch.allclose(logits[:, position], logits3[:, position], atol=1e-4)


def test_encoder_decoder_needs_a_target():
    with pytest.raises(ValueError):
        _run(_model("encoder-decoder", "sinusoidal"), _tokens())


def test_padding_keys_are_ignored():
    model = _model("encoder", "sinusoidal")
    tokens = _tokens()
    valid = torch.ones(B, T, dtype=torch.bool)
    valid[:, -2:] = False
    logits, trace = _run(model, tokens, valid=valid)
    changed = tokens.clone()
    changed[:, -2:] = (changed[:, -2:] + 3) % 11
    logits2, _ = _run(model, changed, valid=valid)
    torch.testing.assert_close(logits[:, :-2], logits2[:, :-2], rtol=0, atol=1e-6)
    assert torch.all(trace.layers[0].self_attention.weights[..., -2:] == 0)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_encoder_model_matches_torch_stack(load_torch_mha, norm):
    """Embedding·√d + sinusoid → torch encoder layers (+ final LayerNorm for pre-norm) → head."""
    model = _model("encoder", "sinusoidal", d_model=D, n_heads=HEADS, d_ff=D_FF, norm=norm).double()
    tokens = _tokens()
    x = model.encoder.embed(tokens) * math.sqrt(D)
    position = torch.tensor(
        [[math.sin(p / 10000 ** (2 * (i // 2) / D)) if i % 2 == 0 else math.cos(p / 10000 ** (2 * (i // 2) / D))
          for i in range(D)] for p in range(T)], dtype=torch.float64)
    x = x + position
    with torch.no_grad():
        for layer in model.encoder.layers:
            x = _torch_encoder_layer(layer, norm, load_torch_mha)(x)
        if norm == "pre":
            x = model.encoder.final_norm(x)
        expected = model.lm_head(x)
        logits, _ = model(tokens)
    torch.testing.assert_close(logits, expected)
    assert isinstance(model.encoder.final_norm, torch.nn.LayerNorm) == (norm == "pre")


def test_alibi_and_t5_biases_reach_the_scores():
    tokens = _tokens()
    model = _model("encoder", "alibi")
    _, trace = _run(model, tokens)
    attn = trace.layers[0].self_attention
    bias = attn.scaled_scores - attn.raw_scores / math.sqrt(8)
    slopes = [2 ** -4, 2 ** -8]  # two heads
    expected = torch.tensor([[[-s * abs(i - j) for j in range(T)] for i in range(T)] for s in slopes])
    torch.testing.assert_close(bias, expected.expand(B, -1, -1, -1), rtol=0, atol=1e-5)

    model = _model("encoder", "t5")
    with torch.no_grad():
        model.encoder.t5_bias.bias.weight.normal_()
    _, trace = _run(model, tokens)
    attn = trace.layers[1].self_attention
    bias = attn.scaled_scores - attn.raw_scores / math.sqrt(8)
    table = model.encoder.t5_bias.bias.weight  # (buckets, heads); offsets here are < 8: own buckets
    expected = torch.stack([torch.stack([table[(16 if j > i else 0) + abs(j - i)] for j in range(T)])
                            for i in range(T)]).permute(2, 0, 1)
    torch.testing.assert_close(bias, expected.expand(B, -1, -1, -1), rtol=0, atol=1e-5)


def test_sequence_longer_than_max_len_raises():
    with pytest.raises(ValueError, match="max_len"):
        _run(_model("encoder", "sinusoidal"), _tokens(11))
    with pytest.raises(ValueError, match="max_len"):
        _run(_model("decoder", "rope"), _tokens(11))
    with pytest.raises(ValueError, match="max_len"):
        _run(_model("encoder-decoder", "t5"), _tokens(), _tokens(11))


def test_permutation_equivariance_without_positions():
    model = _model("encoder", "none")
    tokens = _tokens()
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    logits, _ = _run(model, tokens)
    permuted_logits, _ = _run(model, tokens[:, perm])
    torch.testing.assert_close(permuted_logits, logits[:, perm], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("encoding", [e for e in ENCODINGS if e != "none"])
def test_positions_break_permutation_equivariance(encoding):
    model = _model("encoder", encoding)
    tokens = _tokens()
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    logits, _ = _run(model, tokens)
    permuted_logits, _ = _run(model, tokens[:, perm])
    assert not torch.allclose(permuted_logits, logits[:, perm], atol=1e-4)


# --- config -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        dict(d_model=10, n_heads=3),
        dict(encoding="spiral"),
        dict(architecture="rnn"),
        dict(norm="middle"),
        dict(n_layers=0),
        dict(vocab_size=0),
        dict(max_len=0),
        dict(d_model=12, n_heads=4, encoding="rope"),  # head_dim 3 is odd
    ],
)
def test_config_rejects_invalid_settings(bad):
    with pytest.raises(ValueError, match="invalid TransformerConfig"):
        TransformerConfig(**bad)


@pytest.mark.parametrize(
    "bad",
    [
        dict(d_ff=-3),  # accepted, then Transformer() dies with a torch RuntimeError
        dict(base=-1.0, encoding="rope"),  # accepted, and the model silently outputs NaN logits
        dict(base=0.0),  # accepted; only building the sinusoidal table fails later
        dict(target_vocab_size=-2, architecture="encoder-decoder"),  # accepted, then RuntimeError
    ],
)
def test_config_rejects_nonpositive_d_ff_base_and_target_vocab(bad):
    with pytest.raises(ValueError, match="invalid TransformerConfig"):
        TransformerConfig(d_model=8, n_heads=2, **bad)


def test_config_round_trips_through_dict():
    config = TransformerConfig(vocab_size=9, d_model=24, n_heads=6, architecture="encoder-decoder",
                               encoding="t5", norm="pre", residual=False, d_ff=7, target_vocab_size=5, base=100.0)
    data = config.to_dict()
    assert data["d_ff"] == 7 and data["encoding"] == "t5"
    assert TransformerConfig.from_dict(data) == config
    with pytest.raises(ValueError, match="unknown"):
        TransformerConfig.from_dict({**data, "dropout": 0.1})


def test_d_ff_defaults_to_four_times_d_model():
    model = Transformer(TransformerConfig(d_model=8, n_heads=2, n_layers=1, architecture="encoder-decoder"))
    for layer in [*model.encoder.layers, *model.decoder.layers]:
        assert layer.ffn.linear1.weight.shape == (32, 8)
        assert layer.ffn.linear2.weight.shape == (8, 32)
    model = Transformer(TransformerConfig(d_model=8, n_heads=2, n_layers=1, d_ff=5))
    assert model.encoder.layers[0].ffn.linear1.weight.shape == (5, 8)


# --- generation ---------------------------------------------------------------------------------


def test_generate_decoder_only_is_greedy_continuation():
    model = _model("decoder", "rope")
    prompt = _tokens(3)
    generated, trace = model.generate(prompt, n_steps=4, start_token=0)
    assert generated.shape == (B, 4)
    sequence = prompt
    for _ in range(4):
        logits, _ = _run(model, sequence)
        sequence = torch.cat([sequence, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(generated, sequence[:, 3:])
    assert trace.layers[0].self_attention.weights.shape == (B, 2, 6, 6)  # the last step's pass


def test_generate_encoder_decoder_starts_from_start_token():
    model = _model("encoder-decoder", "sinusoidal")
    source = _tokens()
    generated, _ = model.generate(source, n_steps=3, start_token=1)
    assert generated.shape == (B, 3)
    target = torch.ones(B, 1, dtype=torch.long)
    for _ in range(3):
        logits, _ = _run(model, source, target)
        target = torch.cat([target, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(generated, target[:, 1:])


def test_generate_zero_steps_returns_no_tokens():
    """generate(..., n_steps=0) should return a (B, 0) tensor, as documented: (B, n_steps)."""
    model = _model("decoder", "sinusoidal")
    generated, _ = model.generate(_tokens(3), n_steps=0, start_token=0)
    assert generated.shape == (B, 0)


def test_encoder_only_does_not_generate():
    with pytest.raises(ValueError):
        _model("encoder", "sinusoidal").generate(_tokens(), n_steps=2, start_token=0)
