"""The gradient-flow lesson's figures: the gradient reaching each input (curves and a strip), the
unrolled loop against attention's single step, the dependency matrices, and trained models'
accuracy on the recall task.  Data in, Altair or Plotly out.

Gradient norms are plotted as log10 values (see `explorer.figures.common`).  Exact zeros (truncated
back-propagation) have no logarithm; the data keeps them (`exactly_zero`) and the chart shades their
region instead of drawing a line there.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..views.gradients import (
    KIND_LABELS,
    GradientCurves,
    RecallAccuracy,
    accuracy_bands,
    binned_accuracy,
    path_lengths,
)
from .common import (
    CHART_HEIGHT,
    FONT_SIZE,
    OKABE_ITO,
    SEQUENTIAL,
    colour_encoding,
    configure,
    figure_from_spec,
    grid_domains,
    log_axis,
    log_colorbar,
    log_range,
    log_strip,
    plotly_text,
)

__all__ = [
    "dependency_figure",
    "dependency_frame",
    "gradient_chart",
    "gradient_frame",
    "gradient_strip",
    "path_frame",
    "recall_bands",
    "recall_chart",
    "recall_frame",
    "unrolled_figure",
]

MODEL_COLOURS = {
    "tanh RNN": OKABE_ITO["vermillion"], "LSTM": OKABE_ITO["orange"], "GRU": OKABE_ITO["reddish purple"],
    "causal attention": OKABE_ITO["blue"], "causal transformer": OKABE_ITO["blue"],
}


















# --- gradient against position ---------------------------------------------------------------------


def gradient_frame(curves: GradientCurves) -> pd.DataFrame:
    """One row per (model, position): log10 of the mean norm over seeds and of mean ± spread.

    exactly_zero: the gradient is exactly 0 (its log10 columns are then empty);
    truncated: the position lies beyond the truncation window (recurrent models only).
    """
    T = curves.T
    t = np.arange(T)
    cut = -1 if curves.bptt_window is None else T - curves.bptt_window
    parts = []
    for kind, label in KIND_LABELS.items():
        mean, low, high = curves.summary(kind)
        zero = np.isneginf(mean)
        parts.append(pd.DataFrame({
            "model": label,
            "t": t,
            "steps back from the loss": path_lengths(T, kind),
            "log10 norm": np.where(zero, np.nan, mean),
            "log10 low": np.where(zero, np.nan, low),
            "log10 high": np.where(zero, np.nan, high),
            "exactly_zero": zero,
            "truncated": (t < cut) & (kind != "transformer"),
            "seeds": len(curves.seeds),
        }))
    return pd.concat(parts, ignore_index=True)


def gradient_chart(frame: pd.DataFrame, *, title: str = "") -> alt.LayerChart:
    """log10 ‖∂L/∂xₜ‖ against t, one line per model with a band for the spread over seeds."""
    labels = list(dict.fromkeys(frame["model"]))
    colour = colour_encoding("model", labels, MODEL_COLOURS)
    x = alt.X("t:Q", title="input position t (the loss reads the last output)", axis=alt.Axis(tickMinStep=1))
    drawn = alt.datum["exactly_zero"] == False  # noqa: E712 — a Vega expression, not Python
    base = alt.Chart(frame).transform_filter(drawn)
    band = base.mark_area(opacity=0.18).encode(
        x=x, y=alt.Y("log10 low:Q"), y2="log10 high:Q", color=colour,
    )
    # Recurrent models dashed, attention solid: two line layers (one strokeDash channel on the same
    # field as the colour would make Vega-Lite drop the merged legend).
    attention = alt.expr.indexof(alt.datum["model"], "attention") >= 0
    encoding = {
        "x": x,
        "y": alt.Y("log10 norm:Q", axis=log_axis("‖∂L/∂xₜ‖ (log scale)"), scale=alt.Scale(zero=False)),
        "color": colour,
        "tooltip": [alt.Tooltip("model:N"), alt.Tooltip("t:Q"),
                    alt.Tooltip("log10 norm:Q", format=".1f", title="log10 ‖∂L/∂xₜ‖"),
                    alt.Tooltip("steps back from the loss:Q")],
    }
    loops = base.transform_filter(~attention).mark_line(strokeWidth=3, strokeDash=[8, 3]).encode(**encoding)
    direct = base.transform_filter(attention).mark_line(strokeWidth=3.5).encode(**encoding)
    layers = [band, loops, direct]
    if frame["truncated"].any():
        cut = alt.Chart(frame).transform_filter(alt.datum["truncated"] == True).transform_aggregate(  # noqa: E712
            start="min(t)", end="max(t)"
        )
        layers.append(cut.mark_rect(color="#bbbbbb", opacity=0.35).encode(
            x=alt.X("start:Q"), x2="end:Q",
            tooltip=[alt.Tooltip("end:Q", title="gradient exactly 0 up to t =")],
        ))
        layers.append(cut.mark_text(align="left", baseline="top", dx=6, dy=6, fontSize=FONT_SIZE,
                                    color="#333333").encode(
            x=alt.X("start:Q"), y=alt.value(0), text=alt.value("truncated BPTT: gradient exactly 0 here"),
        ))
    chart = alt.layer(*layers).properties(height=CHART_HEIGHT)
    if title:
        chart = chart.properties(title=title)
    return configure(chart)


def gradient_strip(frame: pd.DataFrame) -> go.Figure:
    """The curves of `gradient_chart` as colour: one row per model, log10 ‖∂L/∂xₜ‖ (blank = 0)."""
    labels = list(dict.fromkeys(frame["model"]))
    z = np.array([frame[frame["model"] == label].sort_values("t")["log10 norm"].to_numpy(dtype=float)
                  for label in labels])
    return log_strip(z, rows=labels, x_title="input position t", value_title="‖∂L/∂xₜ‖", hover_x="t")


def path_frame(T: int) -> pd.DataFrame:
    """The path length from a loss on y_{T−1} back to each input, loop against attention."""
    return pd.DataFrame({"t": np.arange(T), "RNN path length": path_lengths(T, "rnn"),
                         "attention path length": path_lengths(T, "transformer")})


# --- the unrolled loop against the single parallel step -------------------------------------------


def _shown_positions(T: int, max_shown: int) -> list[int | None]:
    if max_shown >= T:
        return list(range(T))
    head = 3
    return [*range(head), None, *range(T - (max_shown - head - 1), T)]


def _sub(name: str, index: int) -> str:
    return f"{name}<sub>{index}</sub>"


def unrolled_figure(T: int, *, max_shown: int = 11) -> go.Figure:
    """Two computation graphs for a loss on the last output: the RNN unrolled over T sequential
    steps (top) and causal attention's single parallel step (bottom).  Each input is coloured by
    its path length — the steps the gradient takes from the loss back to it — and the path to x₀
    is highlighted.  Long sequences show the first and last positions around a gap."""
    positions = _shown_positions(T, max_shown)
    columns = {p: i for i, p in enumerate(positions) if p is not None}
    last = len(positions) - 1
    rnn_paths, attention_paths = path_lengths(T, "rnn"), path_lengths(T, "transformer")
    y_x_rnn, y_h, y_loss_rnn = 5.0, 6.2, 7.45
    y_x_att, y_y, y_loss_att = 0.6, 1.8, 2.9
    grey, highlight = "#9a9a9a", OKABE_ITO["vermillion"]

    def segments(pairs):
        xs, ys = [], []
        for (x0, y0), (x1, y1) in pairs:
            xs += [x0, x1, None]
            ys += [y0, y1, None]
        return xs, ys

    plain, bold, dotted = [], [], []
    # RNN: x_t → h_t, h_{t−1} → h_t, h_{T−1} → L.
    for p, i in columns.items():
        (bold if p == 0 else plain).append(((i, y_x_rnn), (i, y_h)))
    for i in range(last):
        left, right = positions[i], positions[i + 1]
        (dotted if left is None or right is None else bold).append(((i, y_h), (i + 1, y_h)))
    bold.append(((last, y_h), (last, y_loss_rnn)))
    # Attention: every x_s → y_{T−1} (the output the loss reads); faint diagonal for the others.
    for p, i in columns.items():
        (bold if p == 0 else plain).append(((i, y_x_att), (last, y_y)))
        if p != T - 1:
            plain.append(((i, y_x_att), (i, y_y)))
    bold.append(((last, y_y), (last, y_loss_att)))

    traces = []
    for pairs, colour, width, dash in ((plain, grey, 1.5, "solid"), (dotted, grey, 2, "dot"),
                                       (bold, highlight, 3.5, "solid")):
        xs, ys = segments(pairs)
        traces.append({"type": "scatter", "mode": "lines", "x": xs, "y": ys, "hoverinfo": "skip",
                       "line": {"color": colour, "width": width, "dash": dash}, "showlegend": False})
    shown = list(columns.items())
    xs = [i for _, i in shown]
    hover_rnn = [f"x<sub>{p}</sub>: gradient path of {rnn_paths[p]} steps" for p, _ in shown]
    hover_att = [f"x<sub>{p}</sub>: gradient path of {attention_paths[p]} step" for p, _ in shown]
    top = max(2, T)
    for y, paths, hover in ((y_x_rnn, rnn_paths, hover_rnn), (y_x_att, attention_paths, hover_att)):
        traces.append({
            "type": "scatter", "mode": "markers+text", "x": xs, "y": [y] * len(xs),
            "marker": {"size": 40, "color": [int(paths[p]) for p, _ in shown], "coloraxis": "coloraxis",
                       "line": {"color": "#333333", "width": 1}},
            "text": [_sub("x", p) for p, _ in shown], "textposition": "middle center",
            # Viridis is dark at the low end and yellow at the top: white text on the first, black on the second.
            "textfont": {"size": FONT_SIZE - 2,
                         "color": ["#000000" if (paths[p] - 1) / (top - 1) > 0.55 else "#ffffff" for p, _ in shown]},
            "hovertext": hover, "hoverinfo": "text", "showlegend": False,
        })
    state_labels = [(_sub("h", p), y_h) for p, _ in shown] + [(_sub("y", p), y_y) for p, _ in shown]
    traces.append({
        "type": "scatter", "mode": "markers+text", "x": xs + xs, "y": [y for _, y in state_labels],
        "marker": {"size": 40, "symbol": "square", "color": "#f2f2f2", "line": {"color": "#333333", "width": 1}},
        "text": [text for text, _ in state_labels], "textfont": {"size": FONT_SIZE - 2, "color": "#222222"},
        "hoverinfo": "skip", "showlegend": False,
    })
    traces.append({
        "type": "scatter", "mode": "markers+text", "x": [last, last], "y": [y_loss_rnn, y_loss_att],
        "marker": {"size": 40, "symbol": "diamond", "color": "#ffffff", "line": {"color": highlight, "width": 2}},
        "text": ["L", "L"], "textfont": {"size": FONT_SIZE, "color": "#222222"}, "hoverinfo": "skip",
        "showlegend": False,
    })
    annotations = []
    for i, p in enumerate(positions):
        if p is None:
            for y in (y_x_rnn, y_h, y_x_att, y_y):
                annotations.append({"x": i, "y": y, "text": "…", "showarrow": False, "font": {"size": 26}})
            continue
        annotations.append({"x": i, "y": y_x_rnn - 0.62, "text": f"{rnn_paths[p]}", "showarrow": False,
                            "font": {"size": FONT_SIZE}})
        annotations.append({"x": i, "y": y_x_att - 0.62, "text": f"{attention_paths[p]}", "showarrow": False,
                            "font": {"size": FONT_SIZE}})
        annotations.append({"x": i, "y": y_h + 0.5, "text": f"step {p + 1}", "showarrow": False,
                            "font": {"size": FONT_SIZE - 4, "color": "#555555"}})
    step_word = "step" if T == 1 else "steps"
    annotations += [
        {"x": -0.6, "y": y_loss_rnn + 0.75, "xanchor": "left", "showarrow": False,
         "font": {"size": FONT_SIZE + 1, "color": "#222222"},
         "text": f"<b>RNN</b>: {T} sequential {step_word}; the gradient to x<sub>t</sub> crosses T − t of them"},
        {"x": -0.6, "y": y_loss_att + 0.75, "xanchor": "left", "showarrow": False,
         "font": {"size": FONT_SIZE + 1, "color": "#222222"},
         "text": "<b>causal attention</b>: one parallel step; every x<sub>t</sub> is one step from the loss"},
        {"x": -0.6, "y": y_x_rnn - 0.62, "xanchor": "right", "showarrow": False, "text": "path",
         "font": {"size": FONT_SIZE - 2, "color": "#555555"}},
        {"x": -0.6, "y": y_x_att - 0.62, "xanchor": "right", "showarrow": False, "text": "path",
         "font": {"size": FONT_SIZE - 2, "color": "#555555"}},
    ]
    hidden = {"visible": False, "fixedrange": True}
    layout = {
        "font": {"size": FONT_SIZE}, "height": 560, "margin": {"l": 60, "r": 10, "t": 10, "b": 10},
        "plot_bgcolor": "rgba(0,0,0,0)", "showlegend": False, "annotations": annotations,
        "xaxis": {**hidden, "range": [-1.1, last + 0.6]},
        "yaxis": {**hidden, "range": [-0.4, 8.4]},
        "coloraxis": {"colorscale": SEQUENTIAL, "cmin": 1, "cmax": top,
                      "colorbar": {"title": {"text": "path length<br>(steps)", "side": "top"}, "thickness": 16,
                                   "len": 0.8, "tickfont": {"size": FONT_SIZE - 2}}},
    }
    return figure_from_spec({"data": traces, "layout": layout})


# --- dependency matrices --------------------------------------------------------------------------


def dependency_figure(panels: Sequence[tuple[str, np.ndarray]], *, height: int = 480) -> go.Figure:
    """Side-by-side heatmaps of log10 ‖∂y_t/∂x_s‖ (row t = output, column s = input) on one colour
    scale.  Exact zeros (what a mask or the arrow of time forbids) are blank."""
    logs = []
    for _, matrix in panels:
        matrix = np.asarray(matrix, dtype=np.float64)
        with np.errstate(divide="ignore"):
            logs.append(np.where(matrix > 0, np.log10(np.where(matrix > 0, matrix, 1.0)), np.nan))
    low, high = log_range(np.concatenate([z.ravel() for z in logs]) if logs else np.array([0.0]))
    domains = grid_domains(len(panels), 0.06)
    traces, layout, annotations = [], {}, []
    for i, ((title, _), z, domain) in enumerate(zip(panels, logs, domains, strict=True)):
        suffix = "" if i == 0 else str(i + 1)
        T = z.shape[0]
        step = max(1, int(np.ceil(T / 8)))
        traces.append({
            "type": "heatmap", "z": z, "coloraxis": "coloraxis", "xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
            "hovertemplate": "output y<sub>%{y}</sub> ← input x<sub>%{x}</sub><br>"
                             "log10 ‖∂y/∂x‖ = %{z:.1f}<extra>" + plotly_text(title) + "</extra>",
        })
        ticks = list(range(0, T, step))
        layout[f"xaxis{suffix}"] = {"domain": list(domain), "anchor": f"y{suffix}", "title": {"text": "input s"},
                                    "tickmode": "array", "tickvals": ticks, "showgrid": False, "zeroline": False,
                                    "tickfont": {"size": FONT_SIZE - 2}}
        layout[f"yaxis{suffix}"] = {"domain": [0.0, 1.0], "anchor": f"x{suffix}", "autorange": "reversed",
                                    "tickmode": "array", "tickvals": ticks, "showgrid": False, "zeroline": False,
                                    "tickfont": {"size": FONT_SIZE - 2},
                                    "title": {"text": "output t" if i == 0 else ""}}
        annotations.append({"text": plotly_text(title), "x": (domain[0] + domain[1]) / 2, "y": 1.02,
                            "xref": "paper", "yref": "paper", "xanchor": "center", "yanchor": "bottom",
                            "showarrow": False, "font": {"size": FONT_SIZE, "color": "#222222"}})
    layout.update(
        annotations=annotations, font={"size": FONT_SIZE}, height=height,
        margin={"l": 10, "r": 10, "t": 50, "b": 10}, plot_bgcolor="rgba(0,0,0,0)",
        coloraxis={"colorscale": SEQUENTIAL, "cmin": low, "cmax": high,
                   "colorbar": log_colorbar(low, high, "‖∂y<sub>t</sub>/∂x<sub>s</sub>‖")},
    )
    return figure_from_spec({"data": traces, "layout": layout})


def dependency_frame(panels: Sequence[tuple[str, np.ndarray]]) -> pd.DataFrame:
    """Long format: one row per (view, output t, input s) with ‖∂y_t/∂x_s‖."""
    parts = []
    for title, matrix in panels:
        matrix = np.asarray(matrix, dtype=np.float64)
        t, s = np.indices(matrix.shape)
        parts.append(pd.DataFrame({"view": title, "output t": t.ravel(), "input s": s.ravel(),
                                   "norm": matrix.ravel()}))
    return pd.concat(parts, ignore_index=True)


# --- trained models on the recall task ---------------------------------------------------------------


RECALL_BIN = 8


def recall_frame(results: Sequence[tuple[str, RecallAccuracy]]) -> pd.DataFrame:
    """(label, RecallAccuracy) pairs → one row per model and distance, with the accuracy over the
    bin of 8 distances that the row belongs to."""
    parts = [pd.DataFrame({"model": label, "distance": r.distances, "accuracy": r.accuracy, "examples": r.examples,
                           f"accuracy over {RECALL_BIN} distances": binned_accuracy(r, RECALL_BIN)})
             for label, r in results]
    if not parts:
        return pd.DataFrame(columns=["model", "distance", "accuracy", "examples",
                                     f"accuracy over {RECALL_BIN} distances"])
    return pd.concat(parts, ignore_index=True)


def recall_bands(results: Sequence[tuple[str, RecallAccuracy]]) -> pd.DataFrame:
    """Accuracy over ranges of distance, one row per model (see gradient_view.accuracy_bands)."""
    table = pd.DataFrame({label: dict(accuracy_bands(r)) for label, r in results}).T
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
    return configure(alt.layer(points, *lines, rule, text).properties(height=CHART_HEIGHT - 40))
