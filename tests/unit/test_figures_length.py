"""explorer.lessons.length.figures: the grouped-query grids are large enough to read at the desk and presenting,
number their heads from 1 as the attention lesson does, and the phrase the page says about where the
heads sharing a key/value head stand holds for the grid drawn."""

from __future__ import annotations

import colorsys
import itertools
import math
import types

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from explorer.analysis.memory import PUBLISHED_SHAPES, attention_scores_bytes, kv_cache_bytes
from explorer.figures.common import OKABE_ITO
from explorer.figures.presentation import enlarge_plotly
from explorer.lessons.attention.figures import attention_grid
from explorer.lessons.length.charts import LINE_BREAK, byte_ticks
from explorer.lessons.length.figures import (
    accuracy_chart,
    accuracy_frame,
    coinciding,
    gqa_figures,
    gqa_sharing,
    line_styles,
    memory_figures,
)
from explorer.lessons.length.parts import GqaSettings, gqa_view

GQA_SHAPES = [(8, 1), (8, 2), (8, 4), (8, 8), (4, 1), (4, 2), (4, 4)]
MIN_PANEL_PX = 150  # a panel's rows, 8 of them, each about as tall as a line of the desk's text or more


def validated(figure) -> dict:
    return go.Figure(figure.to_dict()).to_dict()


def panel_heights(spec: dict) -> list[float]:
    """Each heatmap panel's height in px: its y domain's share of the plot area."""
    layout = spec["layout"]
    plot = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    axes = [value for name, value in layout.items() if name.startswith("yaxis")]
    return [(axis["domain"][1] - axis["domain"][0]) * plot for axis in axes]


@pytest.mark.parametrize(("heads", "kv_heads"), GQA_SHAPES)
def test_the_grouped_query_panels_are_tall_enough_to_read_at_the_desk_and_presenting(heads, kv_heads):
    """The audit saw eight panels about 65 px tall, one over another (step 4: multi-query, h = 8)."""
    desk = validated(gqa_figures(gqa_view(GqaSettings(heads=heads, kv_heads=kv_heads))).grid)
    assert len(desk["data"]) == heads
    for spec in (desk, enlarge_plotly(desk)):
        heights = panel_heights(spec)
        assert len(heights) == heads and min(heights) >= MIN_PANEL_PX, heights


def _titles(spec: dict) -> list[tuple[float, float, int, int]]:
    """(row's y, x, query head, K/V head) of each panel title, as drawn."""
    out = []
    for note in spec["layout"]["annotations"]:
        words = note["text"].split()
        if note["text"].startswith("head"):
            out.append((round(note["y"], 3), note["x"], int(words[1]), int(words[-1])))
    return out


def test_heads_are_numbered_from_1_as_in_the_attention_lessons_grid():
    attention = attention_grid(np.full((1, 2, 3, 3), 1 / 3), ["a", "b", "c"], ["a", "b", "c"]).to_dict()
    assert "head 1" in [a["text"] for a in attention["layout"]["annotations"]], "the app's convention"
    view = gqa_view(GqaSettings(heads=8, kv_heads=2))
    figures = gqa_figures(view)
    titles = _titles(validated(figures.grid))
    assert [t[2] for t in titles] == list(range(1, 9))
    assert [t[3] for t in titles] == [1, 1, 1, 1, 2, 2, 2, 2]
    assert all(f"query head {q} (K/V {kv})" in trace["hovertemplate"]
               for (_, _, q, kv), trace in zip(titles, figures.grid.to_dict()["data"], strict=True))
    frame = figures.frame  # the CSV beside the grid numbers them as its titles do
    assert sorted(set(frame["query head"])) == list(range(1, 9)) and sorted(set(frame["key/value head"])) == [1, 2]
    first = frame[frame["query head"] == 1]
    np.testing.assert_array_equal(first["weight"].to_numpy().reshape(8, 8), view.weights[0])


@pytest.mark.parametrize(("heads", "kv_heads"), GQA_SHAPES)
def test_the_sentence_on_where_sharing_heads_stand_holds_for_the_grid(heads, kv_heads):
    titles = _titles(validated(gqa_figures(gqa_view(GqaSettings(heads=heads, kv_heads=kv_heads))).grid))
    rows = [sorted((x, kv) for y0, x, _, kv in titles if y0 == y) for y in sorted({t[0] for t in titles})]
    groups = [[kv for _, kv in row] for row in rows]
    phrase = gqa_sharing(heads, kv_heads)
    if phrase == "all of them read the same one":
        assert {t[3] for t in titles} == {1}
    elif phrase == "here each reads one of its own":
        assert len({t[3] for t in titles}) == heads
    elif phrase == "each row of grids shares one":
        assert all(len(set(g)) == 1 for g in groups) and len({g[0] for g in groups}) == len(groups)
    else:
        assert phrase == "each pair of grids side by side shares one"
        pairs = [g[i:i + 2] for g in groups for i in range(0, len(g), 2)]
        assert all(len(p) == 2 and p[0] == p[1] for p in pairs) and len({p[0] for p in pairs}) == len(pairs)


