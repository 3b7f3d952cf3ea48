"""explorer.lessons.attention.figures: the layer × head grid and one head's pipeline pass Plotly's full
validation, share their colour scales, and stay small at the largest settings."""

from itertools import pairwise

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures import heads
from explorer.figures.common import (
    DIVERGING,
    FONT_SIZE,
    GRID_WIDTH_PX,
    LABEL_FONT_PX,
    colour_list,
    heatmap,
    label_step,
    plotly_text,
)
from explorer.lessons.attention import figures
from explorer.lessons.attention.figures import MASK_GREY
from harness.apptest import plotly_array
from harness.contrast import contrast

TOKENS = ["<s>", "the", "cat", "the", "</s>"]


def validated(fig: go.Figure) -> dict:
    """Rebuild the figure with validation on (raises on any invalid property) and return its dict."""
    return go.Figure(fig.to_dict()).to_dict()


@pytest.mark.parametrize("layers, heads", [(1, 1), (2, 4), (3, 8)])
def test_attention_grid_is_valid_with_one_shared_colour_scale(layers, heads):
    """One heatmap per layer: its heads side by side, each panel's cells exactly its weights, a
    blank column between two heads that is `head_gap` wide on the axis, and the ticks at the keys."""
    weights = np.random.default_rng(0).random((layers, heads, 5, 5))
    spec = validated(figures.attention_grid(weights, TOKENS, TOKENS, selected=(layers - 1, heads - 1)))
    assert len(spec["data"]) == layers
    assert {trace["coloraxis"] for trace in spec["data"]} == {"coloraxis"}
    assert spec["layout"]["coloraxis"]["cmin"] == 0 and spec["layout"]["coloraxis"]["cmax"] == 1
    gap = figures.head_gap(heads, 5)
    stride = 5 + gap
    for layer, trace in enumerate(spec["data"]):
        z, columns = plotly_array(trace["z"]), trace["x"]
        assert z.shape == (5, heads * stride - gap) and len(columns) == z.shape[1] == len(set(columns))
        escaped = [plotly_text(token) for token in TOKENS]  # Plotly reads labels as HTML
        assert trace["y"] == [f"{q} {token}" for q, token in enumerate(escaped)]
        for head in range(heads):
            panel = z[:, head * stride:head * stride + 5]
            np.testing.assert_array_equal(panel, weights[layer, head].astype(np.float32))
            assert columns[head * stride:head * stride + 5] == [f"head {head + 1} · {k} {token}"
                                                                for k, token in enumerate(escaped)]  # key k of head h
            assert np.all(np.isnan(z[:, head * stride + 5:(head + 1) * stride])), "blank between two heads"
        assert "customdata" not in trace and "%{x}" in trace["hovertemplate"] and "%{y}" in trace["hovertemplate"]
        assert spec["layout"]["xaxis" if layer == 0 else f"xaxis{layer + 1}"]["type"] == "category"
    shapes = spec["layout"]["shapes"]
    assert len(shapes) == 1 and shapes[0]["x0"] < (heads - 1) * (5 + gap) < shapes[0]["x1"] < heads * (5 + gap)


def weight_traces(spec) -> list[dict]:
    return [t for t in spec["data"] if t["type"] == "heatmap" and "coloraxis" in t]


def grey_traces(spec) -> list[dict]:
    return [t for t in spec["data"] if t["type"] == "heatmap" and t.get("colorscale", [[0, ""]])[0][1] == MASK_GREY]


def test_pipeline_draws_masked_cells_grey_not_as_a_value():
    raw = np.arange(25, dtype=float).reshape(5, 5)
    masked = np.where(np.tril(np.ones((5, 5))) > 0, raw / 2, -np.inf)
    spec = validated(figures.attention_pipeline_figure(raw, raw / 2, masked, np.eye(5), TOKENS, TOKENS, 4))
    panels = weight_traces(spec)
    above = np.triu_indices(5, 1)
    for panel in panels[2:]:  # the mask and the weights: blank in the colour scale above the diagonal …
        assert np.all(np.isnan(plotly_array(panel["z"])[above]))
    greys = grey_traces(spec)
    assert len(greys) == 2  # … and covered by grey cells there, on the mask and weights panels
    for grey in greys:
        cells = plotly_array(grey["z"])
        assert np.all(cells[above] == 1) and np.all(np.isnan(cells[np.tril_indices(5)]))
    assert panels[3]["coloraxis"] == "coloraxis2"


