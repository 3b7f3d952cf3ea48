"""AppTest: the self-attention page, read back from the rendered figure data."""

import json
import re

import numpy as np
import pytest

from harness.apptest import info_text, plotly_array, plotly_figure, plotly_figures, run_page

PAGE = "explorer/lessons/attention/attention.py"


def panels(figure, grey: bool) -> list[np.ndarray]:
    """Each panel's cells, layer by layer and head by head: a layer's row is one heatmap (its weights,
    or its grey mask cells), its heads side by side with blank columns between two; each column is
    named by its category, "head h · k token"."""
    found = []
    for trace in figure["data"]:
        if trace["type"] != "heatmap" or ("coloraxis" not in trace) != grey:
            continue
        row, columns = plotly_array(trace["z"]), trace["x"]
        heads = sorted({c.split(" · ")[0] for c in columns if c.strip()}, key=lambda h: int(h.split()[1]))
        for head in heads:
            found.append(row[:, [i for i, c in enumerate(columns) if c.startswith(f"{head} · ")]])
    return found


def grid(at):
    """(n_panels, T_q, T_k) weights of the layers × heads grid (masked cells 0, as the model has them),
    and the figure itself."""
    figure = plotly_figure(at, "grid")
    return [np.nan_to_num(panel) for panel in panels(figure, grey=False)], figure


def grey_cells(figure) -> list[np.ndarray]:
    """Per panel, True where the grid draws a masked (grey) cell."""
    return [panel == 1 for panel in panels(figure, grey=True)]


def label(at) -> str:
    return " ".join(c.value for c in at.caption if c.value.startswith("Running"))


def answer_line(at):
    return next(m.value for m in at.markdown if m.value.startswith(("**Generated", "**“it”", "**Predicted")))


def test_default_view_is_the_trained_reverse_models_masked_decoder():
    """The page opens on the mask lesson: the decoder's causal self-attention, its future greyed."""
    at = run_page(PAGE)
    assert "trained model `reverse-sinusoidal-h4-l2`" in label(at)
    assert "G F E D C B A </s>" in answer_line(at) and "correct" in answer_line(at)
    assert at.radio(key="block").value == "decoder"
    heads, figure = grid(at)
    assert len(heads) == 2 * 4  # 2 layers × 4 heads
    for grey in grey_cells(figure):
        T = grey.shape[0]
        np.testing.assert_array_equal(grey, np.triu(np.ones((T, T), dtype=bool), 1))
    assert any(t["type"] == "scatter" and t["name"].startswith("masked") for t in figure["data"])


def test_trained_reverse_cross_attention_runs_along_the_anti_diagonal():
    at = run_page(PAGE, {"block": "cross"})
    heads, figure = grid(at)
    assert len(heads) == 2 * 4 and not grey_cells(figure), "cross-attention masks nothing here"
    # Some cross-attention head of the trained model reads the mirrored input position.
    T = 7
    best = max(np.mean([h[k, T - 1 - k] for k in range(T)]) for h in heads)
    assert best > 0.5


def test_causal_mask_zeroes_every_weight_above_the_diagonal_and_rows_sum_to_one():
    at = run_page(PAGE, {"task": "coreference", "mask": "causal"})
    heads, figure = grid(at)
    for weights, grey in zip(heads, grey_cells(figure), strict=True):
        assert np.all(np.triu(weights, 1) == 0.0)
        np.testing.assert_array_equal(grey, np.triu(np.ones_like(grey), 1)), "masked cells are grey"
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
    paged = heads * 2 > 8  # beyond 8 panels the grid shows the enlarged layer's heads only
    assert len(traces) == (heads if paged else heads * 2)
    titles = [a["text"] for a in figure["layout"]["annotations"]]  # "head h" over each panel
    rows = [axis["title"]["text"] for name, axis in figure["layout"].items()
            if name.startswith("yaxis") and "title" in axis]  # "layer n" left of its row
    assert titles[-1] == f"head {heads}" and rows[-1] == "layer 2"
    assert ("layer 1" in rows) != paged


def test_unshipped_shape_runs_with_clearly_labelled_random_weights():
    at = run_page(PAGE, {"task": "coreference", "heads": "8"})
    assert "random weights" in label(at) and "no trained model is shipped" in label(at)


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
    assert "Watch layer 2 head 1" in notes[0] and "nudged this head's attention" in notes[0]
    assert "Silence one head at a time" in notes[0]
    assert at.select_slider(key="layer").value == 2 and at.select_slider(key="head").value == 1
    random = run_page(PAGE, {"task": "coreference", "weights": "random"})
    assert not [c.value for c in random.caption if "Watch layer" in c.value]


