"""explorer.views.gradients, cost_view and timing against independent references: plain autograd
(explorer.analysis.gradients), torch.autograd.functional.jacobian, finite differences, real modules."""

import numpy as np
import pytest
import torch

from explorer.analysis.cost import attention_cost, conv1d_cost, encoder_layer_cost, recurrent_cost
from explorer.analysis.gradients import build_sequence_model, dependency_matrix, input_gradient_norms, random_sequence
from explorer.analysis.timing import TIMED_LAYERS, Timing, measure_forward_times, slower_from
from explorer.model.parameters import count_parameters
from explorer.model.rnn import RecurrentTagger
from explorer.model.transformer import Transformer, TransformerConfig
from explorer.training.pretrained import LoadedModel, PretrainedModelError, accuracy_by_distance
from explorer.training.tasks import RecallTask
from explorer.views import gradients as gv
from explorer.views.cost import (
    build_stack,
    complexity_rows,
    layers_to_connect,
    operations_curves,
    operations_lengths,
    stack_cost,
)

pytestmark = pytest.mark.usefixtures("one_thread")  # as in the app: one torch thread


def reference_log10(kind, width, T, *, init="default", gain=1.0, seed=0, bptt_window=None):
    """What the lesson plots, by plain autograd: log10 of input_gradient_norms, −inf for zeros."""
    model = build_sequence_model(kind, width, init=init, gain=gain, seed=seed)
    norms = input_gradient_norms(model, random_sequence(T, width, seed=1000 + seed), bptt_window=bptt_window)
    with np.errstate(divide="ignore"):
        return np.log10(norms)


# --- gradient against position ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
@pytest.mark.parametrize("init, gain, window", [("default", 1.0, None), ("orthogonal", 0.5, 7),
                                                ("orthogonal", 4.0, 1), ("default", 1.0, 30)])
def test_rescaled_bptt_equals_plain_autograd(kind, init, gain, window):
    got = gv.recurrent_log_gradient_norms(kind, 6, 24, init=init, gain=gain, seeds=(0, 3), bptt_window=window)
    for row, seed in zip(got, (0, 3), strict=True):
        expected = reference_log10(kind, 6, 24, init=init, gain=gain, seed=seed, bptt_window=window)
        np.testing.assert_array_equal(np.isneginf(row), np.isneginf(expected))
        finite = np.isfinite(expected)
        np.testing.assert_allclose(row[finite], expected[finite], atol=1e-10)


def test_rescaled_bptt_keeps_norms_that_float64_autograd_rounds_to_zero():
    T = 512
    got = gv.recurrent_log_gradient_norms("rnn", 32, T, seeds=(0,))[0]
    plain = reference_log10("rnn", 32, T)
    assert np.isneginf(plain[0]), "plain autograd should underflow here, or the test proves nothing"
    assert np.all(np.isfinite(got)) and got[0] < -154  # the norm's squares underflow below ~1e-154
    representable = np.isfinite(plain) & (plain > -140)
    np.testing.assert_allclose(got[representable], plain[representable], atol=1e-8)
    # Geometric decay: the log falls by a steady amount per step, so a straight line fits it well.
    slope, intercept = np.polyfit(np.arange(T), got, 1)
    assert slope > 0.2 and np.max(np.abs(got - (slope * np.arange(T) + intercept))) < 10


def test_rescaled_bptt_does_not_overflow_or_underflow_at_extreme_gains():
    explode = gv.recurrent_log_gradient_norms("rnn", 16, 512, init="orthogonal", gain=8.0, seeds=(0,))[0]
    assert np.all(np.isfinite(explode))
    assert explode[0] > explode[-1] + 20
    vanish = gv.recurrent_log_gradient_norms("rnn", 16, 512, init="orthogonal", gain=0.1, seeds=(0,))[0]
    assert np.all(np.isfinite(vanish)) and vanish[0] < -400  # far below float64's smallest number


