"""The cost lesson's figures: the complexity table and its bars, multiplications against T, and the
measured forward times.  Data in, Altair or Plotly out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.figures.common import CHART_HEIGHT, FONT_SIZE, OKABE_ITO, figure_from_spec, plotly_text
from explorer.figures.ink import INK
from explorer.figures.margins import TOOLBAR_PX
from explorer.figures.vega import colour_encoding, configure, phone_columns
from explorer.lessons.cost.numbers import count_text, times_text

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


# One Okabe-Ito hue per layer, none two alike (the CNN's and the RNN's were orange and vermillion), and a
# value label inside a bar in black or white, whichever reads on it (at least 4.5:1, WCAG).
COST_COLOURS = {"cnn": OKABE_ITO["orange"], "rnn": OKABE_ITO["reddish purple"], "attention": OKABE_ITO["blue"],
                "encoder": OKABE_ITO["bluish green"]}
INSIDE_TEXT = {"cnn": "#000000", "rnn": "#000000", "attention": "#FFFFFF", "encoder": "#000000"}
OUTSIDE_TEXT = INK  # a label past its bar's end, on the page's white
COST_QUANTITIES = ("parameters", "multiplications", "sequential steps", "path length")
COST_SHORT = {"cnn": "CNN", "rnn": "RNN", "attention": "attention", "encoder": "encoder"}  # the bars' row labels
# (row, column) of each quantity, two by two: the two with a ratio on top, the longer title on the left (a
# title may run on into the gap between the columns, not past the chart's right edge)
_PANELS = {"multiplications": (0, 0), "parameters": (0, 1), "sequential steps": (1, 0), "path length": (1, 1)}
_COLUMN_GAP, _ROW_GAP = 0.1, 0.2  # paper fractions; the row gap holds the lower panels' titles
PHONE_PANEL_PX = 120  # a panel's width on a phone (390 px wide; 135 px seen): the narrowest a value label must fit
_LABEL_PAD = 8  # px: a label's padding in or beside its bar, and some to spare
_DIGIT_EM = 0.6  # a value label's characters (digits, '.', ',', a space, k, M, B), wide: Source Sans' ≤ 0.56 em


def _values(row) -> tuple[int, int, int, int]:
    c = row.cost
    return c.parameters, c.multiplications, c.sequential_steps, c.path_length


def _panel_title(quantity: str, rows: Sequence[ComplexityRow], at: int) -> str:
    """The quantity, and for parameters and multiplications how many times the RNN's count self-attention's
    is, on a second line (the ratio the steps' answers quote)."""
    by_layer = {row.layer: _values(row)[at] for row in rows}
    if quantity not in ("parameters", "multiplications") or not {"rnn", "attention"} <= set(by_layer):
        return f"<b>{quantity}</b>"
    return f"<b>{quantity}</b><br>attention {times_text(by_layer['attention'] / by_layer['rnn'])}× RNN"


def bar_range(values: Sequence[int], texts: Sequence[str], panel_px: float = PHONE_PANEL_PX,
              size: float = FONT_SIZE) -> float:
    """The end of a panel's linear axis: the least, from the longest bar on, at which every bar's label
    fits inside its bar or after it within the panel, `panel_px` wide (Plotly puts a label inside a bar
    where it fits, else after it; a label fitting neither ran past the chart's edge on a phone)."""
    longest = max(max(values), 1)
    widths = [_DIGIT_EM * size * len(text) + _LABEL_PAD for text in texts]

    def fits(end: float) -> bool:
        return all(v / end * panel_px >= w or v / end * panel_px + w <= panel_px for v, w in zip(values, widths,
                                                                                                    strict=True))
    ends = [longest * 1.02**i for i in range(1, 71)]  # up to 4 times the longest bar
    return next((end for end in ends if fits(end)), ends[0])


def cost_bars(rows: Sequence[ComplexityRow], n_layers: int = 1) -> go.Figure:
    """The complexity table as bars: one panel per quantity (parameters, multiplications, sequential
    steps, path length), two by two, one horizontal bar per layer on a linear scale, so a bar ten times
    another is ten times as long.  Every bar carries its count upright (explorer.lessons.cost.numbers,
    the notation of the steps' answers), inside its end where it fits, else after it (`bar_range`); the
    parameters' and multiplications' titles say how many times the RNN's count self-attention's is.  The
    axes have no ticks: the printed counts are the scale.  A stack of `n_layers` convolutions too shallow
    to reach the first input has no path: its path bar shows the layers it would need (the notes' O(T/k)),
    and its hover says so."""
    names = [COST_SHORT[row.layer] for row in rows]
    traces, annotations, layout = [], [], {}
    width, height = (1.0 - _COLUMN_GAP) / 2, (1.0 - _ROW_GAP) / 2
    for at, quantity in enumerate(COST_QUANTITIES):
        r, c = _PANELS[quantity]
        suffix = "" if at == 0 else str(at + 1)
        x0, y1 = c * (width + _COLUMN_GAP), 1.0 - r * (height + _ROW_GAP)
        values = [_values(row)[at] for row in rows]
        texts = [count_text(value) for value in values]
        for row, value, text, name in zip(rows, values, texts, names, strict=True):
            hover = plotly_text(row.label) + f"<br>{quantity}: {value:,}<extra></extra>"
            if quantity == "path length" and row.layer == "cnn" and value > n_layers:
                hover = (plotly_text(row.label) + f"<br>{n_layers} layer{'s' * (n_layers > 1)} cannot reach the "
                         f"first input:<br>it takes {value:,} layers<extra></extra>")
            traces.append({
                "type": "bar", "orientation": "h", "name": plotly_text(row.label), "legendgroup": row.layer,
                "showlegend": False, "x": [value], "y": [name], "xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
                "marker": {"color": COST_COLOURS[row.layer]}, "text": [text], "textposition": "auto",
                "insidetextanchor": "end", "textangle": 0, "constraintext": "none",
                "insidetextfont": {"color": INSIDE_TEXT[row.layer], "size": FONT_SIZE},
                "outsidetextfont": {"color": OUTSIDE_TEXT, "size": FONT_SIZE}, "cliponaxis": False,
                "hovertemplate": hover,
            })
        layout[f"xaxis{suffix}"] = {"domain": [x0, x0 + width], "anchor": f"y{suffix}",
                                    "range": [0, bar_range(values, texts)], "showticklabels": False,
                                    "showgrid": False, "zeroline": False, "fixedrange": True}
        layout[f"yaxis{suffix}"] = {"domain": [max(0.0, y1 - height), y1], "anchor": f"x{suffix}",
                                    "type": "category", "categoryorder": "array", "categoryarray": names,
                                    "autorange": "reversed", "showticklabels": c == 0, "tickfont": {"size": FONT_SIZE},
                                    "showline": True, "linecolor": "#444444", "ticks": "", "fixedrange": True}
        annotations.append({"text": _panel_title(quantity, rows, at), "xref": "paper", "yref": "paper", "x": x0,
                            "y": y1, "xanchor": "left", "yanchor": "bottom", "yshift": 4, "align": "left",
                            "showarrow": False, "font": {"size": FONT_SIZE, "color": OUTSIDE_TEXT}})
    layout.update({
        "font": {"size": FONT_SIZE}, "height": 420 + TOOLBAR_PX, "barmode": "overlay", "bargap": 0.22,
        "margin": {"l": 10, "r": 10, "t": 56 + TOOLBAR_PX, "b": 10}, "plot_bgcolor": "rgba(0,0,0,0)",
        "showlegend": False, "annotations": annotations,
    })
    return figure_from_spec({"data": traces, "layout": layout})


def operations_frame(curves: dict[str, list[int]], T_values) -> pd.DataFrame:
    parts = [pd.DataFrame({"series": name, "T": list(T_values), "multiplications": values})
             for name, values in curves.items()]
    return pd.concat(parts, ignore_index=True)


OPERATION_COLOURS = {
    "T·d² (the RNN's term)": COST_COLOURS["rnn"], "T²·d (attention's scores and mix)": COST_COLOURS["attention"],
    "tanh RNN layer, exact": COST_COLOURS["rnn"], "self-attention layer, exact": COST_COLOURS["attention"],
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


# The RNN and self-attention in the key figure's colours; the Python loop in a hue of its own (torch's
# RNN and the loop were vermillion and orange, one hue on a projector)
TIMING_COLOURS = {"rnn": COST_COLOURS["rnn"], "rnn-loop": OKABE_ITO["vermillion"],
                  "attention": COST_COLOURS["attention"]}
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
