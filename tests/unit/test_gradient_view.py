"""explorer.lessons.gradients.measures against independent references: plain autograd (explorer.analysis.gradients),
the batched dependency matrix, a one-batch evaluation of the recall models."""

import numpy as np
import pytest
import torch

from explorer.analysis.dependency import UnmaskedAttentionStack, fast_dependency_matrix
from explorer.analysis.gradients import (
    SEQUENCE_MODEL_KINDS,
    build_sequence_model,
    random_sequence,
)
from explorer.lessons.gradients import measures as gv
from explorer.model.rnn import RecurrentTagger
from explorer.model.transformer import Transformer, TransformerConfig
from explorer.training.pretrained import LoadedModel, PretrainedModelError, forward, recall_correct
from explorer.training.tasks import RecallTask
from tests.unit.test_lib_bptt import reference_log10


@torch.no_grad()
def accuracy_by_distance(model, task) -> dict[int, float]:
    """The reference: recall accuracy per distance from one forward pass over the whole evaluation set."""
    batch = task.evaluation()
    rows = torch.arange(len(batch.distance))
    logits = forward(model, batch)
    right = logits[rows, batch.distance].argmax(-1) == batch.targets[rows, batch.distance]
    return {int(d): right[batch.distance == d].float().mean().item() for d in batch.distance.unique()}


def test_gradient_curves_match_the_reference_for_every_model_and_are_read_only():
    curves = gv.gradient_curves(12, 5, "orthogonal", 1.5, 4, 2)
    assert gv.gradient_curves(12, 5, "orthogonal", 1.5, 4, 2) is curves  # cached
    for kind in SEQUENCE_MODEL_KINDS:
        assert curves.log10_norms[kind].shape == (2, 12)
        assert not curves.log10_norms[kind].flags.writeable
        for i, seed in enumerate(curves.seeds):
            window = None if kind == "transformer" else 4
            expected = reference_log10(kind, 5, 12, init="orthogonal", gain=1.5, seed=seed, bptt_window=window)
            finite = np.isfinite(expected)
            np.testing.assert_array_equal(np.isfinite(curves.log10_norms[kind][i]), finite)
            np.testing.assert_allclose(curves.log10_norms[kind][i][finite], expected[finite], atol=1e-10)


def test_summary_is_the_geometric_mean_with_a_band_and_keeps_zeros():
    logs = np.array([[0.0, -2.0, -np.inf], [-2.0, -2.0, -np.inf]])
    mean, low, high = gv.summarize_log_norms(logs)
    np.testing.assert_allclose(mean[:2], [-1.0, -2.0])
    np.testing.assert_allclose(low[:2], [-2.0, -2.0])
    np.testing.assert_allclose(high[:2], [0.0, -2.0])
    assert np.isneginf(mean[2]) and np.isneginf(low[2]) and np.isneginf(high[2])
    norms = 10.0 ** logs[:, 0]
    assert 10 ** mean[0] == pytest.approx(np.sqrt(norms.prod()))


def test_path_lengths():
    np.testing.assert_array_equal(gv.path_lengths(4, "rnn"), [4, 3, 2, 1])
    np.testing.assert_array_equal(gv.path_lengths(4, "transformer"), [1, 1, 1, 1])
    np.testing.assert_array_equal(gv.path_lengths(3, "gru", n_layers=2), [4, 3, 2])
    with pytest.raises(ValueError):
        gv.path_lengths(3, "cnn")


def test_dependency_views_shapes_triangles_and_fading():
    views = gv.dependency_views("rnn", 16, 8)
    upper = np.triu(np.ones((16, 16), dtype=bool), k=1)
    for matrix in (views.recurrent, views.causal):
        assert np.all(matrix[upper] == 0) and np.all(matrix[~upper] > 0)
        assert not matrix.flags.writeable
    assert np.all(views.unmasked > 0)
    last = np.log10(views.recurrent[-1])
    assert last[-1] - last[0] > 3, "the loop's dependence on x_0 should fade by orders of magnitude"
    causal_last = np.log10(views.causal[-1])
    assert causal_last.max() - causal_last.min() < 2, "attention's dependence should stay within ~1 order"


