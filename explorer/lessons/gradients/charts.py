"""The gradient-flow lesson's diagram: the RNN unrolled over T sequential steps against causal
attention's single parallel step, as two computation graphs for a loss on the last output, each
input coloured by its path length (the steps the gradient takes from the loss back to it).
Path lengths in, Plotly out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.figures.common import FONT_SIZE, OKABE_ITO, PRESENT_HEIGHT, SEQUENTIAL, figure_from_spec

__all__ = ["path_frame", "unrolled_figure"]

# Rows of the two graphs: the RNN's inputs, states and loss on top, attention's inputs, outputs and loss below.
Y_X_RNN, Y_H, Y_LOSS_RNN = 5.0, 6.2, 7.45
Y_X_ATT, Y_Y, Y_LOSS_ATT = 0.6, 1.8, 2.9
GREY, HIGHLIGHT = "#9a9a9a", OKABE_ITO["vermillion"]


def _shown_positions(T: int, max_shown: int) -> list[int | None]:
    if max_shown >= T:
        return list(range(T))
    head = 3
    return [*range(head), None, *range(T - (max_shown - head - 1), T)]


def _sub(name: str, index: int) -> str:
    return f"{name}<sub>{index}</sub>"


def _segments(pairs) -> tuple[list, list]:
    xs, ys = [], []
    for (x0, y0), (x1, y1) in pairs:
        xs += [x0, x1, None]
        ys += [y0, y1, None]
    return xs, ys


def _edge_traces(positions: list[int | None], T: int) -> list[dict]:
    """The edges of both graphs as three line traces: faint, dotted (across the gap), and the path
    from the loss to x₀ in bold."""
    columns = {p: i for i, p in enumerate(positions) if p is not None}
    last = len(positions) - 1
    plain, bold, dotted = [], [], []
    # RNN: x_t → h_t, h_{t−1} → h_t, h_{T−1} → L.
    for p, i in columns.items():
        (bold if p == 0 else plain).append(((i, Y_X_RNN), (i, Y_H)))
    for i in range(last):
        left, right = positions[i], positions[i + 1]
        (dotted if left is None or right is None else bold).append(((i, Y_H), (i + 1, Y_H)))
    bold.append(((last, Y_H), (last, Y_LOSS_RNN)))
    # Attention: every x_s → y_{T−1} (the output the loss reads); faint diagonal for the others.
    for p, i in columns.items():
        (bold if p == 0 else plain).append(((i, Y_X_ATT), (last, Y_Y)))
        if p != T - 1:
            plain.append(((i, Y_X_ATT), (i, Y_Y)))
    bold.append(((last, Y_Y), (last, Y_LOSS_ATT)))
    traces = []
    for pairs, colour, width, dash in ((plain, GREY, 1.5, "solid"), (dotted, GREY, 2, "dot"),
                                       (bold, HIGHLIGHT, 3.5, "solid")):
        xs, ys = _segments(pairs)
        traces.append({"type": "scatter", "mode": "lines", "x": xs, "y": ys, "hoverinfo": "skip",
                       "line": {"color": colour, "width": width, "dash": dash}, "showlegend": False})
    return traces


def _node_traces(positions: list[int | None], rnn_paths: np.ndarray, attention_paths: np.ndarray) -> list[dict]:
    """The inputs of both graphs coloured by their path length, the states and outputs, the losses."""
    shown = [(p, i) for i, p in enumerate(positions) if p is not None]
    last = len(positions) - 1
    xs = [i for _, i in shown]
    hover_rnn = [f"x<sub>{p}</sub>: gradient path of {rnn_paths[p]} steps" for p, _ in shown]
    hover_att = [f"x<sub>{p}</sub>: gradient path of {attention_paths[p]} step" for p, _ in shown]
    top = max(2, len(rnn_paths))
    traces = []
    for y, paths, hover in ((Y_X_RNN, rnn_paths, hover_rnn), (Y_X_ATT, attention_paths, hover_att)):
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
    state_labels = [(_sub("h", p), Y_H) for p, _ in shown] + [(_sub("y", p), Y_Y) for p, _ in shown]
    traces.append({
        "type": "scatter", "mode": "markers+text", "x": xs + xs, "y": [y for _, y in state_labels],
        "marker": {"size": 40, "symbol": "square", "color": "#f2f2f2", "line": {"color": "#333333", "width": 1}},
        "text": [text for text, _ in state_labels], "textfont": {"size": FONT_SIZE - 2, "color": "#222222"},
        "hoverinfo": "skip", "showlegend": False,
    })
    traces.append({
        "type": "scatter", "mode": "markers+text", "x": [last, last], "y": [Y_LOSS_RNN, Y_LOSS_ATT],
        "marker": {"size": 40, "symbol": "diamond", "color": "#ffffff", "line": {"color": HIGHLIGHT, "width": 2}},
        "text": ["L", "L"], "textfont": {"size": FONT_SIZE, "color": "#222222"}, "hoverinfo": "skip",
        "showlegend": False,
    })
    return traces


def _unrolled_annotations(positions: list[int | None], rnn_paths: np.ndarray,
                          attention_paths: np.ndarray) -> list[dict]:
    """Path lengths under the inputs, step numbers over the states, "…" in the gap, and the captions."""
    annotations = []
    for i, p in enumerate(positions):
        if p is None:
            for y in (Y_X_RNN, Y_H, Y_X_ATT, Y_Y):
                annotations.append({"x": i, "y": y, "text": "…", "showarrow": False, "font": {"size": 26}})
            continue
        annotations.append({"x": i, "y": Y_X_RNN - 0.62, "text": f"{rnn_paths[p]}", "showarrow": False,
                            "font": {"size": FONT_SIZE}})
        annotations.append({"x": i, "y": Y_X_ATT - 0.62, "text": f"{attention_paths[p]}", "showarrow": False,
                            "font": {"size": FONT_SIZE}})
        # "step 1", then the numbers alone: "step 10 step 11 …" ran together at the projector's 18 px
        annotations.append({"x": i, "y": Y_H + 0.5, "text": f"step {p + 1}" if i == 0 else f"{p + 1}",
                            "showarrow": False, "font": {"size": FONT_SIZE - 4, "color": "#555555"}})
    T = len(rnn_paths)
    step_word = "step" if T == 1 else "steps"
    return [
        *annotations,
        {"x": -0.6, "y": Y_LOSS_RNN + 0.75, "xanchor": "left", "showarrow": False,
         "font": {"size": FONT_SIZE + 1, "color": "#222222"},
         "text": f"<b>RNN</b>: {T} sequential {step_word}; the gradient to x<sub>t</sub> crosses T − t of them"},
        {"x": -0.6, "y": Y_LOSS_ATT + 0.75, "xanchor": "left", "showarrow": False,
         "font": {"size": FONT_SIZE + 1, "color": "#222222"},
         "text": "<b>causal attention</b>: one parallel step; every x<sub>t</sub> is one step from the loss"},
        {"x": -0.6, "y": Y_X_RNN - 0.62, "xanchor": "right", "showarrow": False, "text": "path",
         "font": {"size": FONT_SIZE - 2, "color": "#555555"}},
        {"x": -0.6, "y": Y_X_ATT - 0.62, "xanchor": "right", "showarrow": False, "text": "path",
         "font": {"size": FONT_SIZE - 2, "color": "#555555"}},
    ]


PRESENT_PX = 490  # presenting, under a step's answer and the section's heading, it ends on a 720 px screen


def unrolled_figure(rnn_paths: np.ndarray, attention_paths: np.ndarray, *, max_shown: int = 11) -> go.Figure:
    """Two computation graphs for a loss on the last output: the RNN unrolled over T sequential
    steps (top) and causal attention's single parallel step (bottom).  Each input x_t is coloured by
    its path length (rnn_paths[t], attention_paths[t]: the steps the gradient takes from the loss back
    to it) and the path to x₀ is highlighted.  Long sequences show the first and last positions
    around a gap."""
    T = len(rnn_paths)
    positions = _shown_positions(T, max_shown)
    hidden = {"visible": False, "fixedrange": True}
    layout = {
        "font": {"size": FONT_SIZE}, "height": 560, "margin": {"l": 60, "r": 10, "t": 10, "b": 10},
        "meta": {PRESENT_HEIGHT: PRESENT_PX},
        "plot_bgcolor": "rgba(0,0,0,0)", "showlegend": False,
        "annotations": _unrolled_annotations(positions, rnn_paths, attention_paths),
        "xaxis": {**hidden, "range": [-1.1, len(positions) - 1 + 0.6]},
        "yaxis": {**hidden, "range": [-0.4, 8.4]},
        "coloraxis": {"colorscale": SEQUENTIAL, "cmin": 1, "cmax": max(2, T),
                      # its title well under the top edge, where the chart's toolbar stands
                      "colorbar": {"title": {"text": "path length<br>(steps)", "side": "top"}, "thickness": 16,
                                   "len": 0.7, "y": 0.45, "tickfont": {"size": FONT_SIZE - 2}}},
    }
    traces = [*_edge_traces(positions, T), *_node_traces(positions, rnn_paths, attention_paths)]
    return figure_from_spec({"data": traces, "layout": layout})


def path_frame(rnn_paths: np.ndarray, attention_paths: np.ndarray) -> pd.DataFrame:
    """The path length from a loss on y_{T−1} back to each input, loop against attention."""
    return pd.DataFrame({"t": np.arange(len(rnn_paths)), "RNN path length": rnn_paths,
                         "attention path length": attention_paths})
