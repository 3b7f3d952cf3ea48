"""Figure builders: plain data in, Plotly or Altair figure out, no Streamlit.

Made to be read from the back of a lecture hall: large fonts, token labels on both axes, a colour
bar with a title, and colour-blind-safe scales (Viridis for magnitudes, purple–orange for signed
values).  Axes are numeric with the tokens as tick text, so repeated tokens ("the … the") keep
their own rows and columns instead of being merged into one category.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

__all__ = ["DIVERGING", "SEQUENTIAL", "bar_chart", "heatmap", "matrix_csv"]

SEQUENTIAL = "Viridis"
DIVERGING = "PuOr"
FONT_SIZE = 16


def heatmap(
    z: np.ndarray,
    *,
    x_labels: Sequence[str],
    y_labels: Sequence[str],
    title: str = "",
    x_title: str = "key",
    y_title: str = "query",
    value_name: str = "weight",
    colorscale: str = SEQUENTIAL,
    zmin: float | None = None,
    zmax: float | None = None,
    annotate: bool | None = None,
    number_format: str = ".2f",
    height: int | None = None,
) -> go.Figure:
    """A labelled matrix.  NaN cells are drawn blank (used for masked attention entries).

    annotate: print each value in its cell; by default only for matrices up to 12×12.
    """
    z = np.asarray(z, dtype=np.float64)
    n_rows, n_cols = z.shape
    if len(x_labels) != n_cols or len(y_labels) != n_rows:
        raise ValueError(f"labels ({len(y_labels)} × {len(x_labels)}) do not fit the matrix {z.shape}")
    if annotate is None:
        annotate = n_rows <= 12 and n_cols <= 12
    x_labels, y_labels = [str(s) for s in x_labels], [str(s) for s in y_labels]
    hover_labels = np.array([[f"{y_labels[i]} → {x_labels[j]}" for j in range(n_cols)] for i in range(n_rows)])
    trace = go.Heatmap(
        z=z,
        x=list(range(n_cols)),
        y=list(range(n_rows)),
        colorscale=colorscale,
        zmin=zmin,
        zmax=zmax,
        zmid=0 if colorscale == DIVERGING and zmin is None else None,
        colorbar=dict(title=dict(text=value_name, side="right"), thickness=18, tickfont=dict(size=FONT_SIZE - 2)),
        customdata=hover_labels,
        hovertemplate=f"{y_title} → {x_title}: %{{customdata}}<br>{value_name}: %{{z:{number_format}}}<extra></extra>",
        xgap=1,
        ygap=1,
    )
    if annotate:
        trace.update(texttemplate=f"%{{z:{number_format}}}", textfont=dict(size=FONT_SIZE - 2))
    fig = go.Figure(trace)
    fig.update_layout(
        title=dict(text=title, font=dict(size=FONT_SIZE + 2)),
        font=dict(size=FONT_SIZE),
        # The key axis is on top, so the title needs room above the tick labels and axis title.
        margin=dict(l=10, r=10, t=110 if title else 70, b=10),
        title_y=0.98,
        height=height or max(320, min(720, 120 + 46 * n_rows)),
        plot_bgcolor="rgba(0,0,0,0)",
    )
    fig.update_xaxes(title=x_title, tickmode="array", tickvals=list(range(n_cols)), ticktext=x_labels,
                     side="top", showgrid=False, zeroline=False)
    fig.update_yaxes(title=y_title, tickmode="array", tickvals=list(range(n_rows)), ticktext=y_labels,
                     autorange="reversed", showgrid=False, zeroline=False)
    return fig


def bar_chart(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    title: str,
    value_title: str,
    label_title: str = "key",
    number_format: str = ".2f",
    domain: tuple[float, float] | None = None,
    color: str = "#3b528b",
) -> alt.Chart:
    """Horizontal bars with the value printed at the end of each bar (Altair)."""
    data = pd.DataFrame({label_title: [str(s) for s in labels], value_title: np.asarray(values, dtype=float)})
    order = list(data[label_title])
    if domain is None:
        # Leave room beyond the longest bar on each side for its printed value.
        lo, hi = float(min(0.0, data[value_title].min())), float(max(0.0, data[value_title].max()))
        pad = 0.3 * (hi - lo or 1.0)
        domain = (lo - pad if lo < 0 else 0.0, hi + pad if hi > 0 else 0.0)
    scale = alt.Scale(domain=list(domain), nice=False)
    base = alt.Chart(data, title=alt.Title(title, fontSize=FONT_SIZE + 2)).encode(
        y=alt.Y(f"{label_title}:N", sort=order, title=label_title,
                axis=alt.Axis(labelFontSize=FONT_SIZE, titleFontSize=FONT_SIZE)),
        x=alt.X(f"{value_title}:Q", title=value_title, scale=scale,
                axis=alt.Axis(labelFontSize=FONT_SIZE - 2, titleFontSize=FONT_SIZE)),
        tooltip=[alt.Tooltip(f"{label_title}:N"), alt.Tooltip(f"{value_title}:Q", format=number_format)],
    )
    bars = base.mark_bar(color=color)
    # Labels sit just outside the end of each bar: right of positive bars, left of negative ones.
    label = alt.Text(f"{value_title}:Q", format=number_format)
    field = alt.datum[value_title]
    right = base.transform_filter(field >= 0).mark_text(align="left", dx=4, fontSize=FONT_SIZE - 1)
    left = base.transform_filter(field < 0).mark_text(align="right", dx=-4, fontSize=FONT_SIZE - 1)
    return (bars + right.encode(text=label) + left.encode(text=label)).properties(height=alt.Step(34))


def matrix_csv(z: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], corner: str = "") -> str:
    """A labelled matrix as CSV text (first column the row labels)."""
    frame = pd.DataFrame(np.asarray(z), index=[str(r) for r in row_labels], columns=[str(c) for c in col_labels])
    frame.index.name = corner or None
    buffer = io.StringIO()
    frame.to_csv(buffer)
    return buffer.getvalue()
