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
from plotly.subplots import make_subplots

__all__ = [
    "DIVERGING",
    "SEQUENTIAL",
    "attention_grid",
    "attention_pipeline_figure",
    "bar_chart",
    "heatmap",
    "matrix_csv",
    "plotly_text",
]

SEQUENTIAL = "Viridis"
DIVERGING = "PuOr"
FONT_SIZE = 16


def plotly_text(label) -> str:
    """Plotly reads labels as HTML: escape them so tokens like <s> and <pad> show as written."""
    return str(label).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


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
    x_labels, y_labels = [plotly_text(s) for s in x_labels], [plotly_text(s) for s in y_labels]
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


def _token_axes(fig: go.Figure, row: int, col: int, x_labels, y_labels, *, x_title="", y_title="", size=FONT_SIZE):
    x_labels, y_labels = [plotly_text(s) for s in x_labels], [plotly_text(s) for s in y_labels]
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(x_labels))), ticktext=list(x_labels), side="bottom",
                     tickangle=-60 if max(map(len, x_labels), default=0) > 2 else 0, tickfont=dict(size=size),
                     title=dict(text=x_title, font=dict(size=size)), showgrid=False, zeroline=False, row=row, col=col)
    fig.update_yaxes(tickmode="array", tickvals=list(range(len(y_labels))), ticktext=list(y_labels),
                     autorange="reversed", tickfont=dict(size=size), title=dict(text=y_title, font=dict(size=size)),
                     showgrid=False, zeroline=False, row=row, col=col)


def _hover_grid(query_tokens, key_tokens) -> np.ndarray:
    return np.array([[f"{plotly_text(q)} → {plotly_text(k)}" for k in key_tokens] for q in query_tokens])


def attention_grid(
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    selected: tuple[int, int] | None = None,
    title: str = "",
) -> go.Figure:
    """Layers × heads small multiples of attention weights (layers, heads, T_q, T_k).

    One colour scale from 0 to 1 with one colour bar, so every cell is comparable; the selected
    (layer, head) gets a frame.  Hover shows query token, key token and weight.
    """
    n_layers, n_heads = weights.shape[:2]
    fig = make_subplots(
        rows=n_layers, cols=n_heads, horizontal_spacing=0.04 if n_heads > 1 else 0.0,
        vertical_spacing=min(0.16, 0.6 / max(1, n_layers)),
        subplot_titles=[f"layer {layer + 1} · head {head + 1}" for layer in range(n_layers) for head in range(n_heads)],
    )
    small = FONT_SIZE - (6 if n_heads >= 4 else 3)
    hover = _hover_grid(query_tokens, key_tokens)
    for layer in range(n_layers):
        for head in range(n_heads):
            fig.add_trace(
                go.Heatmap(
                    z=weights[layer, head], coloraxis="coloraxis", customdata=hover, xgap=1, ygap=1,
                    hovertemplate=f"layer {layer + 1} head {head + 1}<br>%{{customdata}}<br>"
                                  "weight %{z:.3f}<extra></extra>",
                ),
                row=layer + 1, col=head + 1,
            )
            # Rows are the same tokens in every column: label them once, on the left.
            _token_axes(fig, layer + 1, head + 1, key_tokens,
                        query_tokens if head == 0 else [""] * len(query_tokens), size=small)
    if selected is not None:
        layer, head = selected
        index = layer * n_heads + head + 1
        suffix = "" if index == 1 else str(index)
        fig.add_shape(type="rect", xref=f"x{suffix} domain", yref=f"y{suffix} domain", x0=-0.02, x1=1.02,
                      y0=-0.02, y1=1.02, line=dict(color="#e66101", width=4))
    fig.update_annotations(font_size=FONT_SIZE - 2)
    fig.update_layout(
        coloraxis=dict(colorscale=SEQUENTIAL, cmin=0.0, cmax=1.0,
                       colorbar=dict(title=dict(text="weight", side="right"), thickness=18)),
        font=dict(size=FONT_SIZE),
        title=dict(text=title, font=dict(size=FONT_SIZE + 2)) if title else None,
        height=max(340, min(1300, n_layers * (200 + 14 * len(query_tokens)) + 60)),
        margin=dict(l=10, r=10, t=60 if title else 40, b=30),
        plot_bgcolor="rgba(0,0,0,0)",
    )
    return fig


def attention_pipeline_figure(
    raw_scores: np.ndarray,
    scaled_scores: np.ndarray,
    masked_scores: np.ndarray,
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    head_dim: int,
) -> go.Figure:
    """The four steps of one head side by side: QKᵀ, ÷√d (+ bias), mask, softmax.

    Masked entries (−∞) are drawn blank, not dark, so they read as "not allowed" rather than "small".
    Scores share one diverging scale centred on 0; weights use the 0–1 sequential scale.
    """
    masked = np.where(np.isfinite(masked_scores), masked_scores, np.nan)
    finite = np.concatenate([raw_scores.ravel(), scaled_scores.ravel()])
    bound = float(np.max(np.abs(finite))) if finite.size else 1.0
    titles = ["QKᵀ (raw scores)", f"÷ √d  (d = {head_dim})", "mask (blank = not allowed)", "softmax → weights"]
    fig = make_subplots(rows=1, cols=4, subplot_titles=titles, horizontal_spacing=0.05)
    hover = _hover_grid(query_tokens, key_tokens)
    panels = [(raw_scores, "score"), (scaled_scores, "score"), (masked, "score"), (weights, "weight")]
    for col, (z, name) in enumerate(panels, start=1):
        axis = "coloraxis2" if name == "weight" else "coloraxis"
        fig.add_trace(go.Heatmap(z=z, coloraxis=axis, customdata=hover, xgap=1, ygap=1,
                                 hovertemplate=f"%{{customdata}}<br>{name} %{{z:.3f}}<extra></extra>"),
                      row=1, col=col)
        _token_axes(fig, 1, col, key_tokens, query_tokens if col == 1 else [""] * len(query_tokens),
                    size=FONT_SIZE - 4)
    fig.update_annotations(font_size=FONT_SIZE - 1)
    fig.update_layout(
        coloraxis=dict(colorscale=DIVERGING, cmin=-bound, cmax=bound,
                       colorbar=dict(title=dict(text="score", side="right"), x=1.0, thickness=14, len=0.9)),
        coloraxis2=dict(colorscale=SEQUENTIAL, cmin=0.0, cmax=1.0,
                        colorbar=dict(title=dict(text="weight", side="right"), x=1.07, thickness=14, len=0.9)),
        font=dict(size=FONT_SIZE), height=max(320, 190 + 20 * len(query_tokens)),
        margin=dict(l=10, r=60, t=50, b=30), plot_bgcolor="rgba(0,0,0,0)",
    )
    return fig
