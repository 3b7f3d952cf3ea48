"""The gradient-flow lesson's figures: the gradient reaching each input (curves and a strip), the
dependency matrices, and trained models' accuracy on the recall task (the unrolled-loop diagram is
in `explorer.lessons.gradients.charts`).  Data in, Altair or Plotly out.

Gradient norms are plotted as log10 values (see `explorer.figures.common`).  Exact zeros (truncated
back-propagation) have no logarithm; the data keeps them (`exactly_zero`) and the chart shades their
region instead of drawing a line there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.figures.common import (
    CHART_HEIGHT,
    FONT_SIZE,
    OKABE_ITO,
    figure_from_spec,
    plotly_text,
)
from explorer.figures.dependency import dependency_figure, dependency_frame
from explorer.figures.logscale import log_range, log_strip, log_ticks
from explorer.figures.margins import TOOLBAR_PX
from explorer.figures.vega import colour_encoding, configure

__all__ = [
    "DependencyFigures",
    "GradientFigures",
    "GradientSummary",
    "RecallCurve",
    "RecallFigures",
    "dependency_figure",
    "dependency_figures",
    "dependency_frame",
    "gradient_figure",
    "gradient_figures",
    "gradient_frame",
    "gradient_strip",
    "recall_bands",
    "recall_chart",
    "recall_figures",
    "recall_frame",
]


class GradientSummary(Protocol):
    """What `gradient_frame` reads of a gradient measurement (measures.py's GradientCurves):
    log10 ‖∂L/∂xₜ‖ per model kind over positions t = 0 … T−1, summarised over seeds."""

    @property
    def T(self) -> int: ...
    @property
    def bptt_window(self) -> int | None: ...  # back-propagation through the last n steps only (n ≥ 1)
    @property
    def seeds(self) -> Sequence[int]: ...
    def summary(self, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...  # (mean, low, high), −inf = 0


class RecallCurve(Protocol):
    """What the recall figures read of a trained model's accuracy by distance (RecallAccuracy)."""

    @property
    def distances(self) -> np.ndarray: ...
    @property
    def accuracy(self) -> np.ndarray: ...
    @property
    def examples(self) -> np.ndarray: ...


MODEL_COLOURS = {
    "tanh RNN": OKABE_ITO["vermillion"], "LSTM": OKABE_ITO["orange"], "GRU": OKABE_ITO["reddish purple"],
    "causal attention": OKABE_ITO["blue"], "causal transformer": OKABE_ITO["blue"],
}


# --- gradient against position ---------------------------------------------------------------------


def gradient_frame(curves: GradientSummary, labels: Mapping[str, str], paths: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """One row per (model, position): log10 of the mean norm over seeds and of mean ± spread.

    labels: model kind → the name shown, in the order drawn; paths: model kind → the steps the
    gradient takes from the loss back to each input (its path length).
    exactly_zero: the gradient is exactly 0 (its log10 columns are then empty);
    truncated: the path is longer than the truncation window (so only recurrent models have any).
    """
    t = np.arange(curves.T)
    window = np.inf if curves.bptt_window is None else curves.bptt_window
    parts = []
    for kind, label in labels.items():
        mean, low, high = curves.summary(kind)
        zero = np.isneginf(mean)
        parts.append(pd.DataFrame({
            "model": label,
            "t": t,
            "steps back from the loss": paths[kind],
            "log10 norm": np.where(zero, np.nan, mean),
            "log10 low": np.where(zero, np.nan, low),
            "log10 high": np.where(zero, np.nan, high),
            "exactly_zero": zero,
            "truncated": np.asarray(paths[kind]) > window,
            "seeds": len(curves.seeds),
        }))
    return pd.concat(parts, ignore_index=True)


def _translucent(colour: str, alpha: float) -> str:
    red, green, blue = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def gradient_figure(frame: pd.DataFrame) -> go.Figure:
    """log10 ‖∂L/∂xₜ‖ against t: one line per model, recurrent models dashed and attention solid, each
    with a band for the spread over seeds.  A gradient that is exactly 0 has no logarithm: its
    positions are left out, and the ones a truncation window cut off are shaded and labelled."""
    labels = list(dict.fromkeys(frame["model"]))
    drawn = frame[~frame["exactly_zero"].astype(bool)]
    bands, lines = [], []
    for label in labels:
        rows = drawn[drawn["model"] == label].sort_values("t")
        t, colour, name = rows["t"].tolist(), MODEL_COLOURS[label], plotly_text(label)
        bands.append({"type": "scatter", "mode": "lines", "x": t + t[::-1], "legendgroup": label,
                      "y": rows["log10 high"].tolist() + rows["log10 low"].tolist()[::-1], "fill": "toself",
                      "fillcolor": _translucent(colour, 0.18), "line": {"width": 0}, "hoverinfo": "skip",
                      "showlegend": False})
        attention = "attention" in label
        lines.append({"type": "scatter", "mode": "lines", "name": name, "legendgroup": label, "x": t,
                      "y": rows["log10 norm"].tolist(), "customdata": rows["steps back from the loss"].tolist(),
                      "line": {"color": colour, "width": 3.5 if attention else 3, "dash": "solid" if attention
                               else "dash"},
                      "hovertemplate": f"{name}<br>t = %{{x}}<br>log10 ‖∂L/∂xₜ‖ = %{{y:.1f}}"
                                       "<br>steps back from the loss: %{customdata}<extra></extra>"})
    values = drawn[["log10 norm", "log10 low", "log10 high"]].to_numpy(dtype=float)
    layout = {
        "xaxis": {"title": {"text": "input position t<br>(the loss reads the last output)"},  # 2 lines: a phone's
                  "tickformat": "d", "showgrid": False, "zeroline": False},                  # width
        "yaxis": {"title": {"text": "‖∂L/∂xₜ‖ (log scale)"}, **log_ticks(*log_range(values)), "zeroline": False},
        # The legend under the axis title: on a phone its entries wrap onto two rows, and above the plot the
        # first row ran under the chart's toolbar; the band at the top is left to the toolbar.
        "legend": {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0,
                   "font": {"size": FONT_SIZE}},
        "font": {"size": FONT_SIZE}, "height": CHART_HEIGHT,
        "margin": {"l": 10, "r": 10, "t": TOOLBAR_PX + 8, "b": 10},
        "plot_bgcolor": "rgba(0,0,0,0)",
    }
    cut = frame.loc[frame["truncated"].astype(bool), "t"]
    if len(cut):
        start, end = int(cut.min()), int(cut.max())
        layout["shapes"] = [{"type": "rect", "xref": "x", "yref": "paper", "x0": start, "x1": end, "y0": 0, "y1": 1,
                             "fillcolor": "#bbbbbb", "opacity": 0.35, "line": {"width": 0}, "layer": "below"}]
        layout["annotations"] = [{"x": start, "y": 1, "xref": "x", "yref": "paper", "xanchor": "left",
                                  "yanchor": "top", "showarrow": False, "xshift": 6, "yshift": -6,
                                  # two lines: in one it ran past a phone's chart
                                  "text": f"truncated BPTT: gradient<br>exactly 0 up to t = {end}",
                                  "font": {"size": FONT_SIZE, "color": "#333333"}}]
    return figure_from_spec({"data": bands + lines, "layout": layout})


def gradient_strip(frame: pd.DataFrame) -> go.Figure:
    """The curves of `gradient_figure` as colour: one row per model, log10 ‖∂L/∂xₜ‖ (blank = 0)."""
    labels = list(dict.fromkeys(frame["model"]))
    z = np.array([frame[frame["model"] == label].sort_values("t")["log10 norm"].to_numpy(dtype=float)
                  for label in labels])
    return log_strip(z, rows=labels, x_title="input position t", value_title="‖∂L/∂xₜ‖", hover_x="t")


# --- dependency matrices --------------------------------------------------------------------------






# --- trained models on the recall task ---------------------------------------------------------------


RECALL_BIN = 8


def recall_frame(results: Sequence[tuple[str, RecallCurve]], *,
                 binned: Callable[[RecallCurve, int], np.ndarray]) -> pd.DataFrame:
    """(label, accuracy by distance) pairs → one row per model and distance, with the accuracy over
    the bin of 8 distances that the row belongs to, as `binned(result, 8)` computes it (the
    analysis's `binned_accuracy`)."""
    parts = [pd.DataFrame({"model": label, "distance": r.distances, "accuracy": r.accuracy, "examples": r.examples,
                           f"accuracy over {RECALL_BIN} distances": binned(r, RECALL_BIN)})
             for label, r in results]
    if not parts:
        return pd.DataFrame(columns=["model", "distance", "accuracy", "examples",
                                     f"accuracy over {RECALL_BIN} distances"])
    return pd.concat(parts, ignore_index=True)


def recall_bands(results: Sequence[tuple[str, RecallCurve]], *,
                 bands: Callable[[RecallCurve], Sequence[tuple[str, float]]]) -> pd.DataFrame:
    """Accuracy over ranges of distance, one row per model and one column per range, as `bands(result)`
    lists them (the analysis's `accuracy_bands`: [("1–8", accuracy), …])."""
    table = pd.DataFrame({label: dict(bands(r)) for label, r in results}).T
    table.index.name = "model"
    return table


def recall_chart(frame: pd.DataFrame, *, chance: float) -> alt.LayerChart:
    """Accuracy against the distance between the key and the '?': faint points per distance, a line
    per model through the accuracy over bins of 8 distances."""
    labels = list(dict.fromkeys(frame["model"]))
    colour = colour_encoding("model", labels, MODEL_COLOURS)
    binned = f"accuracy over {RECALL_BIN} distances"
    x = alt.X("distance:Q", title="distance from the key to '?' (tokens)", axis=alt.Axis(tickMinStep=1))
    y_axis = alt.Axis(format="%")
    base = alt.Chart(frame)
    points = base.mark_circle(size=28, opacity=0.35).encode(
        x=x, y=alt.Y("accuracy:Q", title="accuracy", scale=alt.Scale(domain=[0, 1]), axis=y_axis), color=colour,
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("distance:Q"), alt.Tooltip("accuracy:Q", format=".0%"),
                 alt.Tooltip("examples:Q", title="evaluation examples")],
    )
    # One layer per model, each with its own width and dash, so that lines lying on top of each other
    # (several models at 100 %) stay visible; the colour legend is shared.
    styles = {"causal transformer": (7, [1, 0]), "GRU": (4, [12, 8]), "LSTM": (3, [3, 5])}
    lines = [
        base.transform_filter(alt.datum["model"] == label).mark_line(
            strokeWidth=styles.get(label, (3.5, [1, 0]))[0], strokeDash=styles.get(label, (3.5, [1, 0]))[1],
            interpolate="step-after",
        ).encode(
            x=x, y=alt.Y(f"{binned}:Q", title="accuracy", scale=alt.Scale(domain=[0, 1]), axis=y_axis), color=colour,
            tooltip=[alt.Tooltip("model:N"), alt.Tooltip(f"{binned}:Q", format=".0%")],
        )
        for label in sorted(labels, key=lambda m: -styles.get(m, (3.5, None))[0])  # widest drawn first
    ]
    rule = base.mark_rule(strokeDash=[4, 4], color="#555555").encode(y=alt.datum(chance))
    text = base.mark_text(align="left", baseline="top", dx=4, dy=4, fontSize=FONT_SIZE - 2, color="#333333").encode(
        x=alt.datum(1), y=alt.datum(chance), text=alt.value(f"chance ({chance:.1%})"),
    )
    return configure(alt.layer(points, *lines, rule, text).properties(height=CHART_HEIGHT - 40), legend_columns=2)


# --- the lesson's figures, from its views (explorer.lessons.gradients.view), made once per setting ----------


@dataclass(frozen=True)
class GradientFigures:
    frame: pd.DataFrame
    chart: go.Figure
    strip: go.Figure
    unrolled: go.Figure
    paths: pd.DataFrame


def gradient_figures(view, labels: Mapping[str, str]) -> GradientFigures:
    from explorer.lessons.gradients.charts import path_frame, unrolled_figure

    frame = gradient_frame(view.curves, labels, view.paths)
    return GradientFigures(frame, gradient_figure(frame), gradient_strip(frame),
                           unrolled_figure(view.paths["rnn"], view.paths["transformer"]),
                           path_frame(view.paths["rnn"], view.paths["transformer"]))


@dataclass(frozen=True)
class DependencyFigures:
    figure: go.Figure
    frame: pd.DataFrame


def dependency_figures(panels: Sequence[tuple[str, np.ndarray]]) -> DependencyFigures:
    return DependencyFigures(dependency_figure(panels), dependency_frame(panels))


@dataclass(frozen=True)
class RecallFigures:
    chart: alt.LayerChart | None  # None when no recall model loaded
    bands: pd.DataFrame
    frame: pd.DataFrame


def recall_figures(view) -> RecallFigures:
    results = list(view.results)
    frame = recall_frame(results, binned=lambda result, _width: view.binned[_label(results, result)])
    bands = recall_bands(results, bands=lambda result: view.bands[_label(results, result)])
    chart = recall_chart(frame, chance=1 / len(view.task.keys)) if results else None
    return RecallFigures(chart, bands, frame)


def _label(results, result) -> str:
    return next(label for label, r in results if r is result)
