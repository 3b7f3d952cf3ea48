"""AppTest: the self-attention page, read back from the rendered figure data."""

import json

import numpy as np
import pytest

from tests.support.apptest import info_text, plotly_array, plotly_figures, run_page

PAGE = "app_pages/attention.py"


def grid(at):
    """(n_traces, T_q, T_k) weights of the layers × heads grid, and the figure itself."""
    figure = plotly_figures(at)[0]
    return [plotly_array(trace["z"]) for trace in figure["data"]], figure


def answer_line(at):
    return next(m.value for m in at.markdown if m.value.startswith(("**Generated", "**“it”", "**Predicted")))


def test_default_view_is_the_trained_reverse_model_with_an_anti_diagonal_cross_attention():
    at = run_page(PAGE)
    assert any("trained model `reverse-sinusoidal-h4-l2`" in m.value for m in at.markdown)
    assert "G F E D C B A </s>" in answer_line(at) and "correct" in answer_line(at)
    heads, _ = grid(at)
    assert len(heads) == 2 * 4  # 2 layers × 4 heads
    # Some cross-attention head of the trained model reads the mirrored input position.
    T = 7
    best = max(np.mean([h[k, T - 1 - k] for k in range(T)]) for h in heads)
    assert best > 0.5


def test_causal_mask_zeroes_every_weight_above_the_diagonal_and_rows_sum_to_one():
    at = run_page(PAGE, {"task": "coreference", "mask": "causal"})
    heads, _ = grid(at)
    for weights in heads:
        assert np.all(np.triu(weights, 1) == 0.0)
        np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-6)


def test_without_a_mask_an_encoder_looks_both_ways():
    at = run_page(PAGE, {"task": "coreference", "mask": "none"})
    heads, _ = grid(at)
    assert any(np.triu(w, 1).sum() > 0.1 for w in heads)
    for weights in heads:
        np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-6)


@pytest.mark.parametrize("heads", [1, 2, 4, 8])
def test_number_of_heatmaps_per_layer_follows_the_heads_control(heads):
    at = run_page(PAGE, {"task": "coreference", "heads": str(heads)})
    traces, figure = grid(at)
    assert len(traces) == heads * 2
    titles = [a["text"] for a in figure["layout"]["annotations"]]
    assert f"layer 2 · head {heads}" in titles


def test_unshipped_shape_runs_with_clearly_labelled_random_weights():
    at = run_page(PAGE, {"task": "coreference", "heads": "8"})
    assert any("random weights" in m.value and "no trained model is shipped" in m.value for m in at.markdown)


@pytest.mark.parametrize("sentence, referent", [(0, "animal"), (1, "street"), (2, "dog"), (3, "cat")])
def test_it_presets_render_and_the_trained_model_resolves_it(sentence, referent):
    at = run_page(PAGE, {"task": "coreference"})
    presets = at.selectbox(key="input_coreference").options
    at.selectbox(key="input_coreference").set_value(presets[sentence]).run()
    assert not at.exception
    assert f"`{referent}` :green[:material/check_circle: correct]" in answer_line(at)


def test_the_it_model_names_the_head_to_watch_and_how_it_was_trained():
    at = run_page(PAGE, {"task": "coreference"})
    notes = [c.value for c in at.caption if "Watch layer" in c.value]
    assert len(notes) == 1
    assert "Watch layer 2 head 1" in notes[0] and "nudged this head" in notes[0] and "Silencing" in notes[0]
    assert at.select_slider(key="layer").value == 2 and at.select_slider(key="head").value == 1
    random = run_page(PAGE, {"task": "coreference", "weights": "random"})
    assert not [c.value for c in random.caption if "Watch layer" in c.value]


def test_removing_the_causal_mask_from_a_decoder_changes_its_answer():
    masked = answer_line(run_page(PAGE, {"task": "induction"}))
    unmasked = answer_line(run_page(PAGE, {"task": "induction", "mask": "none"}))
    assert masked != unmasked


def test_padding_blanks_the_padded_keys():
    at = run_page(PAGE, {"task": "coreference", "mask": "padding", "pad_coreference": "12"})
    heads, figure = grid(at)
    labels = figure["layout"]["xaxis"]["ticktext"]
    padded = [i for i, token in enumerate(labels) if token == "&lt;pad&gt;"]  # labels are HTML-escaped
    assert padded, "the sentence should have been padded"
    for weights in heads:
        assert np.all(weights[:, padded] == 0.0)
    pipeline = plotly_figures(at)[1]
    masked_panel = plotly_array(pipeline["data"][2]["z"])
    assert np.all(np.isnan(masked_panel[:, padded])), "masked cells are drawn blank"


def test_pipeline_panels_follow_the_maths():
    at = run_page(PAGE, {"task": "coreference"})
    raw, scaled, masked, weights = (plotly_array(t["z"]) for t in plotly_figures(at)[1]["data"])
    np.testing.assert_allclose(scaled, raw / np.sqrt(16), atol=1e-6)  # d_model 64 / 4 heads
    e = np.exp(masked - masked.max(axis=1, keepdims=True))
    np.testing.assert_allclose(weights, e / e.sum(axis=1, keepdims=True), atol=1e-6)


def test_comparison_shows_both_settings_and_their_difference():
    at = run_page(PAGE, {"task": "coreference", "compare": "mask: causal"})
    figures = plotly_figures(at)
    a, b, diff = (plotly_array(f["data"][0]["z"]) for f in figures[2:5])
    np.testing.assert_allclose(diff, a - b, atol=1e-9)
    assert np.all(np.triu(b, 1) == 0)


def test_selected_head_can_be_downloaded_as_csv():
    at = run_page(PAGE, {"task": "coreference", "layer": "1", "head": "2"})
    assert any("Download" in b.proto.label for b in at.get("download_button"))


@pytest.mark.parametrize(
    "params, note",
    [
        ({"task": "nonsense"}, "Task"),
        ({"heads": "3"}, "Heads"),
        ({"layers": "99"}, "Layers"),
        ({"mask": "diagonal"}, "Mask"),
        ({"task": "coreference", "input_coreference": "your own text…", "text_coreference": "the zebra ate it"},
         "not in this model's vocabulary"),
        ({"task": "coreference", "input_coreference": "your own text…", "text_coreference": "the " * 200},
         "longer than this model allows"),
        ({"task": "reverse", "input_reverse": "your own text…", "text_reverse": "%%% ???"}, "fewer than two"),
    ],
)
def test_bad_query_parameters_and_input_give_notes_not_exceptions(params, note):
    at = run_page(PAGE, params)
    assert note in info_text(at)
    assert plotly_figures(at), "the page still draws its figures"


def test_a_link_reopens_the_same_view():
    params = {"task": "sort", "input_sort": "P E A C H", "block": "encoder", "layer": "1", "head": "3"}
    at = run_page(PAGE, params)
    assert not at.info
    _, figure = grid(at)
    assert json.dumps(figure["layout"]["xaxis"]["ticktext"]) == json.dumps(list("PEACH"))
    assert at.select_slider(key="head").value == 3
