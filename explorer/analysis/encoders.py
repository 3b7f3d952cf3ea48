"""What an encoder's outputs are good for, measured on all-MiniLM-L6-v2 and the project's corpus.

* `pooling_report`: how well each sentence vector ("mean", the model's published one, and "cls")
  tells paraphrases from unrelated sentences on the shipped corpus (explorer/training/sentences.py):
  mean cosines of paraphrase, word-order and unrelated pairs, the chance that a paraphrase pair
  scores above an unrelated pair, and how often a sentence's nearest neighbour is its paraphrase.
* `attention_sinks`: the mean attention weight every token gives to [CLS] and to [SEP], per layer
  and head, beside the weight an even spread would give.  Heads with nothing to look for park
  their attention on these tokens (an "attention sink"): a large weight there is not a finding
  about the sentence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..caching import bounded_cache
from ..training.minilm import SENTENCE_TOKENS, MiniLM, load_minilm
from ..training.sentences import POOLINGS, Corpus, cosine_matrix, load_corpus

__all__ = ["AttentionSinks", "PoolingScores", "attention_sinks", "pair_indices", "pooling_report"]

SINK_BATCH = 16


@dataclass(frozen=True)
class PoolingScores:
    """One pooling's sentence vectors on a corpus (cosines are of the L2-normalised vectors)."""

    pooling: str
    paraphrase: float  # mean cosine of two sentences of one paraphrase group
    order: float  # mean cosine of the same words in another order ("order" groups)
    unrelated: float  # mean cosine of two sentences on different topics
    separation: float  # P(cosine of a paraphrase pair > cosine of an unrelated pair), ties count ½
    nearest_is_paraphrase: float  # share of paraphrase sentences whose nearest other sentence is one
    pairs: dict[str, int]  # how many pairs of each sort were compared


def pair_indices(corpus: Corpus) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(i, j) with i < j for "paraphrase" pairs (one paraphrase group), "order" pairs (one order group)
    and "unrelated" pairs (different topics)."""
    n = len(corpus)
    i, j = np.triu_indices(n, 1)
    group = np.array(corpus.group)
    topic = np.array([corpus.topic_of(k) for k in range(n)])
    kind = np.array(corpus.kinds)[group]
    same_group = group[i] == group[j]
    found = {name: same_group & (kind[i] == name) for name in ("paraphrase", "order")}
    found["unrelated"] = topic[i] != topic[j]
    return {name: (i[mask], j[mask]) for name, mask in found.items()}


def _separation(positive: np.ndarray, negative: np.ndarray) -> float:
    """P(a random positive > a random negative), ties counting ½ (the ROC AUC), in O(n log n)."""
    negative = np.sort(negative)
    below = np.searchsorted(negative, positive, side="left")
    at_most = np.searchsorted(negative, positive, side="right")
    return float(((below + at_most) / 2).sum() / (len(positive) * len(negative)))


def scores_of(vectors: np.ndarray, corpus: Corpus, pooling: str) -> PoolingScores:
    """The PoolingScores of one set of sentence vectors (row k = corpus sentence k)."""
    cos = cosine_matrix(vectors)
    pairs = pair_indices(corpus)
    if not all(len(i) for i, _ in pairs.values()):
        raise ValueError("the corpus needs paraphrase and word-order groups, and more than one topic")
    values = {name: cos[i, j] for name, (i, j) in pairs.items()}
    members = [m for g in corpus.members("paraphrase") for m in g]
    np.fill_diagonal(cos, -np.inf)
    nearest = cos[members].argmax(axis=1)
    group = np.array(corpus.group)
    hits = group[nearest] == group[members]
    return PoolingScores(pooling, float(values["paraphrase"].mean()), float(values["order"].mean()),
                         float(values["unrelated"].mean()), _separation(values["paraphrase"], values["unrelated"]),
                         float(hits.mean()), {name: len(v) for name, v in values.items()})


@bounded_cache(4, max_bytes=1_000_000)
def pooling_report(corpus: Corpus | None = None) -> dict[str, PoolingScores]:
    """"mean" and "cls" sentence vectors of MiniLM on the corpus (default: the shipped one), scored."""
    corpus = corpus or load_corpus()
    model = load_minilm()
    return {p: scores_of(model.corpus_vectors(corpus.sentences, p), corpus, p) for p in POOLINGS}


@dataclass(frozen=True)
class AttentionSinks:
    """Mean attention weight to [CLS] and to [SEP], (layers, heads), over every token of every text.
    uniform: the mean weight one key gets if each token spread its attention evenly (mean of 1/T)."""

    cls: np.ndarray
    sep: np.ndarray
    uniform: float
    texts: int
    rows: int


def _sink_sums(model: MiniLM, ids: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Summed over every real token of a batch: weight to [CLS], weight to [SEP], (layers, heads)."""
    width = max(map(len, ids))
    batch = torch.zeros(len(ids), width, dtype=torch.long)
    valid = torch.zeros(len(ids), width, dtype=torch.bool)
    for row, one in enumerate(ids):
        batch[row, :len(one)], valid[row, :len(one)] = torch.tensor(one), True
    _, weights = model.run(batch, valid)  # (B, layers, heads, T, T)
    weights = weights.numpy()
    cls = sep = 0.0
    for row, one in enumerate(ids):
        n = len(one)
        cls = cls + weights[row, :, :, :n, 0].sum(axis=-1)
        sep = sep + weights[row, :, :, :n, n - 1].sum(axis=-1)
    return cls, sep


@bounded_cache(4, max_bytes=1_000_000)
def attention_sinks(texts: tuple[str, ...] | None = None) -> AttentionSinks:
    """`AttentionSinks` of MiniLM on the texts (default: the shipped corpus), each cut to 256 pieces."""
    model = load_minilm()
    texts = load_corpus().sentences if texts is None else tuple(texts)
    encoded = [model.encode(t, SENTENCE_TOKENS).ids for t in texts]
    if not encoded:
        raise ValueError("attention sinks need at least one text")
    layers, heads = model.config.n_layers, model.config.n_heads
    cls, sep = np.zeros((layers, heads)), np.zeros((layers, heads))
    ordered = sorted(encoded, key=len)
    for start in range(0, len(ordered), SINK_BATCH):
        c, s = _sink_sums(model, ordered[start:start + SINK_BATCH])
        cls, sep = cls + c, sep + s
    rows = sum(map(len, encoded))
    uniform = len(encoded) / rows  # each text's T rows give one key 1/T each: T · 1/T = 1 per text
    cls, sep = cls / rows, sep / rows
    cls.setflags(write=False)
    sep.setflags(write=False)
    return AttentionSinks(cls, sep, uniform, len(encoded), rows)
