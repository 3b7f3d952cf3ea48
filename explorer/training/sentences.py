"""Sentence vectors from an encoder's token vectors, and the project's own corpus to search.

An encoder gives one vector per word piece; a sentence vector pools them.  Two poolings:

    mean   the average of the last hidden states of the real tokens ([CLS] and [SEP] included,
           padding excluded): all-MiniLM-L6-v2 was trained with it (sentence-transformers' Pooling
           module, mode "mean"), so it is the model's published sentence vector
    cls    the last hidden state of [CLS] alone: BERT's classifier input, never trained here

Either is then L2-normalised, so a dot product is a cosine.  `explorer.training.minilm.MiniLM.embed`
runs the model and calls `pool`; this module has no model of its own (it reads arrays).

The corpus (data/encoder-corpus.json) is a few hundred short sentences written for this project, in
groups: "paraphrase" (the same meaning in other words), "order" (the same words in another order:
"The dog bit the man." / "The man bit the dog."), "contrast" (one word changes what "it" refers to:
the lecture's "too tired" / "too wide"), "single" (unrelated sentences on a topic).

`word_overlap_search` is the baseline that compares spelling, not meaning: Jaccard similarity of
the lowercase word sets.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..caching import loaded

__all__ = [
    "CORPUS_FILE",
    "GROUP_KINDS",
    "POOLINGS",
    "Corpus",
    "cosine_matrix",
    "load_corpus",
    "pool",
    "rank",
    "word_overlap_search",
    "words",
]

CORPUS_FILE = Path(__file__).parent / "data" / "encoder-corpus.json"
POOLINGS = ("mean", "cls")
GROUP_KINDS = ("paraphrase", "order", "contrast", "single")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Corpus:
    """The sentences in file order; sentence i belongs to group[i], whose kind and topic are
    kinds[group[i]] and topics[group[i]]."""

    sentences: tuple[str, ...]
    group: tuple[int, ...]
    kinds: tuple[str, ...]
    topics: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.sentences)

    def members(self, kind: str) -> list[list[int]]:
        """The sentence indices of every group of this kind, group by group."""
        if kind not in GROUP_KINDS:
            raise ValueError(f"unknown group kind {kind!r}; expected one of {GROUP_KINDS}")
        found: dict[int, list[int]] = {}
        for i, g in enumerate(self.group):
            if self.kinds[g] == kind:
                found.setdefault(g, []).append(i)
        return list(found.values())

    def topic_of(self, i: int) -> str:
        return self.topics[self.group[i]]


@loaded(2)
def load_corpus(path: Path | str = CORPUS_FILE) -> Corpus:
    """The shipped corpus (or another file of the same form), read once per process."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    sentences, group, kinds, topics = [], [], [], []
    for g, entry in enumerate(doc["groups"]):
        if entry["kind"] not in GROUP_KINDS:
            raise ValueError(f"{path}: group {g} has an unknown kind {entry['kind']!r}")
        kinds.append(entry["kind"])
        topics.append(entry["topic"])
        sentences += entry["sentences"]
        group += [g] * len(entry["sentences"])
    if len(set(sentences)) != len(sentences):
        raise ValueError(f"{path}: a sentence appears twice")
    return Corpus(tuple(sentences), tuple(group), tuple(kinds), tuple(topics))


def pool(hidden: np.ndarray, valid: np.ndarray, pooling: str) -> np.ndarray:
    """(B, T, d) last hidden states and (B, T) booleans (False = padding) → (B, d) unit vectors, float32."""
    if pooling == "mean":
        weights = valid.astype(hidden.dtype)[..., None]
        vectors = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
    elif pooling == "cls":
        vectors = hidden[:, 0]
    else:
        raise ValueError(f"pooling must be one of {POOLINGS}, not {pooling!r}")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


def cosine_matrix(vectors: np.ndarray) -> np.ndarray:
    """(n, d) vectors → (n, n) cosine similarities, float64 (vectors of zero length score 0)."""
    v = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    unit = v / np.where(norms > 0, norms, 1.0)
    return np.clip(unit @ unit.T, -1.0, 1.0)


def rank(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The k best (index, score) pairs (all of them if there are fewer), best first; ties keep the
    corpus order."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a whole number ≥ 1, not {k!r}")
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")[:k]
    return [(int(i), float(scores[i])) for i in order]


def words(text: str) -> frozenset[str]:
    """The lowercase words of a text (runs of letters and digits of any script)."""
    return frozenset(_WORD.findall(text.lower()))


def word_overlap_search(query: str, corpus, k: int = 5) -> list[tuple[int, float]]:
    """The baseline: [(index, Jaccard similarity of the word sets), …] for the k best sentences.

    Raises ValueError for an empty corpus and for a query with no words (empty, only spaces,
    punctuation or emoji): there is nothing to compare."""
    if not isinstance(query, str):
        raise TypeError(f"the query must be text, not {type(query).__name__}")
    sentences = list(corpus)
    if not sentences:
        raise ValueError("the corpus is empty: there is nothing to search")
    asked = words(query)
    if not asked:
        raise ValueError("the query has no words (letters or digits), so word overlap has nothing to compare")
    scores = np.array([len(asked & w) / len(asked | w) if w else 0.0 for w in map(words, sentences)])
    return rank(scores, k)
