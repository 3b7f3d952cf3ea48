"""The words of every figure in ink (explorer/figures/ink.py): against Plotly's own figure dicts and
Altair's Vega-Lite, with the colours a figure chose kept."""

from __future__ import annotations

import copy
import json

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.figures.common import frozen
from explorer.figures.ink import INK, VEGA_INK, inked, vega_inked
from explorer.kit.controls import vega_lite_spec
from harness.contrast import contrast


def test_ink_reads_at_more_than_wcag_aa_on_white():
    assert contrast(INK) >= 4.5 * 3  # 17:1: room left for a projector's washout


def figure() -> go.Figure:
    fig = make_subplots(rows=1, cols=2, subplot_titles=("left", "right"))
    fig.add_trace(go.Heatmap(z=np.eye(3)), row=1, col=1)
    fig.add_trace(go.Scatter(x=[0, 1], y=[1, 0], name="line"), row=1, col=2)
    fig.update_layout(title="t", xaxis_title="keys", yaxis2={"title": {"text": "w"}, "tickfont": {"color": "#0072B2"}},
                      coloraxis={"colorscale": "Viridis"})
    fig.add_annotation(text="white on a cell", font={"color": "white"}, x=0, y=0)
    return fig


def test_every_word_on_the_page_white_is_ink_and_a_chosen_colour_stays():
    spec = figure().to_plotly_json()
    before = copy.deepcopy(spec)
    out = inked(spec)
    assert json.dumps(spec, default=str) == json.dumps(before, default=str), "the figure given is not changed"
    layout = out["layout"]
    assert layout["font"]["color"] == INK and layout["legend"]["font"]["color"] == INK
    assert layout["title"]["font"]["color"] == INK
    for axis in ("xaxis", "yaxis", "xaxis2"):
        assert layout[axis]["tickfont"]["color"] == INK, axis
    assert layout["xaxis"]["title"]["font"]["color"] == INK and layout["yaxis2"]["title"]["font"]["color"] == INK
    assert layout["yaxis2"]["tickfont"]["color"] == "#0072B2", "a colour the figure chose is kept"
    assert layout["coloraxis"]["colorbar"]["tickfont"]["color"] == INK
    notes = {note["text"]: note["font"]["color"] for note in layout["annotations"]}
    assert notes["white on a cell"] == "white" and notes["left"] == INK == notes["right"]
    heatmap, line = out["data"]
    assert heatmap["colorbar"]["tickfont"]["color"] == INK and "colorbar" not in line


def test_a_frozen_figure_is_sent_inked():
    sent = frozen(figure()).to_dict()
    assert sent["layout"]["xaxis"]["tickfont"]["color"] == INK
    assert sent["data"][0]["colorbar"]["tickfont"]["color"] == INK


def test_a_vega_lite_chart_is_sent_inked_and_keeps_its_own_colours():
    chart = alt.Chart(pd.DataFrame({"x": [1, 2], "y": [3, 4]})).mark_line().encode(x="x", y="y")
    chart = chart.configure_axis(labelColor="#D55E00")
    spec = vega_lite_spec(chart)
    assert spec["config"]["axis"]["labelColor"] == "#D55E00" and spec["config"]["axis"]["titleColor"] == INK
    for part, colours in VEGA_INK.items():
        for name in colours:
            assert name in spec["config"][part], (part, name)
    plain = {"mark": "point"}
    assert vega_inked(plain)["config"]["legend"]["labelColor"] == INK and "config" not in plain