def test_rescaled_bptt_rejects_bad_arguments():
    with pytest.raises(ValueError):
        gv.recurrent_log_gradient_norms("transformer", 4, 4)
    with pytest.raises(ValueError):
        gv.recurrent_log_gradient_norms("rnn", 4, 4, bptt_window=0)


def test_gradient_curves_match_the_reference_for_every_model_and_are_read_only():
    curves = gv.gradient_curves(12, 5, "orthogonal", 1.5, 4, 2)
    assert gv.gradient_curves(12, 5, "orthogonal", 1.5, 4, 2) is curves  # cached
    for kind in gv.GRADIENT_KINDS:
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


# --- dependency matrix ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru", "transformer"])
def test_fast_dependency_matrix_equals_the_jacobian_reference(kind):
    model = build_sequence_model(kind, 4, seed=2)
    x = random_sequence(9, 4, seed=4)
    expected = dependency_matrix(model, x)  # the original: torch.autograd.functional.jacobian
    for causal, rows in ((False, None), (True, None), (True, 2), (False, 4)):
        got = gv.fast_dependency_matrix(model, x, causal=causal, rows_per_chunk=rows)
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14)
    assert all(p.requires_grad for p in model.parameters()), "the model must be left as it was"


def test_unmasked_stack_is_the_same_layer_without_the_mask():
    causal = build_sequence_model("transformer", 8, seed=1)
    unmasked = gv.UnmaskedAttentionStack(causal)
    x = random_sequence(7, 8)[None]
    with torch.no_grad():
        a, b = causal(x), unmasked(x)
    # The last position sees every input either way; earlier ones see more without the mask.
    torch.testing.assert_close(a[:, -1], b[:, -1])
    assert not torch.allclose(a[:, 0], b[:, 0])
    dep = gv.fast_dependency_matrix(unmasked, x[0])
    np.testing.assert_allclose(dep, dependency_matrix(unmasked, x[0]), rtol=1e-10)
    assert np.all(dep > 0), "without a mask every output depends on every input"


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
    np.testing.assert_allclose(rnn.causal, gv.fast_dependency_matrix(model, x, causal=True), rtol=1e-12)
    np.testing.assert_allclose(rnn.unmasked, gv.fast_dependency_matrix(gv.UnmaskedAttentionStack(model), x),
                               rtol=1e-12)


# --- trained models -----------------------------------------------------------------------------------------


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


def test_chunked_recall_evaluation_matches_the_library_for_a_causal_transformer():
    task = RecallTask(max_distance=20)
    config = TransformerConfig(vocab_size=task.vocab_size, d_model=8, n_heads=2, n_layers=1,
                               architecture="decoder", max_len=task.max_len, norm="pre")
    torch.manual_seed(1)
    model = Transformer(config).eval()
    distance, right = gv.recall_correct(model, task, chunk=100)
    expected = accuracy_by_distance(model, task)
    for d, accuracy in expected.items():
        assert right[distance == d].mean() == pytest.approx(accuracy, abs=1e-6)  # the library averages in float32


def test_recall_accuracy_reports_a_missing_model():
    with pytest.raises(PretrainedModelError):
        gv.recall_accuracy("recall-does-not-exist")


