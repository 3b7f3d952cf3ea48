"""The decoder lesson's figures: one generation step (next-token probabilities, the new row of
self-attention and of cross-attention), free running against teacher forcing, what the KV cache
recomputes and keeps, and the three architectures' blocks.  Handed arrays and labels; Plotly specs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from explorer.figures.common import (
    FONT_SIZE,
    OKABE_ITO,
    PLAIN_NUMBERS,
    PRESENT_HEIGHT,
    SEQUENTIAL,
    colour_list,
    figure_from_spec,
    hover_grid,
    panel_title,
    plotly_text,
    token_axis,
)
from explorer.figures.margins import TOOLBAR_PX, column_gap

__all__ = ["architecture_figure", "cache_figure", "forcing_figure", "line_figure", "parameter_count", "step_figure",
           "sweep_figure"]

RIGHT, WRONG, PUT_IN = OKABE_ITO["bluish green"], OKABE_ITO["vermillion"], OKABE_ITO["orange"]
CURRENT = "#e66101"  # the frame around the current row (as the attention page's selected head)
PLOT_TOP = 0.84  # the step figure's panels end here; the key labels and the panel titles go above


def _heatmap_panel(z, rows, cols, *, axis: str, domain, current: int, name: str) -> tuple[dict, dict, dict, dict]:
    """A weights heatmap on axes x{axis}/y{axis}, rows = the steps' queries, with a frame round `current`."""
    trace = {"type": "heatmap", "z": np.asarray(z, dtype=np.float32), "coloraxis": "coloraxis",
             "xaxis": f"x{axis}", "yaxis": f"y{axis}", "xgap": 1, "ygap": 1,
             "customdata": hover_grid(rows, cols),
             "hovertemplate": f"{name}<br>%{{customdata}}<br>weight %{{z:.3f}}<extra></extra>"}
    x_axis = token_axis(cols, domain=domain, anchor=f"y{axis}", size=FONT_SIZE)
    x_axis.update(side="top", tickangle=0)
    y_axis = token_axis(rows, domain=(0.0, PLOT_TOP), anchor=f"x{axis}", size=FONT_SIZE, reverse=True)
    frame = {"type": "rect", "xref": f"x{axis}", "yref": f"y{axis}", "x0": -0.5, "x1": len(cols) - 0.5,
             "y0": current - 0.5, "y1": current + 0.5, "line": {"color": CURRENT, "width": 4}}
    return trace, x_axis, y_axis, frame


def _step_domains(n_keys: int, n_source: int | None, gap: float) -> list[tuple[float, float]]:
    """The step figure's panels side by side up to 0.94 (the colour bar's room): the bars, then the
    heatmaps in proportion to their columns, `gap` apart (their row labels stand in the gap)."""
    widths = [n_keys] if n_source is None else [n_keys, n_source]
    bars = 0.3 if n_source is None else 0.2
    room = 0.94 - bars - gap * len(widths)
    domains, start = [(0.0, bars)], bars + gap
    for n in widths:
        domains.append((start, start + room * n / sum(widths)))
        start = domains[-1][1] + gap
    return domains


