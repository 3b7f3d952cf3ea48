"""The live-training lesson's figures: the probe's attention in every layer and head, the held-out
loss and accuracy as a run goes, and a race of two models' accuracy against seconds and steps.

Axes are fixed to the whole run (every step, or the race's seconds) from the first snapshot, so a
curve grows across a still frame instead of the frame rescaling under it at every poll.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from explorer.figures.common import (
    FONT_SIZE,
    OKABE_ITO,
    PLAIN_NUMBERS,
    SEQUENTIAL,
    colour_list,
    figure_from_spec,
    grid_domains,
    hover_grid,
    panel_title,
    token_axis,
)
from explorer.figures.margins import TOOLBAR_PX

__all__ = ["RUNNER_COLOURS", "Curve", "TrainFigures", "attention_panels", "race_figure", "train_figures",
           "training_curves"]

RUNNER_COLOURS = {"transformer": OKABE_ITO["blue"], "gru": OKABE_ITO["vermillion"], "lstm": OKABE_ITO["orange"]}
RUNNER_NAMES = {"gru": "GRU", "lstm": "LSTM"}
LOSS_COLOUR = OKABE_ITO["vermillion"]
ACCURACY_COLOUR = OKABE_ITO["blue"]


@dataclass(frozen=True)
class Curve:
    """One runner's snapshots as columns: step, held-out loss, accuracy (0–1), seconds of training."""

    name: str
    steps: np.ndarray
    loss: np.ndarray
    accuracy: np.ndarray
    seconds: np.ndarray