def test_removing_the_causal_mask_from_a_decoder_changes_its_answer():
    masked = answer_line(run_page(PAGE, {"task": "induction"}))
    unmasked = answer_line(run_page(PAGE, {"task": "induction", "mask": "none"}))
    assert masked != unmasked


def key_labels(figure) -> list[str]:
    """Every key token of the grid, in order, from the first panel's column categories ("head 1 · k token",
    which the hover shows): the tick labels show only as many as fit."""
    return [c.split(" ", 4)[4] for c in figure["data"][0]["x"] if c.startswith("head 1 · ")]


def test_padding_blanks_the_padded_keys():
    at = run_page(PAGE, {"task": "coreference", "mask": "padding", "pad_coreference": "12"})
    heads, figure = grid(at)
    labels = key_labels(figure)
    padded = [i for i, token in enumerate(labels) if token == "&lt;pad&gt;"]  # labels are HTML-escaped
    assert padded, "the sentence should have been padded"
    for weights, grey in zip(heads, grey_cells(figure), strict=True):
        assert np.all(weights[:, padded] == 0.0) and np.all(grey[:, padded])
    pipeline = plotly_figure(at, "pipeline")
    masked_panel = plotly_array(pipeline["data"][2]["z"])
    assert np.all(np.isnan(masked_panel[:, padded])), "masked cells are blank in the colour scale (grey over them)"


def test_pipeline_panels_follow_the_maths():
    at = run_page(PAGE, {"task": "coreference"})
    raw, scaled, masked, weights = (plotly_array(t["z"]) for t in plotly_figure(at, "pipeline")["data"])
    np.testing.assert_allclose(scaled, raw / np.sqrt(16), atol=1e-6)  # d_model 64 / 4 heads
    e = np.exp(masked - masked.max(axis=1, keepdims=True))
    np.testing.assert_allclose(weights, e / e.sum(axis=1, keepdims=True), atol=1e-6)


def test_comparison_shows_both_settings_and_their_difference():
    at = run_page(PAGE, {"task": "coreference", "compare": "mask: causal"})
    a, b, diff = (plotly_array(plotly_figure(at, key)["data"][0]["z"]) for key in ("compare_a", "compare_b",
                                                                                     "compare_diff"))
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
        ({"task": "coreference", "input_coreference": "your own text…", "text_coreference": "the " * 75},
         "longer than this model allows"),  # 300 characters: as much as the box takes
        ({"task": "coreference", "input_coreference": "your own text…", "text_coreference": "the " * 200},
         "**Your input**: “the the the the the the the the the the …” is 800 characters long"),
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
    assert json.dumps(key_labels(figure)) == json.dumps(list("PEACH"))
    assert at.select_slider(key="head").value == 3


# --- state that is always whole, and honest answers (the classroom issue) ---------------------------


def test_switching_the_task_loads_its_trained_shape_and_natural_mask():
    at = run_page(PAGE, {"heads": "8", "mask": "none"})
    assert "random weights" in label(at)
    at.selectbox(key="task").set_value("induction").run()
    assert not at.exception
    assert at.select_slider(key="heads").value == 2 and at.radio(key="mask").value == "causal"
    assert "trained model `induction-sinusoidal-h2-l2`" in label(at)
    assert not info_text(at), "no note about settings the user never typed"
    at.selectbox(key="task").set_value("coreference").run()
    assert at.radio(key="mask").value == "none" and "trained model `coreference" in label(at)
    # What the address bar now holds reopens the same view: the task alone (the rest are its defaults).
    reopened = run_page(PAGE, {"task": "coreference"})
    assert label(reopened) == label(at) and answer_line(reopened) == answer_line(at)


@pytest.mark.parametrize("text", ["the animal didn't cross the street it was too tired",  # "because" missing
                                  "the animal didn't cross the zebra because it was too tired"])  # unknown word
def test_no_verdict_on_text_the_model_cannot_read_whole(text):
    at = run_page(PAGE, {"task": "coreference", "input_coreference": "your own text…", "text_coreference": text})
    line = answer_line(at)
    assert "no verdict" in line and "correct" not in line and "wrong" not in line


def test_a_verdict_on_a_sentence_of_the_grammar():
    text = "the fox didn't chase the goat because it was too sleepy"
    at = run_page(PAGE, {"task": "coreference", "input_coreference": "your own text…", "text_coreference": text})
    assert "correct" in answer_line(at) or "wrong" in answer_line(at)


