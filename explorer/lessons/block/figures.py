"""The block lesson's figures: the diagram of the forward pass with the chosen stage lit, and that stage's
tensor large, its rows the tokens and the followed token's row framed.  Arrays in, Plotly out."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.figures.common import (
    DIVERGING,
    FONT_SIZE,
    OKABE_ITO,
    PRESENT_HEIGHT,
    SEQUENTIAL,
    bar_chart,
    colour_list,
    figure_from_spec,
    frozen,
    hover_grid,
    matrix_csv,
    plotly_text,
    token_axis,
)
from explorer.figures.margins import TOOLBAR_PX

from .view import EMBEDDING, LAYER, OUTPUT, STAGES, BlockView

__all__ = [
    "PER_HEAD",
    "BlockFigures",
    "OneChart",
    "block_figures",
    "diagram",
    "one_chart",
    "stage_csv",
    "stage_figure",
    "stage_shape",
    "stage_title",
]

FRAME = "#000000"  # the followed token's row (black: the diverging scale's ends are orange and purple)
GROUPS = {  # the diagram's parts: fill of a box, and of the box lit (with white text)
    "embedding": ("#dceefa", "#0b4f7a"), "attention": ("#fdebc8", "#7a4a00"),
    "ffn": ("#d5f0e6", "#00573d"), "output": ("#ece0f0", "#5b2d6e"),
}
ROW_PX, PRESENT_ROW_PX = 24, 21
STAGE_HEIGHT, PRESENT_STAGE_HEIGHT = 24 * 17 + 20 + TOOLBAR_PX, 21 * 17 + 20 + TOOLBAR_PX  # as tall as the diagram
TOP_WORDS = 8


def _group(key: str) -> str:
    if key in dict(EMBEDDING):
        return "embedding"
    if key in dict(OUTPUT):
        return "output"
    return "ffn" if key.startswith("ffn") else "attention"


def stage_shape(view: BlockView, key: str, one_head: bool = False) -> str:
    """The shape of a stage's tensor as the diagram prints it ("11 × 64"); `one_head`: of one head's part."""
    c, T = view.config, len(view.trace.tokens)
    heads = "" if one_head else f"{c.n_heads} × "
    shapes = {"qkv": f"3 × {heads}{T} × {c.head_dim}", "scores": f"{heads}{T} × {T}",
              "weights": f"{heads}{T} × {T}", "heads_out": f"{heads}{T} × {c.head_dim}",
              "ffn_hidden": f"{T} × {c.d_ff}", "logits": f"{T} × {c.vocab_size}",
              "probabilities": f"{T} × {c.vocab_size}"}
    return shapes.get(key, f"{T} × {c.d_model}")


def diagram(view: BlockView) -> dict:
    """The forward pass as a column of boxes, top to bottom, the chosen stage lit; the residual stream
    drawn on the left: where each Add takes its x from."""
    s = view.settings
    keys = [k for k, _ in EMBEDDING + LAYER + OUTPUT]
    n = len(keys)
    y = {k: n - 1 - i for i, k in enumerate(keys)}  # top row highest
    shapes, notes = [], []
    for key in keys:
        fill, lit = GROUPS[_group(key)]
        chosen = key == s.part
        shapes.append({"type": "rect", "xref": "x", "yref": "y", "x0": 0.16, "x1": 0.9, "y0": y[key] - 0.45,
                       "y1": y[key] + 0.45, "fillcolor": lit if chosen else fill,
                       "line": {"color": "#000000" if chosen else lit, "width": 3 if chosen else 1}, "layer": "below"})
        colour = "#ffffff" if chosen else "#1a1a1a"
        notes.append({"x": 0.18, "y": y[key], "xref": "x", "yref": "y", "xanchor": "left", "showarrow": False,
                      "text": ("<b>" + plotly_text(STAGES[key]) + "</b>") if chosen else plotly_text(STAGES[key]),
                      "font": {"size": FONT_SIZE, "color": colour}})
        notes.append({"x": 0.88, "y": y[key], "xref": "x", "yref": "y", "xanchor": "right", "showarrow": False,
                      "text": stage_shape(view, key), "font": {"size": FONT_SIZE - 2, "color": colour}})
    # The residual stream: the layer's input skips attention to the first Add, that sum skips the FFN to the second.
    stream = OKABE_ITO["blue"]
    for start, end in (("input", "attn_residual"), ("attn_residual", "ffn_residual")):
        top, bottom = y[start], y[end]
        shapes.append({"type": "path", "xref": "x", "yref": "y", "line": {"color": stream, "width": 3},
                       "path": f"M 0.16 {top} L 0.08 {top} L 0.08 {bottom} L 0.16 {bottom}"})
        notes.append({"x": 0.16, "y": bottom, "ax": 0.08, "ay": bottom, "xref": "x", "yref": "y", "axref": "x",
                      "ayref": "y", "showarrow": True, "arrowhead": 2, "arrowsize": 1.2, "arrowcolor": stream,
                      "text": ""})
    notes.append({"x": 0.045, "y": (y["input"] + y["ffn_residual"]) / 2, "xref": "x", "yref": "y", "showarrow": False,
                  "text": "residual stream x", "textangle": -90, "font": {"size": FONT_SIZE - 2, "color": stream}})
    # The layer's boxes, bracketed on the right: the same block repeats in every layer.
    first, last = y[LAYER[0][0]], y[LAYER[-1][0]]
    shapes.append({"type": "path", "xref": "x", "yref": "y", "line": {"color": "#444444", "width": 2},
                   "path": f"M 0.92 {first + 0.42} L 0.95 {first + 0.42} L 0.95 {last - 0.42} L 0.92 {last - 0.42}"})
    notes.append({"x": 0.985, "y": (first + last) / 2, "xref": "x", "yref": "y", "showarrow": False, "textangle": -90,
                  "text": f"layer {s.layer} of {view.config.n_layers}: the same block in each",
                  "font": {"size": FONT_SIZE - 2, "color": "#1a1a1a"}})
    hidden = {"visible": False, "fixedrange": True}
    layout = {"height": n * ROW_PX + 20 + TOOLBAR_PX, "margin": {"l": 12, "r": 12, "t": 10 + TOOLBAR_PX, "b": 10},
              "showlegend": False,
              "xaxis": {**hidden, "range": [0, 1]}, "yaxis": {**hidden, "range": [-0.6, n - 0.4]},
              "plot_bgcolor": "rgba(0,0,0,0)", "shapes": shapes, "annotations": notes,
              "meta": {PRESENT_HEIGHT: n * PRESENT_ROW_PX + 20 + TOOLBAR_PX}}
    # an invisible point per box: hovering names the stage and its shape
    data = [{"type": "scatter", "x": [0.5] * n, "y": [y[k] for k in keys], "mode": "markers",
             "marker": {"opacity": 0, "size": 20}, "hovertemplate": "%{customdata}<extra></extra>",
             "customdata": [f"{plotly_text(STAGES[k])}: {stage_shape(view, k)}" for k in keys]}]
    return {"data": data, "layout": layout}


def _title(text: str) -> dict:
    """A figure's title in the toolbar's band, at its left (the buttons are at its right)."""
    return {"text": text, "x": 0.0, "xref": "paper", "xanchor": "left", "y": 1.0, "yref": "container",
            "yanchor": "top", "pad": {"t": 6}, "font": {"size": FONT_SIZE + 1}}


def _rows(z: np.ndarray, tokens, row: int, *, x_labels, x_title: str, value_name: str, diverging: bool,
          separators=(), panel_titles=()) -> dict:
    """A (tokens × columns) heatmap, the followed token's row framed."""
    z = np.asarray(z, dtype=np.float64)
    T, n = z.shape
    trace = {"type": "heatmap", "z": z, "x": list(range(n)), "y": list(range(T)), "xgap": 0, "ygap": 1,
             "colorbar": {"title": {"text": value_name, "side": "right"}, "thickness": 16,
                          "tickfont": {"size": FONT_SIZE - 2}},
             "customdata": hover_grid(tokens, [str(label) for label in x_labels]),
             "hovertemplate": "%{customdata}<br>" + value_name + " %{z:.3f}<extra></extra>"}
    if diverging:
        reach = float(np.max(np.abs(z))) or 1.0
        trace.update(colorscale=colour_list(DIVERGING), zmin=-reach, zmax=reach, zmid=0)
    else:
        trace.update(colorscale=colour_list(SEQUENTIAL), zmin=0.0, zmax=1.0)
    if T <= 12 and n <= 12:  # a row of a few weights: printed in its cells
        trace.update(texttemplate="%{z:.2f}", textfont={"size": FONT_SIZE - 2})
    y_axis = token_axis(list(tokens), domain=(0.0, 1.0), anchor="x", size=FONT_SIZE, reverse=True)
    y_axis["title"] = {"text": None}
    every = max(1, n // 8)
    x_axis = {"title": {"text": x_title}, "side": "bottom", "tickmode": "array",
              "tickvals": list(range(0, n, every)), "ticktext": [str(x_labels[i]) for i in range(0, n, every)],
              "tickfont": {"size": FONT_SIZE - 2}, "range": [-0.5, n - 0.5], "showgrid": False, "zeroline": False}
    if n <= 12:  # keys: every token, upright where short
        x_axis = token_axis([str(label) for label in x_labels], domain=(0.0, 1.0), anchor="y", size=FONT_SIZE)
        x_axis["title"] = {"text": x_title}
    shapes = [{"type": "rect", "xref": "x", "yref": "y", "x0": -0.5, "x1": n - 0.5, "y0": row - 0.5, "y1": row + 0.5,
               "line": {"color": FRAME, "width": 4}, "fillcolor": "rgba(0,0,0,0)"}]
    for at in separators:  # where one head's columns end and the next one's begin
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": at - 0.5, "x1": at - 0.5, "y0": 0, "y1": 1,
                       "line": {"color": "#000000", "width": 3}})
    notes = [{"x": x, "y": 1.0, "xref": "x", "yref": "paper", "yanchor": "bottom", "showarrow": False, "text": text,
              "font": {"size": FONT_SIZE}} for x, text in panel_titles]
    layout = {"height": STAGE_HEIGHT, "margin": {"l": 10, "r": 10, "t": TOOLBAR_PX + (28 if panel_titles else 6),
                                                 "b": 10},
              "font": {"size": FONT_SIZE}, "xaxis": x_axis, "yaxis": y_axis, "shapes": shapes, "annotations": notes,
              "plot_bgcolor": "rgba(0,0,0,0)", "meta": {PRESENT_HEIGHT: PRESENT_STAGE_HEIGHT}}
    return {"data": [trace], "layout": layout}


