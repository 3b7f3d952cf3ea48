"""The attention lesson's figures: every head of every layer as small multiples, and one head's
four steps (QKᵀ, scaling, mask, softmax) side by side.  The labelled heatmap and bar chart the
lookup and attention pages also draw are in `explorer.figures.common`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from explorer.figures.common import (
    DIVERGING,
    FONT_SIZE,
    GRID_WIDTH_PX,
    LABEL_FONT_PX,
    PRESENT_HEIGHT,
    SEQUENTIAL,
    SLANT_AFTER,
    bright_ticks,
    colour_list,
    figure_from_spec,
    grid_domains,
    heatmap,
    hover_grid,
    indexed_labels,
    label_step,
    panel_categories,
    panel_title,
    plotly_text,
    token_axis,
)
from explorer.figures.heads import MASK_GREY, attention_lines, head_heatmap, mask_trace, show_mask_legend
from explorer.figures.margins import tick_reach

__all__ = ["GRID_PANELS", "MASK_GREY", "AttentionFigures", "CompareFigures", "attention_figures", "attention_grid",
           "attention_pipeline_figure", "compare_figures", "head_gap"]

HOVER_CELL_BUDGET = 40_000  # a head's pipeline cells that get token-pair hover labels
GRID_PANELS = 8  # more panels than this are shown one layer at a time (and always when presenting)
PRESENT_ROW_PX, PRESENT_MIN_PX = 24, 300  # a query row presenting (an 18 px label's glyphs: ~22 px), the least height
GRID_TOP_PX = 34  # above the grid: the heads' titles (a figure title adds 26)
PIPELINE_WIDTH_PX = 880  # the four steps have the page's whole width: ~900 px of plot at 1400 px with the sidebar


def head_gap(n_heads: int, n_keys: int) -> int:
    """The width, in columns, of the blank between two heads' panels in a layer's row: about 3 % of the
    row's width, at least one."""
    return max(1, round(0.03 * n_heads * n_keys / (1 - 0.03 * (n_heads - 1)))) if n_heads > 1 else 0


def _row(panels: np.ndarray, fill, gap: int) -> np.ndarray:
    """One layer's heads (heads, T_q, T_k) side by side as one array, `gap` columns of `fill` between two."""
    n_heads, n_queries = panels.shape[:2]
    blank = np.full((n_queries, gap), fill, dtype=panels.dtype)
    return np.concatenate([part for head in range(n_heads) for part in ((blank, panels[head]) if head else
                                                                        (panels[head],))], axis=1)


def _layer_traces(weights: np.ndarray, allowed: np.ndarray | None, number: int, suffix: str, columns: list[str],
                  rows: list[str], gap: int) -> list[dict]:
    """One layer's row (heads, T_q, T_k) as one heatmap on category axes (`columns`, `rows`: their distinct
    labels), and its masked cells (`allowed` False) as one grey heatmap over it.  The hover reads the head,
    the key and the query from the axes: no text per cell, which made the browser slow to draw the grid."""
    z = weights if allowed is None else np.where(allowed, weights, np.nan)
    trace = {
        # float32 halves the payload; weights need no more than 7 significant digits on screen.
        "type": "heatmap", "z": _row(z.astype(np.float32), np.nan, gap), "x": columns, "y": rows,
        "coloraxis": "coloraxis", "xaxis": f"x{suffix}", "yaxis": f"y{suffix}", "xgap": 1, "ygap": 1,
        "hoverongaps": False,
        "hovertemplate": f"layer {number} · %{{x}}<br>query %{{y}}<br>weight %{{z:.3f}}<extra></extra>",
    }
    if allowed is None:
        return [trace]
    grey = mask_trace(_row(allowed, True, gap), f"x{suffix}", f"y{suffix}")
    return [trace, {**grey, "x": columns, "y": rows, "hoverongaps": False}]


def _key_labels_reach(shown: Sequence[str]) -> float:
    """How far below the plot the key labels reach (px) at the presenting font, slanted 45° past
    SLANT_AFTER characters: what the rows have to leave for them.  Naming the bright columns can name
    longer words ("because" for "the"): 70 px budgeted for every grid let 11 rows overlap presenting."""
    slanted = max(map(len, map(str, shown)), default=0) > SLANT_AFTER
    return tick_reach(shown, LABEL_FONT_PX, -45 if slanted else 0)