# --- the memory charts ----------------------------------------------------------------------------


def memory_view_of_published_shapes():
    """What memory_figures reads from a MemoryView, for the published shapes (no model loaded)."""
    Ts = 2 ** np.arange(4, 18)
    kv = np.array([[kv_cache_bytes(s.n_layers, s.n_kv_heads, s.d_head, int(T), bytes_per_value=2) for T in Ts]
                   for s in PUBLISHED_SHAPES], dtype=np.float64)
    scores = np.array([[attention_scores_bytes(int(T), int(T), s.n_heads) for T in Ts] for s in PUBLISHED_SHAPES],
                      dtype=np.float64)
    measured = np.array([64, 128])
    return types.SimpleNamespace(shapes=PUBLISHED_SHAPES, Ts=Ts, kv=kv, scores=scores, kv_at=kv[:, 8],
                                 scores_at=scores[:, 8], measured_T=measured, measured_peak=measured,
                                 measured_largest=measured, formula=measured)


def chart_lines(chart) -> tuple[dict, list[str], str]:
    """The chart's lines (legend label -> its values in T order), its legend's order, and its y field."""
    spec = chart.to_dict()
    alt.Chart.from_dict({k: v for k, v in spec.items() if k != "config"}, validate=True)  # a valid spec
    data = next(iter(spec["datasets"].values()))
    field = spec["encoding"]["y"]["field"]
    lines: dict[str, list[float]] = {}
    for row in sorted(data, key=lambda r: r["T"]):
        lines.setdefault(row["line"], []).append(row[field])
    return lines, spec["encoding"]["color"]["scale"]["domain"], field


@pytest.mark.parametrize(("which", "what"), [("kv_chart", "KV cache"), ("scores_chart", "scores")])
def test_no_model_is_hidden_under_another_models_line(which, what):
    """The audit saw Mistral-7B's KV line exactly under Llama-3-8B's, each with its own legend entry:
    equal bytes now draw one line whose legend entry names both."""
    view = memory_view_of_published_shapes()
    lines, legend, _ = chart_lines(getattr(memory_figures(view), which))
    assert list(lines) == legend
    values = list(lines.values())
    assert all(not np.array_equal(a, b) for i, a in enumerate(values) for b in values[:i]), "one line each"
    named = [label.replace(LINE_BREAK, " ") for label in legend]
    for shape in PUBLISHED_SHAPES:
        assert sum(shape.name in label for label in named) == 1, shape.name
    if which == "kv_chart":
        shared = next(label for label in legend if "Mistral-7B" in label)
        assert shared.split(LINE_BREAK) == ["Mistral-7B (GQA)", "and Llama-3-8B (GQA)", "(same KV cache)"]
        np.testing.assert_array_equal(lines[shared], view.kv[2])
    drawn_for = view.kv if which == "kv_chart" else view.scores
    for label, drawn in lines.items():  # each line is the bytes of every model it names
        members = [i for i, shape in enumerate(PUBLISHED_SHAPES) if shape.name in label.replace(LINE_BREAK, " ")]
        for index in members:
            np.testing.assert_array_equal(drawn, drawn_for[index])
        assert label.endswith(f"(same {what})") == (len(members) > 1)


@pytest.mark.parametrize("which", ["kv_chart", "scores_chart"])
def test_the_byte_axes_tick_whole_powers_of_ten_around_the_data(which):
    """Ticks at powers of ten (labelled 1, 10 or 100 of a decimal unit up to TB: never '10000 GB'),
    the domain from the power at or below the least value to the one at or above the greatest."""
    view = memory_view_of_published_shapes()
    spec = getattr(memory_figures(view), which).to_dict()
    axis, scale = spec["encoding"]["y"]["axis"], spec["encoding"]["y"]["scale"]
    drawn = view.kv if which == "kv_chart" else view.scores
    assert scale["domain"][0] <= drawn.min() < 10 * scale["domain"][0]
    assert scale["domain"][1] / 10 < drawn.max() <= scale["domain"][1]
    assert all(math.log10(v) == round(math.log10(v)) for v in axis["values"])
    assert axis["values"][-1] <= 1e14 and "TB" in axis["labelExpr"], "the largest unit reaches every tick"


@pytest.mark.parametrize(("low", "high", "ticks"), [
    (4096, 2.2e12, [10.0 ** k for k in range(3, 14)]), (512, 1e4, [1e2, 1e3, 1e4]),
    (1, 1e15, [1.0, 1e3, 1e6, 1e9, 1e12, 1e15]), (5, 5, [1.0, 10.0])])
def test_byte_ticks(low, high, ticks):
    assert byte_ticks(np.array([low, high, np.nan, 0]))[1] == ticks