PER_HEAD = frozenset({"qkv", "scores", "weights", "heads_out"})  # the stages drawn for one head


def stage_title(view: BlockView) -> str:
    """"Softmax: weights · layer 2, head 1 · 4 × 11 × 11": the stage, where it is, its tensor's shape."""
    s = view.settings
    where = [f"layer {s.layer}"] if s.part in dict(LAYER) else []
    if s.part in PER_HEAD:
        where[-1] += f", head {s.head}"
    return " · ".join([f"<b>{plotly_text(STAGES[s.part])}</b>", *where, stage_shape(view, s.part, one_head=True)])


def stage_figure(view: BlockView) -> dict:
    """The chosen stage's tensor for the sentence, titled (`stage_title`)."""
    spec = _stage_spec(view)
    spec["layout"]["title"] = _title(stage_title(view))
    return spec


def _stage_spec(view: BlockView) -> dict:
    """The chosen stage's tensor for the sentence: tokens down, features (or keys, or words) across."""
    s, trace, c, row = view.settings, view.trace, view.config, view.row
    tokens, head = list(trace.tokens), s.head - 1
    features = list(range(c.d_model))
    if s.part == "embed":
        return _rows(trace["token_embedding"], tokens, row, x_labels=features, x_title="feature",
                     value_name="value", diverging=True)
    if s.part == "qkv":
        parts = [view.tensor(name)[head] for name in ("q", "k", "v")]
        z = np.concatenate(parts, axis=1)  # (T, 3 · head_dim), q | k | v
        hd = c.head_dim
        return _rows(z, tokens, row, x_labels=[i % hd for i in range(3 * hd)],
                     x_title=f"feature of head {s.head} (d_head = {hd})", value_name="value", diverging=True,
                     separators=(hd, 2 * hd), panel_titles=((hd / 2 - 0.5, "q"), (1.5 * hd - 0.5, "k"),
                                                            (2.5 * hd - 0.5, "v")))
    if s.part in ("scores", "weights"):
        z = view.tensor(s.part)[head]
        return _rows(z, tokens, row, x_labels=tokens, x_title="key (the token looked at)",
                     value_name="score" if s.part == "scores" else "weight", diverging=s.part == "scores")
    if s.part == "heads_out":
        return _rows(view.tensor("heads_out")[head], tokens, row, x_labels=list(range(c.head_dim)),
                     x_title=f"feature of head {s.head}", value_name="value", diverging=True)
    if s.part == "concat":
        hd = c.head_dim
        return _rows(view.tensor("concat"), tokens, row, x_labels=features, x_title="feature", value_name="value",
                     diverging=True, separators=tuple(hd * h for h in range(1, c.n_heads)),
                     panel_titles=tuple((hd * h + hd / 2 - 0.5, f"head {h + 1}") for h in range(c.n_heads)))
    if s.part == "ffn_hidden":
        return _rows(view.tensor("ffn_hidden"), tokens, row, x_labels=list(range(c.d_ff)),
                     x_title=f"hidden unit (d_ff = {c.d_ff}); white: exactly 0 after the ReLU", value_name="value",
                     diverging=True)
    if s.part in ("logits", "probabilities"):
        values = trace[s.part][row]
        order = np.argsort(-values, kind="stable")[:TOP_WORDS]
        probability = s.part == "probabilities"
        figure = bar_chart([view.vocab[i] for i in order], values[order],
                           title="",
                           value_title="probability" if probability else "score (logit)", label_title="word",
                           number_format=".3f" if probability else ".1f", color=OKABE_ITO["blue"],
                           domain=(0.0, 1.25) if probability else None)
        spec = figure.to_plotly_json()
        spec["layout"].update(height=STAGE_HEIGHT, meta={PRESENT_HEIGHT: PRESENT_STAGE_HEIGHT})
        spec["layout"]["yaxis"]["title"] = {"text": f"at “{plotly_text(trace.tokens[row])}”: the {TOP_WORDS} likeliest"}
        return spec
    name = s.part  # a (T, d) tensor of the stream or of the layer: input, norms, W_O's output, adds, FFN out
    return _rows(view.tensor(name) if name in dict(LAYER) else trace[name], tokens, row, x_labels=features,
                 x_title="feature", value_name="value", diverging=True)


