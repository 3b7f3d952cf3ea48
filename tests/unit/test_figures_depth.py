"""explorer.lessons.depth.figures: the chart validates against the Vega-Lite schema, the heatmap passes
Plotly's full validation, and the table reads the orders of magnitude off the data."""

import numpy as np
import pandas as pd
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


def test_the_lines_have_no_legend_the_bars_name_every_wiring():
    """The bars beside the lines (under them on a phone) name every wiring in its colour and dash, so the
    lines draw no legend at any width (its six rows under a desk's half-width plot ended the key figure
    at 978 px of a 900 px screen); presenting, the plot is all of one CHART_HEIGHT."""
    from explorer.figures.common import CHART_HEIGHT
    from explorer.figures.presentation import enlarge_vega_lite

    frame = figures.depth_frame(depth_curves(3, 8, 4, 2))
    spec = figures.depth_chart(frame).to_dict()
    assert spec["autosize"]["type"] == "fit-x"
    line = spec["layer"][1]["encoding"]
    assert line["color"]["legend"] is None and line["strokeDash"]["legend"] is None
    assert line["color"]["scale"]["domain"] == list(dict.fromkeys(frame["configuration"]))
    bars = str(figures.orders_chart(frame).to_dict())  # the bars that name the wirings
    assert all(str(label) in bars for label in figures.SHORT_LABELS.values())
    presented = enlarge_vega_lite(spec)
    assert presented["height"] == CHART_HEIGHT and presented["autosize"]["type"] == "fit"


def test_the_bars_print_each_wirings_orders_lost_on_a_linear_scale_in_the_lines_colours_and_dashes():
    """The step 4 answer's 0.25 against 0.17 (27 powers of ten on the line chart's axis): each wiring's
    orders of magnitude lost, computed here from its own curve, is the bar's length and is printed at its
    end (a true minus for a gradient that grows); filled bars are the solid lines, white bars in a dashed
    outline the dashed ones, in the line chart's colours."""
    curves = depth_curves(3, 8, 4, 2)
    frame = figures.depth_frame(curves)
    spec = figures.orders_chart(frame).to_dict()
    rows = pd.DataFrame(next(iter(spec["datasets"].values())))
    for (norm, residual), values in curves.items():
        logs = np.log10(values).mean(axis=0)
        row = rows[rows["configuration"] == frame[(frame["norm"] == figures.NORM_LABELS[norm])
                                                  & (frame["residual"] == figures.RESIDUAL_LABELS[residual])]
                   ["configuration"].iloc[0]].iloc[0]
        assert row["orders lost"] == pytest.approx(logs[-1] - logs[0], abs=1e-9)
        assert row["printed"] == f"{abs(logs[-1] - logs[0]):.2f}" if logs[-1] >= logs[0] else \
            row["printed"] == f"−{logs[0] - logs[-1]:.2f}"
    bars, _, text = spec["layer"]
    assert bars["encoding"]["x"]["field"] == "orders lost" and "type" not in bars["encoding"]["x"].get("scale", {})
    assert text["encoding"]["text"]["field"] == "printed"
    wirings = list(rows["wiring"])
    assert len(set(wirings)) == 6 and bars["encoding"]["y"]["sort"] == wirings
    strokes = dict(zip(wirings, bars["encoding"]["stroke"]["scale"]["range"], strict=True))
    fills = dict(zip(wirings, bars["encoding"]["fill"]["scale"]["range"], strict=True))
    line = figures.depth_chart(frame).to_dict()["layer"][1]["encoding"]
    line_colour = dict(zip(line["color"]["scale"]["domain"], line["color"]["scale"]["range"], strict=True))
    for wiring, configuration, residual in zip(wirings, rows["configuration"], rows["residual"], strict=True):
        assert strokes[wiring] == line_colour[configuration]
        assert fills[wiring] == (line_colour[configuration] if residual == "with residual" else "#ffffff")
    dash = bars["encoding"]["strokeDash"]["scale"]
    assert dict(zip(dash["domain"], dash["range"], strict=True)) == figures.DASHES
