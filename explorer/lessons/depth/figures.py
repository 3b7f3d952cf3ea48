"""The depth lesson's figures: the gradient reaching each layer of a stack, for every way of
wrapping a sublayer (LayerNorm before, after or not at all; residual or not).  Data in, Altair or
Plotly out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.figures.common import CHART_HEIGHT, OKABE_ITO, PRESENT_VEGA
from explorer.figures.logscale import log_axis, log_strip
from explorer.figures.vega import configure, phone_columns

__all__ = [
    "DepthFigures",
    "depth_chart",
    "depth_figures",
    "depth_frame",
    "depth_heatmap",
    "depth_table",
]

NORM_LABELS = {"post": "post-norm (Add, then Norm)", "pre": "pre-norm (Norm, then sublayer, then Add)",
               "none": "no LayerNorm"}
NORM_COLOURS = {NORM_LABELS["post"]: OKABE_ITO["blue"], NORM_LABELS["pre"]: OKABE_ITO["bluish green"],
                NORM_LABELS["none"]: OKABE_ITO["vermillion"]}
RESIDUAL_LABELS = {True: "with residual", False: "without residual"}
DASHES = {RESIDUAL_LABELS[True]: [1, 0], RESIDUAL_LABELS[False]: [8, 4]}
# The chart fits the page's width; its height is the plot's plus the axis and the legend under it
FIT_WIDTH = alt.AutoSizeParams(type="fit-x", contains="padding")


def depth_frame(curves: Mapping[tuple[str, bool], np.ndarray]) -> pd.DataFrame:
    """{(norm, residual): (n_seeds, n_layers) norms} → one row per configuration and layer, in the
    mapping's order.  norm is where the LayerNorm sits ("post", "pre" or "none"), residual whether
    the sublayer's input is added back."""
    parts = []
    for (norm, residual), values in curves.items():
        norms = np.asarray(values, dtype=np.float64)
        with np.errstate(divide="ignore"):
            logs = np.log10(norms)
        mean, spread = logs.mean(axis=0), logs.std(axis=0)
        parts.append(pd.DataFrame({
            "norm": NORM_LABELS[norm], "residual": RESIDUAL_LABELS[residual],
            "configuration": f"{NORM_LABELS[norm].split(' (')[0]}, {RESIDUAL_LABELS[residual]}",
            "layer": np.arange(norms.shape[1]),
            "log10 norm": mean, "log10 low": mean - spread, "log10 high": mean + spread,
            "seeds": norms.shape[0],
        }))
    return pd.concat(parts, ignore_index=True)


def depth_chart(frame: pd.DataFrame) -> alt.LayerChart:
    """log10 ‖∂L/∂h_l‖ at each layer's input: colour = where LayerNorm sits, dash = residual or not, in one
    legend (one entry per wiring) under the plot: beside it, at a phone's width, it left the plot a thin stripe."""
    wirings = frame.drop_duplicates("configuration")
    names = list(wirings["configuration"])
    colour = alt.Color("configuration:N", title="wiring", sort=names,
                       scale=alt.Scale(domain=names, range=[NORM_COLOURS[n] for n in wirings["norm"]]))
    dash = alt.StrokeDash("configuration:N", title="wiring", sort=names,
                          scale=alt.Scale(domain=names, range=[DASHES[r] for r in wirings["residual"]]))
    x = alt.X("layer:Q", title=["layer (0 = the stack's input;", "the loss is after the last layer)"],  # 2 lines
              axis=alt.Axis(tickMinStep=1))
    base = alt.Chart(frame)
    band = base.mark_area(opacity=0.15).encode(x=x, y="log10 low:Q", y2="log10 high:Q", color=colour,
                                               detail="configuration:N")
    line = base.mark_line(strokeWidth=3).encode(
        x=x,
        y=alt.Y("log10 norm:Q", axis=log_axis("‖∂L/∂h‖ at the layer input (log scale)"), scale=alt.Scale(zero=False)),
        color=colour, strokeDash=dash, detail="configuration:N",
        tooltip=[alt.Tooltip("configuration:N"), alt.Tooltip("layer:Q"),
                 alt.Tooltip("log10 norm:Q", format=".2f", title="log10 ‖∂L/∂h‖")],
    )
    # Presenting (a projector's width, one screen's height): the legend beside the plot, all in CHART_HEIGHT
    beside = {"spec": {"height": CHART_HEIGHT, "autosize": {"type": "fit", "contains": "padding"}},
              "legend": {"orient": "right", "columns": 1}}
    chart = alt.layer(band, line).properties(height=CHART_HEIGHT - 110, autosize=FIT_WIDTH,
                                             usermeta={PRESENT_VEGA: beside})
    return configure(chart, legend_orient="bottom", legend_columns=phone_columns(3, 1))


def depth_heatmap(frame: pd.DataFrame) -> go.Figure:
    """Configuration × layer map of log10 ‖∂L/∂h‖: the chart's lines as colour."""
    configurations = list(dict.fromkeys(frame["configuration"]))
    z = np.array([frame[frame["configuration"] == c].sort_values("layer")["log10 norm"].to_numpy(dtype=float)
                  for c in configurations])
    return log_strip(z, rows=configurations, x_title="layer (0 = the stack's input)", value_title="‖∂L/∂h‖",
                     hover_x="layer")


def depth_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: the gradient at the last layer's input and at the stack's input, and the
    orders of magnitude between them (positive = it shrinks on the way down)."""
    rows = []
    for configuration, part in frame.groupby("configuration", sort=False):
        part = part.sort_values("layer")
        top, bottom = float(part["log10 norm"].iloc[-1]), float(part["log10 norm"].iloc[0])
        # rounded as shown; + 0.0 turns −0.0 into 0.0
        rows.append({"configuration": configuration, "last layer": round(top, 1) + 0.0,
                     "layer 0": round(bottom, 1) + 0.0, "orders lost": round(top - bottom, 1) + 0.0})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class DepthFigures:
    """Everything the depth lesson draws at one setting: the frame (also the CSV), the line chart,
    the same numbers as a heatmap, and the table."""

    frame: pd.DataFrame
    chart: alt.LayerChart
    heatmap: go.Figure
    table: pd.DataFrame


def depth_figures(curves: Mapping[tuple[str, bool], np.ndarray]) -> DepthFigures:
    frame = depth_frame(curves)
    return DepthFigures(frame, depth_chart(frame), depth_heatmap(frame), depth_table(frame))
