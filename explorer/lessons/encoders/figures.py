"""Figures of the lesson "What encoders are for": drawn from its views' arrays (explorer.lessons.encoders.view),
which are read through attributes only (no import of the views layer)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.figures.common import DIVERGING, FONT_SIZE, OKABE_ITO, bar_chart, figure_from_spec, heatmap, plotly_text
from explorer.figures.dependency import dependency_figure, dependency_frame
from explorer.figures.margins import TOOLBAR_PX

__all__ = [
    "CLIP_PERCENTILE",
    "PAIR_KINDS",
    "BiRNNFigures",
    "EncoderFigures",
    "SearchFigures",
    "SimilarityFigures",
    "SinkFigures",
    "birnn_figures",
    "encoder_figures",
    "pooling_chart",
    "pooling_frame",
    "search_figures",
    "similarity_figures",
    "sink_figures",
    "vectors_frame",
]

CLIP_PERCENTILE = 99  # the token-vector map's colours stop at this percentile of |value|
PAIR_KINDS = {"paraphrase": "paraphrase pairs", "order": "same words, other order", "unrelated": "unrelated pairs"}
POOLING_NAMES = {"mean": "mean pooling", "cls": "[CLS]"}
POOLING_COLOURS = {"mean": OKABE_ITO["blue"], "cls": OKABE_ITO["vermillion"]}


def token_labels(tokens: Sequence[str]) -> list[str]:
    """Word pieces as axis labels: a repeated piece gets its position, so every label is distinct."""
    return [f"{token} ({i})" if tokens.count(token) > 1 else token for i, token in enumerate(tokens)]


# --- sentence vectors ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class EncoderFigures:
    vectors: go.Figure | None  # token vectors, then their mean
    to_mean: go.Figure | None  # cosine of each token vector with the mean
    pooling: go.Figure | None  # mean cosine of each sort of pair, by pooling
    table: pd.DataFrame | None  # the pooling report


def vectors_frame(tokens: Sequence[str], hidden: np.ndarray, mean: np.ndarray) -> pd.DataFrame:
    """The token vectors and their mean, one row each (columns: dimension 0 … d − 1)."""
    rows = [*token_labels(tokens), "mean of the rows"]
    return pd.DataFrame(np.vstack([hidden, mean]), index=pd.Index(rows, name="vector"))


def vectors_heatmap(tokens: Sequence[str], hidden: np.ndarray, mean: np.ndarray) -> go.Figure:
    z = np.vstack([hidden, mean])
    limit = float(np.percentile(np.abs(z), CLIP_PERCENTILE))  # a few outlying dimensions would wash out the rest
    labels = [*token_labels(tokens), "→ mean"]
    figure = heatmap(z, x_labels=[str(d) for d in range(z.shape[1])], y_labels=labels, x_title="dimension",
                     y_title="vector", value_name="value", colorscale=DIVERGING, zmin=-limit, zmax=limit,
                     annotate=False, height=max(300, min(620, 110 + 26 * len(labels))))
    ticks = list(range(0, z.shape[1], 96))
    figure.layout.xaxis.update(tickvals=ticks, ticktext=[str(d) for d in ticks], tickangle=0)
    # 384 columns: gaps would stripe the picture.  The rows are their (distinct) labels, so the hover
    # names the vector without a text per cell: thousands of them slowed the browser's drawing of it.
    names = [plotly_text(label) for label in labels]
    figure.data[0].update(xgap=0, y=names, customdata=None,
                          hovertemplate="vector %{y} → dimension %{x}<br>value: %{z:.2f}<extra></extra>")
    figure.layout.yaxis.update(type="category", tickvals=[names[i] for i in figure.layout.yaxis.tickvals])
    figure.layout.shapes = [{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": len(tokens) - 0.5,
                             "y1": len(tokens) - 0.5, "line": {"color": "#222222", "width": 2}}]
    return figure


def pooling_frame(report) -> pd.DataFrame:
    """One row per pooling: mean cosines of each sort of pair, separation and nearest-neighbour rate."""
    rows = []
    for pooling, scores in report.items():
        means = {PAIR_KINDS[k]: getattr(scores, k) for k in PAIR_KINDS}
        rows.append({"sentence vector": POOLING_NAMES[pooling], **means,
                     "gap": scores.paraphrase - scores.unrelated, "P(paraphrase > unrelated)": scores.separation,
                     "nearest is a paraphrase": scores.nearest_is_paraphrase})
    return pd.DataFrame(rows)


def pooling_chart(report) -> go.Figure:
    traces = [{"type": "bar", "name": POOLING_NAMES[pooling], "x": list(PAIR_KINDS.values()),
               "y": [getattr(scores, k) for k in PAIR_KINDS], "marker": {"color": POOLING_COLOURS[pooling]},
               "text": [f"{getattr(scores, k):.2f}" for k in PAIR_KINDS], "textposition": "outside",
               "cliponaxis": False, "hovertemplate": "%{x}: mean cosine %{y:.3f}<extra>" + POOLING_NAMES[pooling]
               + "</extra>"} for pooling, scores in report.items()]
    layout = {"barmode": "group", "font": {"size": FONT_SIZE}, "height": 360,
              "title": {"text": "Mean cosine over the corpus", "font": {"size": FONT_SIZE + 2}},
              # set here, so presentation mode enlarges it too; upright labels on two lines, never slanted
              "xaxis": {"tickfont": {"size": FONT_SIZE}, "tickangle": 0, "tickvals": list(PAIR_KINDS.values()),
                        "ticktext": [label.replace(" ", "<br>", 1) for label in PAIR_KINDS.values()]},
              "yaxis": {"range": [0, 1.12], "title": {"text": "cosine"}, "tickfont": {"size": FONT_SIZE}},
              "legend": {"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 1, "xanchor": "right",
                         "font": {"size": FONT_SIZE}},  # above the bars, clear of the tick labels
              "margin": {"l": 10, "r": 10, "t": 80, "b": 10}, "plot_bgcolor": "rgba(0,0,0,0)"}
    return figure_from_spec({"data": traces, "layout": layout})


def encoder_figures(view) -> EncoderFigures:
    if view.problem is not None:
        return EncoderFigures(None, None, None, None)
    labels = token_labels(view.tokens)
    to_mean = bar_chart(labels, view.to_mean, title="Each token vector against the mean", label_title="token",
                        value_title="cosine to mean", domain=(min(0.0, float(view.to_mean.min())) - 0.1, 1.15))
    vectors = vectors_heatmap(view.tokens, view.hidden, view.mean)
    # side by side; a long text's bars squeeze as its rows do (the toolbar's band above the bars' title)
    to_mean.layout.height = max(vectors.layout.height, 300) + TOOLBAR_PX
    return EncoderFigures(vectors, to_mean, pooling_chart(view.report), pooling_frame(view.report))


# --- similarity ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SimilarityFigures:
    cosine: go.Figure | None
    overlap: go.Figure | None


def similarity_figures(view) -> SimilarityFigures:
    if view.problem is not None:
        return SimilarityFigures(None, None)
    labels = [f"S{i + 1}" for i in range(len(view.sentences))]
    hover = {"x_title": "sentence", "y_title": "sentence", "zmin": 0.0, "zmax": 1.0, "annotate": True}
    name = POOLING_NAMES[view.pooling]
    return SimilarityFigures(
        heatmap(view.cosine, x_labels=labels, y_labels=labels, title=f"MiniLM: cosine ({name})",
                value_name="cosine", **hover),
        heatmap(view.overlap, x_labels=labels, y_labels=labels, title="Word overlap (order-blind)",
                value_name="overlap", **hover),
    )


# --- search --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchFigures:
    meaning: pd.DataFrame | None
    overlap: pd.DataFrame | None
    parts: go.Figure | None  # the best hit's score split over its word pieces (mean pooling)


def search_figures(view) -> SearchFigures:
    if view.problem is not None:
        return SearchFigures(None, None, None)
    # The sentence first after its rank: a narrow column must not hide it behind the numbers.
    meaning = pd.DataFrame({"rank": range(1, len(view.meaning) + 1),
                            "sentence": [view.corpus[i] for i, _ in view.meaning],
                            "cosine": [s for _, s in view.meaning], "word overlap": view.overlap_of_meaning,
                            "topic": [view.topics[i] for i, _ in view.meaning]})
    overlap = pd.DataFrame({"rank": range(1, len(view.overlap) + 1),
                            "sentence": [view.corpus[i] for i, _ in view.overlap],
                            "word overlap": [s for _, s in view.overlap],
                            "topic": [view.topics[i] for i, _ in view.overlap]})
    parts = None
    if view.top_parts is not None:
        parts = bar_chart(token_labels(view.top_tokens), view.top_parts, label_title="word piece",
                          title="What each word piece of the best hit adds to its cosine",
                          value_title="share of the cosine", number_format=".3f", color=OKABE_ITO["blue"])
    return SearchFigures(meaning, overlap, parts)


# --- attention sinks -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SinkFigures:
    cls: go.Figure | None
    sep: go.Figure | None
    frame: pd.DataFrame | None


def sink_figures(view) -> SinkFigures:
    if view.problem is not None:
        return SinkFigures(None, None, None)
    layers = [f"layer {i + 1}" for i in range(view.cls.shape[0])]
    heads = [str(h + 1) for h in range(view.cls.shape[1])]
    common = {"x_labels": heads, "y_labels": layers, "x_title": "head", "y_title": "layer", "zmin": 0.0, "zmax": 1.0,
              "value_name": "weight", "annotate": True, "height": 340}
    frame = pd.DataFrame([{"layer": li + 1, "head": h + 1, "to [CLS]": view.cls[li, h], "to [SEP]": view.sep[li, h],
                           "even spread": view.uniform}
                          for li in range(view.cls.shape[0]) for h in range(view.cls.shape[1])])
    return SinkFigures(heatmap(view.cls, title="Mean attention weight to [CLS]", **common),
                       heatmap(view.sep, title="Mean attention weight to [SEP]", **common), frame)


# --- the bidirectional RNN -----------------------------------------------------------------------------


@dataclass(frozen=True)
class BiRNNFigures:
    figure: go.Figure
    frame: pd.DataFrame  # the three matrices, long form
    paths: pd.DataFrame  # the path lengths, long form (inf: no path)


def birnn_figures(view) -> BiRNNFigures:
    titles = {"rnn": "one-way loop", "birnn": "BiRNN", "unmasked": "unmasked attention"}
    T = next(iter(view.paths.values())).shape[0]
    t, s = np.meshgrid(np.arange(T), np.arange(T), indexing="ij")
    paths = pd.DataFrame({"output t": t.ravel(), "input s": s.ravel(),
                          **{f"steps, {titles[k]}": m.ravel() for k, m in view.paths.items()}})
    return BiRNNFigures(dependency_figure(view.panels, height=420), dependency_frame(view.panels), paths)
