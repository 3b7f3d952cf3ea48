"""The real-model lesson's figures: every head of a 6-layer, 12-head model at a glance, and a
layers × heads map of one number per head (the measured "it" scores).  One head enlarged, the
difference of two sentences and the position tables use the common heatmaps."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from explorer.figures.common import (
    DIVERGING,
    FONT_SIZE,
    PLAIN_NUMBERS,
    PRESENT_HEIGHT,
    SEQUENTIAL,
    colour_list,
    figure_from_spec,
    grid_domains,
    hover_grid,
    indexed_labels,
    label_step,
    panel_categories,
    panel_title,
    token_axis,
)
from explorer.figures.margins import TITLE_AXES, TOOLBAR_PX

__all__ = ["PRESENT_PANEL_PX", "head_overview", "head_score_map", "pair_figure"]

PAIR_WIDTH_PX = 820  # the pair figure's plot area on a desk (1400 px, with the sidebar) or a projector
PRESENT_PANEL_PX = 54  # a thumbnail's height when presenting: 6 layers and the titles in 384 px

def head_overview(weights: np.ndarray, tokens: Sequence[str], *, selected: tuple[int, int] | None = None,
                  panel_px: int = 68) -> go.Figure:
    """(layers, heads, T, T) attention as thumbnails: one layer per row, one head per column.

    Drawn as one heatmap with blank (NaN) gaps around the panels: 72 traces with 144 axes are slow
    for Plotly to build on every rerun, one trace is not.  No token labels (a thumbnail shows a
    pattern: a diagonal, a column on [CLS]), a title per head and per layer; hover names layer, head
    and both tokens.  One colour scale 0–1; the selected (layer, head) is framed by a line through the
    gaps around it."""
    n_layers, n_heads, T, _ = weights.shape
    gap = max(1, round(T / 10))
    step = T + gap  # panel (layer, head) starts at row gap + layer·step, column gap + head·step
    z = np.full((gap + n_layers * step, gap + n_heads * step), np.nan, dtype=np.float32)
    for layer in range(n_layers):
        for head in range(n_heads):
            z[gap + layer * step:gap + layer * step + T, gap + head * step:gap + head * step + T] = weights[layer, head]
    # Category axes with unique labels, so that hover can name tokens without a label per cell;
    # the gaps' labels are distinct runs of spaces.
    names = indexed_labels(tokens)
    x, y = (panel_categories(kind, n, names, gap, sep=": ", around=True)
            for kind, n in (("head", n_heads), ("layer", n_layers)))
    traces = [{"type": "heatmap", "z": z, "x": x, "y": y, "hoverongaps": False, "coloraxis": "coloraxis",
               "hovertemplate": "%{y} → %{x}<br>weight %{z:.3f}<extra></extra>"}]
    if selected is not None:  # the frame runs through the gap cells just outside the panel
        left, top = gap + selected[1] * step - 1, gap + selected[0] * step - 1
        xs, ys = [x[left], x[left + T + 1]], [y[top], y[top + T + 1]]
        traces.append({"type": "scatter", "mode": "lines", "x": [xs[0], xs[1], xs[1], xs[0], xs[0]],
                       "y": [ys[0], ys[0], ys[1], ys[1], ys[0]], "line": {"color": "#e66101", "width": 4},
                       "hoverinfo": "skip", "showlegend": False})
    # Head titles on top and upright layer labels at the side are the axes' tick labels, one at the
    # middle of each panel: drawn and measured together, where a note each was laid out one by one.
    centres = [gap + p * step + (T - 1) / 2 for p in range(max(n_heads, n_layers))]  # of panel p's cells
    axis = {"ticks": "", "showgrid": False, "zeroline": False, "type": "category", "tickmode": "array",
            "tickangle": 0, "tickfont": {"size": FONT_SIZE}}
    xaxis = {**axis, "side": "top", "range": [-0.5, len(x) - 0.5], "tickvals": centres[:n_heads],
             "ticktext": [f"head {h + 1}" for h in range(n_heads)]}
    yaxis = {**axis, "range": [len(y) - 0.5, -0.5], "tickvals": centres[:n_layers],
             "ticktext": [f"layer {n + 1}" for n in range(n_layers)]}
    layout = {
        "font": {"size": FONT_SIZE}, "plot_bgcolor": "rgba(0,0,0,0)", "xaxis": xaxis, "yaxis": yaxis,
        "coloraxis": {"colorscale": colour_list(SEQUENTIAL), "cmin": 0.0, "cmax": 1.0,
                      "colorbar": {"title": {"text": "weight", "side": "right"}, "thickness": 16}},
        "height": n_layers * panel_px + 60, "margin": {"l": 80, "r": 10, "t": 40, "b": 10},
        # Projected, the 6 × 12 grid has to fit under the lesson's controls on one 1280×720 screen.
        "meta": {PRESENT_HEIGHT: n_layers * PRESENT_PANEL_PX + 60, TITLE_AXES: ["xaxis"]},
    }
    return figure_from_spec({"data": traces, "layout": layout})


def head_score_map(scores: np.ndarray, *, title: str, value_name: str, highlight: Sequence[tuple[int, int]] = (),
                   height: int = 360) -> go.Figure:
    """(layers, heads) shares in [0, 1] as a layers × heads map, printed as percents, on a diverging
    scale centred on 50 % (chance for a head that does not care).  `highlight` frames some cells."""
    n_layers, n_heads = scores.shape
    trace = {
        "type": "heatmap", "z": scores.astype(np.float64), "x": list(range(1, n_heads + 1)),
        "y": list(range(1, n_layers + 1)), "colorscale": colour_list(DIVERGING), "zmin": 0.0, "zmax": 1.0,
        "zmid": 0.5, "xgap": 2, "ygap": 2, "text": np.round(100 * scores).astype(int).astype(str).tolist(),
        "texttemplate": "%{text}", "textfont": {"size": FONT_SIZE - 2},  # percent, without the sign (room)
        "colorbar": {"title": {"text": value_name, "side": "right"}, "thickness": 16, "tickformat": ".0%"},
        "hovertemplate": f"layer %{{y}} head %{{x}}<br>{value_name}: %{{z:.1%}}<extra></extra>",
    }
    shapes = [{"type": "rect", "x0": head + 0.5, "x1": head + 1.5, "y0": layer + 0.5, "y1": layer + 1.5,
               "line": {"color": "#000000", "width": 3}} for layer, head in highlight]
    height += TOOLBAR_PX  # the title under the toolbar's band (not behind its buttons), the map its own size
    layout = {
        "title": {"text": title, "font": {"size": FONT_SIZE + 2}, "y": 1 - (TOOLBAR_PX + 4) / height,
                  "yanchor": "top"},
        "font": {"size": FONT_SIZE},
        "shapes": shapes,
        "xaxis": {"title": {"text": "head"}, "tickmode": "linear", "dtick": 1, "side": "top", "showgrid": False,
                  "zeroline": False},
        "yaxis": {"title": {"text": "layer"}, "tickmode": "linear", "dtick": 1, "autorange": "reversed",
                  "showgrid": False, "zeroline": False},
        "height": height, "margin": {"l": 10, "r": 10, "t": 120 + TOOLBAR_PX, "b": 10},
        "plot_bgcolor": "rgba(0,0,0,0)",
    }
    return figure_from_spec({"data": [trace], "layout": layout})


def pair_figure(first: np.ndarray, second: np.ndarray, tokens_first: Sequence[str], tokens_second: Sequence[str],
                titles: tuple[str, str]) -> go.Figure:
    """One head on two sentences of the same length, and their difference (first − second), side by
    side: two panels on the 0–1 weight scale, the third on a diverging scale centred on 0.  The rows
    are labelled once, on the left, with the first sentence's tokens (the second's differ in a word)."""
    difference = first - second
    bound = max(1e-9, float(np.abs(difference).max()))
    panels = [(first, tokens_first, "coloraxis"), (second, tokens_second, "coloraxis"),
              (difference, tokens_first, "coloraxis2")]
    names = [*titles, f"difference ({titles[0]} − {titles[1]})"]
    domains = grid_domains(3, 0.2)  # room for the second panel's row labels, then the weight's colour bar
    traces, layout, notes = [], {}, []
    for i, ((z, keys, colour), domain, name) in enumerate(zip(panels, domains, names, strict=True)):
        suffix = "" if i == 0 else str(i + 1)
        value = "Δ weight" if colour == "coloraxis2" else "weight"
        traces.append({"type": "heatmap", "z": z.astype(np.float32), "coloraxis": colour, "xgap": 1, "ygap": 1,
                       "customdata": hover_grid(tokens_first if i != 1 else tokens_second, keys),
                       "xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
                       "hovertemplate": f"{name}<br>%{{customdata}}<br>{value} %{{z:.3f}}<extra></extra>"})
        layout[f"xaxis{suffix}"] = token_axis(keys, domain=domain, anchor=f"y{suffix}", size=FONT_SIZE - 2,
                                               every=label_step(keys, PAIR_WIDTH_PX * (domain[1] - domain[0])))
        layout[f"yaxis{suffix}"] = token_axis(tokens_first if i != 1 else tokens_second, domain=(0.0, 1.0),
                                               anchor=f"x{suffix}", size=FONT_SIZE - 2, reverse=True, show=i != 2)
        notes.append(panel_title(name, domain, 1.01, size=FONT_SIZE))
    layout.update(
        annotations=notes, font={"size": FONT_SIZE}, plot_bgcolor="rgba(0,0,0,0)",
        # Each colour bar beside the panels it belongs to, its title above it: two bars side by side with
        # titles turned along them ran into each other and into the third panel's labels.
        coloraxis={"colorscale": colour_list(SEQUENTIAL), "cmin": 0.0, "cmax": 1.0,
                   "colorbar": {"title": {"text": "weight", "side": "top"}, "x": domains[1][1] + 0.01,
                                "xanchor": "left", "thickness": 12, "len": 0.8, "y": 0.0, "yanchor": "bottom"}},
        coloraxis2={"colorscale": colour_list(DIVERGING), "cmin": -bound, "cmax": bound,
                    "colorbar": {"title": {"text": "Δ weight", "side": "top"}, "x": 1.01, "xanchor": "left",
                                 "thickness": 12, "len": 0.8, "y": 0.0, "yanchor": "bottom", **PLAIN_NUMBERS}},
        height=max(360, 200 + 24 * len(tokens_first)), margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )
    return figure_from_spec({"data": traces, "layout": layout})
