"""explorer.lessons.depth.figures: the chart validates against the Vega-Lite schema, the heatmap passes
Plotly's full validation, and the table reads the orders of magnitude off the data."""

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.lessons.depth import figures
from explorer.lessons.depth.view import depth_curves
from harness.apptest import plotly_array


def validated(fig: go.Figure) -> dict:
    return go.Figure(fig.to_dict()).to_dict()


def test_depth_chart_and_table():
    curves = depth_curves(3, 8, 4, 2)
    frame = figures.depth_frame(curves)
    figures.depth_chart(frame).to_dict()
    heat = validated(figures.depth_heatmap(frame))
    assert plotly_array(heat["data"][0]["z"]).shape == (6, 3)
    assert len(frame) == 6 * 3
    table = figures.depth_table(frame)
    assert len(table) == 6
    values = np.log10(curves[("pre", False)]).mean(axis=0)
    row = table[table["configuration"] == "pre-norm, without residual"].iloc[0]
    assert row["orders lost"] == pytest.approx(values[-1] - values[0], abs=0.051)


def test_the_chart_has_one_legend_under_the_plot_and_beside_it_when_presenting():
    """On a phone a legend beside the plot left it a thin stripe (seen at 390 px): one legend, one entry
    per wiring (colour and dash together), under the plot; presenting, beside it, the chart in one
    CHART_HEIGHT as before (it must end on a 720 px screen)."""
    from explorer.figures.common import CHART_HEIGHT
    from explorer.figures.presentation import enlarge_vega_lite
    from explorer.figures.vega import phone_columns

    frame = figures.depth_frame(depth_curves(3, 8, 4, 2))
    spec = figures.depth_chart(frame).to_dict()
    # three columns at the desk (its six entries in one column ran below the first screen), one on a phone
    assert spec["config"]["legend"]["orient"] == "bottom" and spec["config"]["legend"]["columns"] == phone_columns(3, 1)
    assert spec["autosize"]["type"] == "fit-x"
    line = spec["layer"][1]["encoding"]
    assert line["color"]["field"] == line["strokeDash"]["field"] == "configuration"  # merged into one legend
    assert line["color"]["scale"]["domain"] == list(dict.fromkeys(frame["configuration"]))
    presented = enlarge_vega_lite(spec)
    assert presented["config"]["legend"]["orient"] == "right" and presented["height"] == CHART_HEIGHT
    assert presented["config"]["legend"]["columns"] == 1  # beside the plot, the desk's three columns were cut
    assert presented["autosize"]["type"] == "fit"