def _rows_presenting(query_tokens, shown_keys, height: int, n_layers: int, share: float) -> tuple[int, int]:
    """The grid's height presenting and how often its rows are labelled.  Presenting shows one layer at a
    time, under the step bar and the input: rows of PRESENT_ROW_PX keep the default input's grid on one
    projected screen, above the key labels' reach; never taller than on the desk.  Labels thin to the lower
    height, at the presenting font for one layer, at the desk's for several."""
    below = _key_labels_reach(shown_keys)
    # several layers are shown at the desk only (presenting pages them): their rows at the desk's font
    font_px = PRESENT_ROW_PX / 1.35 if n_layers == 1 else FONT_SIZE - 2
    present_height = height if n_layers > 1 else \
        min(height, max(PRESENT_MIN_PX, math.ceil(GRID_TOP_PX + PRESENT_ROW_PX * len(query_tokens) + below)))
    room = (present_height - GRID_TOP_PX - below) * share
    return present_height, label_step(query_tokens, room, vertical=True, font_px=font_px)


def _bright_keys(layer_weights: np.ndarray, stride: int, n_columns: int, every: int) -> list[int]:
    """The key columns of one layer's row of heads to label (`bright_ticks`): the brightest, chosen
    along the whole row so labels stay apart across the blanks between heads too."""
    n_keys = layer_weights.shape[-1]
    mass = np.full(n_columns, -np.inf)  # weight per key column along the row; the blanks -inf
    for head, weights in enumerate(layer_weights):
        mass[head * stride:head * stride + n_keys] = np.nan_to_num(weights).sum(axis=0)
    return bright_ticks(mass, every)