# --- depth -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("norm", gv.DEPTH_NORMS)
@pytest.mark.parametrize("residual", [True, False])
def test_layer_gradient_norms_match_finite_differences(norm, residual):
    n_layers, width, T = 2, 4, 2
    stack = gv.build_layer_stack(n_layers, width, residual=residual, norm=norm, seed=5)
    x = random_sequence(T, width, seed=1005)[None]
    readout = gv._depth_readout(T, width)

    def loss_from(layer: int, h: torch.Tensor) -> float:
        with torch.no_grad():
            for module in stack[layer:-1]:
                h, _ = module(h)
            return float((stack[-1](h)[0] * readout).sum())

    inputs, h = [], x
    with torch.no_grad():
        for module in stack[:-1]:
            inputs.append(h)
            h, _ = module(h)
    eps = 1e-6
    expected = []
    for layer, h in enumerate(inputs):
        grad = torch.zeros_like(h)
        for index in np.ndindex(*h.shape):
            step = torch.zeros_like(h)
            step[index] = eps
            grad[index] = (loss_from(layer, h + step) - loss_from(layer, h - step)) / (2 * eps)
        expected.append(grad.norm().item())
    got = gv.layer_gradient_norms(n_layers, width, residual=residual, norm=norm, seed=5, T=T)
    assert got.dtype == np.float64 and got.shape == (n_layers,)
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_layer_stacks_share_weights_across_wirings_and_leave_the_global_rng_alone():
    torch.manual_seed(7)
    expected_next = torch.rand(2)
    torch.manual_seed(7)
    stacks = [gv.build_layer_stack(2, 8, residual=r, norm=n, seed=1) for n, r in gv.DEPTH_CONFIGS]
    assert torch.equal(torch.rand(2), expected_next)
    first = dict(stacks[0][0].named_parameters())
    for stack in stacks[1:]:
        for name, p in stack[0].named_parameters():
            if name in first:
                assert torch.equal(p, first[name])
    post, pre, none = (gv.build_layer_stack(1, 8, residual=True, norm=n) for n in gv.DEPTH_NORMS)
    assert isinstance(pre[-1], torch.nn.LayerNorm) and isinstance(post[-1], torch.nn.Identity)
    assert isinstance(none[0].attn_norm, torch.nn.Identity)
    with pytest.raises(ValueError):
        gv.build_layer_stack(2, 8, residual=True, norm="batch")


def test_depth_curves_equal_layer_gradient_norms_and_show_the_short_cut():
    curves = gv.depth_curves(6, 8, 4, 2)
    for (norm, residual), values in curves.items():
        assert values.shape == (2, 6) and not values.flags.writeable
        np.testing.assert_allclose(
            values[1], gv.layer_gradient_norms(6, 8, residual=residual, norm=norm, seed=1, T=4), rtol=1e-12)
    plain = np.log10(curves[("none", False)]).mean(axis=0)
    short_cut = np.log10(curves[("none", True)]).mean(axis=0)
    assert plain[-1] - plain[0] > 3, "without residual or norm the gradient should vanish with depth"
    assert abs(short_cut[-1] - short_cut[0]) < 1
    with pytest.raises(TypeError):
        curves[("post", True)] = None  # the cached mapping is read-only


@pytest.mark.parametrize("n_layers, width, T, n_seeds", [(1, 16, 4, 1), (5, 16, 8, 3), (24, 32, 4, 2), (26, 16, 4, 2)])
def test_seed_batched_depth_curves_equal_each_plain_stack(n_layers, width, T, n_seeds):
    """The seed-batched pass on cached weights (a prefix of a 24-layer draw, or a deeper draw above it)
    gives every seed's and wiring's norms as the plain module stack of rewired layers does."""
    gv.depth_curves.cache_clear()
    curves = gv.depth_curves(n_layers, width, T, n_seeds)
    for (norm, residual), values in curves.items():
        assert values.shape == (n_seeds, n_layers)
        for seed in range(n_seeds):
            np.testing.assert_allclose(
                values[seed], gv.layer_gradient_norms(n_layers, width, residual, norm, seed, T), rtol=1e-10)


def test_deeper_draws_start_with_the_shallower_stack():
    """What lets one draw of 24 layers serve every depth: the seeded layers come out in order."""
    shallow, deep = gv._seeded_stack(3, 16, 2, 4), gv._seeded_stack(24, 16, 2, 4)
    for a, b in zip(shallow[:-1], deep[:3], strict=True):
        for (name, p), (_, q) in zip(a.named_parameters(), b.named_parameters(), strict=True):
            assert torch.equal(p, q), name


# --- cost ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("layer", ["cnn", "rnn", "attention", "encoder"])
@pytest.mark.parametrize("d, k, n", [(8, 3, 1), (12, 2, 3), (16, 5, 2)])
def test_stack_parameters_equal_real_modules(layer, d, k, n):
    real = build_stack(layer, d, k, n, device="cpu")
    assert next(real.parameters()).device.type == "cpu"
    expected = count_parameters(real)
    assert stack_cost(layer, 20, d, k, n).parameters == expected
    assert count_parameters(build_stack(layer, d, k, n)) == expected  # meta device


