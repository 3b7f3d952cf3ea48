"""Word embeddings: MiniLM's token embedding table, its nearest neighbours and a 2-D map of words.

The first thing a transformer does with a word piece is look up its row of the token embedding
table: all-MiniLM-L6-v2 has one row of 384 numbers for each of its 30,522 word pieces (a one-hot
vector of 30,522 times the table picks that row).  Training placed the rows so that pieces used
alike end up with rows pointing alike.  Two ways to look at that:

    nearest_pieces(piece, k)   the k word pieces whose rows have the highest cosine similarity with
                               the piece's row (the piece itself left out; so are the 999 reserved
                               entries in brackets, [PAD], [CLS], [unused0] …, which are not text)
    project_words(words)       each word's vector — its row, or for a word the tokenizer splits into
                               several pieces, the mean of its pieces' rows — and a 2-D picture of
                               them by PCA (centred on the words' mean), with the share of the
                               words' variance the two axes keep, so a page can say how much of the
                               picture is left out

These are the rows the model adds its position vectors to (explorer.training.minilm), before any
layer: a word's vector here is the same whatever sentence it stands in.

The table is the loaded model's own parameter, read without copying; only the rows' lengths
(30,522 numbers) are kept besides it, once per process and never changed
(explorer.training.minilm.minilm_token_table, beside the model it reads): a cosine is the dot
product divided by the two lengths, so a normalised copy of the table (47 MB more in every server
process) is not needed.  Bounds: at most MAX_NEIGHBOURS neighbours, MAX_WORDS
words of at most MAX_WORD_CHARS characters each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..training.minilm import load_minilm, minilm_token_table

__all__ = [
    "MAX_NEIGHBOURS",
    "MAX_WORDS",
    "MAX_WORD_CHARS",
    "MIN_WORDS",
    "WordMap",
    "nearest_pieces",
    "project_words",
    "token_embeddings",
]

MAX_NEIGHBOURS = 100
MIN_WORDS = 3  # two words would leave the second axis empty
MAX_WORDS = 40
MAX_WORD_CHARS = 40
# Candidates re-scored in float64 beyond the k asked: float32's rounding (about 1e-6 in a cosine) could
# only change which k come first if more than RESCORE pieces tied within it.
RESCORE = 32


def token_embeddings() -> np.ndarray:
    """MiniLM's token embedding table, (30522, 384) float32, read-only: row i is word piece i's vector
    (the loaded model's own parameter, not a copy)."""
    return minilm_token_table().rows


def _piece_id(piece: str) -> int:
    if not isinstance(piece, str):
        raise TypeError(f"a word piece is text, not {type(piece).__name__}")
    if not piece.strip():
        raise ValueError("give a word piece: the text is empty")
    model = load_minilm()
    found = model.tokenizer.token_to_id(piece)
    if found is None:
        hint = ""
        if len(piece) <= MAX_WORD_CHARS:
            split = model.tokenizer.encode(piece, add_special_tokens=False).tokens
            if model.tokenizer.token_to_id(piece.lower()) is not None:
                hint = f"; the vocabulary is lowercase: try {piece.lower()!r}"
            elif split:
                hint = f"; the tokenizer reads it as {len(split)} pieces: {split}"
        raise ValueError(f"{piece!r} is not one of MiniLM's {len(minilm_token_table().pieces):,} word pieces{hint}")
    if minilm_token_table().reserved[found]:
        raise ValueError(f"{piece!r} is a reserved entry of the vocabulary, not text: it has no neighbours to show")
    return int(found)


def nearest_pieces(piece: str, k: int = 10) -> list[tuple[str, float]]:
    """The k word pieces nearest to `piece` by the cosine similarity of their rows of the token
    embedding table: [(piece, cosine), …], highest first (ties: lower id first).  The piece itself
    and the reserved bracketed entries are never among them.  "##" marks a piece that continues a word
    ("##ing").  ValueError for a piece not in the vocabulary (saying how the tokenizer would split
    it), for a reserved entry, and for k outside 1 … MAX_NEIGHBOURS."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= MAX_NEIGHBOURS:
        raise ValueError(f"k must be a whole number from 1 to {MAX_NEIGHBOURS}, not {k!r}")
    table, asked = minilm_token_table(), _piece_id(piece)
    rough = (table.rows @ table.rows[asked]).astype(np.float64) / (table.lengths * table.lengths[asked])
    rough[table.reserved] = -np.inf
    rough[asked] = -np.inf
    candidates = np.argpartition(-rough, k + RESCORE)[:k + RESCORE]
    exact = (table.rows[candidates].astype(np.float64) @ table.rows[asked].astype(np.float64)
             / (table.lengths[candidates] * table.lengths[asked]))
    order = np.lexsort((candidates, -exact))[:k]  # by cosine, then by id
    return [(table.pieces[candidates[i]], float(exact[i])) for i in order]


@dataclass(frozen=True)
class WordMap:
    """Words as MiniLM's embedding table places them, and a 2-D picture of them (arrays read-only).

    words:     the words as given (spaces around them removed)
    pieces:    the word pieces each is read as ("##" marks a continuation)
    vectors:   (n, 384) float64: each word's row of the table, the mean of its pieces' rows if several
    coords:    (n, 2) the words on the first two principal axes of the vectors, centred on their mean
    axes:      (2, 384) those axes, unit vectors (coords = (vectors − mean) @ axes.T)
    explained: (2,) the share of the words' total variance along each axis (the first ≥ the second);
               their sum is how much of the spread the picture keeps
    """

    words: tuple[str, ...]
    pieces: tuple[tuple[str, ...], ...]
    vectors: np.ndarray
    coords: np.ndarray
    axes: np.ndarray
    explained: np.ndarray


def _word_pieces(words: Sequence[str]) -> tuple[tuple[str, ...], list[tuple[str, ...]], list[list[int]]]:
    """The words, stripped, with their pieces and ids; ValueError/TypeError saying what is wrong."""
    if isinstance(words, str):
        raise TypeError("words must be a list of words, not one string (split it: text.split())")
    words = tuple(words)
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        raise ValueError(f"give from {MIN_WORDS} to {MAX_WORDS} words, not {len(words)}")
    tokenizer, cleaned, pieces, ids, seen = load_minilm().tokenizer, [], [], [], {}
    for i, word in enumerate(words):
        if not isinstance(word, str):
            raise TypeError(f"word {i + 1} is {type(word).__name__}, not text")
        word = word.strip()
        if not word or any(c.isspace() for c in word):
            raise ValueError(f"word {i + 1} ({word!r}) must be one word: not empty, no spaces inside")
        if len(word) > MAX_WORD_CHARS:
            raise ValueError(f"word {i + 1} is {len(word)} characters long; at most {MAX_WORD_CHARS}")
        encoding = tokenizer.encode(word, add_special_tokens=False)
        if not encoding.ids:
            raise ValueError(f"{word!r} has nothing MiniLM reads (only invisible characters)")
        if "[UNK]" in encoding.tokens:
            raise ValueError(f"{word!r} has characters MiniLM has no word piece for (it would read [UNK])")
        key = tuple(encoding.ids)
        if key in seen:
            raise ValueError(f"{word!r} and {seen[key]!r} are the same word pieces to MiniLM (it lowercases "
                             f"and drops accents): give each word once")
        seen[key] = word
        cleaned.append(word)
        pieces.append(tuple(encoding.tokens))
        ids.append(list(encoding.ids))
    return tuple(cleaned), pieces, ids


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def project_words(words: Sequence[str]) -> WordMap:
    """Each word's vector in MiniLM's token embedding table and their 2-D picture by PCA.

    A word is looked up as the tokenizer reads it (lowercased, accents dropped, split into word
    pieces); a word of several pieces gets the mean of its pieces' rows.  PCA: the vectors centred on
    their mean, their singular value decomposition, the first two right singular vectors as the axes
    (each signed so that its largest coordinate among the words is positive, so the picture does not
    flip between calls).  MIN_WORDS to MAX_WORDS words, each one word of at most MAX_WORD_CHARS
    characters, every word distinct as MiniLM reads it; ValueError (TypeError for what is not text)
    otherwise."""
    cleaned, pieces, ids = _word_pieces(words)
    rows = minilm_token_table().rows
    vectors = np.stack([rows[i].astype(np.float64).mean(axis=0) for i in ids])
    centred = vectors - vectors.mean(axis=0)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    signs = np.sign(u[np.argmax(np.abs(u[:, :2]), axis=0), [0, 1]])
    signs[signs == 0] = 1
    coords = u[:, :2] * s[:2] * signs
    axes = vt[:2] * signs[:, None]
    explained = s[:2] ** 2 / (s ** 2).sum()
    return WordMap(cleaned, tuple(pieces), _read_only(vectors), _read_only(coords), _read_only(axes),
                   _read_only(explained))