def test_a_lesson_step_that_changes_the_task_keeps_the_step_settings():
    """Step 7 (reverse, head 1) → step 8 (induction, head 2): the controls that go back to their
    defaults when the task changes keep what the step set."""
    at = run_page(PAGE, {"step": "7"})
    at.button(key="lesson_next").click().run()  # reveal
    at.button(key="lesson_next").click().run()  # step 8
    assert not at.exception and at.selectbox(key="task").value == "induction"
    assert at.select_slider(key="head").value == 2 and at.select_slider(key="layer").value == 2
    at.button(key="lesson_next").click().run()  # reveal step 8
    assert "trained model `induction-sinusoidal-h2-l2`" in label(at) and at.select_slider(key="head").value == 2


def test_the_sidebar_groups_its_controls_and_says_what_the_task_and_the_weights_are():
    at = run_page(PAGE, {"task": "coreference"})
    assert [h.value for h in at.sidebar.header] == ["Model and input", "Model shape", "View"]
    captions = [c.value for c in at.sidebar.caption]
    assert any("it" in c and "refers to" in c for c in captions), "the task's description"
    assert any(c.startswith("Trained weights are shipped for: sinusoidal h4 l2") for c in captions)


@pytest.mark.parametrize("compare", ["mask: causal", "mask: padding", "encoding: learned"])
def test_the_comparison_names_where_the_other_setting_is_drawn(compare):
    # Three panels (this view, the other, their difference) put the other in the middle; two, on the right.
    at = run_page(PAGE, {"task": "coreference", "compare": compare})
    two = any("different sequence lengths" in c.value for c in at.caption)
    said = next(m.value for m in at.markdown if m.value.startswith("Left: this view."))
    assert said.startswith("Left: this view. Right:" if two else "Left: this view. Middle:"), said


def _revealed(step: int):
    """The page at lesson step `step`, its answer revealed, and the answer's text."""
    at = run_page(PAGE, {"step": str(step)})
    at.button(key="lesson_next").click().run()
    answer = next(el.value for el in at.success if f"Step {step} of" in el.value)
    return at, answer


def _figure_texts(figure: dict) -> str:
    """Every text a figure prints: its annotations, its text traces and its tick labels."""
    texts = [a["text"] for a in figure["layout"].get("annotations", [])]
    texts += [t for trace in figure["data"] for t in (trace.get("text") or []) if isinstance(t, str)]
    texts += [t for name, axis in figure["layout"].items() if name.startswith(("xaxis", "yaxis"))
              for t in axis.get("ticktext", [])]
    return " ".join(texts)


@pytest.mark.parametrize("step", [1, 2, 3, 7])
def test_every_weight_the_answer_quotes_is_printed_in_the_figures_beside_it(step):
    """The numbers of a revealed step's answer (weights, two decimals) are printed in the large head or
    its lines, the figures under the answer: steps 1–2 quote the row of "it" in head 1, step 3 the other
    heads' (head 2 "at most 0.57"), step 7 the cross-attention's anti-diagonal."""
    at, answer = _revealed(step)
    quoted = re.findall(r"\b[01]\.\d\d\b", answer)
    assert quoted, answer
    shown = _figure_texts(plotly_figure(at, "head_large")) + " " + _figure_texts(plotly_figure(at, "head_lines"))
    missing = [number for number in quoted if number not in shown]
    assert not missing, f"quoted in the answer, printed in neither figure: {missing} ({answer})"


def test_the_large_head_is_the_enlarged_head_of_the_grid_and_frames_the_row_of_it():
    """The large heatmap is the grid's enlarged panel, cell for cell; on the coreference sentence its
    row of "it" is framed and the lines picture draws that row for every head of the layer."""
    at = run_page(PAGE, {"task": "coreference", "layer": "2", "head": "3"})
    heads, _ = grid(at)
    large = plotly_figure(at, "head_large")
    np.testing.assert_allclose(np.nan_to_num(plotly_array(large["data"][0]["z"])), heads[4 + 2], atol=1e-6)
    tokens = large["layout"]["yaxis"]["ticktext"]
    frame = large["layout"]["shapes"][0]
    assert tokens[round(frame["y0"] + 0.5)] == "it" and round(frame["y1"] - 0.5) == tokens.index("it")
    lines = plotly_figure(at, "head_lines")
    legend = [t["name"] for t in lines["data"] if t.get("showlegend") is not False and t["mode"] == "lines"]
    assert legend == ["head 1", "head 2", "head 3", "head 4"]
