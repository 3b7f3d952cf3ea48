"""MiniLM's sentence vectors, similarity and semantic search (issue #30).

The reference is sentence-transformers (a test-only dependency, requirements-test.txt) on the same
shipped files, assembled from its modules the way all-MiniLM-L6-v2 is published (modules.json:
Transformer → Pooling "mean" → Normalize; sentence_bert_config.json: max_seq_length 256).  The
shipped folder has only config.json, tokenizer.json and the weights, so `SentenceTransformer(folder)`
alone would guess the pipeline (mean pooling, but a 512-piece limit and no Normalize module); the
modules below state the published one.  Nothing is fetched: the network is shut while it loads and runs.
"""

import socket
import time

import numpy as np
import pytest
import torch

import explorer
from explorer.training.minilm import SENTENCE_TOKENS, load_minilm
from explorer.training.sentences import cosine_matrix, load_corpus, word_overlap_search, words

st = pytest.importorskip("sentence_transformers", reason="sentence-transformers is pinned in requirements-test.txt")

VARIED = [
    "The animal didn't cross the street because it was too tired.",
    "The animal didn't cross the street because it was too wide.",
    "Hi.",
    "?!",
    "Robots 🤖 dream of electric sheep 🐑🐑",
    "東京 and Москва and Αθήνα",
    "Café crème brûlée, naïve façade — Zürich’s Ångström!",
    "In 1969, 3.14159 × 2 = 6.28318; call +44 (0)20 7946 0958 at 10:45pm",
    " ".join(f"word{i}" for i in range(150)),  # past 256 word pieces: cut, as the reference cuts
    "A transformer reads every word of the sentence at once, while a recurrent network reads one at a time.",
]


@pytest.fixture(scope="module")
def reference():
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    directory = str(load_minilm().model_dir)
    connect = socket.socket.connect

    def refuse(*args, **kwargs):
        raise AssertionError("the reference tried to use the network")

    socket.socket.connect = refuse
    try:
        model = st.SentenceTransformer(
            modules=[Transformer(directory, max_seq_length=SENTENCE_TOKENS), Pooling(384, "mean"), Normalize()],
            device="cpu")
        model.encode(["warm-up"])  # any lazy download would happen here
    finally:
        socket.socket.connect = connect
    return model


def test_mean_pooling_equals_sentence_transformers(reference):
    corpus = load_corpus()
    texts = [*VARIED, *corpus.sentences[::7]]  # batches mixing lengths 3 to 256 pieces
    ours = load_minilm().embed(texts)
    theirs = reference.encode(texts, normalize_embeddings=True, batch_size=16)
    assert ours.dtype == np.float32 and ours.shape == (len(texts), 384)
    assert np.abs(ours - theirs).max() <= 1e-4
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)


def test_padding_does_not_change_a_vector():
    model = load_minilm()
    short, long = "A cat.", "A cat sat on the mat while the dog slept by the fire all afternoon."
    alone = model.embed([short])
    together = model.embed([short, long])
    assert np.abs(together[0] - alone[0]).max() <= 1e-5
    for pooling in ("mean", "cls"):  # one text's vector from its own hidden states, by hand
        hidden = model.hidden(long)
        vector = hidden.mean(axis=0) if pooling == "mean" else hidden[0]
        vector = vector / np.linalg.norm(vector)
        assert np.abs(model.embed([short, long], pooling)[1] - vector).max() <= 1e-5


def test_cls_and_mean_differ():
    model = load_minilm()
    mean, cls = model.embed(VARIED[:4]), model.embed(VARIED[:4], pooling="cls")
    np.testing.assert_allclose(np.linalg.norm(cls, axis=1), 1.0, atol=1e-6)
    cosines = (mean * cls).sum(axis=1)
    assert (cosines < 0.99).all(), cosines


def test_similarity_matrix_is_the_cosine_of_the_vectors():
    model = load_minilm()
    texts = ["The dog bit the man.", "The man bit the dog.", "Stocks fell on Monday."]
    matrix = model.similarity(texts)
    vectors = model.embed(texts).astype(np.float64)
    assert matrix.shape == (3, 3)
    np.testing.assert_allclose(matrix, vectors @ vectors.T, atol=1e-6)
    np.testing.assert_allclose(np.diag(matrix), 1.0, atol=1e-6)
    np.testing.assert_allclose(matrix, matrix.T)
    np.testing.assert_allclose(cosine_matrix(np.array([[3.0, 4.0], [0.0, 2.0]])), [[1, 0.8], [0.8, 1]])


