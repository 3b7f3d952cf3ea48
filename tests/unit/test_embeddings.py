"""explorer.analysis.embeddings against sentence-transformers' own model and brute-force numpy.

The reference model is sentence-transformers' Transformer module on the shipped files (loaded as in
tests/unit/test_sentence_vectors.py, with the network shut): its BertModel's word_embeddings weight
is the table, its Hugging Face tokenizer splits the words.  Neighbours are checked against a cosine
over the whole table in float64; the PCA against numpy's SVD (up to sign) and the eigenvalues of the
words' covariance.
"""

import socket

import numpy as np
import pytest
import torch

from explorer.analysis.embeddings import (
    MAX_NEIGHBOURS,
    MAX_WORD_CHARS,
    MAX_WORDS,
    nearest_pieces,
    project_words,
    token_embeddings,
)
from explorer.training.minilm import load_minilm, minilm_token_table

st = pytest.importorskip("sentence_transformers", reason="sentence-transformers is pinned in requirements-test.txt")

PIECES = ["cat", "king", "##ing", "paris", "run", "3", "the", "happy"]
WORDS = ["king", "queen", "man", "woman", "Paris", "France", "unbelievably", "running", "cat"]


@pytest.fixture(scope="module")
def reference():
    from sentence_transformers.sentence_transformer.modules import Transformer

    connect = socket.socket.connect

    def refuse(*args, **kwargs):
        raise AssertionError("the reference tried to use the network")

    socket.socket.connect = refuse
    try:
        module = Transformer(str(load_minilm().model_dir))
    finally:
        socket.socket.connect = connect
    table = module.auto_model.embeddings.word_embeddings.weight.detach().double().numpy()
    return table, module.tokenizer


def test_the_table_is_sentence_transformers_word_embeddings(reference):
    table = token_embeddings()
    assert table.shape == (30522, 384) and table.dtype == np.float32
    np.testing.assert_array_equal(table.astype(np.float64), reference[0])
    assert not table.flags.writeable
    assert np.shares_memory(table, load_minilm().encoder.embed.weight.detach().numpy())  # no copy kept


def _brute_force(table: np.ndarray, vocab: list[str], piece: str, k: int) -> list[tuple[str, float]]:
    asked = vocab.index(piece)
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    cosines = unit @ unit[asked]
    allowed = [i for i, p in enumerate(vocab) if i != asked and not (p.startswith("[") and p.endswith("]")
                                                                     and len(p) > 2)]
    best = sorted(allowed, key=lambda i: (-cosines[i], i))[:k]
    return [(vocab[i], float(cosines[i])) for i in best]


@pytest.mark.parametrize("piece", PIECES)
def test_neighbours_are_the_brute_force_cosine_ranking(reference, piece):
    table, tokenizer = reference
    vocab = tokenizer.convert_ids_to_tokens(list(range(table.shape[0])))
    for k in (1, 10, MAX_NEIGHBOURS):
        ours = nearest_pieces(piece, k)
        theirs = _brute_force(table, vocab, piece, k)
        assert [p for p, _ in ours] == [p for p, _ in theirs]
        np.testing.assert_allclose([c for _, c in ours], [c for _, c in theirs], atol=1e-12, rtol=0)


def test_neighbours_read_as_words():
    """A sanity check a reader can see: the nearest piece to "cat" is "cats"; to "king", "queen" is among the 5."""
    assert nearest_pieces("cat", 1)[0][0] == "cats"
    assert "queen" in [p for p, _ in nearest_pieces("king", 5)]


@pytest.mark.parametrize(("piece", "k", "error", "message"), [
    ("Cat", 5, ValueError, "lowercase: try 'cat'"),
    ("xyzqj", 5, ValueError, r"5 pieces: \['x', '##y'"),
    ("[PAD]", 5, ValueError, "reserved"),
    ("[unused7]", 5, ValueError, "reserved"),
    ("", 5, ValueError, "empty"),
    ("   ", 5, ValueError, "empty"),
    (5, 5, TypeError, "text"),
    ("cat", 0, ValueError, "k must"),
    ("cat", MAX_NEIGHBOURS + 1, ValueError, "k must"),
    ("cat", True, ValueError, "k must"),
    ("cat", 2.0, ValueError, "k must"),
])
def test_bad_pieces_and_counts_are_refused(piece, k, error, message):
    with pytest.raises(error, match=message):
        nearest_pieces(piece, k)


