"""The cost lesson's figures: the complexity table and its bars, multiplications against T, and the
measured forward times.  Data in, Altair or Plotly out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.figures.common import CHART_HEIGHT, FONT_SIZE, OKABE_ITO, figure_from_spec, plotly_text
from explorer.figures.margins import TOOLBAR_PX
from explorer.figures.vega import colour_encoding, configure, phone_columns

__all__ = [
    "ComplexityRow",
    "CostFigures",
    "Counts",
    "CrossoverFigures",
    "ForwardTiming",
    "complexity_frame",
    "cost_bars",
    "cost_figures",
    "crossover_figures",
    "operations_chart",
    "operations_frame",
    "stopwatch_figures",
    "timing_chart",
    "timing_frame",
]


class Counts(Protocol):
    """Exact counts for one layer or stack (`explorer.analysis.cost.Cost`)."""

    @property
    def parameters(self) -> int: ...
    @property
    def multiplications(self) -> int: ...
    @property
    def sequential_steps(self) -> int: ...
    @property
    def path_length(self) -> int: ...


class ComplexityRow(Protocol):
    """One row of the complexity table (the cost view's ComplexityRow)."""

    @property
    def label(self) -> str: ...
    @property
    def big_o(self) -> Sequence[str]: ...  # parameters, operations, sequential steps, path length
    @property
    def cost(self) -> Counts: ...
    @property
    def counted_parameters(self) -> int: ...  # counted on the PyTorch modules


class ForwardTiming(Protocol):
    """One forward-pass timing (`explorer.analysis.timing.Timing`): the best of `runs` passes of
    layer kind `layer` at length T and width d, in seconds, or None when the budget ran out first."""

    @property
    def layer(self) -> str: ...
    @property
    def T(self) -> int: ...
    @property
    def d(self) -> int: ...
    @property
    def seconds(self) -> float | None: ...
    @property
    def runs(self) -> int: ...


def complexity_frame(rows: Sequence[ComplexityRow], n_layers: int) -> pd.DataFrame:
    """ComplexityRows → the table the cost lesson shows: each big-O column ("parameters",
    "operations", "sequential steps", "path length") followed by its exact count ("exact" and
    "PyTorch count", "multiplications", "steps", "path") for the whole stack."""
    return pd.DataFrame({
        "layer": [r.label if n_layers == 1 else f"{r.label} ×{n_layers}" for r in rows],
        "parameters": [r.big_o[0] for r in rows],
        "exact": [r.cost.parameters for r in rows],
        "PyTorch count": [r.counted_parameters for r in rows],
        "operations": [r.big_o[1] for r in rows],
        "multiplications": [r.cost.multiplications for r in rows],
        "sequential steps": [r.big_o[2] for r in rows],
        "steps": [r.cost.sequential_steps for r in rows],
        "path length": [r.big_o[3] for r in rows],
        "path": [r.cost.path_length for r in rows],
    })


COST_COLOURS = [OKABE_ITO["orange"], OKABE_ITO["vermillion"], OKABE_ITO["blue"], OKABE_ITO["bluish green"]]
COST_QUANTITIES = ("parameters", "multiplications", "sequential steps", "path length")


def _headroom(largest: float, share: float = 0.2) -> list[float]:
    """A log axis's range (log10 units) from below 1 to above `largest`, its top `share` left for the
    upright value labels over the bars (Plotly's autorange leaves room for them only laid flat)."""
    low, high = -0.3, math.log10(max(largest, 1.0))
    return [low, high + (high - low) * share / (1 - share)]


def cost_bars(rows: Sequence[ComplexityRow], n_layers: int = 1) -> go.Figure:
    """The complexity table as grouped bars on a log scale: one group per quantity, one bar per layer.
    A stack of `n_layers` convolutions too shallow to reach the first input has no path: its path bar
    shows the layers it would need, and says so."""
    traces = []
    for row, colour in zip(rows, COST_COLOURS, strict=False):
        values = [row.cost.parameters, row.cost.multiplications, row.cost.sequential_steps, row.cost.path_length]
        texts, hovers = ["%{y:.3~s}"] * 4, [plotly_text(row.label) + "<br>%{x}: %{y:,}<extra></extra>"] * 4
        if row.layer == "cnn" and row.cost.path_length > n_layers:
            texts[3] = "needs %{y} layers"
            hovers[3] = (plotly_text(row.label) + f"<br>{n_layers} layer{'s' * (n_layers > 1)} cannot reach the "
                         "first input:<br>it takes %{y} layers<extra></extra>")
        traces.append({
            "type": "bar", "name": plotly_text(row.label), "x": list(COST_QUANTITIES), "y": values,
            # Values upright (turned 90°): side by side, four to a group, they ran together at a phone's and a
            # projector's width ("12.4k8.32k16.6k"), Plotly shrinking them to the bar's width on a phone
            "marker": {"color": colour}, "texttemplate": texts, "textposition": "outside", "textangle": -90,
            "constraintext": "none",
            "textfont": {"size": FONT_SIZE - 2}, "cliponaxis": False, "hovertemplate": hovers,
        })
    layout = {
        "font": {"size": FONT_SIZE}, "height": 420 + TOOLBAR_PX, "barmode": "group", "bargap": 0.25,
        # the legend over the bars stands under the toolbar's band (a phone's legend reaches its buttons)
        "margin": {"l": 10, "r": 10, "t": 40 + TOOLBAR_PX, "b": 10}, "plot_bgcolor": "rgba(0,0,0,0)",
        "xaxis": {"tickfont": {"size": FONT_SIZE}},
        "yaxis": {"type": "log", "title": {"text": "count (log scale)"}, "gridcolor": "#e5e5e5",
                  "range": _headroom(max(max(t["y"]) for t in traces)),
                  "tickfont": {"size": FONT_SIZE - 2}},
        "legend": {"orientation": "h", "y": 1.14, "x": 0, "font": {"size": FONT_SIZE}},
    }
    return figure_from_spec({"data": traces, "layout": layout})


def operations_frame(curves: dict[str, list[int]], T_values) -> pd.DataFrame:
    parts = [pd.DataFrame({"series": name, "T": list(T_values), "multiplications": values})
             for name, values in curves.items()]
    return pd.concat(parts, ignore_index=True)


OPERATION_COLOURS = {
    "T·d² (the RNN's term)": OKABE_ITO["vermillion"], "T²·d (attention's scores and mix)": OKABE_ITO["blue"],
    "tanh RNN layer, exact": OKABE_ITO["vermillion"], "self-attention layer, exact": OKABE_ITO["blue"],
}


def _label_side(lengths, T: int, d: int, text: str, plot_px: float = 560) -> str:
    """Which side of x = T a label of `text` goes, "right" or "left": the first with room on the log T
    axis (lengths' range drawn about `plot_px` wide, at the presentation font) before the plot's edge
    and the T = d rule; if neither has, the one with more."""
    low, high = np.log10(max(1, min(lengths))), np.log10(max(lengths))
    need = (high - low) * (0.62 * 18 * len(text) + 12) / plot_px
    at, rule = np.log10(T), np.log10(d)
    room = {"right": (rule if d > T else high) - at, "left": at - (rule if d < T else low)}
    fits = [side for side in ("right", "left") if room[side] >= need]
    return fits[0] if fits else max(room, key=room.get)


def operations_chart(frame: pd.DataFrame, *, d: int, T: int) -> alt.LayerChart:
    """Multiplications against T (log–log): big-O terms dashed, exact counts solid; T = d marked."""
    series = list(dict.fromkeys(frame["series"]))
    colour = colour_encoding("series", series, OPERATION_COLOURS, title=None)
    x = alt.X("T:Q", title="sequence length T", scale=alt.Scale(type="log"))
    base = alt.Chart(frame)
    encoding = {
        "x": x,
        "y": alt.Y("multiplications:Q", title="multiplications (one layer)", scale=alt.Scale(type="log"),
                   axis=alt.Axis(format="~s")),
        "color": colour,
        "tooltip": [alt.Tooltip("series:N"), alt.Tooltip("T:Q"), alt.Tooltip("multiplications:Q", format=",")],
    }
    term = alt.expr.indexof(alt.datum["series"], "term") >= 0
    terms = base.transform_filter(term).mark_line(strokeWidth=3, strokeDash=[6, 4]).encode(**encoding)
    exact = base.transform_filter(~term).mark_line(strokeWidth=3).encode(**encoding)
    crossover = base.mark_rule(color="#333333", strokeWidth=2).encode(x=alt.datum(d))
    crossover_label = base.mark_text(align="right", dx=-6, baseline="top", fontSize=FONT_SIZE,
                                     color="#333333").encode(
        x=alt.datum(d), y=alt.value(6), text=alt.value(f"T = d = {d}: T·d² = T²·d"))
    yours = base.mark_rule(color=OKABE_ITO["bluish green"], strokeDash=[2, 3], strokeWidth=2).encode(x=alt.datum(T))
    # At the foot of its rule, where every curve is above it (they rise with T), on the side with room.
    right = _label_side(frame["T"], T, d, f"your T = {T}") == "right"
    yours_label = base.mark_text(align="left" if right else "right", dx=6 if right else -6, baseline="bottom",
                                 dy=-4, fontSize=FONT_SIZE, color=OKABE_ITO["bluish green"]).encode(
        x=alt.datum(T), y=alt.value("height"), text=alt.value(f"your T = {T}"))  # the plot's foot, at any height
    return configure(alt.layer(terms, exact, crossover, crossover_label, yours, yours_label)
                      .properties(height=CHART_HEIGHT), legend_columns=phone_columns(2, 1))


TIMING_COLOURS = {"rnn": OKABE_ITO["vermillion"], "rnn-loop": OKABE_ITO["orange"], "attention": OKABE_ITO["blue"]}
TIMING_PHONE_NAMES = {"rnn": "RNN, C++ loop (torch)", "rnn-loop": "RNN, Python loop (this app)",
                      "attention": "self-attention (torch)"}  # the legend's names on a phone


def timing_frame(timings: Sequence[ForwardTiming], labels: Mapping[str, str]) -> pd.DataFrame:
    """One row per (layer, T), the layer named by `labels` (layer kind → name); 'milliseconds' is
    empty where the time budget ran out."""
    return pd.DataFrame({
        "layer": [labels[t.layer] for t in timings],
        "T": [t.T for t in timings],
        "d": [t.d for t in timings],
        "milliseconds": [np.nan if t.seconds is None else 1000 * t.seconds for t in timings],
        "microseconds per position": [np.nan if t.seconds is None else 1e6 * t.seconds / t.T for t in timings],
        "timed runs": [t.runs for t in timings],
    })


def timing_chart(frame: pd.DataFrame, labels: Mapping[str, str]) -> alt.LayerChart:
    """Measured forward time against T, log–log; `labels` (layer kind → name, as given to
    `timing_frame`) sets the legend's order and each layer's colour."""
    present = set(frame["layer"])
    colours = {labels[kind]: colour for kind, colour in TIMING_COLOURS.items()}
    colour = colour_encoding("layer", [label for label in labels.values() if label in present], colours, title=None,
                             phone={labels[kind]: name for kind, name in TIMING_PHONE_NAMES.items() if kind in labels})
    measured = alt.Chart(frame).transform_filter("isValid(datum.milliseconds)")
    lengths = sorted(set(frame["T"]))
    x = alt.X("T:Q", title="sequence length T", scale=alt.Scale(type="log"), axis=alt.Axis(values=lengths))
    line = measured.mark_line(strokeWidth=3, point=alt.OverlayMarkDef(size=60)).encode(
        x=x, y=alt.Y("milliseconds:Q", title="forward pass, milliseconds (best of runs)", scale=alt.Scale(type="log"),
                     axis=alt.Axis(format="~g")),
        color=colour,
        tooltip=[alt.Tooltip("layer:N"), alt.Tooltip("T:Q"), alt.Tooltip("milliseconds:Q", format=".3f"),
                 alt.Tooltip("microseconds per position:Q", format=".2f"), alt.Tooltip("timed runs:Q")],
    )
    return configure(line.properties(height=CHART_HEIGHT), legend_columns=1)


@dataclass(frozen=True)
class CostFigures:
    bars: go.Figure  # the key figure: the complexity table as bars
    table: pd.DataFrame


def cost_figures(view) -> CostFigures:
    """`view`: the cost lesson's view (settings with n_layers; rows)."""
    n_layers = view.settings.n_layers
    return CostFigures(cost_bars(view.rows, n_layers), complexity_frame(view.rows, n_layers))


@dataclass(frozen=True)
class CrossoverFigures:
    operations: pd.DataFrame  # the curves
    chart: alt.LayerChart


def crossover_figures(view) -> CrossoverFigures:
    """`view`: the crossover's view (settings T, d; T_values; operations)."""
    operations = operations_frame(dict(view.operations), view.T_values)
    return CrossoverFigures(operations, operations_chart(operations, d=view.settings.d, T=view.settings.T))


@dataclass(frozen=True)
class StopwatchFigures:
    times: pd.DataFrame
    chart: alt.LayerChart


def stopwatch_figures(view, labels: Mapping[str, str]) -> StopwatchFigures:
    """`view`: the stopwatch's view (its timings); `labels`: layer kind → name."""
    times = timing_frame(view.timings, labels)
    return StopwatchFigures(times, timing_chart(times, labels))
