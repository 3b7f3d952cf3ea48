"""explorer.analysis.encoders: the [CLS]-against-mean measurement and the attention sinks, each against
a direct computation from the model's own outputs; and the shipped corpus's form."""

import itertools
import re

import numpy as np
import pytest

import explorer
from explorer.analysis.encoders import attention_sinks, pair_indices, pooling_report, scores_of
from explorer.training.minilm import load_minilm
from explorer.training.sentences import GROUP_KINDS, Corpus, load_corpus

TINY = Corpus(
    sentences=("The dog slept.", "The puppy was asleep.", "A dog napped.", "It rained all day.",
               "There was rain the whole day.", "The cat saw the bird.", "The bird saw the cat.",
               "Stocks fell sharply.", "The oven is hot."),
    group=(0, 0, 0, 1, 1, 2, 2, 3, 4),
    kinds=("paraphrase", "paraphrase", "order", "single", "single"),
    topics=("animals", "weather", "animals", "money", "food"),
)


def brute_force(vectors: np.ndarray, corpus: Corpus) -> dict[str, float]:
    """The same scores by loops over pairs, from the definitions in PoolingScores."""
    n = len(corpus)
    cos = lambda a, b: float(vectors[a] @ vectors[b] / np.linalg.norm(vectors[a]) / np.linalg.norm(vectors[b]))  # noqa: E731
    kind = lambda k: corpus.kinds[corpus.group[k]]  # noqa: E731
    para, order, unrelated = [], [], []
    for a, b in itertools.combinations(range(n), 2):
        if corpus.group[a] == corpus.group[b] and kind(a) == "paraphrase":
            para.append(cos(a, b))
        if corpus.group[a] == corpus.group[b] and kind(a) == "order":
            order.append(cos(a, b))
        if corpus.topic_of(a) != corpus.topic_of(b):
            unrelated.append(cos(a, b))
    wins = [1.0 if p > u else 0.5 if p == u else 0.0 for p in para for u in unrelated]
    members = [k for k in range(n) if kind(k) == "paraphrase"]
    nearest = [max((b for b in range(n) if b != a), key=lambda b, a=a: cos(a, b)) for a in members]
    hits = [corpus.group[b] == corpus.group[a] for a, b in zip(members, nearest, strict=True)]
    return {"paraphrase": np.mean(para), "order": np.mean(order), "unrelated": np.mean(unrelated),
            "separation": np.mean(wins), "nearest_is_paraphrase": np.mean(hits)}


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_pooling_scores_match_a_brute_force_count(pooling):
    vectors = load_minilm().embed(TINY.sentences, pooling)
    scores = scores_of(vectors, TINY, pooling)
    expected = brute_force(vectors.astype(np.float64), TINY)
    for name, value in expected.items():
        assert getattr(scores, name) == pytest.approx(value, abs=1e-9), name
    assert scores.pairs == {"paraphrase": 4, "order": 1, "unrelated": 36 - 10 - 1}  # less same-topic pairs


def test_separation_counts_ties_as_half():
    corpus = Corpus(("a", "b", "c", "d"), (0, 0, 1, 2), ("paraphrase", "order", "single"), ("x", "y", "z"))
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])  # cd are orthogonal to ab
    with pytest.raises(ValueError, match="word-order"):
        scores_of(vectors, corpus, "mean")  # the order group has one sentence: no order pair
    corpus = Corpus(("a", "b", "c", "d"), (0, 0, 1, 1), ("paraphrase", "order"), ("x", "y"))
    scores = scores_of(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]), corpus, "mean")
    assert scores.paraphrase == 0.0 and scores.unrelated == 0.5 and scores.separation == 0.25


def test_the_shipped_corpus_report_is_the_models_measurement():
    report = pooling_report()
    assert set(report) == {"mean", "cls"}
    corpus = load_corpus()
    for pooling, scores in report.items():
        vectors = load_minilm().embed(corpus.sentences, pooling)
        assert scores == scores_of(vectors, corpus, pooling)
        assert 0 <= scores.separation <= 1 and 0 <= scores.nearest_is_paraphrase <= 1
    mean, cls = report["mean"], report["cls"]
    print(f"\nmean: {mean}\ncls:  {cls}")
    assert mean != cls


def test_attention_sinks_match_each_texts_own_attention():
    texts = ("The dog slept.", "It rained all day long in the city.", "Why?")
    sinks = attention_sinks(texts)
    model = load_minilm()
    cls_sum, sep_sum, rows = 0.0, 0.0, 0
    for text in texts:
        weights = model.attention(text)  # (6, 12, T, T), each text run alone, no padding
        cls_sum = cls_sum + weights[..., 0].sum(axis=-1)
        sep_sum = sep_sum + weights[..., -1].sum(axis=-1)
        rows += weights.shape[-1]
    assert sinks.cls.shape == sinks.sep.shape == (6, 12)
    np.testing.assert_allclose(sinks.cls, cls_sum / rows, atol=1e-5)
    np.testing.assert_allclose(sinks.sep, sep_sum / rows, atol=1e-5)
    assert sinks.rows == rows and sinks.texts == 3
    assert sinks.uniform == pytest.approx(3 / rows)
    assert not sinks.cls.flags.writeable
    with pytest.raises(ValueError, match="at least one text"):
        attention_sinks(())


def test_pair_indices_on_the_shipped_corpus():
    corpus = load_corpus()
    pairs = pair_indices(corpus)
    assert len(corpus) >= 300 and set(corpus.kinds) == set(GROUP_KINDS)
    for i, j in zip(*pairs["order"], strict=True):  # the same words in another order
        assert sorted(re.findall(r"\w+", corpus.sentences[i].lower())) == \
            sorted(re.findall(r"\w+", corpus.sentences[j].lower()))
    assert "The dog bit the man." in corpus.sentences and "The man bit the dog." in corpus.sentences
    tired = corpus.sentences.index("The animal didn't cross the street because it was too tired.")
    assert corpus.sentences[tired + 1].endswith("too wide.")
    assert len(pairs["paraphrase"][0]) >= 100


def test_public_names():
    assert explorer.pooling_report is pooling_report and explorer.attention_sinks is attention_sinks