def test_a_word_is_the_mean_of_its_pieces_rows(reference):
    table, tokenizer = reference
    picture = project_words(WORDS)
    assert picture.words == tuple(WORDS)
    for word, pieces, vector in zip(WORDS, picture.pieces, picture.vectors, strict=True):
        ids = tokenizer(word, add_special_tokens=False)["input_ids"]
        assert list(pieces) == tokenizer.convert_ids_to_tokens(ids)
        np.testing.assert_allclose(vector, table[ids].mean(axis=0), atol=1e-12, rtol=0)
    assert picture.pieces[WORDS.index("unbelievably")][0] == "un" and len(picture.pieces[6]) > 1


def test_pca_agrees_with_numpy_svd_up_to_sign_and_with_the_covariance_eigenvalues():
    picture = project_words(WORDS)
    centred = picture.vectors - picture.vectors.mean(axis=0)
    u, s, vt = np.linalg.svd(centred)
    for axis in range(2):
        sign = np.sign(picture.axes[axis] @ vt[axis])
        assert sign != 0
        np.testing.assert_allclose(picture.axes[axis], sign * vt[axis], atol=1e-10)
        np.testing.assert_allclose(picture.coords[:, axis], sign * u[:, axis] * s[axis], atol=1e-10)
    np.testing.assert_allclose(picture.coords, centred @ picture.axes.T, atol=1e-10)
    np.testing.assert_allclose(picture.axes @ picture.axes.T, np.eye(2), atol=1e-12)
    eigenvalues = np.linalg.eigvalsh(np.cov(centred.T))[::-1]  # the words' covariance, largest first
    np.testing.assert_allclose(picture.explained, eigenvalues[:2] / eigenvalues.sum(), atol=1e-10)
    assert 0 <= picture.explained[1] <= picture.explained[0] <= 1 and picture.explained.sum() <= 1
    for axis in range(2):  # the sign rule: the word farthest out along an axis sits on its positive side
        far = np.argmax(np.abs(picture.coords[:, axis]))
        assert picture.coords[far, axis] > 0


def test_the_picture_is_the_same_every_time_and_nothing_shared_changes():
    table = token_embeddings()
    before = table.sum(dtype=np.float64)
    first, second = project_words(WORDS), project_words(list(reversed(WORDS)))
    np.testing.assert_array_equal(project_words(WORDS).coords, first.coords)
    np.testing.assert_allclose(np.abs(second.coords[::-1]), np.abs(first.coords), atol=1e-10)  # order-free
    np.testing.assert_allclose(second.vectors[::-1], first.vectors)
    for array in (first.vectors, first.coords, first.axes, first.explained):
        assert not array.flags.writeable
    nearest_pieces("cat", 10)
    assert minilm_token_table() is minilm_token_table()  # computed once per process
    assert table.sum(dtype=np.float64) == before
    assert torch.equal(load_minilm().encoder.embed.weight.detach(), torch.from_numpy(table.copy()))


@pytest.mark.parametrize(("words", "error", "message"), [
    (["king", "queen"], ValueError, "from 3"),
    ([f"w{i}" for i in range(MAX_WORDS + 1)], ValueError, "from 3"),
    (["king", "queen", "ice cream"], ValueError, "word 3 .* one word"),
    (["king", "queen", " "], ValueError, "word 3 .* not empty"),
    (["king", "queen", "a" * (MAX_WORD_CHARS + 1)], ValueError, "at most"),
    (["king", "queen", "🤖"], ValueError, r"\[UNK\]"),
    (["Cat", "dog", "cat"], ValueError, "same word pieces"),
    (["café", "dog", "cafe"], ValueError, "same word pieces"),
    (["king", "queen", 3], TypeError, "word 3"),
    ("king queen man", TypeError, "split"),
])
def test_bad_words_are_refused(words, error, message):
    with pytest.raises(error, match=message):
        project_words(words)


def test_the_bounds_themselves_are_accepted():
    assert project_words(["a" * MAX_WORD_CHARS, "dog", "cat"]).coords.shape == (3, 2)
    many = project_words([f"w{i}" for i in range(MAX_WORDS)])
    assert many.coords.shape == (MAX_WORDS, 2) and many.vectors.shape == (MAX_WORDS, 384)
