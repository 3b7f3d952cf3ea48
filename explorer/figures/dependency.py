"""Dependency matrices drawn: log10 ‖∂y_t/∂x_s‖ side by side on one colour scale, and the same numbers in
long format (the gradients and encoders lessons)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .common import FONT_SIZE, SEQUENTIAL, figure_from_spec, grid_domains, plotly_text
from .logscale import log_colorbar, log_range
from .margins import column_gap

__all__ = ["dependency_figure", "dependency_frame"]


def dependency_figure(panels: Sequence[tuple[str, np.ndarray]], *, height: int = 480) -> go.Figure:
    """Side-by-side heatmaps of log10 ‖∂y_t/∂x_s‖ (row t = output, column s = input) on one colour
    scale.  Exact zeros (what a mask or the arrow of time forbids) are blank."""
    logs = []
    for _, matrix in panels:
        matrix = np.asarray(matrix, dtype=np.float64)
        with np.errstate(divide="ignore"):
            logs.append(np.where(matrix > 0, np.log10(np.where(matrix > 0, matrix, 1.0)), np.nan))
    low, high = log_range(np.concatenate([z.ravel() for z in logs]) if logs else np.array([0.0]))
    domains = grid_domains(len(panels), column_gap([str(len(z) - 1) for z in logs], FONT_SIZE - 2))
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
                   "colorbar": log_colorbar(low, high, "‖∂y<sub>t</sub>/∂x<sub>s</sub>‖", side="top")},
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
