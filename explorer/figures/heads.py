"""One attention head drawn large, two ways: as a heatmap with every token an upright label (`head_heatmap`),
and as lines from each query to the keys it reads (`attention_lines`, the picture of the Illustrated
Transformer and BertViz); and the grey of masked cells every attention figure shares.  Handed arrays and
tokens, they return figures (the attention and real-model lessons draw them from their models)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .common import (
    FONT_SIZE,
    LABEL_FONT_PX,
    OKABE_ITO,
    PRESENT_AXES,
    PRESENT_HEIGHT,
    SEQUENTIAL,
    colour_list,
    figure_from_spec,
    hover_grid,
    plotly_text,
)
from .ink import INK

__all__ = ["FOCUS", "HEAD_COLOURS", "INK", "MASK_GREY", "MASK_LABEL", "attention_lines", "head_heatmap",
           "mask_trace", "show_mask_legend"]

MASK_GREY = "#a9a9a9"  # masked cells: a neutral grey, outside the colour scale (not "weight 0")
MASK_LABEL = "masked: may not attend"


def mask_trace(allowed: np.ndarray, xaxis: str, yaxis: str) -> dict:
    """Grey cells where attention is not allowed, drawn over a panel whose own z is blank there."""
    return {"type": "heatmap", "z": np.where(allowed, np.nan, 1.0).astype(np.float32), "xaxis": xaxis,
            "yaxis": yaxis, "xgap": 1, "ygap": 1, "colorscale": [[0, MASK_GREY], [1, MASK_GREY]],
            "showscale": False, "hovertemplate": f"{MASK_LABEL}<extra></extra>"}


def _mask_legend() -> dict:
    """A legend entry for the grey cells (an invisible point with a grey square marker)."""
    return {"type": "scatter", "x": [None], "y": [None], "mode": "markers", "name": MASK_LABEL,
            "marker": {"symbol": "square", "size": 16, "color": MASK_GREY}, "showlegend": True,
            "hoverinfo": "skip"}


def show_mask_legend(traces: list[dict], layout: dict, n_rows: int, n_columns: int) -> None:
    """The grey cells' legend entry, under the colour bar (which gives up the lower quarter of the
    height for it); every panel's range pinned, so the entry's invisible point widens none."""
    traces.append(_mask_legend())
    layout["coloraxis"]["colorbar"].update(len=0.75, y=1.0, yanchor="top")
    layout["legend"] = {"x": 1.0, "y": 0.0, "xanchor": "left", "yanchor": "bottom", "itemwidth": 30}
    for name in layout:
        if name.startswith("xaxis"):
            layout[name]["range"] = [-0.5, n_columns - 0.5]
        elif name.startswith("yaxis"):
            layout[name]["range"] = [n_rows - 0.5, -0.5]
            layout[name].pop("autorange", None)


HEAD_WIDTH_PX = 370  # the large head's plot area at 1400 px (372 px measured in Chromium); wider presenting
TOOLBAR_TOP_PX = 34  # the top margin of the large head: its toolbar's band
STAIRS = 3  # the most lines a key label steps down to make room
PRINTED = 0.1  # the least weight printed in a cell (and beside a key in the lines picture)
HEAD_ROW_PX = 25  # a row of the large head and of the lines picture at the desk: a 14–16 px label and a gap
HEAD_PRESENT_ROW_PX = 26  # the same presenting: an 18 px label's line box is 24 px
HEAD_FONT_PX = 14  # the large head's tick labels at the desk (presenting raises them to 18 px)
HEAD_PRESENT_WIDTH_PX = 540  # its plot area presenting at 1280 px, the sidebar folded
# The tallest large head (and lines), so that it ends on the first screen under a lesson's title, step bar
# and answer: at the desk (900 px) and on a 720 px projector.  Longer inputs get every k-th row labelled.
HEAD_MAX_PX, HEAD_PRESENT_MAX_PX = 480, 400
DESK_LINE_PX, PRESENT_LINE_PX = 20, 24  # the line box of a row's label: 14 px at the desk, 18 px presenting
FOCUS = OKABE_ITO["vermillion"]  # the row a step asks about, in both pictures (distinct from Viridis' hues)
HEAD_COLOURS = tuple(OKABE_ITO[name] for name in ("blue", "orange", "bluish green", "reddish purple", "sky blue",
                                                   "vermillion", "black", "yellow"))  # a head's lines, by number
LINE_BINS = ((0.75, 9.0, 0.85), (0.5, 6.5, 0.75), (0.25, 4.5, 0.6), (0.1, 2.5, 0.45), (0.03, 1.2, 0.3))
# (least weight, line width px, opacity): the lines picture draws each (query, key) pair with weight at
# least 0.03 as a line this thick; five classes, so five traces whatever the length.


def _upright_ticks(tokens: Sequence[str], plot_px: float, font_px: float = LABEL_FONT_PX) -> tuple[list, list, int]:
    """Every token's tick, upright, and on how many lines: where neighbours' labels would touch, they step
    down a line in turn (two or three lines, a staircase), so each label gets two or three columns' width;
    past that, every k-th token on three lines."""
    n = len(tokens)
    column = plot_px / max(n, 1)
    widest = max((len(str(t)) for t in tokens), default=1) * 0.62 * font_px + 6
    levels = math.ceil(widest / column)
    every = 1 if levels <= STAIRS else math.ceil(widest / (STAIRS * column))
    levels = min(levels, STAIRS)
    shown = list(range(0, n, every))
    return shown, ["<br>" * (k % levels) + plotly_text(tokens[i]) for k, i in enumerate(shown)], levels


def head_heatmap(weights: np.ndarray, query_tokens: Sequence[str], key_tokens: Sequence[str], *,
                 allowed: np.ndarray | None = None, focus_row: int | None = None) -> go.Figure:
    """One head large (T_q, T_k): every query and key token labelled upright (staggered where they would
    touch), masked cells grey, the colour scale 0 to 1.  The row a step asks about (`focus_row`) is framed
    and its weights printed in its cells, so the numbers an answer quotes are on the figure; a head of at
    most 8 × 8 prints every weight."""
    n_queries, n_keys = weights.shape
    masked_any = allowed is not None and not np.all(allowed)
    z = np.where(allowed, weights, np.nan) if masked_any else weights
    x_vals, x_text, levels = _upright_ticks(key_tokens, HEAD_WIDTH_PX, HEAD_FONT_PX)
    x_present, x_present_text, present_levels = _upright_ticks(key_tokens, HEAD_PRESENT_WIDTH_PX)
    # Above and below the rows: the margins and the key labels, a line and a half of their font a line
    # (explorer/figures/margins.py leaves that much), one to three lines.
    frame = TOOLBAR_TOP_PX + 20 + 21 * levels
    present_frame = TOOLBAR_TOP_PX + 20 + 27 * present_levels
    height = max(260, min(HEAD_MAX_PX, frame + HEAD_ROW_PX * n_queries))
    present_height = max(260, min(HEAD_PRESENT_MAX_PX, present_frame + HEAD_PRESENT_ROW_PX * n_queries))

    def rows_labelled(pitch_px: float, least_px: float) -> list[int]:
        """Every row when each has `pitch_px` ≥ `least_px` for its label, else every k-th; the row asked about
        always."""
        every = max(1, math.ceil(least_px / pitch_px))
        rows = [r for r in range(0, n_queries, every) if focus_row is None or abs(r - focus_row) >= every]
        return sorted([*rows, *([focus_row] if focus_row is not None else [])])

    y_vals = rows_labelled((height - frame) / n_queries, DESK_LINE_PX)
    y_present = rows_labelled((present_height - present_frame) / n_queries, PRESENT_LINE_PX)
    traces = [{"type": "heatmap", "z": z.astype(np.float32), "coloraxis": "coloraxis", "xgap": 1, "ygap": 1,
               "hoverongaps": False, "customdata": hover_grid(query_tokens, key_tokens),
               "hovertemplate": "%{customdata}<br>weight %{z:.3f}<extra></extra>"}]
    if masked_any:
        traces.append(mask_trace(allowed, "x", "y"))
    rows = range(n_queries) if n_queries <= 8 and n_keys <= 8 else [focus_row] if focus_row is not None else []
    text = [{"x": k, "y": q, "text": f"{weights[q, k]:.2f}", "showarrow": False,
             "font": {"size": FONT_SIZE - 2, "color": "#000000" if weights[q, k] > 0.6 else "#ffffff"}}
            for q in rows for k in range(n_keys) if weights[q, k] >= PRINTED and (allowed is None or allowed[q, k])]
    shapes = [] if focus_row is None else [
        {"type": "rect", "xref": "x domain", "yref": "y", "x0": -0.01, "x1": 1.01, "y0": focus_row - 0.5,
         "y1": focus_row + 0.5, "line": {"color": FOCUS, "width": 4}}]
    ticks = {"tickfont": {"size": HEAD_FONT_PX, "color": INK}, "ticks": "", "showgrid": False, "zeroline": False}
    layout = {
        "xaxis": {**ticks, "tickmode": "array", "tickvals": x_vals, "ticktext": x_text, "tickangle": 0,
                  "side": "bottom", "range": [-0.5, n_keys - 0.5]},
        "yaxis": {**ticks, "tickmode": "array", "tickvals": y_vals, "autorange": False,
                  "range": [n_queries - 0.5, -0.5],
                  "ticktext": [plotly_text(query_tokens[i]) for i in y_vals]},
        "coloraxis": {"colorscale": colour_list(SEQUENTIAL), "cmin": 0.0, "cmax": 1.0,
                      "colorbar": {"title": {"text": "weight", "side": "right"}, "thickness": 12, "xpad": 6,
                                   "tickvals": [0, 0.5, 1], "tickfont": {"color": INK}}},
        "annotations": text, "shapes": shapes, "font": {"size": FONT_SIZE}, "height": height,
        "meta": {PRESENT_HEIGHT: present_height, PRESENT_AXES: {
            "xaxis": {"tickvals": x_present, "ticktext": x_present_text},
            "yaxis": {"tickvals": y_present, "ticktext": [plotly_text(query_tokens[i]) for i in y_present]}}},
        # above the plot: the chart's toolbar (its camera and full-screen buttons), clear of the colour bar
        "margin": {"l": 10, "r": 10, "t": TOOLBAR_TOP_PX, "b": 10}, "plot_bgcolor": "rgba(0,0,0,0)",
    }
    if masked_any:
        show_mask_legend(traces, layout, n_queries, n_keys)
    return figure_from_spec({"data": traces, "layout": layout})


def _line_class(weight: float) -> int | None:
    """The LINE_BINS class of a weight (None: too small to draw)."""
    return next((i for i, (least, _, _) in enumerate(LINE_BINS) if weight >= least), None)


def _lines(pairs, offset: float = 0.0) -> dict[int, tuple[list, list]]:
    """(query row, key column, weight) pairs as segments from x = 0 to x = 1, grouped by line class; every
    end moved `offset` rows (heads drawn side by side)."""
    segments: dict[int, tuple[list, list]] = {}
    for q, k, w in pairs:
        cls = _line_class(float(w))
        if cls is not None:
            xs, ys = segments.setdefault(cls, ([], []))
            xs += [0.0, 1.0, None]
            ys += [q + offset, k + offset, None]
    return segments


def attention_lines(layer_weights: np.ndarray, query_tokens: Sequence[str], key_tokens: Sequence[str], *,
                    head: int, focus_row: int | None = None, printed: float = PRINTED,
                    head_numbers: Sequence[int] | None = None) -> go.Figure:
    """Attention as lines (the picture of the Illustrated Transformer and BertViz): the query tokens in a
    column on the left, the keys on the right, a line from a query to each key it gives at least 0.03 of
    its weight, thicker the more weight (LINE_BINS).  `layer_weights` is one layer (heads, T_q, T_k).

    With a `focus_row` (the row a step asks about), that row alone, for every head given, one colour a
    head (Okabe–Ito), the heads' lines side by side; each head's weights of at least `printed` are
    printed beside their keys in its colour (`head_numbers` names the heads, default 1, 2, …).  Without,
    every row of head `head`, in one colour."""
    numbers = list(head_numbers) if head_numbers is not None else list(range(1, layer_weights.shape[0] + 1))
    n_heads, n_queries, n_keys = layer_weights.shape
    traces = []
    if focus_row is None:
        for cls, (xs, ys) in sorted(_lines((q, k, layer_weights[head, q, k]) for q in range(n_queries)
                                           for k in range(n_keys)).items(), reverse=True):
            _, width, opacity = LINE_BINS[cls]
            traces.append({"type": "scatter", "mode": "lines", "x": xs, "y": ys, "hoverinfo": "skip",
                           "showlegend": False, "opacity": opacity, "line": {"color": "#3b528b", "width": width}})
    beside: dict[int, list[str]] = {}
    for h in range(n_heads) if focus_row is not None else ():
        colour = HEAD_COLOURS[h % len(HEAD_COLOURS)]
        spread = 0.12 * (h - (n_heads - 1) / 2) if n_heads > 1 else 0.0
        row = layer_weights[h, focus_row]
        for cls, (xs, ys) in sorted(_lines(((focus_row, k, row[k]) for k in range(n_keys)), spread).items()):
            _, width, _ = LINE_BINS[cls]
            traces.append({"type": "scatter", "mode": "lines", "x": xs, "y": ys, "hoverinfo": "skip",
                           "name": f"head {numbers[h]}", "legendgroup": f"head {numbers[h]}", "showlegend": False,
                           "opacity": 0.9, "line": {"color": colour, "width": width}})
        traces.append({"type": "scatter", "mode": "lines", "x": [None], "y": [None], "name": f"head {numbers[h]}",
                       "legendgroup": f"head {numbers[h]}", "line": {"color": colour, "width": 6}})  # its legend entry
        for k in np.flatnonzero(row >= printed):
            beside.setdefault(int(k), []).append(f'<span style="color:{colour}">{row[k]:.2f}</span>')
    label = {"type": "scatter", "mode": "text", "hoverinfo": "skip", "showlegend": False}
    queries = [f"<b>{plotly_text(t)}</b>" if q == focus_row else plotly_text(t) for q, t in enumerate(query_tokens)]
    traces.append({**label, "x": [-0.04] * n_queries, "y": list(range(n_queries)), "text": queries,
                   "textposition": "middle left",
                   "textfont": {"size": FONT_SIZE, "color": INK}})
    keys = [plotly_text(t) + ("  " + " ".join(beside[k]) if k in beside else "") for k, t in enumerate(key_tokens)]
    traces.append({**label, "x": [1.04] * n_keys, "y": list(range(n_keys)), "text": keys,
                   "textposition": "middle right", "textfont": {"size": FONT_SIZE, "color": INK}})
    hidden = {"visible": False, "fixedrange": True}
    rows = max(n_queries, n_keys)
    width = 1.75 + (0.45 * max(map(len, beside.values()), default=0))  # room for the printed weights
    legend = 30 if focus_row is not None else 0
    layout = {"xaxis": {**hidden, "range": [-0.75, width]}, "yaxis": {**hidden, "range": [rows - 0.5, -0.5]},
              "height": max(300, min(HEAD_MAX_PX + 40, 44 + legend + HEAD_ROW_PX * rows)), "font": {"size": FONT_SIZE},
              "meta": {PRESENT_HEIGHT: max(260, min(HEAD_PRESENT_MAX_PX + 40,
                                                    44 + legend + HEAD_PRESENT_ROW_PX * rows))},
              "margin": {"l": 0, "r": 0, "t": 34, "b": 10 + legend}, "plot_bgcolor": "rgba(0,0,0,0)",
              "showlegend": focus_row is not None,
              "legend": {"orientation": "h", "x": 0.0, "y": 0.0, "yanchor": "top", "font": {"color": INK}},
              "annotations": [{"text": text, "x": x, "y": 1.0, "xanchor": anchor, "yanchor": "bottom", "xref": "x",
                               "yref": "paper", "showarrow": False, "font": {"size": FONT_SIZE, "color": INK}}
                              for text, x, anchor in (("query", -0.04, "right"), ("key", 1.04, "left"))]}
    return figure_from_spec({"data": traces, "layout": layout})