def step_figure(
    top_tokens: Sequence[str], top_probs: Sequence[float], chosen: str,
    self_weights: np.ndarray, queries: Sequence[str], keys: Sequence[str],
    cross_weights: np.ndarray | None, source: Sequence[str], current: int, *, height: int = 400,
    present_height: int | None = None,
) -> go.Figure:
    """One step of generation, three panels: the likeliest next tokens (the chosen one coloured),
    decoder self-attention (steps × keys: the rows so far, future rows blank, the current one
    framed) and cross-attention (steps × source), or two panels for a decoder-only model.
    `present_height`: its height when presenting, if lower (explorer.figures.presentation)."""
    domains = _step_domains(len(keys), None if cross_weights is None else len(source),
                            column_gap([plotly_text(t) for t in queries], FONT_SIZE))
    labels = [plotly_text(t) for t in top_tokens]
    bars = {"type": "bar", "orientation": "h", "x": list(map(float, top_probs)), "y": list(range(len(labels))),
            "marker": {"color": [PUT_IN if t == chosen else "#3b528b" for t in top_tokens]},
            "text": [f"{p:.2f}" for p in top_probs], "textposition": "outside", "cliponaxis": False,
            "textfont": {"size": FONT_SIZE}, "customdata": labels, "xaxis": "x", "yaxis": "y",
            "hovertemplate": "next token %{customdata}<br>probability %{x:.4f}<extra></extra>"}
    layout = {
        "xaxis": {"domain": list(domains[0]), "anchor": "y", "range": [0, 1.35], "showticklabels": False,
                  "showgrid": False, "zeroline": True},
        "yaxis": token_axis(top_tokens, domain=(0.0, PLOT_TOP), anchor="x", size=FONT_SIZE + 2, reverse=True),
    }
    traces, shapes = [bars], []
    # Titles on two lines: on one, the three needed a 1049 px chart on a phone (scrolled sideways); now 600
    titles = [panel_title("next token:<br>probability", domains[0], 1.0, FONT_SIZE),
              panel_title("masked self-attention:<br>query → keys so far", domains[1], 1.0, FONT_SIZE)]
    trace, x_axis, y_axis, frame = _heatmap_panel(self_weights, queries, keys, axis="2", domain=domains[1],
                                                  current=current, name="self-attention")
    traces.append(trace)
    shapes.append(frame)
    layout.update(xaxis2=x_axis, yaxis2=y_axis)
    if cross_weights is not None:
        trace, x_axis, y_axis, frame = _heatmap_panel(cross_weights, queries, source, axis="3", domain=domains[2],
                                                      current=current, name="cross-attention")
        traces.append(trace)
        shapes.append(frame)
        layout.update(xaxis3=x_axis, yaxis3=y_axis)
        titles.append(panel_title("cross-attention:<br>query → source", domains[2], 1.0, FONT_SIZE))
    layout.update(
        annotations=titles, shapes=shapes, font={"size": FONT_SIZE}, height=height, showlegend=False,
        meta={PRESENT_HEIGHT: min(height, present_height or height)},
        coloraxis={"colorscale": colour_list(SEQUENTIAL), "cmin": 0.0, "cmax": 1.0,
                   "colorbar": {"title": {"text": "weight", "side": "right"}, "thickness": 16, "len": PLOT_TOP,
                                "y": PLOT_TOP / 2, "tickfont": {"size": FONT_SIZE}}},
        margin={"l": 10, "r": 10, "t": 52, "b": 10}, plot_bgcolor="rgba(0,0,0,0)",
    )
    return figure_from_spec({"data": traces, "layout": layout})


def forcing_figure(rows: Sequence[tuple[str, Sequence[str], Sequence[bool | None]]], step_labels: Sequence[str],
                   put_in: int | None, *, height: int | None = None) -> go.Figure:
    """Rows of tokens, one column per step: (row label, tokens, right?) — green right, vermillion
    wrong, grey where there is nothing to judge (None); the put-in mistake's column is framed."""
    colour = {True: 1.0, False: 0.0, None: 0.5}
    z = [[colour[flag] for flag in flags] for _, _, flags in rows]
    text = [[plotly_text(t) for t in tokens] for _, tokens, _ in rows]
    trace = {"type": "heatmap", "z": z, "zmin": 0, "zmax": 1, "showscale": False, "xgap": 3, "ygap": 3,
             "colorscale": [[0, WRONG], [0.49, WRONG], [0.5, "#d9d9d9"], [0.51, RIGHT], [1, RIGHT]],
             "text": text, "texttemplate": "%{text}", "textfont": {"size": FONT_SIZE + 4, "color": "white"},
             "hovertemplate": "%{y}, %{x}: %{text}<extra></extra>"}
    n = len(step_labels)
    shapes = []
    if put_in is not None:
        shapes.append({"type": "rect", "x0": put_in - 0.5, "x1": put_in + 0.5, "y0": -0.5, "y1": len(rows) - 0.5,
                       "line": {"color": PUT_IN, "width": 5}})
    layout = {
        "xaxis": {**token_axis(step_labels, domain=(0.0, 1.0), anchor="y", size=FONT_SIZE), "side": "top",
                  "tickangle": 0},
        "yaxis": token_axis([label for label, _, _ in rows], domain=(0.0, 1.0), anchor="x", size=FONT_SIZE,
                            reverse=True),
        "shapes": shapes, "font": {"size": FONT_SIZE}, "height": height or 90 + TOOLBAR_PX + 52 * len(rows),
        # the last step's label under the toolbar's band, not behind its buttons
        "margin": {"l": 10, "r": 10, "t": 40 + TOOLBAR_PX, "b": 10}, "plot_bgcolor": "rgba(0,0,0,0)",
    }
    layout["xaxis"]["range"] = [-0.5, n - 0.5]
    return figure_from_spec({"data": [trace], "layout": layout})