def test_search_order_is_cosine_order():
    model = load_minilm()
    corpus = load_corpus().sentences
    query = "A dog attacked a person."
    results = model.search(query, corpus, k=10)
    cosines = model.embed(corpus).astype(np.float64) @ model.embed([query])[0].astype(np.float64)
    assert [i for i, _ in results] == list(np.argsort(-cosines, kind="stable")[:10])
    np.testing.assert_allclose([s for _, s in results], np.sort(cosines)[::-1][:10], atol=1e-6)
    assert len(model.search(query, corpus[:3], k=50)) == 3  # k beyond the corpus: all of it
    assert model.search(query, corpus, pooling="cls")[0][1] <= 1.0 + 1e-6


def test_corpus_vectors_are_kept_and_cannot_be_changed():
    model = load_minilm()
    corpus = load_corpus().sentences[:20]
    first = model.corpus_vectors(corpus)
    assert model.corpus_vectors(list(corpus)) is first  # kept: a search embeds only its query
    with pytest.raises(ValueError):
        first[0, 0] = 1.0  # shared between sessions


@pytest.mark.parametrize("text", ["", "   \n\t", "\u200b\u200b"])
def test_text_without_word_pieces_is_refused_clearly(text):
    model = load_minilm()
    with pytest.raises(ValueError, match=r"text 1 has no word pieces"):
        model.embed(["fine", text])
    with pytest.raises(ValueError, match=r"the query has no word pieces"):
        model.search(text, ["a sentence"])


@pytest.mark.parametrize("text", ["?!...;", "🤖🐑✨", "東京の天気は晴れです", "Москва — столица России", "x" * 100_000,
                                  "the " * 25_000])
def test_hostile_but_readable_text_gets_a_unit_vector(text):
    model = load_minilm()
    vector = model.embed([text])
    assert vector.shape == (1, 384) and np.isfinite(vector).all()
    assert abs(np.linalg.norm(vector) - 1) < 1e-5
    assert len(model.search(text, ["a sentence", "another one"], k=1)) == 1
    assert len(model.encode(text, SENTENCE_TOKENS).ids) <= SENTENCE_TOKENS  # 100 KB is cut, not run whole


def test_wrong_arguments_get_clear_errors():
    model = load_minilm()
    with pytest.raises(TypeError, match="list of strings"):
        model.embed("one string")
    with pytest.raises(TypeError, match="text 1 is int"):
        model.embed(["a", 3])
    with pytest.raises(ValueError, match="pooling"):
        model.embed(["a"], pooling="max")
    with pytest.raises(ValueError, match="corpus is empty"):
        model.search("a", [])
    with pytest.raises(ValueError, match="k must be"):
        model.search("a", ["b"], k=0)
    assert model.embed([]).shape == (0, 384)


def test_word_overlap_is_jaccard_of_word_sets():
    corpus = ["The dog bit the man.", "The man bit the dog.", "A puppy nipped someone.", "!!!"]
    results = word_overlap_search("the dog bit", corpus, k=4)
    assert results[0][1] == results[1][1] == 3 / 4  # order-blind: both orders score the same
    assert [i for i, _ in results] == [0, 1, 2, 3] and results[2][1] == results[3][1] == 0.0
    assert words("Don't STOP, don't!") == {"don", "t", "stop"}
    with pytest.raises(ValueError, match="no words"):
        word_overlap_search("?!", corpus)
    with pytest.raises(ValueError, match="corpus is empty"):
        word_overlap_search("dog", [])


def test_meaning_beats_spelling_on_a_paraphrase():
    """A paraphrase sharing few words: MiniLM finds it, word overlap does not rank it first."""
    corpus = load_corpus().sentences
    query, target = "The young dog dozed off on the couch.", corpus.index("The puppy fell asleep on the sofa.")
    others = [s for s in corpus if s != query]
    target = others.index(corpus[target])
    assert load_minilm().search(query, others, k=1)[0][0] == target
    assert word_overlap_search(query, others, k=1)[0][0] != target


def test_public_names():
    assert explorer.load_corpus is load_corpus and explorer.word_overlap_search is word_overlap_search


def test_benchmark_corpus_once_then_a_query_on_one_core():
    model, corpus = load_minilm(), load_corpus().sentences
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        started = time.perf_counter()
        model.embed(corpus)
        corpus_seconds = time.perf_counter() - started
        model.corpus_vectors(corpus)  # kept for the searches
        times = []
        for query in ("a dog bit a man", "how long does the bread bake", "Why?"):
            started = time.perf_counter()
            model.search(query, corpus, k=5)
            times.append(time.perf_counter() - started)
    finally:
        torch.set_num_threads(threads)
    print(f"\ncorpus of {len(corpus)} sentences: {corpus_seconds:.2f} s; one query: {max(times) * 1000:.1f} ms")
    assert max(times) <= 0.3, times
    assert corpus_seconds <= 0.3 * len(corpus)  # never slower per sentence than the query target