def stage_csv(view: BlockView) -> str:
    """The chosen stage's tensor as CSV: a row per token (for the stages inside attention, the chosen head's)."""
    s, trace, tokens = view.settings, view.trace, list(view.trace.tokens)
    head = s.head - 1
    if s.part == "qkv":
        z = np.concatenate([view.tensor(name)[head] for name in ("q", "k", "v")], axis=1)
        columns = [f"{name}{i}" for name in "qkv" for i in range(view.config.head_dim)]
    elif s.part in ("scores", "weights"):
        return matrix_csv(view.tensor(s.part)[head], tokens, tokens, corner="query \\ key")
    else:
        z = (view.tensor("heads_out")[head] if s.part == "heads_out" else
             view.tensor(s.part) if s.part in dict(LAYER) else
             trace["token_embedding" if s.part == "embed" else s.part])
        columns = list(view.vocab) if s.part in ("logits", "probabilities") else [str(i) for i in range(z.shape[1])]
    return matrix_csv(z, tokens, columns, corner="token \\ feature")


@dataclass(frozen=True)
class OneChart:
    """What a section with a single Plotly chart draws."""

    chart: object


def one_chart(spec: dict) -> OneChart:
    return OneChart(frozen(figure_from_spec(spec)))


@dataclass(frozen=True)
class BlockFigures:
    diagram: object
    stage: object


def block_figures(view: BlockView) -> BlockFigures:
    return BlockFigures(frozen(figure_from_spec(diagram(view))), frozen(figure_from_spec(stage_figure(view))))
