"""Figures that name a lower height for the projector (`layout.meta`): drawn presenting, they are no
taller than on the desk and short enough to end on a 1280×720 screen under a revealed step's answer
(the browser test checks the screen itself), and the rows and columns they label there stay clear of
each other at the presenting font.  On the desk nothing changes."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.figures.common import FONT_SIZE, LABEL_FONT_PX, PRESENT_HEIGHT, label_step
from explorer.figures.matrices import matrix_heatmap
from explorer.figures.presentation import enlarge_plotly
from explorer.lessons.gradients.charts import PRESENT_PX, unrolled_figure
from explorer.lessons.length.figures import (
    DESK_GRID_WIDTH_PX,
    PRESENT_GQA_PX,
    PRESENT_GRID_PX,
    PRESENT_GRID_WIDTH_PX,
    attention_figure,
    gqa_figures,
)
from explorer.lessons.length.parts import GqaSettings, gqa_view
from explorer.lessons.positions.figures import PRESENT_MATRIX_PX


def spec_of(figure) -> dict:
    return figure if isinstance(figure, dict) else figure.to_plotly_json()


def labelled_gap(axis: dict) -> int:
    values = axis["tickvals"]
    return values[1] - values[0] if len(values) > 1 else 1


@pytest.mark.parametrize("n", [4, 10, 15, 30])
def test_the_length_lessons_grids_label_what_the_projector_leaves_room_for(n):
    letters = [chr(ord("A") + i % 26) for i in range(n)]
    weights = np.full((n + 1, n), 1 / n)
    desk = spec_of(attention_figure(weights, letters, "title")[0])
    present = enlarge_plotly(desk)
    layout = present["layout"]
    assert layout["height"] == PRESENT_GRID_PX < desk["layout"]["height"]
    rows = n + 1
    if n <= 15:  # the lesson's default unseen length included
        assert desk["layout"]["yaxis"]["tickvals"] == list(range(rows)), "the desk labels every row"
    desk_rows_px = desk["layout"]["height"] - desk["layout"]["margin"]["t"] - desk["layout"]["margin"]["b"]
    assert desk_rows_px / rows * labelled_gap(desk["layout"]["yaxis"]) >= 1.2 * FONT_SIZE, "rows a line apart"
    keys = [f"{i}:{c}" for i, c in enumerate(letters)]
    gap, width = labelled_gap(desk["layout"]["xaxis"]), max(map(len, keys)) * 0.62 * FONT_SIZE
    if max(map(len, keys)) <= 3:  # upright: each label's width and a gap between neighbours
        assert DESK_GRID_WIDTH_PX / n * gap >= width + 0.5 * FONT_SIZE, "the desk's key labels clear of each other"
    else:  # slanted 45°: a line apart
        assert DESK_GRID_WIDTH_PX / n * gap >= 1.2 * FONT_SIZE, "the desk's slanted key labels a line apart"
    plot_px = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    assert plot_px / rows * labelled_gap(layout["yaxis"]) >= 1.2 * LABEL_FONT_PX, "labelled rows a line apart"
    assert labelled_gap(layout["xaxis"]) == label_step([f"{i}:{c}" for i, c in enumerate(letters)],
                                                       PRESENT_GRID_WIDTH_PX)
    assert len(layout["yaxis"]["ticktext"]) == len(layout["yaxis"]["tickvals"])
    assert layout["yaxis"]["ticktext"][0] == desk["layout"]["yaxis"]["ticktext"][0]


@pytest.mark.parametrize(("heads", "kv_heads"), [(8, 1), (8, 2), (8, 8), (4, 1)])
def test_the_grouped_query_grids_fit_the_projector(heads, kv_heads):
    desk = spec_of(gqa_figures(gqa_view(GqaSettings(heads=heads, kv_heads=kv_heads))).grid)
    present = enlarge_plotly(desk)
    assert present["layout"]["height"] == min(desk["layout"]["height"], PRESENT_GQA_PX)
    assert desk["layout"]["meta"][PRESENT_HEIGHT] <= desk["layout"]["height"]


def test_the_unrolled_loop_fits_the_projector():
    desk = spec_of(unrolled_figure(np.arange(16, 0, -1), np.ones(16, dtype=int)))
    assert enlarge_plotly(desk)["layout"]["height"] == PRESENT_PX < desk["layout"]["height"]
    steps = [a["text"] for a in desk["layout"]["annotations"] if a.get("font", {}).get("color") == "#555555"
             and a["text"] not in ("path",)]
    assert steps[0] == "step 1" and steps[1] == "2" and steps[-1] == "16", "one 'step', then numbers"


@pytest.mark.parametrize("rows", [12, 24, 100])
def test_a_tall_encoding_matrix_fits_the_projector(rows):
    z = np.zeros((rows, 64))
    desk = spec_of(matrix_heatmap(z, x_title="dimension", y_title="position", value_name="PE value",
                                  height=None if rows <= 24 else 620, present_height=PRESENT_MATRIX_PX))
    present = enlarge_plotly(desk)
    if desk["layout"]["height"] > PRESENT_MATRIX_PX:
        assert present["layout"]["height"] == PRESENT_MATRIX_PX
    else:  # short enough already: drawn at its own height
        assert "meta" not in desk["layout"] and present["layout"]["height"] == desk["layout"]["height"]


@pytest.mark.parametrize("kind", ["learned", "sinusoidal"])
def test_the_similarity_grid_fits_the_projector_under_a_steps_answer(kind):
    """Steps 3 and 4 of the positions lesson draw section 2 first: its 11-row grid (the learned table)
    ended 9 px below a 1280 × 720 screen."""
    from explorer.lessons.positions.figures import PRESENT_SIMILARITY_PX, position_figures
    from explorer.lessons.positions.view import PositionSettings, position_view

    view = position_view(PositionSettings(kind=kind, n_positions=11 if kind == "sinusoidal" else 4))
    desk = spec_of(position_figures(view).similarity)
    assert enlarge_plotly(desk)["layout"]["height"] == min(desk["layout"]["height"], PRESENT_SIMILARITY_PX)