def test_grid_greys_masked_cells_with_a_legend_entry_and_pages_layers():
    weights = np.tril(np.ones((2, 3, 4, 4))) / np.arange(1, 5)[:, None]
    allowed = np.broadcast_to(np.tril(np.ones((4, 4), dtype=bool)), weights.shape)
    spec = validated(figures.attention_grid(weights[1:], TOKENS[:4], TOKENS[:4], allowed=allowed[1:],
                                            layer_numbers=[2], selected=(0, 1)))
    assert len(weight_traces(spec)) == 1 and len(grey_traces(spec)) == 1  # one row: one of each
    grey, weight = plotly_array(grey_traces(spec)[0]["z"]), plotly_array(weight_traces(spec)[0]["z"])
    for head in range(3):  # each panel greyed above its diagonal, blank in the colour scale there
        above = np.triu(np.ones((4, 4), dtype=bool), 1)
        panel = slice(head * 5, head * 5 + 4)
        assert np.all(grey[:, panel][above] == 1) and np.all(np.isnan(weight[:, panel][above]))
        assert np.all(np.isnan(grey[:, panel][~above]))
    legend = [t for t in spec["data"] if t["type"] == "scatter"]
    assert len(legend) == 1 and legend[0]["name"].startswith("masked") and legend[0]["marker"]["color"] == MASK_GREY
    titles = [a["text"] for a in spec["layout"]["annotations"]]
    assert titles == ["head 1", "head 2", "head 3"]
    assert spec["layout"]["yaxis"]["title"]["text"] == "layer 2", "the layer names its row once, on the left"
    unmasked = validated(figures.attention_grid(weights, TOKENS[:4], TOKENS[:4], allowed=np.ones_like(allowed)))
    assert not grey_traces(unmasked) and not [t for t in unmasked["data"] if t["type"] == "scatter"]


def test_specs_carry_explicit_colour_lists_not_names():
    """plotly.js does not know every scale name (PuOr falls back to red–blue without validation)."""
    z = np.array([[-1.0, 1.0]])
    figs = [heatmap(z, x_labels=["a", "b"], y_labels=["q"], colorscale=DIVERGING),
            figures.attention_pipeline_figure(z, z, z, np.array([[0.5, 0.5]]), ["q"], ["a", "b"], 2),
            figures.attention_grid(np.ones((1, 1, 1, 2)) / 2, ["q"], ["a", "b"])]
    for fig in figs:
        spec = fig.to_plotly_json()
        scales = [t.get("colorscale") for t in spec["data"] if "colorscale" in t]
        scales += [v["colorscale"] for k, v in spec["layout"].items() if k.startswith("coloraxis")]
        assert scales and all(isinstance(s, list) and len(s) > 2 for s in scales)
    purple_orange = colour_list(DIVERGING)
    assert purple_orange[0][1] != purple_orange[-1][1]


def test_a_grid_at_the_largest_settings_stays_small():
    """129 tokens × 8 heads, masked: the largest grid the page draws (more than GRID_PANELS panels are shown
    one layer at a time).  The weights go as float32, the hover labels one per row and one per column (the
    axes' categories), never one per cell: a small grid is a few times smaller than its text per cell was."""
    rng = np.random.default_rng(0)
    weights, tokens = rng.random((1, 8, 129, 129)), [f"t{i}" for i in range(129)]
    causal = np.tril(np.ones((129, 129), dtype=bool))[None, None].repeat(8, axis=1)
    size = len(figures.attention_grid(weights, tokens, tokens, allowed=causal).to_json())
    assert size < 3_000_000, size
    small = figures.attention_grid(weights[:, :4, :8, :8], tokens[:8], tokens[:8]).to_json()
    assert len(small) < 10_000 and "customdata" not in small


