"""Figure builders for the positional-encodings page (plain specs, see explorer.figures.common).

Matrices here can be large (up to 1024 × 1024 before the page downsamples them), so the heatmap
sends its values as float32 on numeric axes — no per-cell label grid — and keeps labels and per-cell
hover text for small matrices only.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.figures.common import (
    DIVERGING,
    FONT_SIZE,
    PRESENT_HEIGHT,
    colour_list,
    figure_from_spec,
    grid_domains,
    panel_title,
    plotly_text,
)
from explorer.figures.margins import column_gap
from explorer.figures.vega import one_row_if_it_fits

__all__ = ["line_chart", "matrix_heatmap", "panel_grid"]

SMALL = 40  # up to this many rows and columns a heatmap gets cell gaps and label hover text
SERIES_COLOURS = ["#5e3c99", "#e66101", "#1b7837", "#b2abd2"]  # purple, orange, green: colour-blind safe
SERIES_DASHES = [[1, 0], [9, 6], [3, 3], [12, 4, 3, 4]]
SERIES_WIDTHS = [6.0, 2.5, 2.5, 2.5]  # the first line is drawn wide and underneath, so equal lines both show


def _symmetric_bound(values: np.ndarray) -> float:
    finite = np.abs(values[np.isfinite(values)])
    return max(1e-12, float(finite.max())) if finite.size else 1.0


def _colour_range(z, colorscale, zmin, zmax) -> dict:
    if zmin is None and zmax is None and colorscale == DIVERGING:
        bound = _symmetric_bound(z)
        zmin, zmax = -bound, bound
    out = {}
    if zmin is not None:
        out["zmin"] = float(zmin)
    if zmax is not None:
        out["zmax"] = float(zmax)
    return out


def _axis(values, labels, *, title, domain=(0.0, 1.0), anchor, reverse=False, size=FONT_SIZE, show=True) -> dict:
    axis = {"domain": list(domain), "anchor": anchor, "showgrid": False, "zeroline": False,
            "tickfont": {"size": size}, "title": {"text": title if show else ""}}
    if labels is not None:
        axis.update(tickmode="array", tickvals=[float(v) for v in values],
                    ticktext=[plotly_text(t) for t in labels] if show else [""] * len(labels))
        if show and len(labels) > 6 and max(map(len, map(str, labels)), default=0) > 3 and not reverse:
            axis["tickangle"] = -60
    elif not show:
        axis["showticklabels"] = False
    if reverse:
        axis["autorange"] = "reversed"
    return axis


def matrix_heatmap(
    z: np.ndarray,
    *,
    row_values: Sequence[float] | None = None,
    col_values: Sequence[float] | None = None,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    x_title: str,
    y_title: str,
    value_name: str,
    title: str = "",
    scale: str = DIVERGING,
    zmin: float | None = None,
    zmax: float | None = None,
    annotate: bool = False,
    number_format: str = ".3f",
    height: int | None = None,
    present_height: int | None = None,
) -> go.Figure:
    """A matrix on numeric axes: row_values / col_values are the true indices of the drawn rows and
    columns (they may skip, when the page downsamples), so the hover names the real position.

    z goes out as float32.  A diverging scale is centred on 0 unless zmin/zmax are given.  NaN is
    drawn blank.  Labels (ticks and hover) are used when given; keep them for small matrices.
    """
    z = np.asarray(z, dtype=np.float32)
    n_rows, n_cols = z.shape
    rows = np.arange(n_rows) if row_values is None else np.asarray(row_values)
    cols = np.arange(n_cols) if col_values is None else np.asarray(col_values)
    if len(rows) != n_rows or len(cols) != n_cols:
        raise ValueError(f"{len(rows)} row and {len(cols)} column values do not fit the matrix {z.shape}")
    small = n_rows <= SMALL and n_cols <= SMALL
    trace = {
        "type": "heatmap", "z": z, "x": cols.astype(np.int32 if cols.dtype.kind in "iu" else np.float64),
        "y": rows.astype(np.int32 if rows.dtype.kind in "iu" else np.float64), "colorscale": colour_list(scale),
        "colorbar": {"title": {"text": value_name, "side": "right"}, "thickness": 18,
                     "tickfont": {"size": FONT_SIZE - 2}},
        "hovertemplate": f"{y_title} %{{y}} · {x_title} %{{x}}<br>{value_name}: %{{z:{number_format}}}<extra></extra>",
        **_colour_range(z, scale, zmin, zmax),
    }
    if small:
        trace.update(xgap=1, ygap=1)
        if row_labels is not None or col_labels is not None:
            r = [plotly_text(t) for t in row_labels] if row_labels is not None else [str(v) for v in rows]
            c = [plotly_text(t) for t in col_labels] if col_labels is not None else [str(v) for v in cols]
            trace["customdata"] = np.array([[f"{a} · {x_title} {b}" for b in c] for a in r])
            trace["hovertemplate"] = (f"{y_title} %{{customdata}}<br>{value_name}: "
                                      f"%{{z:{number_format}}}<extra></extra>")
    if annotate:
        trace.update(texttemplate=f"%{{z:{number_format}}}", textfont={"size": FONT_SIZE - 1})
    x_axis = _axis(cols, col_labels, title=x_title, anchor="y")
    x_axis["side"] = "top"
    y_axis = _axis(rows, row_labels, title=y_title, anchor="x", reverse=True)
    layout = {
        "font": {"size": FONT_SIZE},
        "margin": {"l": 10, "r": 10, "t": 110 if title else 70, "b": 10},
        "height": height or (max(380, min(640, 130 + 42 * n_rows)) if n_rows <= 24 else 560),
        "plot_bgcolor": "rgba(0,0,0,0)", "xaxis": x_axis, "yaxis": y_axis,
    }
    if title:
        layout["title"] = {"text": title, "font": {"size": FONT_SIZE + 2}, "y": 0.98}
    if present_height is not None and present_height < layout["height"]:
        layout["meta"] = {PRESENT_HEIGHT: present_height}  # numeric axes: Plotly spaces their ticks itself
    return figure_from_spec({"data": [trace], "layout": layout})


def panel_grid(
    panels: Sequence[np.ndarray],
    *,
    titles: Sequence[str],
    row_labels: Sequence[Sequence[str] | None] | None = None,
    col_labels: Sequence[Sequence[str] | None] | None = None,
    x_title: str,
    y_title: str,
    value_name: str,
    scale: str = DIVERGING,
    zmin: float | None = None,
    zmax: float | None = None,
    columns: int = 3,
    panel_height: int = 260,
    number_format: str = ".3f",
    label_size: int = FONT_SIZE - 3,
) -> go.Figure:
    """Small multiples on one shared colour scale (one colour bar), titled panel by panel.

    row_labels / col_labels: per panel, tick labels (tokens) or None for numeric ticks.  Row labels
    are shown on every panel, since panels may order their rows differently (a shuffled input).
    """
    n = len(panels)
    if len(titles) != n:
        raise ValueError("one title per panel")
    row_labels = list(row_labels) if row_labels is not None else [None] * n
    col_labels = list(col_labels) if col_labels is not None else [None] * n
    columns = max(1, min(columns, n))
    n_grid_rows = -(-n // columns)
    texts = [plotly_text(t) if labels is not None else str(len(p) - 1)
             for p, labels in zip(panels, row_labels, strict=True) for t in (labels if labels is not None else [0])]
    x_domains = grid_domains(columns, column_gap(texts, label_size) if columns > 1 else 0.0)
    y_gap = min(0.2, 0.55 / n_grid_rows) if n_grid_rows > 1 else 0.0
    y_domains = grid_domains(n_grid_rows, y_gap)[::-1]
    stacked = np.concatenate([np.asarray(p, dtype=np.float64).ravel() for p in panels])
    colour = _colour_range(stacked, scale, zmin, zmax)
    traces, layout, annotations = [], {}, []
    for i, z in enumerate(panels):
        z = np.asarray(z, dtype=np.float32)
        grid_row, grid_col = divmod(i, columns)
        suffix = "" if i == 0 else str(i + 1)
        rows, cols = np.arange(z.shape[0]), np.arange(z.shape[1])
        trace = {
            "type": "heatmap", "z": z, "coloraxis": "coloraxis", "xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
            "hovertemplate": f"{y_title} %{{y}} · {x_title} %{{x}}<br>{value_name}: "
                             f"%{{z:{number_format}}}<extra></extra>",
        }
        if z.shape[0] <= SMALL and z.shape[1] <= SMALL:
            trace.update(xgap=1, ygap=1)
        if row_labels[i] is not None or col_labels[i] is not None:
            r = [plotly_text(t) for t in row_labels[i]] if row_labels[i] is not None else [str(v) for v in rows]
            c = [plotly_text(t) for t in col_labels[i]] if col_labels[i] is not None else [str(v) for v in cols]
            trace["customdata"] = np.array([[f"{a} → {b}" for b in c] for a in r])
            trace["hovertemplate"] = (f"{titles[i]}<br>{y_title} → {x_title}: %{{customdata}}<br>{value_name}: "
                                      f"%{{z:{number_format}}}<extra></extra>")
        traces.append(trace)
        layout[f"xaxis{suffix}"] = _axis(cols, col_labels[i], title=x_title if grid_row == n_grid_rows - 1 else "",
                                         domain=x_domains[grid_col], anchor=f"y{suffix}", size=label_size)
        layout[f"yaxis{suffix}"] = _axis(rows, row_labels[i], title=y_title if grid_col == 0 else "",
                                         domain=y_domains[grid_row], anchor=f"x{suffix}", reverse=True,
                                         size=label_size)
        annotations.append(panel_title(titles[i], x_domains[grid_col], y_domains[grid_row][1] + 0.01, FONT_SIZE))
    layout.update(
        annotations=annotations,
        coloraxis={"colorscale": colour_list(scale), "cmin": colour.get("zmin"), "cmax": colour.get("zmax"),
                   "colorbar": {"title": {"text": value_name, "side": "right"}, "thickness": 18,
                                "tickfont": {"size": FONT_SIZE - 2}}},
        font={"size": FONT_SIZE}, height=n_grid_rows * panel_height + 80,
        margin={"l": 10, "r": 10, "t": 50, "b": 30}, plot_bgcolor="rgba(0,0,0,0)",
    )
    if "zmin" not in colour:
        del layout["coloraxis"]["cmin"]
    if "zmax" not in colour:
        del layout["coloraxis"]["cmax"]
    return figure_from_spec({"data": traces, "layout": layout})


def line_chart(
    data: pd.DataFrame,
    *,
    x: str,
    y: str,
    title: str,
    color: str | None = None,
    log_y: bool = False,
    step: bool = False,
    integer_x: bool = True,
    height: int = 400,
    number_format: str = ".3f",
    legend_title: bool = True,
) -> alt.Chart:
    """Altair lines, one per value of `color`, large fonts; column names are the axis titles (and the
    legend's, unless `legend_title` is False: entries that name themselves).

    `height` is the whole chart's (Streamlit fits title, legend and axes inside it).

    One chart, no layers (a layered Altair chart costs several times more to serialise).  Series
    are drawn in order of appearance in `data`, the first one wide and solid, the others narrower
    and dashed, so curves that coincide — the point of several charts on the positions page — stay
    visible.  A reference line (say, a sequence length) is just another two-point series.
    """
    axis = {"labelFontSize": FONT_SIZE - 2, "titleFontSize": FONT_SIZE}
    x_axis = alt.Axis(format="d", tickMinStep=1, **axis) if integer_x else alt.Axis(**axis)
    y_scale = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    encoding = {
        "x": alt.X(f"{x}:Q", title=x, axis=x_axis, scale=alt.Scale(nice=False)),
        "y": alt.Y(f"{y}:Q", title=y, scale=y_scale, axis=alt.Axis(**axis)),
        "tooltip": [alt.Tooltip(f"{x}:Q"), alt.Tooltip(f"{y}:Q", format=number_format)],
    }
    n_series = 1 if color is None else int(data[color].nunique())
    mark = {"point": len(data) < 20 * n_series, **({"interpolate": "step-after"} if step else {})}
    if color is None:
        mark.update(color=SERIES_COLOURS[0], strokeWidth=3)
    else:
        series = list(dict.fromkeys(data[color]))
        if len(series) > len(SERIES_COLOURS):
            raise ValueError(f"at most {len(SERIES_COLOURS)} series")
        legend = alt.Legend(orient="top", labelFontSize=FONT_SIZE - 2, titleFontSize=FONT_SIZE - 2,
                            labelLimit=400, symbolType="stroke", symbolStrokeWidth=4, symbolSize=500,
                            direction="horizontal", columns=one_row_if_it_fits(series, FONT_SIZE - 2))
        encoding.update(
            color=alt.Color(f"{color}:N", title=color if legend_title else None, legend=legend,
                            scale=alt.Scale(domain=series, range=SERIES_COLOURS[: len(series)])),
            strokeDash=alt.StrokeDash(f"{color}:N", legend=None,
                                      scale=alt.Scale(domain=series, range=SERIES_DASHES[: len(series)])),
            strokeWidth=alt.StrokeWidth(f"{color}:N", legend=None,
                                        scale=alt.Scale(domain=series, range=SERIES_WIDTHS[: len(series)])),
        )
        encoding["tooltip"].insert(0, alt.Tooltip(f"{color}:N"))
    # Vega measures the title's glyphs shorter than the page's font draws them: without room above, their tops
    # were cut off at the chart's edge
    return alt.Chart(data, title=alt.Title(title, fontSize=FONT_SIZE + 2)).mark_line(**mark).encode(
        **encoding).properties(height=height, padding={"top": 12, "bottom": 5, "left": 5, "right": 5})