def line_figure(x: Sequence[float], lines: dict[str, Sequence[float]], *, x_title: str, y_title: str,
                title: str = "", log_y: bool = False, marker_x: float | None = None, height: int = 340,
                dashes: dict[str, str] | None = None) -> go.Figure:
    """A few labelled lines over the same x (Okabe–Ito colours, markers on every point), an optional
    vertical marker (the current step, the mistake)."""
    palette = [OKABE_ITO[c] for c in ("blue", "vermillion", "bluish green", "orange", "reddish purple")]
    traces = [{"type": "scatter", "mode": "lines+markers", "name": name, "x": list(map(float, x)),
               "y": [None if v is None or not np.isfinite(v) else float(v) for v in values],
               "line": {"color": palette[i % len(palette)], "width": 3, "dash": (dashes or {}).get(name, "solid")},
               "marker": {"size": 9},
               "hovertemplate": f"{name}<br>{x_title} %{{x}}<br>{y_title} %{{y:.4g}}<extra></extra>"}
              for i, (name, values) in enumerate(lines.items())]
    layout = {
        "xaxis": {"title": {"text": x_title}, "tickfont": {"size": FONT_SIZE}, "dtick": 1, "showgrid": False},
        "yaxis": {"title": {"text": y_title}, "tickfont": {"size": FONT_SIZE}, "type": "log" if log_y else "linear",
                  "rangemode": "tozero", **PLAIN_NUMBERS},  # a loss of 0.00006 reads 6×10⁻⁵, not "60µ"
        "legend": {"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0, "font": {"size": FONT_SIZE}},
        "font": {"size": FONT_SIZE}, "height": height, "margin": {"l": 10, "r": 10, "t": 90 if title else 40, "b": 10},
        "plot_bgcolor": "rgba(0,0,0,0)",
    }
    if log_y:
        layout["yaxis"].pop("rangemode")
    if title:
        layout["title"] = {"text": title, "font": {"size": FONT_SIZE + 2}, "y": 0.98, "yanchor": "top"}
    if marker_x is not None:
        layout["shapes"] = [{"type": "line", "xref": "x", "yref": "paper", "x0": marker_x, "x1": marker_x,
                             "y0": 0, "y1": 1, "line": {"color": "#888", "width": 2, "dash": "dot"}}]
    return figure_from_spec({"data": traces, "layout": layout})


def sweep_figure(sweeps: Sequence, length: int, *, height: int = 460) -> go.Figure:
    """The stopwatch: milliseconds per generated token against the length (both axes logarithmic),
    without (solid) and with (dashed) the cache, one colour per model shape (`sweeps`: objects with
    d_model, n_layers, lengths, uncached, cached, crossover, clock); a dotted line at this step's
    length, and a star where each model's cache starts to win for good (none if it never does)."""
    palette = [OKABE_ITO["blue"], OKABE_ITO["vermillion"], OKABE_ITO["bluish green"]]
    traces, cpu = [], getattr(sweeps[0], "clock", "") == "thread_time"
    for i, sweep in enumerate(sweeps):
        name, colour = f"d={sweep.d_model}, {sweep.n_layers} layers", palette[i % len(palette)]
        lengths = [int(n) for n in sweep.lengths]
        for cached, values in ((False, sweep.uncached), (True, sweep.cached)):
            label = f"{name}, {'with' if cached else 'without'} the cache"
            traces.append({"type": "scatter", "mode": "lines+markers", "name": label, "x": lengths,
                           "y": [1000 * float(v) for v in values],
                           "line": {"color": colour, "width": 3, "dash": "dash" if cached else "solid"},
                           "marker": {"size": 7, "symbol": "square" if cached else "circle"},
                           "hovertemplate": f"{label}<br>length %{{x}}<br>%{{y:.3f}} ms per token<extra></extra>"})
        if sweep.crossover is not None:
            label = f"{name}: the cache wins from T = {sweep.crossover}"
            traces.append({"type": "scatter", "mode": "markers", "name": label, "x": [sweep.crossover],
                           "y": [1000 * float(sweep.cached[lengths.index(sweep.crossover)])],
                           "marker": {"size": 18, "symbol": "star", "color": colour, "line": {"width": 1}},
                           "hovertemplate": f"{label}<extra></extra>"})
    shapes = [{"type": "line", "xref": "x", "yref": "paper", "x0": length, "x1": length, "y0": 0, "y1": 1,
               "line": {"color": "#888", "width": 2, "dash": "dot"}}]
    note = {"x": float(np.log10(length)), "y": 1.0, "xref": "x", "yref": "paper", "showarrow": False,  # log10: a log
            "text": f" this step: T = {length}", "xanchor": "left", "yanchor": "top",  # axis's annotation coordinate
            "font": {"size": FONT_SIZE - 1}}
    powers = [int(n) for n in sweeps[0].lengths if int(n) & (int(n) - 1) == 0]
    times = [1000 * float(v) for sweep in sweeps for v in (*sweep.uncached, *sweep.cached)]
    marks = [v for v in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
             if min(times) / 2 <= v <= max(times) * 2]
    layout = {
        "xaxis": {"title": {"text": "length T (tokens the step reads)"}, "type": "log", "tickfont": {"size": FONT_SIZE},
                  "tickvals": powers, "tickangle": 0, "showgrid": False},
        "yaxis": {"title": {"text": "ms per generated token" + (" (CPU time)" if cpu else "")}, "type": "log",
                  "tickvals": marks, "ticktext": [f"{v:g}" for v in marks], "tickfont": {"size": FONT_SIZE}},
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0, "font": {"size": FONT_SIZE - 1}},
        "shapes": shapes, "annotations": [note], "font": {"size": FONT_SIZE}, "height": height,
        "margin": {"l": 10, "r": 10, "t": 150, "b": 10}, "plot_bgcolor": "rgba(0,0,0,0)",
    }
    return figure_from_spec({"data": traces, "layout": layout})


