"""AppTest: the block page (one forward pass of the coreference encoder, stage by stage), read back from
its figures and checked against the model's own modules run step by step here with torch's functions
(embedding lookup, layer_norm, linear, softmax), not against the page's trace."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from explorer.lessons.block.view import MODEL, PRESETS, STAGES
from explorer.training.parsed_input import OWN_TEXT
from explorer.training.pretrained import load_model
from harness.apptest import info_text, plotly_array, plotly_array_1d, plotly_figure, run_page

PAGE = "explorer/lessons/block/block.py"
TIRED = PRESETS["too tired"].split()


def by_hand(sentence: str) -> dict[str, np.ndarray]:
    """The forward pass of the shipped model computed from its modules' weights (pre-norm, ReLU), layer by layer."""
    model = load_model(MODEL)
    m, task = model.model, model.task
    ids = torch.tensor(task.encode(sentence.split()))
    d, h = m.config.d_model, m.config.n_heads
    T, hd = len(ids), d // h
    out = {"embed": F.embedding(ids, m.encoder.embed.weight) * math.sqrt(d)}
    position = torch.zeros(T, d)
    rows = torch.arange(T, dtype=torch.float64)[:, None]
    angle = rows / 10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    position[:, 0::2], position[:, 1::2] = torch.sin(angle).float(), torch.cos(angle).float()
    x = out["embed"] + position
    out["input"] = x
    with torch.no_grad():
        for i, layer in enumerate(m.encoder.layers):
            a = layer.self_attn
            n1 = F.layer_norm(x, (d,), layer.attn_norm.weight, layer.attn_norm.bias, layer.attn_norm.eps)
            q, k, v = (F.linear(n1, p.weight, p.bias).view(T, h, hd).transpose(0, 1) for p in (a.q_proj, a.k_proj,
                                                                                                a.v_proj))
            weights = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(hd), dim=-1)
            concat = (weights @ v).transpose(0, 1).reshape(T, d)
            attn = F.linear(concat, a.out_proj.weight, a.out_proj.bias)
            x = x + attn
            n2 = F.layer_norm(x, (d,), layer.ffn_norm.weight, layer.ffn_norm.bias, layer.ffn_norm.eps)
            hidden = torch.relu(F.linear(n2, layer.ffn.linear1.weight, layer.ffn.linear1.bias))
            x = x + F.linear(hidden, layer.ffn.linear2.weight, layer.ffn.linear2.bias)
            out.update({f"{i}.q": q, f"{i}.weights": weights, f"{i}.concat": concat, f"{i}.attn_out": attn,
                        f"{i}.ffn_hidden": hidden, f"{i}.ffn_residual": x})
        final = F.layer_norm(x, (d,), m.encoder.final_norm.weight, m.encoder.final_norm.bias, m.encoder.final_norm.eps)
        out["probabilities"] = torch.softmax(m.lm_head(final), dim=-1)
    return {name: value.detach().numpy() for name, value in out.items()}


def stage_z(at) -> np.ndarray:
    return plotly_array(plotly_figure(at, "block_stage")["data"][0]["z"])


def framed_row(at) -> int:
    frame = plotly_figure(at, "block_stage")["layout"]["shapes"][0]
    return round((frame["y0"] + frame["y1"]) / 2)


def lit(at) -> list[str]:
    """The diagram's boxes drawn in bold (the stage chosen)."""
    return [a["text"] for a in plotly_figure(at, "block_diagram")["layout"]["annotations"]
            if a["text"].startswith("<b>")]


def test_default_view_is_the_embedding_of_the_lecture_sentence():
    at = run_page(PAGE)
    assert not at.info and not at.error and not at.warning
    expected = by_hand(PRESETS["too tired"])
    np.testing.assert_allclose(stage_z(at), expected["embed"], atol=1e-5)
    assert framed_row(at) == TIRED.index("it")  # the followed token: "it"
    assert lit(at) == ["<b>Token embedding</b>"]
    assert any("at “it” it names **animal**" in m.value for m in at.markdown)


@pytest.mark.parametrize(("stage", "layer", "head"), [("input", 1, 1), ("qkv", 2, 3), ("weights", 2, 1),
                                                      ("concat", 1, 1), ("attn_out", 2, 1), ("ffn_hidden", 1, 1),
                                                      ("ffn_residual", 2, 1)])
def test_each_stage_draws_the_models_own_tensor(stage, layer, head):
    at = run_page(PAGE, {"stage": STAGES[stage], "layer": str(layer), "head": str(head)})
    assert not at.info
    expected, i, z = by_hand(PRESETS["too tired"]), layer - 1, stage_z(at)
    if stage == "input":
        want = expected["input"]
    elif stage == "qkv":  # q | k | v side by side: the q part checked
        want, z = expected[f"{i}.q"][head - 1], z[:, :16]
    elif stage == "weights":
        want = expected[f"{i}.weights"][head - 1]
        np.testing.assert_allclose(z.sum(axis=1), 1, atol=1e-5)
    else:
        want = expected[f"{i}.{stage}"]
    np.testing.assert_allclose(z, want, atol=2e-4)
    assert lit(at) == [f"<b>{STAGES[stage]}</b>".replace("&", "&amp;")]