def _accuracy_frame() -> pd.DataFrame:
    """Seven encodings as the shipped models behave: three at 100 % inside the band, four at 0 % past it."""
    lengths = np.array([2, 4, 6, 8, 10, 11, 12, 16, 30])
    rows = {"sinusoidal": [1, 1, 1, 1, 1, 0, 0, 0, 0], "learned table": [1, 1, 1, 1, 1] + [np.nan] * 4,
            "raw index": [0.6, 0.05, 0, 0, 0, 0, 0, 0, 0], "no encoding": [0.63, 0.05, 0, 0, 0, 0, 0, 0, 0],
            "RoPE": [1, 0.99, 1, 1, 1, 0.21, 0, 0, 0], "ALiBi": [0.42, 0.3, 0.16, 0, 0, 0, 0, 0, 0],
            "T5 buckets": [1, 0.99, 0.98, 0.93, 0.93, 0.31, 0.5, 0, 0]}
    return accuracy_frame(lengths, {k: np.array(v, dtype=float) for k, v in rows.items()}, {})


def _hue(colour: str) -> float:
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return colorsys.rgb_to_hls(r, g, b)[0] * 360


def test_every_encodings_line_differs_from_every_other_in_colour_and_in_dash_where_hues_are_close():
    """The lecturer saw seven overlapping lines, two similar oranges, the sinusoidal one hidden: each line is
    an Okabe-Ito colour (yellow left out, weak on white) and any two whose hues lie within 30° (vermillion
    and orange, blue and sky blue) differ in dash too; the sinusoidal line, the first step's, is solid and
    the thickest, drawn first so the dashed lines over it let it show."""
    frame = _accuracy_frame()
    names = list(dict.fromkeys(frame["encoding"]))
    styles = line_styles(names)
    colours = [styles[n][0] for n in names]
    assert len(set(colours)) == len(names) and set(colours) <= set(OKABE_ITO.values()) - {OKABE_ITO["yellow"]}
    for a, b in itertools.combinations(names, 2):
        (ca, da, _), (cb, db, _) = styles[a], styles[b]
        apart = abs(_hue(ca) - _hue(cb))
        near = "#000000" not in (ca, cb) and min(apart, 360 - apart) < 30
        assert not near or da != db, f"{a} and {b}: near hues and the same dash"
    assert styles["sinusoidal"][1] == [1, 0] and styles["sinusoidal"][2] == max(s[2] for s in styles.values())
    spec = accuracy_chart(frame, (2, 10)).to_dict()
    line_layers = [layer for layer in spec["layer"] if (layer.get("mark") or {}).get("type") == "line"]
    assert len(line_layers) == len(names)
    first = line_layers[0]["transform"][0]["filter"]
    assert "sinusoidal" in str(first), "the sinusoidal line is drawn first, under the dashed ones"
    encoding = line_layers[0]["encoding"]
    assert encoding["color"]["field"] == encoding["strokeDash"]["field"] == "encoding"  # one legend: colour and dash
    assert all(layer["encoding"]["color"].get("legend", {}) is not None for layer in spec["layer"]
               if "encoding" in layer and "color" in layer["encoding"]), "a legend=None in a layer drops the legend"


def test_the_note_names_the_lines_that_lie_on_one_another_from_the_data():
    note = coinciding(_accuracy_frame(), (2, 10))
    assert note == ("Lines on top of one another: sinusoidal and learned table at 100 % at every trained length "
                    "tested (2–10 letters); sinusoidal, raw index, no encoding and ALiBi at 0 % at every length "
                    "tested past 10.")
    frame = _accuracy_frame()
    apart = frame[frame["encoding"].isin(["sinusoidal", "T5 buckets"])]
    assert coinciding(apart, (2, 10)) == ""  # no two lines share a level: nothing to say


def test_the_accuracy_one_letter_past_the_band_is_printed_where_it_is_above_zero():
    spec = accuracy_chart(_accuracy_frame(), (2, 10)).to_dict()
    printed = next(layer for layer in spec["layer"] if (layer.get("mark") or {}).get("type") == "text"
                   and layer["encoding"].get("text", {}).get("field") == "accuracy")
    assert "11" in str(printed["transform"]) and "accuracy > 0" in str(printed["transform"]).replace("datum.", "")


def test_the_tiled_state_numbers_its_blocks_so_no_label_runs_into_another():
    """'block 1 block 2 block 3' ran together and was cut at the bottom of a presented screen (step 5)."""
    from explorer.figures.common import PRESENT_HEIGHT
    from explorer.lessons.length.figures import PRESENT_TILED_PX, tiled_figures
    from explorer.lessons.length.parts import TiledSettings, tiled_view

    view = tiled_view(TiledSettings(T=12, block=4, causal=False, shown=2))
    figures = tiled_figures(view)
    state = figures.state.to_dict()
    assert [list(trace["x"]) for trace in state["data"]] == [["1", "2", "3"]] * 2
    assert state["layout"]["meta"][PRESENT_HEIGHT] == PRESENT_TILED_PX
    assert figures.weights.to_dict()["layout"]["meta"][PRESENT_HEIGHT] <= PRESENT_TILED_PX