COMPUTED, KEPT, IDLE = 1.0, 0.5, 0.0
CACHE_COLOURS = [[0.0, "#f2f2f2"], [0.33, "#f2f2f2"], [0.34, OKABE_ITO["sky blue"]], [0.66, OKABE_ITO["sky blue"]],
                 [0.67, OKABE_ITO["orange"]], [1.0, OKABE_ITO["orange"]]]


def _cache_states(n_layers: int, n_source: int, position: int, new: int, cached: bool) -> tuple[np.ndarray, list[str]]:
    """Rows encoder 1…N (if any), decoder 1…N, output; columns positions 1…; cell = computed at this
    step, kept from before, or idle (NaN: no such position).  The step's new positions are the last
    `new` up to `position`."""
    width = max(n_source, position + 1)
    rows, labels = [], []
    for layer in range(n_layers) if n_source else ():
        row = np.full(width, np.nan)
        row[:n_source] = KEPT  # run once before step 1, with the cache or without
        rows.append(row)
        labels.append(f"encoder {layer + 1}")
    for layer in range(n_layers):
        row = np.full(width, np.nan)
        row[:position + 1] = COMPUTED
        if cached:
            row[:position + 1 - new] = KEPT
        rows.append(row)
        labels.append(f"decoder {layer + 1}")
    row = np.full(width, np.nan)
    row[:position + 1] = COMPUTED  # without a cache every position's logits, of which the last is used
    if cached:
        row[:position + 1 - new] = IDLE
    rows.append(row)
    labels.append("logits")
    return np.array(rows), labels  # drawn bottom-up: the output on top, as the data flows upwards