def test_the_controls_move_the_stage_the_token_and_the_head():
    at = run_page(PAGE, {"stage": STAGES["weights"], "layer": "2"})
    expected = by_hand(PRESETS["too tired"])
    at.selectbox(key="token").set_value("animal").run()
    assert framed_row(at) == TIRED.index("animal")
    at.select_slider(key="head").set_value(4).run()
    np.testing.assert_allclose(stage_z(at), expected["1.weights"][3], atol=1e-5)
    at.selectbox(key="stage").set_value(STAGES["probabilities"]).run()
    bars = plotly_figure(at, "block_stage")["data"][0]
    top = np.sort(expected["probabilities"][TIRED.index("animal")])[::-1][:8]
    np.testing.assert_allclose(plotly_array(bars["x"]), top, atol=1e-5)


def test_the_last_word_decides_the_answer():
    at = run_page(PAGE, {"sentence": "too wide", "stage": STAGES["probabilities"]})
    bars = plotly_figure(at, "block_stage")["data"][0]
    assert bars["customdata"][0] == "street" and plotly_array(bars["x"])[0] > 0.5
    assert any("it names **street**" in m.value for m in at.markdown)


def test_parameters_are_counted_on_the_modules_and_match_the_closed_forms():
    at = run_page(PAGE)
    table = at.dataframe[0].value
    d, d_ff = 64, 256
    assert list(table["parameters"]) == [4 * (d * d + d), 2 * d * d_ff + d_ff + d, 2 * 2 * d]
    assert [b.proto.label for b in at.get("download_button")] == ["Download this stage's tensor (CSV)"]


@pytest.mark.parametrize(("params", "note"), [
    ({"stage": "nope"}, "Stage"), ({"layer": "3"}, "Layer"), ({"head": "0"}, "Head"), ({"token": "zebra"}, "Token"),
    ({"sentence": OWN_TEXT, "text": "the robot didn't cross the street"}, "not words this model knows"),
    ({"sentence": OWN_TEXT, "text": " ".join(["the"] * 13)}, "at most 12"),
    ({"sentence": OWN_TEXT, "text": "<s> it"}, "not words this model knows"),
])
def test_bad_values_get_a_note_and_the_default(params, note):
    at = run_page(PAGE, params)
    assert note in info_text(at).replace("\\", "")
    assert stage_z(at).shape[0] in (len(TIRED), 2)  # the default sentence (or the two words typed)


def test_a_typed_sentence_the_model_knows_is_read():
    at = run_page(PAGE, {"sentence": OWN_TEXT, "text": "the dog didn't cross the river because it was too slow",
                         "stage": STAGES["input"]})
    assert not at.info
    np.testing.assert_allclose(stage_z(at), by_hand("the dog didn't cross the river because it was too slow")["input"],
                               atol=1e-5)


def test_the_sampling_section_draws_the_decoders_distribution_and_the_seed_repeats_its_draw():
    """The blue bars are softmax(logits / T) of the induction decoder's last position, restricted by top-k and
    renormalised, computed here with torch; the same seed draws the same continuation, another seed may not."""
    from explorer.lessons.block.sampling import DECODER, PROMPTS

    at = run_page(PAGE, {"temperature": "2.0", "top_k": "5", "seed": "3"})
    loaded = load_model(DECODER)
    ids = loaded.task.encode(PROMPTS["not repeating yet"].split())
    with torch.no_grad():
        logits = loaded.model(torch.tensor([ids]))[0][0, -1].double()
    probs = torch.softmax(logits / 2.0, -1)
    kept = probs >= torch.topk(probs, 5).values[-1]
    expected = torch.where(kept, probs, 0) / probs[kept].sum()
    chart = plotly_figure(at, "sampling_chart")
    words = [w for w in loaded.task.vocab if not w.startswith("<")]
    blue = plotly_array_1d(chart["data"][1]["y"])
    np.testing.assert_allclose(blue, expected.numpy()[[loaded.task.vocab.index(w) for w in words]], atol=1e-6)
    assert (blue > 0).sum() == 5
    said = next(m.value for m in at.markdown if "Drawn " in m.value)
    again = run_page(PAGE, {"temperature": "2.0", "top_k": "5", "seed": "3"})
    assert said in [m.value for m in again.markdown]  # same seed, same draws
    assert any("Confident, but not knowing" in m.value for m in at.markdown)
    repeating = run_page(PAGE, {"prompt": "repeating"})
    assert not any("Confident, but not knowing" in m.value for m in repeating.markdown)


def test_the_embedding_section_lists_the_nearest_pieces_by_cosine_over_the_whole_table():
    from explorer.analysis.embeddings import token_embeddings
    from explorer.training.minilm import load_minilm

    at = run_page(PAGE, {"piece": "Queen"})
    table = next(d.value for d in at.dataframe if any("nearest to" in str(c) for c in d.value.columns))
    rows = torch.tensor(np.asarray(token_embeddings()), dtype=torch.float64)
    ids = load_minilm().tokenizer.encode("queen", add_special_tokens=False).ids
    cos = F.cosine_similarity(rows, rows[ids[0]][None], dim=1)
    vocab = {i: p for p, i in load_minilm().tokenizer.get_vocab().items()}
    order = [vocab[int(i)] for i in torch.argsort(cos, descending=True, stable=True)
             if int(i) != ids[0] and not vocab[int(i)].startswith("[")][:8]
    assert list(table.iloc[:, 0]) == order
    assert any("the nearest to “queen”" in m.value for m in at.markdown)


def test_the_embedding_section_refuses_what_it_cannot_read_with_a_note():
    at = run_page(PAGE, {"piece": "  ", "words": "a b"})
    notes = " ".join(i.value for i in at.info).replace("\\", "")
    assert "the word piece" in notes and "at least 3 words" in notes
    assert any("the nearest to “king”" in m.value for m in at.markdown)
