"""explorer.figures.length: the grouped-query grids are large enough to read at the desk and presenting,
number their heads from 1 as the attention lesson does, and the phrase the page says about where the
heads sharing a key/value head stand holds for the grid drawn."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures.attention import attention_grid
from explorer.figures.length import gqa_figures, gqa_sharing
from explorer.figures.presentation import enlarge_plotly
from explorer.views.length_parts import GqaSettings, gqa_view

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
        if note["text"].startswith("query head"):
            out.append((round(note["y"], 3), note["x"], int(words[2]), int(words[-1])))
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