def cache_figure(n_layers: int, n_source: int, position: int, new: int = 1, *, height: int | None = None) -> go.Figure:
    """What one generation step computes (orange) and reuses (blue), without and with the KV cache.

    position: the newest decoder position (0-based); new: how many positions the cached step feeds
    (a decoder-only model's first step: its whole prompt); n_source: source length (0 for decoder-only).
    Rows are the model's stacks (the output on top), columns positions; a blue encoder cell is its
    output at that position, computed once before step 1 with or without the cache (the cache also
    keeps its keys and values for cross-attention); a blue decoder cell is that position's keys and
    values in that layer, computed at an earlier step."""
    traces, layout, titles = [], {}, []
    for i, cached in enumerate((False, True)):
        z, labels = _cache_states(n_layers, n_source, position, new, cached)
        suffix = "" if i == 0 else "2"
        domain = (0.0, 0.47) if i == 0 else (0.53, 1.0)
        columns = [str(p + 1) for p in range(z.shape[1])]
        traces.append({"type": "heatmap", "z": z, "zmin": 0, "zmax": 1, "colorscale": CACHE_COLOURS,
                       "showscale": False, "xgap": 2, "ygap": 2, "xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
                       "hovertemplate": "%{y}, position %{x}<extra></extra>"})
        x_axis = token_axis(columns, domain=domain, anchor=f"y{suffix}", size=FONT_SIZE)
        x_axis["title"] = {"text": "position", "font": {"size": FONT_SIZE}}
        layout[f"xaxis{suffix}"] = x_axis
        y_axis = token_axis(labels, domain=(0.0, 0.8), anchor=f"x{suffix}", size=FONT_SIZE, show=i == 0)
        layout[f"yaxis{suffix}"] = {**y_axis, "tickangle": 0}
        titles.append(panel_title("with the KV cache" if cached else "without a cache", domain, 0.82, FONT_SIZE + 1))
    kept = "kept: " + ("encoder, " if n_source else "") + "keys, values"  # short: one line on a phone
    key = [("computed at this step", OKABE_ITO["orange"]), (kept, OKABE_ITO["sky blue"])]
    for j, (text, colour) in enumerate(key):  # a legend in words, under the titles
        titles.append({"text": f"<span style='color:{colour}'>■</span> {text}", "x": 0.25 + 0.5 * j, "y": 0.97,
                       "xref": "paper", "yref": "paper", "xanchor": "center", "yanchor": "bottom",
                       "showarrow": False, "font": {"size": FONT_SIZE}})
    layout.update(annotations=titles, font={"size": FONT_SIZE}, plot_bgcolor="rgba(0,0,0,0)",
                  height=height or 200 + TOOLBAR_PX + 36 * len(labels),  # the key under the toolbar's band
                  margin={"l": 10, "r": 10, "t": 10 + TOOLBAR_PX, "b": 10})
    return figure_from_spec({"data": traces, "layout": layout})


BLOCK_COLOURS = {"self-attention": OKABE_ITO["bluish green"], "masked self-attention": OKABE_ITO["vermillion"],
                 "cross-attention": OKABE_ITO["blue"], "feed-forward": "#8c8c8c"}
_LAYER_BLOCKS = {
    "encoder": ("self-attention", "feed-forward"),
    "decoder": ("masked self-attention", "feed-forward"),
    "decoder-with-cross": ("masked self-attention", "cross-attention", "feed-forward"),
}
_BLOCK_H, _GAP, _PAD = 0.5, 0.08, 0.14


def _stack(x0: float, x1: float, kind: str, n_drawn: int, y0: float) -> tuple[list[dict], list[dict], list[float]]:
    """Layer boxes bottom-up from y0; returns shapes, text annotations, and each layer's cross-attention y."""
    shapes, texts, cross_y = [], [], []
    blocks = _LAYER_BLOCKS[kind]
    layer_h = len(blocks) * (_BLOCK_H + _GAP) - _GAP + 2 * _PAD
    for layer in range(n_drawn):
        bottom = y0 + layer * (layer_h + 0.35)
        shapes.append({"type": "rect", "x0": x0, "x1": x1, "y0": bottom, "y1": bottom + layer_h,
                       "line": {"color": "#555", "width": 2}, "fillcolor": "#fafafa", "layer": "below"})
        for b, block in enumerate(blocks):
            low = bottom + _PAD + b * (_BLOCK_H + _GAP)
            shapes.append({"type": "rect", "x0": x0 + 0.12, "x1": x1 - 0.12, "y0": low, "y1": low + _BLOCK_H,
                           "line": {"width": 0}, "fillcolor": BLOCK_COLOURS[block]})
            texts.append({"text": block, "x": (x0 + x1) / 2, "y": low + _BLOCK_H / 2, "showarrow": False,
                          "font": {"size": FONT_SIZE, "color": "white"}})
            if block == "cross-attention":
                cross_y.append(low + _BLOCK_H / 2)
    return shapes, texts, cross_y


def parameter_count(n: int) -> str:
    """A parameter count as the architectures figure prints it: 102,547; 51.7 M from a million on."""
    return f"{n:,}" if n < 1_000_000 else f"{n / 1e6:.1f} M"


def _counted(parameters: int, share: float | None, in_layers: int, in_embeddings: int) -> str:
    """An architecture's parameters (the figure's title says so), in short lines that stand side by side
    in a phone's 600 px chart: the total (and its share of the encoder–decoder's), in the layers, in the
    embeddings and the output projection."""
    total = f"<b>{parameter_count(parameters)}</b>" + ("" if share is None else f" · <b>{share:.0%}</b>")
    layers, embeddings = parameter_count(in_layers), parameter_count(in_embeddings)
    return f"{total}<br>layers {layers}<br>embeddings and<br>output {embeddings}"