def test_a_long_padded_head_pipeline_stays_small():
    """240 tokens (the recall task padded to its longest): the four panels' token-pair hover strings
    would dominate a rerun; past the budget they hover with positions, and the scores go as float32."""
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(240, 240))
    weights = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    tokens = [f"t{i}" for i in range(240)]
    size = len(figures.attention_pipeline_figure(scores, scores, scores, weights, tokens, tokens, 8).to_json())
    assert size < 2_500_000, size
    small = figures.attention_pipeline_figure(scores[:6, :6], scores[:6, :6], scores[:6, :6], weights[:6, :6],
                                              tokens[:6], tokens[:6], 8).to_plotly_json()
    assert all("customdata" in trace for trace in small["data"][:4]), "small heads keep token-pair hover labels"


def tick_labels(axis: dict) -> list[str]:
    return [text for text in axis["ticktext"] if text]


@pytest.mark.parametrize("n", [7, 12, 24, 60])
@pytest.mark.parametrize("heads", [1, 4, 8])
def test_grid_labels_are_upright_or_slanted_never_turned_and_thinned_to_fit(n, heads):
    """Every axis has a fixed angle (Plotly would turn crowded labels 90°), single letters and "<s>"
    stay upright, longer tokens are slanted 45°; the labels shown are evenly thinned, always include
    the first token, and are no more than fit the narrowest panel at the largest font."""
    letters = [chr(65 + i % 26) for i in range(n - 1)]
    for tokens, angle in (([*letters, "<s>"], 0), ([f"word{i}" for i in range(n)], -45)):
        spec = validated(figures.attention_grid(np.full((1, heads, n, n), 1 / n), tokens, tokens))
        x, y = spec["layout"]["xaxis"], spec["layout"]["yaxis"]
        assert x["tickangle"] == angle and y["tickangle"] == 0
        stride = n + figures.head_gap(heads, n)
        for axis, panels in ((x, heads), (y, 1)):
            shown = [v for v in axis["tickvals"] if v < n]  # the first panel's
            every = shown[1] - shown[0] if len(shown) > 1 else n
            assert shown == list(range(0, n, every)), "even weights: every k-th token, from the first"
            assert all(b - a >= every for a, b in pairwise(axis["tickvals"])), "as far apart across panels"
            assert all(v % stride < n for v in axis["tickvals"]), "no label on the blank between two heads"
            for h in range(panels):  # every panel labelled about as densely
                assert len([v for v in axis["tickvals"] if v // stride == h]) >= len(shown) - 1
            assert len(axis["ticktext"]) == len(axis["tickvals"]) and axis["automargin"] is True
        columns = heads * stride - (stride - n)  # the row's width on the axis, blanks included
        cell = GRID_WIDTH_PX * (x["domain"][1] - x["domain"][0]) / columns  # a column's width, px
        shown = x["tickvals"][:len(x["tickvals"]) // heads]
        for a, b in pairwise(shown):  # each pair of neighbours clear of each other at 18 px
            if angle:
                assert (b - a) * cell >= 1.7 * LABEL_FONT_PX
            else:
                assert (b - a) * cell >= 0.62 * LABEL_FONT_PX * (len(tokens[a]) + len(tokens[b])) / 2 + 9
        if len(shown) > 1 and shown[1] > 1:  # and no denser step would do
            assert (shown[1] - 1) * cell < (1.7 * LABEL_FONT_PX if angle else 0.62 * LABEL_FONT_PX * 3 + 9)
        assert tick_labels(x)[0] in ("A", "word0")
        assert not [name for name in spec["layout"] if name.startswith("yaxis") and name != "yaxis"], \
            "one layer, one row: its tokens label it once, on the left"


def test_a_thinned_panel_names_the_column_its_head_reads_from():
    """Eleven words in four heads side by side thin to a label every few columns: each panel labels
    its brightest key columns, so head 1's one bright column ("animal", the second) is named, and
    head 2's (the last) in its own panel; labels stay as far apart as thinning asked."""
    words = ["the", "animal", "didn't", "cross", "the", "street", "because", "it", "was", "too", "tired"]
    n = len(words)
    weights = np.full((1, 4, n, n), 0.02)
    weights[0, 0, :, 1] = 1.0
    weights[0, 1, :, n - 1] = 1.0
    spec = validated(figures.attention_grid(weights, words, words))
    x = spec["layout"]["xaxis"]
    stride = n + figures.head_gap(4, n)
    panels = [[(v - h * stride, t) for v, t in zip(x["tickvals"], x["ticktext"], strict=True)
               if h * stride <= v < h * stride + n] for h in range(4)]
    assert len(panels[0]) < n, "the labels are thinned at this width"
    assert (1, "animal") in panels[0] and (n - 1, "tired") in panels[1]
    every = min(b - a for a, b in pairwise(v for v, _ in panels[2]))
    for panel in panels:
        assert all(b - a >= every for a, b in pairwise(v for v, _ in panel))
        assert all(words[v] == t for v, t in panel)


def test_few_tokens_are_all_labelled_and_label_step_grows_with_crowding():
    assert label_step(list("ABCDEFG"), 400) == 1
    assert label_step(list("ABCDEFG"), 60) > 1
    assert label_step(["because"] * 12, 100) > label_step(["because"] * 12, 300) >= 1
    assert label_step(list("AB") * 12, 600, vertical=True) == 1 and label_step(list("AB") * 12, 200, vertical=True) == 3
    spec = validated(figures.attention_grid(np.full((1, 1, 5, 5), 0.2), TOKENS, TOKENS))
    assert spec["layout"]["xaxis"]["ticktext"] == ["&lt;s&gt;", "the", "cat", "the", "&lt;/s&gt;"]


def test_pipeline_labels_are_thinned_like_the_grid():
    tokens = [f"t{i}" for i in range(120)]
    z = np.zeros((120, 120))
    spec = validated(figures.attention_pipeline_figure(z, z, z, z + 1 / 120, tokens, tokens, 8))
    assert 1 < len(spec["layout"]["xaxis"]["tickvals"]) == len(spec["layout"]["xaxis4"]["tickvals"]) < 40
    assert 1 < len(spec["layout"]["yaxis"]["tickvals"]) < 120, "rows 20 px apart: every other one labelled"
    assert spec["layout"]["xaxis"]["tickangle"] == -45 and spec["layout"]["yaxis"]["tickangle"] == 0  # "t100"


@pytest.mark.parametrize("n", [4, 8, 12, 24, 60])
@pytest.mark.parametrize("layers", [1, 2])
def test_the_presenting_height_is_never_taller_than_the_desk_and_leaves_room_for_every_row(n, layers):
    """Presentation mode draws the grid at the height its `layout.meta` names: no taller than on the
    desk, and for the rows it labels at least a line of the 18 px font each.  A grid of several layers
    (never presented: presenting shows one layer at a time) labels its rows as the desk allows."""
    from explorer.figures.common import PRESENT_HEIGHT
    from explorer.figures.presentation import enlarge_plotly

    tokens = [f"t{i}" for i in range(n)]
    spec = validated(figures.attention_grid(np.full((layers, 2, n, n), 1 / n), tokens, tokens))
    present = enlarge_plotly(spec)
    assert present["layout"]["height"] == spec["layout"]["meta"][PRESENT_HEIGHT] <= spec["layout"]["height"]
    y = spec["layout"]["yaxis"]
    every = y["tickvals"][1] - y["tickvals"][0] if len(y["tickvals"]) > 1 else n
    domain = y["domain"][1] - y["domain"][0]
    plot_px = present["layout"]["height"] - present["layout"]["margin"]["t"] - present["layout"]["margin"]["b"]
    font = LABEL_FONT_PX if layers == 1 else FONT_SIZE - 2  # the desk's tick font for several layers
    assert plot_px * domain / n * every >= 1.2 * font, f"labelled rows clear of each other at {font} px"
    if layers > 1:
        assert spec["layout"]["meta"][PRESENT_HEIGHT] == spec["layout"]["height"]
        assert every == label_step(tokens, (spec["layout"]["height"] - 70) * domain, vertical=True, font_px=font)


@pytest.mark.parametrize("n", [11, 24, 60])
def test_thinned_rows_keep_the_row_a_step_asks_about_labelled(n):
    """Presenting, the coreference grid labelled every other row from the first and left "it" (row 7)
    unnamed, the row step 1 asks about: thinned rows are counted from the focus row instead."""
    tokens = [f"t{i}" for i in range(n)]
    for focus in (0, 7, n - 1):
        y = validated(figures.attention_grid(np.full((1, 4, n, n), 1 / n), tokens, tokens,
                                             focus_row=focus))["layout"]["yaxis"]
        every = y["tickvals"][1] - y["tickvals"][0]
        assert every > 1 and focus in y["tickvals"] and f"t{focus}" in y["ticktext"]
        assert all(b - a == every for a, b in pairwise(y["tickvals"])) and y["tickvals"][0] < every


@pytest.mark.parametrize("sentence", range(4))
def test_the_coreference_grid_names_the_row_of_it_at_the_desk_and_presenting(sentence):
    from explorer.figures.presentation import enlarge_plotly
    from explorer.lessons.attention.models import PRESETS
    from explorer.lessons.attention.view import AttentionSettings, attention_lesson_view

    text = PRESETS["coreference"][sentence]
    view = attention_lesson_view(AttentionSettings(task="coreference", mask="none", input_coreference=text,
                                                   text_coreference=text, layer=2))
    shown = figures.attention_figures(view)
    for figure in (shown.layer_grid, shown.grid):
        y = enlarge_plotly(validated(figure))["layout"]["yaxis"]
        assert view.focus_row is not None and view.focus_row in y["tickvals"] and "it" in y["ticktext"]


SENTENCE = ["the", "animal", "didn't", "cross", "the", "street", "because", "it", "was", "too", "tired"]


def _rows(n: int, seed: int = 0) -> np.ndarray:
    """Softmax rows (n × n) with a few sharp ones, from a fixed generator."""
    logits = np.random.default_rng(seed).normal(0, 2.5, (n, n))
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_the_large_head_labels_every_token_upright_and_frames_the_row_asked_about():
    """Every query and key token is a tick label, upright; long words stand on two staggered lines rather
    than overlapping or turning; the row asked about is framed and its weights of 0.1 or more, and only
    those, are printed in their cells (11 × 11: no other cell is printed)."""
    weights, it = _rows(len(SENTENCE)), SENTENCE.index("it")
    spec = validated(heads.head_heatmap(weights, SENTENCE, SENTENCE, focus_row=it))
    x, y = spec["layout"]["xaxis"], spec["layout"]["yaxis"]
    assert x["tickangle"] == 0 and [t.removeprefix("<br>") for t in x["ticktext"]] == SENTENCE
    assert any(t.startswith("<br>") for t in x["ticktext"]), "11 words in 520 px: staggered"
    assert list(y["ticktext"]) == SENTENCE and list(y["tickvals"]) == list(range(len(SENTENCE)))
    (frame,) = spec["layout"]["shapes"]
    assert (frame["y0"], frame["y1"]) == (it - 0.5, it + 0.5) and frame["line"]["color"] == heads.FOCUS
    printed = {(a["x"], a["y"]): a["text"] for a in spec["layout"]["annotations"]}
    assert printed == {(k, it): f"{weights[it, k]:.2f}" for k in range(len(SENTENCE)) if weights[it, k] >= 0.1}
    assert printed, "the generator gives the row of 'it' at least one weight of 0.1"


def test_a_small_head_prints_every_weight_of_a_tenth_and_greys_what_is_masked():
    weights = np.tril(_rows(5, seed=1))
    weights /= weights.sum(axis=1, keepdims=True)
    allowed = np.tril(np.ones((5, 5), dtype=bool))
    spec = validated(heads.head_heatmap(weights, TOKENS, TOKENS, allowed=allowed))
    printed = {(a["x"], a["y"]) for a in spec["layout"]["annotations"] if "text" in a and a["text"][0].isdigit()}
    assert printed == {(k, q) for q in range(5) for k in range(5) if allowed[q, k] and weights[q, k] >= 0.1}
    grey = next(t for t in spec["data"] if t["type"] == "heatmap" and t.get("colorscale") == [[0, MASK_GREY],
                                                                                           [1, MASK_GREY]])
    np.testing.assert_array_equal(np.isnan(plotly_array(grey["z"])), allowed)
    assert all(t["tickangle"] == 0 for name, t in spec["layout"].items() if name == "xaxis")


def _segments(spec: dict) -> list[tuple[str, float, int, int]]:
    """(colour, width, query row, key row) of every line the lines picture draws."""
    found = []
    for trace in spec["data"]:
        if trace["mode"] != "lines" or trace["x"] == [None]:
            continue
        ys = trace["y"]
        for i in range(0, len(ys), 3):
            found.append((trace["line"]["color"], trace["line"]["width"], ys[i], ys[i + 1]))
    return found


def test_the_lines_draw_each_pair_once_and_thicker_for_more_weight():
    """Without a row asked about: every (query, key) pair with at least 0.03 of the weight is one line,
    from its query's row to its key's, and a heavier pair is never drawn thinner."""
    weights = _rows(6, seed=2)
    spec = validated(heads.attention_lines(weights[None], [*TOKENS, "x"], [*TOKENS, "x"], head=0))
    lines = _segments(spec)
    drawn = sorted((int(q), int(k)) for _, _, q, k in lines)
    assert drawn == sorted((int(q), int(k)) for q, k in zip(*np.nonzero(weights >= 0.03), strict=True))
    by_width = sorted((weights[int(q), int(k)], width) for _, width, q, k in lines)
    assert all(a[1] <= b[1] for a, b in pairwise(by_width)), "a heavier pair drawn thinner"
    assert not spec["layout"]["showlegend"]


def test_the_lines_of_the_row_asked_about_give_every_head_its_colour_and_its_printed_weights():
    """With the row of "it": only that row's lines, for each head of the layer, in one colour a head (no
    two alike), each head's lines side by side; beside each key, each head's weight of at least 0.1 in
    that head's colour, and no other number."""
    n, it = len(SENTENCE), SENTENCE.index("it")
    layer = np.stack([_rows(n, seed=s) for s in range(4)])
    spec = validated(heads.attention_lines(layer, SENTENCE, SENTENCE, head=1, focus_row=it))
    lines = _segments(spec)
    colours = heads.HEAD_COLOURS[:4]
    assert len(set(colours)) == 4
    for h, colour in enumerate(colours):
        mine = [(q, k) for c, _, q, k in lines if c == colour]
        shift = {round(q - it, 6) for q, _ in mine}  # the head's lines, moved off the others' by one offset
        assert len(shift) == 1 and abs(next(iter(shift))) < 0.5
        assert sorted(round(k - (q - it)) for q, k in mine) == [k for k in range(n) if layer[h, it, k] >= 0.03]
    keys = spec["data"][-1]["text"]
    for k, text in enumerate(keys):
        wanted = [f'<span style="color:{colours[h]}">{layer[h, it, k]:.2f}</span>' for h in range(4)
                  if layer[h, it, k] >= 0.1]
        assert text == plotly_text(SENTENCE[k]) + ("  " + " ".join(wanted) if wanted else "")
    assert [t["name"] for t in spec["data"] if t["x"] == [None]] == [f"head {h}" for h in range(1, 5)]


def test_labels_are_dark_enough_for_a_projector():
    """WCAG AA asks 4.5:1 for text; the labels of the large head and the lines are near black on white."""
    assert contrast(heads.INK) >= 4.5
    assert contrast(heads.FOCUS) >= 3.0  # a frame and bold text: the large-text bar
