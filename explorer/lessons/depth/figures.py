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
    "orders_chart",
    "orders_frame",
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
    # No legend at any width: the bars beside the lines (under them on a phone: `orders_chart`) name every
    # wiring in its colour and dash.  Its six rows under a desk's half-width plot ended the key figure at
    # 978 px of a 900 px screen.
    colour = alt.Color("configuration:N", title="wiring", sort=names, legend=None,
                       scale=alt.Scale(domain=names, range=[NORM_COLOURS[n] for n in wirings["norm"]]))
    dash = alt.StrokeDash("configuration:N", title="wiring", sort=names, legend=None,
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
    # Presenting (a projector's width, one screen's height): no legend, the plot all of CHART_HEIGHT; the
    # bars beside it (`orders_chart`) name every wiring in its colour and dash, with the orders it loses
    beside = {"spec": {"height": CHART_HEIGHT, "autosize": {"type": "fit", "contains": "padding"}},
              "legend": {"disable": True}}
    chart = alt.layer(band, line).properties(height=CHART_HEIGHT - 110, autosize=FIT_WIDTH,
                                             usermeta={PRESENT_VEGA: beside})
    return configure(chart, legend_orient="bottom", legend_columns=phone_columns(3, 1))


# A bar's row label: the wiring in a few words (the line chart's legend names it in full)
SHORT_LABELS = {("post", True): "post-norm + residual", ("post", False): "post-norm, no residual",
                ("pre", True): "pre-norm + residual", ("pre", False): "pre-norm, no residual",
                ("none", True): "no norm + residual", ("none", False): "no norm, no residual"}
ORDERS_TITLE = ["orders of magnitude lost,", "last layer → layer 0"]  # two lines: a half-width chart


def orders_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Per wiring, in the frame's order: the orders of magnitude (powers of ten) its gradient loses from
    the last layer's input down to layer 0 (negative: it grows), unrounded, and that number as printed
    beside its bar (two decimals, a true minus sign)."""
    norms = {label: key for key, label in NORM_LABELS.items()}
    residuals = {label: key for key, label in RESIDUAL_LABELS.items()}
    rows = []
    for configuration, part in frame.groupby("configuration", sort=False):
        part = part.sort_values("layer")
        lost = float(part["log10 norm"].iloc[-1] - part["log10 norm"].iloc[0])
        norm, residual = norms[part["norm"].iloc[0]], residuals[part["residual"].iloc[0]]
        rows.append({"configuration": configuration, "wiring": SHORT_LABELS[(norm, residual)],
                     "norm": part["norm"].iloc[0], "residual": part["residual"].iloc[0], "orders lost": lost,
                     "printed": f"{lost:.2f}".replace("-", "−")})
    return pd.DataFrame(rows)


def orders_chart(frame: pd.DataFrame) -> alt.LayerChart:
    """What the steps quote, on a linear scale: one bar per wiring, the orders of magnitude its gradient
    loses on the way down, each number printed at its bar's end (0.25 against −0.17 could not be read
    off the line chart's 27 powers of ten).  Filled bars: with the residual (solid lines); white bars in a
    dashed outline: without it (dashed lines); the colours are the line chart's."""
    orders = orders_frame(frame)
    names = list(orders["wiring"])
    colours = [NORM_COLOURS[n] for n in orders["norm"]]
    fills = [c if r == RESIDUAL_LABELS[True] else "#ffffff" for c, r in zip(colours, orders["residual"], strict=True)]
    values = orders["orders lost"].to_numpy(dtype=float)
    low, high = min(0.0, float(values.min())), max(0.0, float(values.max()))
    pad = 0.3 * max(high - low, 0.5)  # room for the printed numbers at the bars' ends
    x = alt.X("orders lost:Q", title=ORDERS_TITLE,
              scale=alt.Scale(domain=[low - (pad if low < 0 else 0), high + pad], nice=False, zero=True))
    y = alt.Y("wiring:N", sort=names, title=None, axis=alt.Axis(labelLimit=260))
    base = alt.Chart(orders)
    bars = base.mark_bar(strokeWidth=2.5, height={"band": 0.7}).encode(
        x=x, y=y,
        fill=alt.Fill("wiring:N", scale=alt.Scale(domain=names, range=fills), legend=None),
        stroke=alt.Stroke("wiring:N", scale=alt.Scale(domain=names, range=colours), legend=None),
        strokeDash=alt.StrokeDash("residual:N", scale=alt.Scale(domain=list(DASHES), range=list(DASHES.values())),
                                  legend=None),
        tooltip=[alt.Tooltip("configuration:N"), alt.Tooltip("orders lost:Q", format=".3f")])
    grows = alt.datum["orders lost"] < 0
    text = base.mark_text(fontSize=16, color="#222222", align=alt.expr(alt.expr.if_(grows, "right", "left")),
                          dx=alt.expr(alt.expr.if_(grows, -6, 6))).encode(x=x, y=y, text="printed:N")
    zero = alt.Chart(pd.DataFrame({"x": [0.0]})).mark_rule(color="#555555").encode(x="x:Q")
    chart = alt.layer(bars, zero, text).properties(height=CHART_HEIGHT - 110, autosize=FIT_WIDTH)
    return configure(chart)


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
    orders: alt.LayerChart  # the orders of magnitude each wiring loses, as bars with their numbers


def depth_figures(curves: Mapping[tuple[str, bool], np.ndarray]) -> DepthFigures:
    frame = depth_frame(curves)
    return DepthFigures(frame, depth_chart(frame), depth_heatmap(frame), depth_table(frame), orders_chart(frame))