def attention_panels(weights: np.ndarray, query_tokens: Sequence[str], key_tokens: Sequence[str], *,
                     columns: int = 4, cell_hover: bool = True) -> go.Figure:
    """Every (layer, head) of attention weights (layers, heads, T_q, T_k) as one panel, layer by
    layer, `columns` panels to a row (a whole layer per row when it has more heads): for a small
    model, every head of every layer side by side, so that one screen shows them all.  One colour
    scale from 0 to 1; query tokens label the first panel of each row.  Without `cell_hover` a cell's
    hover gives its weight but not its "query → key" text (a figure redrawn at every poll of a run
    leaves no time to hover, and every poll would send the text again)."""
    n_layers, n_heads = weights.shape[:2]
    per_row = max(n_heads, min(columns, n_layers * n_heads))
    per_row -= per_row % n_heads  # whole layers in a row
    rows = -(-n_layers * n_heads // per_row)
    x_domains = grid_domains(per_row, 0.04)
    y_domains = grid_domains(rows, 0.5 / rows if rows > 1 else 0.0)[::-1]
    hover = hover_grid(query_tokens, key_tokens) if cell_hover else None
    traces, layout, titles = [], {}, []
    for n, (layer, head) in enumerate((lay, h) for lay in range(n_layers) for h in range(n_heads)):
        row, column = divmod(n, per_row)
        suffix = "" if n == 0 else str(n + 1)
        trace = {"type": "heatmap", "z": weights[layer, head].astype(np.float32), "coloraxis": "coloraxis",
                 "xaxis": f"x{suffix}", "yaxis": f"y{suffix}", "xgap": 1, "ygap": 1,
                 "hovertemplate": f"layer {layer + 1} head {head + 1}<br>"
                                  + ("%{customdata}<br>" if hover is not None else "")
                                  + "weight %{z:.3f}<extra></extra>"}
        if hover is not None:
            trace["customdata"] = hover
        traces.append(trace)
        layout[f"xaxis{suffix}"] = token_axis(key_tokens, domain=x_domains[column], anchor=f"y{suffix}",
                                               size=FONT_SIZE - 3)
        layout[f"yaxis{suffix}"] = token_axis(query_tokens, domain=y_domains[row], anchor=f"x{suffix}",
                                               size=FONT_SIZE - 3, reverse=True, show=column == 0)
        titles.append(panel_title(f"layer {layer + 1} · head {head + 1}", x_domains[column], y_domains[row][1] + 0.01))
    layout.update(
        annotations=titles, font={"size": FONT_SIZE}, plot_bgcolor="rgba(0,0,0,0)",
        coloraxis={"colorscale": colour_list(SEQUENTIAL), "cmin": 0.0, "cmax": 1.0,
                   "colorbar": {"title": {"text": "weight", "side": "right"}, "thickness": 16}},
        height=60 + rows * (90 + 22 * len(query_tokens)), margin={"l": 10, "r": 10, "t": 30, "b": 20},
    )
    return figure_from_spec({"data": traces, "layout": layout})


def _axis(domain, anchor: str, title: str, *, upper: float | None = None, percent: bool = False) -> dict:
    axis = {"domain": list(domain), "anchor": anchor, "title": {"text": title, "font": {"size": FONT_SIZE}},
            "tickfont": {"size": FONT_SIZE - 2}, "zeroline": False, "gridcolor": "#e5e5e5", **PLAIN_NUMBERS}
    if percent:
        axis.update(range=[-2, 102], ticksuffix=" %")
    elif upper is not None:
        axis["range"] = [0, upper]
    return axis


def _panels(stacked: bool) -> tuple[tuple, tuple]:
    """(x domain, y domain) of the first and second panel: side by side, or one above the other."""
    if stacked:
        top, bottom = grid_domains(2, 0.3)[::-1]
        return ((0, 1), top), ((0, 1), bottom)
    left, right = grid_domains(2, 0.12)
    return (left, (0, 1)), (right, (0, 1))


def _marker_line(x: float, axis: str) -> dict:
    return {"type": "line", "xref": axis, "yref": f"{axis.replace('x', 'y')} domain", "x0": x, "x1": x, "y0": 0,
            "y1": 1, "line": {"color": "#444444", "width": 2, "dash": "dot"}}


def training_curves(curve: Curve, total_steps: int, *, marker: int | None = None, loss_top: float | None = None,
                    stacked: bool = False, height: int | None = None) -> go.Figure:
    """Held-out loss and accuracy against the training step, side by side (or `stacked`), the x axes
    fixed to 0 … total_steps; `marker` draws a dotted line at one step (the snapshot the grid shows)."""
    (x1, y1), (x2, y2) = _panels(stacked)
    top = loss_top if loss_top is not None else float(np.max(curve.loss, initial=1.0)) * 1.05
    traces = [
        {"type": "scatter", "mode": "lines+markers", "x": curve.steps, "y": curve.loss.astype(np.float32),
         "name": "held-out loss",
         "line": {"color": LOSS_COLOUR, "width": 3}, "marker": {"size": 5},
         "hovertemplate": "step %{x}<br>loss %{y:.3f}<extra></extra>"},
        {"type": "scatter", "mode": "lines+markers", "x": curve.steps, "y": (100 * curve.accuracy).astype(np.float32),
         "name": "held-out accuracy", "xaxis": "x2", "yaxis": "y2", "line": {"color": ACCURACY_COLOUR, "width": 3},
         "marker": {"size": 5}, "hovertemplate": "step %{x}<br>%{y:.1f} %<extra></extra>"},
    ]
    layout = {
        "xaxis": _axis(x1, "y", "" if stacked else "training step", upper=total_steps),
        "yaxis": _axis(y1, "x", "loss", upper=top),
        "xaxis2": _axis(x2, "y2", "training step", upper=total_steps),
        "yaxis2": _axis(y2, "x2", "accuracy", percent=True),
        "annotations": [panel_title("Held-out loss", x1, y1[1] + 0.01, FONT_SIZE),
                        panel_title("Held-out accuracy", x2, y2[1] + 0.01, FONT_SIZE)],
        "shapes": [] if marker is None else [_marker_line(marker, "x"), _marker_line(marker, "x2")],
        "showlegend": False, "height": height or TOOLBAR_PX + (520 if stacked else 300), "font": {"size": FONT_SIZE},
        # the panels' titles under the toolbar's band (a phone's right title reaches its buttons)
        "margin": {"l": 10, "r": 10, "t": 40 + TOOLBAR_PX, "b": 10}, "plot_bgcolor": "rgba(0,0,0,0)",
    }
    return figure_from_spec({"data": traces, "layout": layout})


def race_figure(curves: Sequence[Curve], seconds: float, *, stacked: bool = False,
                height: int | None = None) -> go.Figure:
    """Each runner's held-out accuracy against its seconds of training and against its training
    steps, side by side (or `stacked`): the same clock for both, and what each step bought."""
    (x1, y1), (x2, y2) = _panels(stacked)
    most_steps = max((int(c.steps.max(initial=0)) for c in curves), default=1)
    traces = []
    for curve in curves:
        colour = RUNNER_COLOURS.get(curve.name, OKABE_ITO["black"])
        name = RUNNER_NAMES.get(curve.name, curve.name)
        common = {"type": "scatter", "mode": "lines+markers", "name": name, "legendgroup": name,
                  "line": {"color": colour, "width": 3}, "marker": {"size": 5}}
        traces.append({**common, "x": curve.seconds, "y": 100 * curve.accuracy,
                       "hovertemplate": f"{name}<br>%{{x:.1f}} s<br>%{{y:.1f}} %<extra></extra>"})
        traces.append({**common, "x": curve.steps, "y": 100 * curve.accuracy, "xaxis": "x2", "yaxis": "y2",
                       "showlegend": False,
                       "hovertemplate": f"{name}<br>step %{{x}}<br>%{{y:.1f}} %<extra></extra>"})
    layout = {
        "xaxis": _axis(x1, "y", "seconds of training", upper=seconds * 1.02),
        "yaxis": _axis(y1, "x", "accuracy", percent=True),
        "xaxis2": _axis(x2, "y2", "training steps", upper=max(most_steps, 1) * 1.02),
        "yaxis2": _axis(y2, "x2", "accuracy", percent=True),
        "annotations": [panel_title("Against the clock", x1, y1[1] + 0.01, FONT_SIZE),
                        panel_title("Against training steps", x2, y2[1] + 0.01, FONT_SIZE)],
        "legend": {"orientation": "h", "x": 0.5, "xanchor": "center", "y": 1.12, "yanchor": "bottom",
                   "font": {"size": FONT_SIZE}},
        "height": height or (560 if stacked else 340), "font": {"size": FONT_SIZE},
        "margin": {"l": 10, "r": 10, "t": 70, "b": 10}, "plot_bgcolor": "rgba(0,0,0,0)",
    }
    return figure_from_spec({"data": traces, "layout": layout})


@dataclass(frozen=True)
class TrainFigures:
    """What the live-training lesson draws at one moment: the probe's attention grid, and the
    transformer's curves (`curves`) or the race (`race`)."""

    grid: go.Figure
    curves: go.Figure | None
    race: go.Figure | None


def _curve(name: str, snapshots) -> Curve:
    return Curve(name, np.array([s.step for s in snapshots], dtype=np.int64),
                 np.array([s.loss for s in snapshots], dtype=float),
                 np.array([s.accuracy for s in snapshots], dtype=float),
                 np.array([s.training_seconds for s in snapshots], dtype=float))


def train_figures(view) -> TrainFigures:
    """The figures of the lesson's view at a moment (explorer.lessons.train.view.TrainView: its job, the
    snapshots shown per runner, the probe's tokens, the snapshot chosen)."""
    snapshot, runners = view.snapshot, view.job.runners
    grid = attention_panels(snapshot.attention, view.queries, view.keys, cell_hover=not view.live)
    if view.job.race_seconds is not None:
        race = race_figure([_curve(runner.model, shown) for runner, shown in zip(runners, view.snapshots, strict=True)],
                           view.job.race_seconds)
        return TrainFigures(grid, None, race)
    transformer = view.snapshots[0]
    curves = training_curves(_curve("transformer", transformer), runners[0].steps, marker=snapshot.step,
                             loss_top=max(s.loss for s in transformer) * 1.05)
    return TrainFigures(grid, curves, None)