def attention_grid(
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    allowed: np.ndarray | None = None,
    layer_numbers: Sequence[int] | None = None,
    selected: tuple[int, int] | None = None,
    title: str = "",
    focus_row: int | None = None,
) -> go.Figure:
    """Layers × heads small multiples of attention weights (layers, heads, T_q, T_k).

    One colour scale from 0 to 1 with one colour bar, so every cell is comparable; the selected
    (layer, head) gets a frame (indices into `weights`).  Hover shows layer, head, query token, key
    token and weight, read from the axes: their categories name every row and column, so no text is
    sent per cell.  Each layer is one row, drawn as one heatmap: its heads side by side with a
    blank between two (`head_gap` columns wide): one trace a layer, drawn faster than one per panel
    (benchmarks/RESULTS.md, label-cost); "head h" over each panel.  Query tokens
    label the rows, on the left; key tokens label every column of every panel; "layer n" stands on
    the left of its row (`layer_numbers`, when `weights` holds only some of a model's layers;
    default 1, 2, …).  `allowed` (same shape, boolean) marks where attention may look: the other
    cells are drawn grey, with a legend entry, so a masked cell never reads as a weight of 0.  Tick
    labels are thinned (`label_step`) to what fits the narrowest width the grid is drawn at; a thinned
    panel names its brightest key columns (`bright_ticks`), so the word a head reads from is labelled,
    and thinned rows keep `focus_row` (the row a lesson's step asks about) labelled.
    """
    n_layers, n_heads, n_queries, n_keys = weights.shape
    layer_numbers = list(layer_numbers) if layer_numbers is not None else list(range(1, n_layers + 1))
    masked_any = allowed is not None and not np.all(allowed)
    gap = head_gap(n_heads, n_keys)
    stride, n_columns = n_keys + gap, n_heads * n_keys + (n_heads - 1) * gap
    y_domains = grid_domains(n_layers, min(0.16, 0.6 / n_layers))[::-1]  # layer 1 at the top
    small = FONT_SIZE - 2  # the labels are thinned to what fits at 18 px (label_step), so 14 px never crowds
    # the columns' categories: "head h · k token", and blanks between two heads (see _layer_traces)
    columns = panel_categories("head", n_heads, indexed_labels(key_tokens), gap, sep=" · ")
    rows = indexed_labels(query_tokens)
    height = max(340, min(1300, n_layers * (104 + 12 * len(query_tokens)) + 40))
    x_every = label_step(key_tokens, GRID_WIDTH_PX * n_keys / n_columns)
    x_ticks = [_bright_keys(weights[layer], stride, n_columns, x_every) for layer in range(n_layers)]
    present_height, y_every = _rows_presenting(query_tokens, [key_tokens[v % stride] for ts in x_ticks for v in ts],
                                               height, n_layers, y_domains[0][1] - y_domains[0][0])
    heads = [(head * stride / n_columns, (head * stride + n_keys) / n_columns) for head in range(n_heads)]
    traces, layout, titles = [], {}, []
    for layer in range(n_layers):
        suffix = "" if layer == 0 else str(layer + 1)
        traces += _layer_traces(weights[layer], None if not masked_any else allowed[layer], layer_numbers[layer],
                                suffix, columns, rows, gap)
        x_axis = token_axis(key_tokens, domain=(0.0, 1.0), anchor=f"y{suffix}", size=small, every=x_every)
        x_axis["tickvals"] = x_ticks[layer]
        x_axis["ticktext"] = [plotly_text(key_tokens[v % stride]) for v in x_axis["tickvals"]]
        layout[f"xaxis{suffix}"] = x_axis | {"type": "category"}  # tick values: the columns' places
        layout[f"yaxis{suffix}"] = token_axis(query_tokens, domain=y_domains[layer], anchor=f"x{suffix}",
                                               size=small, reverse=True, every=y_every,
                                               keep=focus_row or 0) | {"type": "category"}
        # the layer names its row once, on the left: a panel's title is short enough to fit
        layout[f"yaxis{suffix}"]["title"] = {"text": f"layer {layer_numbers[layer]}", "standoff": 4}
        titles += [panel_title(f"head {head + 1}", heads[head], y_domains[layer][1] + 0.005)
                   for head in range(n_heads)]
    shapes = []
    if selected is not None:
        layer, head = selected
        suffix = "" if layer == 0 else str(layer + 1)
        pad = 0.03 * n_keys
        shapes.append({"type": "rect", "xref": f"x{suffix}", "yref": f"y{suffix} domain",
                       "x0": head * stride - 0.5 - pad, "x1": head * stride + n_keys - 0.5 + pad, "y0": -0.03,
                       "y1": 1.03, "line": {"color": "#e66101", "width": 4}})
    layout.update(
        annotations=titles, shapes=shapes,
        coloraxis={"colorscale": colour_list(SEQUENTIAL), "cmin": 0.0, "cmax": 1.0,
                   "colorbar": {"title": {"text": "weight", "side": "right"}, "thickness": 18}},
        font={"size": FONT_SIZE}, height=height,
        margin={"l": 10, "r": 10, "t": GRID_TOP_PX + 26 if title else GRID_TOP_PX, "b": 30},
        plot_bgcolor="rgba(0,0,0,0)", meta={PRESENT_HEIGHT: present_height},
    )
    if masked_any:
        show_mask_legend(traces, layout, n_queries, n_columns)
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

    Masked entries (−∞) are drawn grey, outside both colour scales, so they read as "not allowed"
    rather than "small"; the weights panel shows them grey too (their weight is 0 by construction).
    Scores share one diverging scale centred on 0 — so the ÷√d panel visibly pales — and weights use
    the 0–1 sequential scale.
    """
    allowed = np.isfinite(masked_scores)
    masked = np.where(allowed, masked_scores, np.nan)
    finite = np.concatenate([raw_scores.ravel(), scaled_scores.ravel()])
    bound = max(1e-9, float(np.max(np.abs(finite)))) if finite.size else 1.0
    # on two lines: on one, "mask (grey = not allowed)" beside its neighbours made a phone's chart 840 px wide
    titles = ["QKᵀ<br>(raw scores)", f"÷ √d<br>(d = {head_dim})", "mask<br>(grey = not allowed)",
              "softmax<br>→ weights"]
    panels = [(raw_scores, "score"), (scaled_scores, "score"), (masked, "score"), (weights, "weight")]
    x_domains = grid_domains(4, 0.05)
    # Token-pair hover strings only while they stay small (a long padded input makes one per cell of
    # all four panels); past that, positions.
    token_hover = 4 * raw_scores.size <= HOVER_CELL_BUDGET
    hover = hover_grid(query_tokens, key_tokens) if token_hover else None
    pair = "%{customdata}" if token_hover else "query %{y} → key %{x}"
    height = max(320, 190 + 20 * len(query_tokens))
    x_every = label_step(key_tokens, PIPELINE_WIDTH_PX * (x_domains[0][1] - x_domains[0][0]))
    y_every = label_step(query_tokens, (height - 80) * 0.95, vertical=True)
    traces, layout, annotations = [], {}, []
    for i, ((z, name), domain, text) in enumerate(zip(panels, x_domains, titles, strict=True)):
        suffix = "" if i == 0 else str(i + 1)
        trace = {
            "type": "heatmap", "z": np.asarray(z if name != "weight" else np.where(allowed, z, np.nan), np.float32),
            "coloraxis": "coloraxis2" if name == "weight" else "coloraxis",
            "xaxis": f"x{suffix}", "yaxis": f"y{suffix}", "xgap": 1, "ygap": 1,
            "hovertemplate": f"{pair}<br>{name} %{{z:.3f}}<extra></extra>",
        }
        if token_hover:
            trace["customdata"] = hover
        traces.append(trace)
        if i >= 2 and not allowed.all():
            traces.append(mask_trace(allowed, f"x{suffix}", f"y{suffix}"))
        layout[f"xaxis{suffix}"] = token_axis(key_tokens, domain=domain, anchor=f"y{suffix}", size=FONT_SIZE - 4,
                                               every=x_every)
        layout[f"yaxis{suffix}"] = token_axis(query_tokens, domain=(0.0, 1.0), anchor=f"x{suffix}",
                                               size=FONT_SIZE - 4, reverse=True, show=i == 0, every=y_every)
        annotations.append(panel_title(text, domain, 1.01))
    layout.update(
        annotations=annotations,
        coloraxis={"colorscale": colour_list(DIVERGING), "cmin": -bound, "cmax": bound,
                   "colorbar": {"title": {"text": "score", "side": "right"}, "x": 1.0, "thickness": 14, "len": 0.9}},
        coloraxis2={"colorscale": colour_list(SEQUENTIAL), "cmin": 0.0, "cmax": 1.0,
                    "colorbar": {"title": {"text": "weight", "side": "right"}, "x": 1.07, "thickness": 14,
                                 "len": 0.9}},
        font={"size": FONT_SIZE}, height=height,
        margin={"l": 10, "r": 60, "t": 50, "b": 30}, plot_bgcolor="rgba(0,0,0,0)",
    )
    return figure_from_spec({"data": traces, "layout": layout})


@dataclass(frozen=True)
class AttentionFigures:
    """The lesson's figures at one setting: every layer and head (`grid`, None beyond GRID_PANELS
    panels), the enlarged layer's heads alone (`layer_grid`), and the enlarged head's four steps."""

    grid: go.Figure | None
    layer_grid: go.Figure
    pipeline: go.Figure
    head: go.Figure  # the enlarged head, large (head_heatmap)
    lines: go.Figure  # the same head as lines (attention_lines)


def attention_figures(view) -> AttentionFigures:
    """The figures of an attention lesson view (explorer.lessons.attention.view): its block on
    screen (`view.attention`) at the enlarged layer and head of its settings."""
    block, layer, head = view.attention, view.settings.layer - 1, view.settings.head - 1
    allowed = np.isfinite(block.masked_scores)
    n_layers, n_heads = block.weights.shape[:2]

    def grid(shown: list[int]) -> go.Figure:
        return attention_grid(block.weights[shown], block.query_tokens, block.key_tokens, allowed=allowed[shown],
                              layer_numbers=[n + 1 for n in shown], selected=(shown.index(layer), head),
                              focus_row=view.focus_row)

    one = grid([layer])
    every = None if n_layers * n_heads > GRID_PANELS else one if n_layers == 1 else grid(list(range(n_layers)))
    pipeline = attention_pipeline_figure(block.raw_scores[layer, head], block.scaled_scores[layer, head],
                                         block.masked_scores[layer, head], block.weights[layer, head],
                                         block.query_tokens, block.key_tokens, view.run.attention.head_dim)
    weights = block.weights[layer, head]
    large = head_heatmap(weights, block.query_tokens, block.key_tokens, allowed=allowed[layer, head],
                         focus_row=view.focus_row)
    lines = attention_lines(block.weights[layer], block.query_tokens, block.key_tokens, head=head,
                            focus_row=view.focus_row)
    return AttentionFigures(every, one, pipeline, large, lines)


@dataclass(frozen=True)
class CompareFigures:
    """This view's enlarged head, the other setting's, and their difference (None when the two
    have different shapes); all None when comparing with nothing."""

    this: go.Figure | None = None
    other: go.Figure | None = None
    difference: go.Figure | None = None


def compare_figures(view) -> CompareFigures:
    """The figures of a comparison view (explorer.lessons.attention.view.CompareView)."""
    if view.other is None:
        return CompareFigures()
    a, b = view.this_block, view.other_block
    this = heatmap(view.this, x_labels=a.key_tokens, y_labels=a.query_tokens, title="this view", zmin=0, zmax=1,
                   annotate=False)
    other = heatmap(view.other, x_labels=b.key_tokens, y_labels=b.query_tokens, title=view.settings.compare,
                    zmin=0, zmax=1, annotate=False)
    if view.this.shape != view.other.shape:
        return CompareFigures(this, other)
    difference = view.this - view.other
    bound = max(1e-9, float(np.abs(difference).max()))
    return CompareFigures(this, other, heatmap(difference, x_labels=a.key_tokens, y_labels=a.query_tokens,
                                               title="difference (this − other)", colorscale=DIVERGING,
                                               zmin=-bound, zmax=bound, value_name="Δ weight", annotate=False))