def architecture_figure(n_layers: int, *, counts: Sequence[tuple[int, float | None, int, int]] | None = None,
                        max_drawn: int = 3, height: int = 520) -> go.Figure:
    """Encoder-only, decoder-only and encoder–decoder side by side: each layer's blocks, coloured by
    kind (unmasked self-attention, masked self-attention, cross-attention, feed-forward), and in the
    encoder–decoder an arrow from the encoder's final output to the cross-attention of every decoder
    layer.  At most `max_drawn` layers per stack are drawn; the title says how many there are.
    `counts`, one per architecture in that order: (parameters, share of the encoder–decoder's or None,
    in the layers, in the embeddings and output projection), printed above its first stack (where the
    encoder–decoder's taller decoder leaves room)."""
    drawn = min(n_layers, max_drawn)
    columns = [("encoder-only", [(0.0, 3.0, "encoder", "input")]),
               ("decoder-only", [(3.7, 6.7, "decoder", "prompt + output so far")]),
               ("encoder–decoder", [(7.5, 10.5, "encoder", "source"),
                                    (11.3, 14.3, "decoder-with-cross", "output so far")])]
    shapes, texts = [], []
    base = 0.9
    top = base
    for _, stacks in columns:
        for x0, x1, kind, reads in stacks:
            s, t, cross_y = _stack(x0, x1, kind, drawn, base)
            shapes += s
            texts += t
            stack_top = max(shape["y1"] for shape in s)
            top = max(top, stack_top)
            texts.append({"text": f"↑ {reads}", "x": (x0 + x1) / 2, "y": base - 0.35, "showarrow": False,
                          "font": {"size": FONT_SIZE}})
            if kind == "decoder-with-cross":
                encoder_top = max(sh["y1"] for sh in shapes if sh["x0"] == 7.5)
                for y in cross_y:  # every decoder layer reads the encoder's final output
                    texts.append({"x": x0 + 0.12, "y": y, "ax": 10.5, "ay": encoder_top, "xref": "x", "yref": "y",
                                  "axref": "x", "ayref": "y", "text": "", "showarrow": True, "arrowhead": 3,
                                  "arrowsize": 1.3, "arrowwidth": 2.5, "arrowcolor": OKABE_ITO["blue"]})
    stacked = f"{n_layers} layer{'s' if n_layers > 1 else ''} per stack" + ("" if drawn == n_layers else
                                                                               f", {drawn} drawn")
    if counts:
        stacked += "; parameters over each"
    for title, stacks in columns:
        x0, x1 = stacks[0][0], stacks[-1][1]
        texts.append({"text": f"<b>{title}</b>", "x": (x0 + x1) / 2, "y": top + 0.45, "showarrow": False,
                      "font": {"size": FONT_SIZE + 2}})
    first_top = max(shape["y1"] for shape in shapes if shape["x0"] == 0.0)  # a two-block stack's top
    for (_, stacks), count in zip(columns, counts or (), strict=False):
        x0, x1 = stacks[0][0], stacks[0][1]
        # over the encoder–decoder's encoder the text ends left of the arrows rising from its right edge
        place = {"x": x1 - 0.15, "xanchor": "right"} if len(stacks) > 1 else {"x": (x0 + x1) / 2}
        # xref and yref said: presenting, an annotation without them is taken for a title standing on the plot
        texts.append({"text": _counted(*count), **place, "y": first_top + 0.08, "yanchor": "bottom", "xref": "x",
                      "yref": "y", "showarrow": False, "font": {"size": FONT_SIZE - 2, "color": "#222222"}})
    layout = {
        "xaxis": {"range": [-0.2, 14.5], "visible": False, "fixedrange": True},
        "yaxis": {"range": [0.2, top + 0.8], "visible": False, "fixedrange": True},
        "shapes": shapes, "annotations": texts, "font": {"size": FONT_SIZE}, "height": height,
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10}, "plot_bgcolor": "rgba(0,0,0,0)", "showlegend": False,
        "title": {"text": stacked, "font": {"size": FONT_SIZE}, "x": 0.5, "xanchor": "center"},
    }
    return figure_from_spec({"data": [], "layout": layout})
