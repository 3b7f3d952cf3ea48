"""explorer.analysis.gradients: vanishing RNN gradients vs attention, checked against independent autograd."""

import numpy as np
import pytest
import torch

from explorer.analysis.gradients import build_sequence_model, input_gradient_norms, random_sequence


@pytest.fixture(scope="module")
def rnn32():
    return build_sequence_model("rnn", 32)


def test_rnn_gradient_vanishes_compared_with_attention(rnn32):
    x = random_sequence(64, 32)
    rnn = input_gradient_norms(rnn32, x)
    attention = input_gradient_norms(build_sequence_model("transformer", 32), x)
    assert rnn.shape == attention.shape == (64,)
    rnn_ratio = rnn[1] / rnn[-1]
    attention_ratio = attention[1] / attention[-1]
    assert rnn_ratio < 1e-6 * attention_ratio


def test_rnn_norms_stay_positive_in_float64_but_underflow_in_float32(rnn32):
    x = random_sequence(256, 32)
    norms = input_gradient_norms(rnn32, x)
    assert np.all(norms > 0)
    assert norms[0] < 1e-40  # below float32's smallest normal number

    model32 = build_sequence_model("rnn", 32).float()
    x32 = x.float().requires_grad_(True)
    (grad,) = torch.autograd.grad(model32(x32[None])[0][-1].sum(), x32)
    assert (grad.norm(dim=-1) == 0).any()


def test_orthogonal_gain_above_one_makes_gradients_explode():
    model = build_sequence_model("rnn", 32, init="orthogonal", gain=3.0)
    norms = input_gradient_norms(model, random_sequence(64, 32))
    assert norms[1] > norms[-1]


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_orthogonal_init_sets_every_gate_block(kind):
    model = build_sequence_model(kind, 6, init="orthogonal", gain=0.5)
    weight_hh = next(m for m in model.modules() if hasattr(m, "weight_hh")).weight_hh
    blocks = weight_hh.split(6, dim=0)
    assert len(blocks) == {"lstm": 4, "gru": 3}[kind]
    for block in blocks:
        torch.testing.assert_close(block @ block.T, 0.25 * torch.eye(6, dtype=torch.float64))


def test_truncation_window_zeroes_gradients_beyond_it(rnn32):
    x = random_sequence(20, 32)
    full = input_gradient_norms(rnn32, x)
    cut = input_gradient_norms(rnn32, x, bptt_window=5)
    assert np.all(cut[:15] == 0)
    assert np.all(full[:15] > 0)
    np.testing.assert_allclose(cut[15:], full[15:], rtol=1e-12)


def test_transformer_ignores_truncation_window():
    model = build_sequence_model("transformer", 8)
    x = random_sequence(10, 8)
    np.testing.assert_array_equal(input_gradient_norms(model, x, bptt_window=2), input_gradient_norms(model, x))


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru", "transformer"])
def test_input_gradient_norms_match_finite_differences(kind):
    width, T = 4, 5
    model = build_sequence_model(kind, width, seed=3)
    x = random_sequence(T, width, seed=7)
    readout = torch.tensor([0.5, -1.0, 2.0, 0.25], dtype=torch.float64)

    def loss(inputs):
        with torch.no_grad():
            return float(model(inputs[None])[0][-1] @ readout)

    eps = 1e-6
    grad = np.zeros((T, width))
    for t in range(T):
        for i in range(width):
            step = torch.zeros_like(x)
            step[t, i] = eps
            grad[t, i] = (loss(x + step) - loss(x - step)) / (2 * eps)
    norms = input_gradient_norms(model, x, readout=readout)
    np.testing.assert_allclose(norms, np.linalg.norm(grad, axis=1), rtol=1e-6, atol=1e-9)


def test_default_readout_is_a_fixed_unit_vector(rnn32):
    """Same input → same norms, and the loss is linear in the readout (scale 3 → norms × 3)."""
    x = random_sequence(6, 32)
    a = input_gradient_norms(rnn32, x)
    np.testing.assert_array_equal(a, input_gradient_norms(rnn32, x))
    r = torch.zeros(32, dtype=torch.float64)
    r[0] = 1.0
    np.testing.assert_allclose(input_gradient_norms(rnn32, x, readout=3 * r),
                               3 * input_gradient_norms(rnn32, x, readout=r), rtol=1e-12)


def test_build_sequence_model_is_seeded_float64_and_leaves_global_rng_alone():
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    a = build_sequence_model("gru", 5, seed=4)
    assert torch.equal(torch.rand(3), expected_next)
    b = build_sequence_model("gru", 5, seed=4)
    c = build_sequence_model("gru", 5, seed=5)
    for pa, pb, pc in zip(a.parameters(), b.parameters(), c.parameters(), strict=True):
        assert pa.dtype == torch.float64
        assert torch.equal(pa, pb)
        assert not torch.equal(pa, pc)
    assert not a.training


def test_build_sequence_model_rejects_unknown_options():
    with pytest.raises(ValueError):
        build_sequence_model("cnn", 4)
    with pytest.raises(ValueError):
        build_sequence_model("rnn", 4, init="xavier")


def test_random_sequence_is_reproducible():
    a = random_sequence(5, 3, seed=2)
    assert a.shape == (5, 3) and a.dtype == torch.float64
    assert torch.equal(a, random_sequence(5, 3, seed=2))
    assert not torch.equal(a, random_sequence(5, 3, seed=3))
