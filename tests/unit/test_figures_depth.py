"""explorer.figures.depth: the chart validates against the Vega-Lite schema, the heatmap passes
Plotly's full validation, and the table reads the orders of magnitude off the data."""

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures import depth as figures
from explorer.views.depth import depth_curves
from tests.support.apptest import plotly_array


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
