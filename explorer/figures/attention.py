"""Figure builders: plain data in, Plotly or Altair figure out, no Streamlit.

Made to be read from the back of a lecture hall: large fonts, token labels on both axes, a colour
bar with a title, and colour-blind-safe scales (Viridis for magnitudes, purple–orange for signed
values).  Axes are numeric with the tokens as tick text, so repeated tokens ("the … the") keep
their own rows and columns instead of being merged into one category.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import get_colorscale

__all__ = [
    "DIVERGING",
    "SEQUENTIAL",
    "attention_grid",
    "attention_pipeline_figure",
    "bar_chart",
    "colour_list",
    "figure_from_spec",
    "heatmap",
    "matrix_csv",
    "plotly_text",
]

HOVER_CELL_BUDGET = 40_000  # grid cells that get token-pair hover labels
SEQUENTIAL = "Viridis"
DIVERGING = "PuOr"


def colour_list(scale) -> list:
    """A Plotly colour scale as an explicit [[position, colour], …] list.

    Specs skip Python-side validation, which is what normally expands a scale name; plotly.js itself
    knows only some names (not PuOr) and silently falls back to another scale for the rest.
    """
    return [list(step) for step in get_colorscale(scale)] if isinstance(scale, str) else [list(s) for s in scale]
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
    trace = {
        "type": "heatmap", "z": z, "colorscale": colour_list(colorscale), "xgap": 1, "ygap": 1,
        "colorbar": {"title": {"text": value_name, "side": "right"}, "thickness": 18,
                     "tickfont": {"size": FONT_SIZE - 2}},
        "customdata": _hover_grid(y_labels, x_labels),
        "hovertemplate": (f"{y_title} → {x_title}: %{{customdata}}<br>"
                          f"{value_name}: %{{z:{number_format}}}<extra></extra>"),
    }
    for name, value in (("zmin", zmin), ("zmax", zmax)):
        if value is not None:
            trace[name] = value
    if colorscale == DIVERGING and zmin is None:
        trace["zmid"] = 0
    if annotate:
        trace.update(texttemplate=f"%{{z:{number_format}}}", textfont={"size": FONT_SIZE - 2})
    x_axis = _token_axis(x_labels, domain=(0.0, 1.0), anchor="y", size=FONT_SIZE)
    x_axis.update(side="top", title={"text": x_title})
    y_axis = _token_axis(y_labels, domain=(0.0, 1.0), anchor="x", size=FONT_SIZE, reverse=True)
    y_axis["title"] = {"text": y_title}
    layout = {
        "font": {"size": FONT_SIZE},
        # The key axis is on top, so the title needs room above the tick labels and axis title.
        "margin": {"l": 10, "r": 10, "t": 110 if title else 70, "b": 10},
        "height": height or max(320, min(720, 120 + 46 * n_rows)),
        "plot_bgcolor": "rgba(0,0,0,0)", "xaxis": x_axis, "yaxis": y_axis,
    }
    if title:
        layout["title"] = {"text": title, "font": {"size": FONT_SIZE + 2}, "y": 0.98}
    return figure_from_spec({"data": [trace], "layout": layout})


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
) -> go.Figure:
    """Horizontal bars, first label on top, each value printed just outside its bar.

    A Plotly spec rather than an Altair chart: a layered Altair chart costs ~75 ms per rerun to
    build and validate, this ~2 ms.
    """
    values = np.asarray(values, dtype=np.float64)
    if domain is None:
        # Leave room beyond the longest bar on each side for its printed value.
        lo, hi = float(min(0.0, values.min(initial=0.0))), float(max(0.0, values.max(initial=0.0)))
        pad = 0.35 * (hi - lo or 1.0)
        domain = (lo - pad if lo < 0 else 0.0, hi + pad if hi > 0 else 0.0)
    trace = {
        "type": "bar", "orientation": "h", "x": values, "y": list(range(len(values))), "marker": {"color": color},
        "text": [format(v, number_format) for v in values], "textposition": "outside", "cliponaxis": False,
        "textfont": {"size": FONT_SIZE - 1}, "customdata": [plotly_text(label) for label in labels],
        "hovertemplate": f"{label_title} %{{customdata}}<br>{value_title} %{{x:{number_format}}}<extra></extra>",
    }
    layout = {
        "title": {"text": title, "font": {"size": FONT_SIZE + 2}},
        "font": {"size": FONT_SIZE},
        "xaxis": {"title": {"text": value_title}, "range": list(domain), "zeroline": True,
                  "zerolinecolor": "#888", "tickfont": {"size": FONT_SIZE - 2}},
        "yaxis": _token_axis(labels, domain=(0.0, 1.0), anchor="x", size=FONT_SIZE, reverse=True),
        "height": 110 + 38 * len(values), "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "plot_bgcolor": "rgba(0,0,0,0)", "bargap": 0.25,
    }
    layout["yaxis"]["title"] = {"text": label_title}
    return figure_from_spec({"data": [trace], "layout": layout})


def matrix_csv(z: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], corner: str = "") -> str:
    """A labelled matrix as CSV text (first column the row labels)."""
    frame = pd.DataFrame(np.asarray(z), index=[str(r) for r in row_labels], columns=[str(c) for c in col_labels])
    frame.index.name = corner or None
    buffer = io.StringIO()
    frame.to_csv(buffer)
    return buffer.getvalue()


def figure_from_spec(spec: dict) -> go.Figure:
    """Wrap a plain Plotly spec in a Figure without re-validating it.

    Plotly validates every property on construction, which costs tens of milliseconds per figure
    on every rerun.  The specs built here are validated once, by the unit tests (which construct
    each of them with validation on), so the app can skip it.
    """
    return go.Figure(spec, _validate=False)


def _grid_domains(n: int, gap: float) -> list[tuple[float, float]]:
    """n equal intervals of [0, 1] separated by `gap`, left to right."""
    size = (1.0 - gap * (n - 1)) / n
    return [(i * (size + gap), i * (size + gap) + size) for i in range(n)]


def _token_axis(labels, *, domain, anchor, size, reverse=False, show=True) -> dict:
    axis = {
        "domain": list(domain), "anchor": anchor, "tickmode": "array", "tickvals": list(range(len(labels))),
        "ticktext": [plotly_text(t) for t in labels] if show else [""] * len(labels),
        "tickfont": {"size": size}, "showgrid": False, "zeroline": False,
    }
    if reverse:
        axis["autorange"] = "reversed"
    elif show and max(map(len, labels), default=0) > 2:
        axis["tickangle"] = -60
    return axis


def _hover_grid(query_tokens, key_tokens) -> np.ndarray:
    return np.array([[f"{plotly_text(q)} → {plotly_text(k)}" for k in key_tokens] for q in query_tokens])


def _panel_title(text: str, x_domain, y_top: float) -> dict:
    return {"text": text, "x": (x_domain[0] + x_domain[1]) / 2, "y": y_top, "xref": "paper", "yref": "paper",
            "xanchor": "center", "yanchor": "bottom", "showarrow": False, "font": {"size": FONT_SIZE - 2}}


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
    (layer, head) gets a frame.  Hover shows query token, key token and weight.  Query tokens
    label the rows once, on the left; key tokens label every column.
    """
    n_layers, n_heads = weights.shape[:2]
    x_domains = _grid_domains(n_heads, 0.03 if n_heads > 1 else 0.0)
    y_domains = _grid_domains(n_layers, min(0.16, 0.6 / n_layers))[::-1]  # layer 1 at the top
    small = FONT_SIZE - (6 if n_heads >= 4 else 3)
    # Per-cell hover labels are strings: past ~40 000 cells they dominate the payload (129 tokens ×
    # 32 heads was 18 MB), so large grids hover with positions instead of token pairs.
    token_hover = weights.size <= HOVER_CELL_BUDGET
    hover = _hover_grid(query_tokens, key_tokens) if token_hover else None
    pair = "%{customdata}" if token_hover else "query %{y} → key %{x}"
    traces, layout, titles = [], {}, []
    for layer in range(n_layers):
        for head in range(n_heads):
            n = layer * n_heads + head + 1
            suffix = "" if n == 1 else str(n)
            trace = {
                # float32 halves the payload; weights need no more than 7 significant digits on screen.
                "type": "heatmap", "z": weights[layer, head].astype(np.float32), "coloraxis": "coloraxis",
                "xaxis": f"x{suffix}", "yaxis": f"y{suffix}", "xgap": 1, "ygap": 1,
                "hovertemplate": f"layer {layer + 1} head {head + 1}<br>{pair}<br>weight %{{z:.3f}}<extra></extra>",
            }
            if token_hover:
                trace["customdata"] = hover
            traces.append(trace)
            layout[f"xaxis{suffix}"] = _token_axis(key_tokens, domain=x_domains[head], anchor=f"y{suffix}",
                                                   size=small)
            layout[f"yaxis{suffix}"] = _token_axis(query_tokens, domain=y_domains[layer], anchor=f"x{suffix}",
                                                   size=small, reverse=True, show=head == 0)
            titles.append(_panel_title(f"layer {layer + 1} · head {head + 1}", x_domains[head],
                                       y_domains[layer][1] + 0.005))
    shapes = []
    if selected is not None:
        layer, head = selected
        n = layer * n_heads + head + 1
        suffix = "" if n == 1 else str(n)
        shapes.append({"type": "rect", "xref": f"x{suffix} domain", "yref": f"y{suffix} domain", "x0": -0.03,
                       "x1": 1.03, "y0": -0.03, "y1": 1.03, "line": {"color": "#e66101", "width": 4}})
    layout.update(
        annotations=titles, shapes=shapes,
        coloraxis={"colorscale": colour_list(SEQUENTIAL), "cmin": 0.0, "cmax": 1.0,
                   "colorbar": {"title": {"text": "weight", "side": "right"}, "thickness": 18}},
        font={"size": FONT_SIZE},
        height=max(340, min(1300, n_layers * (200 + 14 * len(query_tokens)) + 60)),
        margin={"l": 10, "r": 10, "t": 60 if title else 40, "b": 30},
        plot_bgcolor="rgba(0,0,0,0)",
    )
    if title:
        layout["title"] = {"text": title, "font": {"size": FONT_SIZE + 2}}
    return figure_from_spec({"data": traces, "layout": layout})


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
    Scores share one diverging scale centred on 0 — so the ÷√d panel visibly pales — and weights use
    the 0–1 sequential scale.
    """
    masked = np.where(np.isfinite(masked_scores), masked_scores, np.nan)
    finite = np.concatenate([raw_scores.ravel(), scaled_scores.ravel()])
    bound = max(1e-9, float(np.max(np.abs(finite)))) if finite.size else 1.0
    titles = ["QKᵀ (raw scores)", f"÷ √d  (d = {head_dim})", "mask (blank = not allowed)", "softmax → weights"]
    panels = [(raw_scores, "score"), (scaled_scores, "score"), (masked, "score"), (weights, "weight")]
    x_domains = _grid_domains(4, 0.05)
    hover = _hover_grid(query_tokens, key_tokens)
    traces, layout, annotations = [], {}, []
    for i, ((z, name), domain, text) in enumerate(zip(panels, x_domains, titles, strict=True)):
        suffix = "" if i == 0 else str(i + 1)
        traces.append({
            "type": "heatmap", "z": z, "coloraxis": "coloraxis2" if name == "weight" else "coloraxis",
            "customdata": hover, "xaxis": f"x{suffix}", "yaxis": f"y{suffix}", "xgap": 1, "ygap": 1,
            "hovertemplate": f"%{{customdata}}<br>{name} %{{z:.3f}}<extra></extra>",
        })
        layout[f"xaxis{suffix}"] = _token_axis(key_tokens, domain=domain, anchor=f"y{suffix}", size=FONT_SIZE - 4)
        layout[f"yaxis{suffix}"] = _token_axis(query_tokens, domain=(0.0, 1.0), anchor=f"x{suffix}",
                                               size=FONT_SIZE - 4, reverse=True, show=i == 0)
        annotations.append(_panel_title(text, domain, 1.01))
    layout.update(
        annotations=annotations,
        coloraxis={"colorscale": colour_list(DIVERGING), "cmin": -bound, "cmax": bound,
                   "colorbar": {"title": {"text": "score", "side": "right"}, "x": 1.0, "thickness": 14, "len": 0.9}},
        coloraxis2={"colorscale": colour_list(SEQUENTIAL), "cmin": 0.0, "cmax": 1.0,
                    "colorbar": {"title": {"text": "weight", "side": "right"}, "x": 1.07, "thickness": 14,
                                 "len": 0.9}},
        font={"size": FONT_SIZE}, height=max(320, 190 + 20 * len(query_tokens)),
        margin={"l": 10, "r": 60, "t": 50, "b": 30}, plot_bgcolor="rgba(0,0,0,0)",
    )
    return figure_from_spec({"data": traces, "layout": layout})
