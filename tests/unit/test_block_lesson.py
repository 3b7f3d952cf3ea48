"""The block lesson's library: its token names, its figures (valid Plotly, the chosen stage lit, every
stage drawn), its CSV and the numbers its sentences quote, against closed forms and torch's own modules."""

import io
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
import torch

from explorer.kit.spec import Shown
from explorer.lessons.block.claims import BLOCK_CLAIMS, block_facts
from explorer.lessons.block.figures import block_figures, diagram, stage_csv, stage_figure, stage_shape
from explorer.lessons.block.view import MODEL, PRESETS, STAGES, BlockSettings, block_view, token_labels
from explorer.training.pretrained import load_model


def shown(**settings) -> Shown:
    s = BlockSettings(**settings)
    view = block_view(s)
    return Shown(s, view, block_figures(view))


def test_token_labels_name_a_repeated_word_by_its_place():
    assert token_labels(("the", "dog", "the", "cat", "the")) == ("the (1st)", "dog", "the (2nd)", "cat", "the (3rd)")
    assert token_labels(("a", "b")) == ("a", "b")


@pytest.mark.parametrize("key", list(STAGES))
def test_every_stage_draws_a_valid_figure_with_its_box_lit(key):
    view = shown(stage=STAGES[key], layer=2, head=3).view
    go.Figure(diagram(view))  # validated by Plotly here (the app skips validation)
    go.Figure(stage_figure(view))
    bold = [a["text"] for a in diagram(view)["layout"]["annotations"] if a["text"].startswith("<b>")]
    assert len(bold) == 1 and key in {k for k, label in STAGES.items() if label in bold[0].replace("&amp;", "&")}
    assert len(pd.read_csv(io.StringIO(stage_csv(view)))) == 11  # a row per token


def test_the_diagram_draws_the_residual_stream_from_each_sublayers_input_to_its_add():
    view = shown().view
    spec = diagram(view)
    paths = [s["path"] for s in spec["layout"]["shapes"] if s["type"] == "path" and "0.08" in s["path"]]
    keys = list(STAGES)
    row = {k: len(keys) - 1 - i for i, k in enumerate(keys)}
    # x enters at "+ position" (the input) and leaves into the first Add; that sum into the second Add
    assert paths == [f"M 0.16 {row['input']} L 0.08 {row['input']} L 0.08 {row['attn_residual']} L 0.16 "
                     f"{row['attn_residual']}",
                     f"M 0.16 {row['attn_residual']} L 0.08 {row['attn_residual']} L 0.08 {row['ffn_residual']} L "
                     f"0.16 {row['ffn_residual']}"]
    assert stage_shape(view, "qkv") == "3 × 4 × 11 × 16" and stage_shape(view, "qkv", one_head=True) == "3 × 11 × 16"
    assert stage_shape(view, "ffn_hidden") == "11 × 256" and stage_shape(view, "logits") == "11 × 63"


def test_facts_against_closed_forms_and_the_modules():
    facts = block_facts(shown(stage=STAGES["input"], token="the (2nd)"))
    d, d_ff = 64, 256
    assert facts["attn"] == 4 * (d * d + d) and facts["ffn"] == 2 * d * d_ff + d_ff + d
    assert facts["proj"] == d * d + d and facts["ffn_share"] == pytest.approx(33088 / (33088 + 16640))
    assert facts["pos_norm"] == pytest.approx(math.sqrt(d / 2), abs=1e-4)  # d/2 (sin, cos) pairs of length 1
    assert facts["embed_cos"] == pytest.approx(1.0, abs=1e-6)
    model = load_model(MODEL)
    row = model.model.encoder.embed.weight[model.task.vocab.index("the")].detach().numpy() * math.sqrt(d)
    assert facts["word_norm"] == pytest.approx(float(np.linalg.norm(row)), rel=1e-5)


def test_the_zeros_counted_are_the_relu_hidden_units_of_the_token():
    s = shown(stage=STAGES["ffn_hidden"], token="it")
    facts = block_facts(s)
    model = load_model(MODEL).model
    layer = model.encoder.layers[0]
    x = torch.tensor(np.asarray(s.view.trace["layers.0.attn_residual"]))
    hidden = torch.relu(layer.ffn.linear1(layer.ffn_norm(x)))[s.view.row]  # torch's own modules
    assert facts["zeros"] == int((hidden == 0).sum()) and 0 < facts["zeros"] < 256


def test_each_claim_can_fail():
    """Every claim's predicate is false somewhere it could be shown (they are not always true)."""
    assert BLOCK_CLAIMS["position_added"].holds(shown(stage=STAGES["input"]))  # "the" twice
    once = shown(stage=STAGES["input"], sentence="the animal didn't cross because it was too tired")
    assert once.view.trace.tokens.count("the") == 1 and not BLOCK_CLAIMS["position_added"].holds(once)
    weak_head = shown(stage=STAGES["weights"], layer=1, head=1)
    assert not BLOCK_CLAIMS["one_key"].holds(weak_head)  # layer 1's heads spread their weight
    assert BLOCK_CLAIMS["one_key"].holds(shown(stage=STAGES["weights"], layer=2, head=1))
    # the model's answer at a word other than "it" is not a word of the sentence named with confidence
    others = [t for t in token_labels(tuple(PRESETS["too tired"].split())) if t != "it"]
    assert not all(BLOCK_CLAIMS["output"].holds(shown(stage=STAGES["probabilities"], token=t)) for t in others)


def test_the_stacks_section_reads_the_shipped_curves():
    from explorer.analysis.stacks import stack_curves, stack_facts
    from explorer.lessons.block.stacks import STACK_CLAIMS, StackSettings, stack_figure, stack_view

    view = stack_view(StackSettings())
    spec = stack_figure(view)
    go.Figure(spec)
    lines = {t["name"]: t["y"] for t in spec["data"] if t.get("name")}
    curves = stack_curves()
    np.testing.assert_allclose(lines["8 layers, plain"], curves.loss[("deep", "plain")].mean(axis=0))
    assert set(lines) == {"2 layers, plain", "2 layers, residual", "8 layers, plain", "8 layers, residual"}
    shown = Shown(view.settings, view, None)
    assert STACK_CLAIMS["degradation"].holds(shown) and STACK_CLAIMS["residual_helps"].holds(shown)
    facts = stack_facts(curves)
    assert STACK_CLAIMS["degradation"].values(shown)["deep_plain_mean"] == facts.final[("deep", "plain")].mean
    accuracy = stack_figure(stack_view(StackSettings()), curve="accuracy")
    assert accuracy["layout"]["yaxis"]["range"] == [0, 1.02]


def test_the_embedding_box_reads_each_shipped_table():
    from explorer.analysis.embeddings import token_embeddings
    from explorer.lessons.block.boxes import embedding_box

    box = embedding_box()
    coreference = next(r for r in box.rows if r[0] == MODEL)
    assert coreference == (MODEL, "63", "64", "no")  # 63 entries, rows of 64: not shorter
    assert box.rows[-1][1:3] == (f"{token_embeddings().shape[0]:,}", "384")
    assert box.finding.startswith("All 3 shipped toy models")
