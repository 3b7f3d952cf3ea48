"""The block lesson's section on a real embedding table: all-MiniLM-L6-v2's token embeddings, the nearest word
pieces of a piece and a 2-D picture of typed words (explorer.analysis.embeddings).  Its settings, view, figure
and claims."""

from __future__ import annotations

import types
from dataclasses import dataclass

from explorer.analysis.embeddings import (
    MAX_WORD_CHARS,
    MAX_WORDS,
    WordMap,
    nearest_pieces,
    project_words,
    token_embeddings,
)
from explorer.figures.common import FONT_SIZE, OKABE_ITO, plotly_text
from explorer.figures.margins import TOOLBAR_PX
from explorer.kit.claims import Claim
from explorer.kit.settings import setting

from .figures import OneChart, one_chart

__all__ = ["EMBEDDING_CLAIMS", "EmbeddingSettings", "EmbeddingView", "embedding_figures", "embedding_problem",
           "embedding_view"]

DEFAULT_PIECE = "king"
DEFAULT_WORDS = "king queen man woman prince princess paris france berlin germany dog cat horse"
NEIGHBOURS = 8


@dataclass(frozen=True)
class EmbeddingSettings:
    piece: str = setting(DEFAULT_PIECE, "A word piece", url="piece", max_chars=MAX_WORD_CHARS,
                         help="Its nearest word pieces in MiniLM's embedding table, by cosine similarity.")
    words: str = setting(DEFAULT_WORDS, "Words to place", url="words", max_chars=MAX_WORDS * 12,
                         help=f"Up to {MAX_WORDS} words, separated by spaces.")


@dataclass(frozen=True)
class EmbeddingView:
    settings: EmbeddingSettings
    table: tuple[int, int]  # (word pieces, features) of MiniLM's token embedding table
    piece: str
    neighbours: tuple[tuple[str, float], ...]
    words: WordMap
    problems: tuple[str, ...]


def _read(settings: EmbeddingSettings) -> tuple[str, tuple[str, ...], list[str]]:
    """The piece and words to use, and what could not be used (the defaults are used instead)."""
    problems, piece, words = [], settings.piece.strip().lower(), tuple(settings.words.split())
    try:
        nearest_pieces(piece, 1)
    except (ValueError, TypeError) as problem:
        problems.append(f"the word piece: {problem}; showing “{DEFAULT_PIECE}”")
        piece = DEFAULT_PIECE
    try:
        if len(words) < 3:
            raise ValueError("give at least 3 words to place")
        project_words(list(words))
    except (ValueError, TypeError) as problem:
        problems.append(f"the words: {problem}; showing the default words")
        words = tuple(DEFAULT_WORDS.split())
    return piece, words, problems


def embedding_problem(settings: EmbeddingSettings) -> str | None:
    problems = _read(settings)[2]
    return ("; ".join(problems) + ".") if problems else None


def embedding_view(settings: EmbeddingSettings) -> EmbeddingView:
    piece, words, problems = _read(settings)
    return EmbeddingView(settings, tuple(token_embeddings().shape), piece,
                         tuple(nearest_pieces(piece, NEIGHBOURS)), project_words(list(words)), tuple(problems))


def word_map_figure(view: EmbeddingView) -> dict:
    """The words on the first two principal axes of their vectors, each labelled."""
    m = view.words
    data = [{"type": "scatter", "x": m.coords[:, 0].tolist(), "y": m.coords[:, 1].tolist(), "mode": "markers+text",
             "text": [plotly_text(w) for w in m.words], "textposition": "top center",
             "textfont": {"size": FONT_SIZE}, "marker": {"size": 11, "color": OKABE_ITO["blue"]},
             "customdata": [" ".join(p) for p in m.pieces],
             "hovertemplate": "%{text} (pieces: %{customdata})<extra></extra>"}]
    kept = [f"{share:.0%}" for share in m.explained]
    layout = {"height": 420, "margin": {"l": 10, "r": 10, "t": TOOLBAR_PX + 6, "b": 10}, "font": {"size": FONT_SIZE},
              "xaxis": {"title": {"text": f"first principal axis ({kept[0]} of the spread)"}, "zeroline": False},
              "yaxis": {"title": {"text": f"second ({kept[1]})"}, "zeroline": False},
              "showlegend": False, "plot_bgcolor": "rgba(0,0,0,0)"}
    return {"data": data, "layout": layout}


def embedding_figures(view: EmbeddingView) -> OneChart:
    return one_chart(word_map_figure(view))


def _values(shown) -> dict:
    view = shown.view
    best, cosine = view.neighbours[0]
    return {"pieces": view.table[0], "d": view.table[1], "piece": view.piece, "nearest": best, "cosine": cosine,
            "kept": float(view.words.explained.sum()), "n_words": len(view.words.words)}


EMBEDDING_CLAIMS = types.MappingProxyType({
    # the picture keeps part of the spread only: it says how much
    "table": Claim(lambda shown: 0 < _values(shown)["kept"] <= 1 and _values(shown)["d"] < _values(shown)["pieces"],
                   _values),
})