def test_stack_of_one_layer_is_the_library_per_layer_cost():
    T, d, k = 40, 16, 3
    assert stack_cost("cnn", T, d, k) == conv1d_cost(T, d, k)
    assert stack_cost("rnn", T, d, k) == recurrent_cost("rnn", T, d)
    assert stack_cost("attention", T, d, k) == attention_cost(T, d)
    assert stack_cost("encoder", T, d, k) == encoder_layer_cost(T, d)


def test_stack_rules_for_steps_and_path():
    T, d, k, n = 100, 8, 5, 6
    assert stack_cost("rnn", T, d, k, n).sequential_steps == T + n - 1
    assert stack_cost("rnn", T, d, k, n).path_length == T - 1 + n
    assert stack_cost("attention", T, d, k, n).sequential_steps == n
    assert stack_cost("attention", T, d, k, n).path_length == n
    assert layers_to_connect(T, k) == 25  # ⌈99 / 4⌉
    assert stack_cost("cnn", T, d, k, n).path_length == 25
    assert stack_cost("cnn", T, d, k, 30).path_length == 30
    assert stack_cost("rnn", T, d, k, n).multiplications == n * recurrent_cost("rnn", T, d).multiplications
    with pytest.raises(ValueError):
        stack_cost("rnn", T, d, k, 0)


def test_complexity_rows_and_operation_curves():
    rows = complexity_rows(64, 32, 3, 2)
    assert [r.layer for r in rows] == ["cnn", "rnn", "attention", "encoder"]
    for row in rows:
        assert row.counted_parameters == row.cost.parameters
    curves = operations_curves(8, [4, 8, 16])
    assert curves["T·d² (the RNN's term)"] == [256, 512, 1024]
    assert curves["T²·d (attention's term)"] == [128, 512, 2048]  # equal at T = d
    assert curves["self-attention layer, exact"][1] == attention_cost(8, 8).multiplications
    lengths = operations_lengths(100, 48)
    assert 100 in lengths and 48 in lengths and lengths[0] == 1 and lengths[-1] == 400
    assert lengths == sorted(set(lengths))


# --- timing --------------------------------------------------------------------------------------------------


def test_measure_forward_times_measures_every_layer_within_a_generous_budget():
    timings = measure_forward_times([8, 16], 8, budget_s=30.0, repeats=2)
    assert {(t.layer, t.T) for t in timings} == {(layer, T) for layer in TIMED_LAYERS for T in (8, 16)}
    assert all(t.seconds is not None and t.seconds > 0 and 1 <= t.runs <= 2 for t in timings)


def test_measure_forward_times_stops_when_the_budget_is_spent():
    ticks = iter(range(10_000))
    timings = measure_forward_times([8, 16, 32], 8, budget_s=0.0, clock=lambda: float(next(ticks)))
    assert all(t.seconds is None and t.runs == 0 for t in timings)
    # A fake clock that advances one second per reading: the first measurement fits in a 4 s budget,
    # after which the predicted cost of the next exceeds what is left.
    ticks = iter(range(10_000))
    timings = measure_forward_times([8, 16], 8, layers=("rnn",), budget_s=4.0, repeats=1,
                                    clock=lambda: float(next(ticks)))
    assert [t.seconds is not None for t in timings] == [True, False]


def test_slower_from_finds_where_one_layer_stays_slower():
    def row(layer, T, s):
        return Timing(layer, T, 8, s, 1)

    timings = [row("rnn", 16, 2.0), row("attention", 16, 1.0), row("rnn", 32, 2.0), row("attention", 32, 3.0),
               row("rnn", 64, 2.0), row("attention", 64, 9.0), row("rnn", 128, None), row("attention", 128, 1.0)]
    assert slower_from(timings, "attention", "rnn") == 32
    assert slower_from(timings, "rnn", "attention") is None