def test_dependency_views_of_other_recurrent_settings_reuse_the_attention_matrices():
    rnn, gru = gv.dependency_views("rnn", 12, 8), gv.dependency_views("gru", 12, 8, "orthogonal", 2.0)
    assert gru.causal is rnn.causal and gru.unmasked is rnn.unmasked  # computed once
    assert not np.allclose(gru.recurrent, rnn.recurrent)
    model = build_sequence_model("transformer", 8, seed=0).requires_grad_(False)
    x = random_sequence(12, 8, seed=1000)
    np.testing.assert_allclose(rnn.causal, fast_dependency_matrix(model, x, causal=True), rtol=1e-12)
    np.testing.assert_allclose(rnn.unmasked, fast_dependency_matrix(UnmaskedAttentionStack(model), x),
                               rtol=1e-12)


def test_recall_accuracy_evaluates_the_model_per_distance(monkeypatch):
    task = RecallTask(max_distance=40)
    torch.manual_seed(0)
    model = RecurrentTagger("gru", task.vocab_size, 8).eval().requires_grad_(False)
    monkeypatch.setattr(gv, "load_model", lambda name: LoadedModel(name, model, task, {"heldout_accuracy": 0.5}))
    gv.recall_accuracy.cache_clear()
    try:
        result = gv.recall_accuracy("recall-fake")
    finally:
        gv.recall_accuracy.cache_clear()
    # References: the library's one-batch evaluation, and the prediction at each '?' read directly.
    expected = accuracy_by_distance(model, task)
    np.testing.assert_array_equal(result.distances, sorted(expected))
    np.testing.assert_allclose(result.accuracy, [expected[d] for d in sorted(expected)], atol=1e-6)
    batch = task.evaluation()
    with torch.no_grad():
        logits, _ = model(batch.inputs)
    rows = torch.arange(len(batch.distance))
    right = (logits[rows, batch.distance].argmax(-1) == batch.inputs[:, 0]).numpy()
    distance = batch.distance.numpy()
    for d, n in zip(result.distances, result.examples, strict=True):
        assert n == (distance == d).sum()
    assert result.examples.sum() == task.eval_size
    bands = dict(gv.accuracy_bands(result))
    assert list(bands) == ["1–8", "9–32", "33–40"]
    assert bands["1–8"] == pytest.approx(right[distance <= 8].mean())
    assert dict(gv.accuracy_bands(result, (1, 41))) == {"1–40": pytest.approx(right.mean())}
    binned = gv.binned_accuracy(result, 8)
    for d, value in zip(result.distances, binned, strict=True):
        first = (d - 1) // 8 * 8 + 1
        assert value == pytest.approx(right[(distance >= first) & (distance < first + 8)].mean())


def test_accuracy_bands_double_beyond_64_and_close_at_the_longest_distance():
    distances = np.arange(1, 301)
    right = (distances % 3 == 0).astype(float)  # 1 in 3 right at every distance
    result = gv.RecallAccuracy("fake", distances, right, np.ones(300, dtype=np.int64), None)
    bands = dict(gv.accuracy_bands(result))
    assert list(bands) == ["1–8", "9–32", "33–64", "65–128", "129–256", "257–300"]
    for band, value in bands.items():
        lo, hi = map(int, band.split("–"))
        assert value == pytest.approx(np.mean(distances[lo - 1:hi] % 3 == 0))
    shorter = gv.RecallAccuracy("fake", distances[:128], right[:128], np.ones(128, dtype=np.int64), None)
    assert [band for band, _ in gv.accuracy_bands(shorter)][-1] == "65–128"


def test_chunked_recall_evaluation_matches_the_library_for_a_causal_transformer():
    task = RecallTask(max_distance=20)
    config = TransformerConfig(vocab_size=task.vocab_size, d_model=8, n_heads=2, n_layers=1,
                               architecture="decoder", max_len=task.max_len, norm="pre")
    torch.manual_seed(1)
    model = Transformer(config).eval()
    distance, right = recall_correct(model, task, chunk=100)
    expected = accuracy_by_distance(model, task)
    for d, accuracy in expected.items():
        assert right[distance == d].mean() == pytest.approx(accuracy, abs=1e-6)  # the library averages in float32


def test_recall_accuracy_reports_a_missing_model():
    with pytest.raises(PretrainedModelError):
        gv.recall_accuracy("recall-does-not-exist")

