"""explorer.analysis.bptt: back-propagation through time written out, against plain autograd
(explorer.analysis.gradients.input_gradient_norms)."""

import numpy as np
import pytest

from explorer.analysis import bptt
from explorer.analysis.gradients import build_sequence_model, input_gradient_norms, random_sequence


def reference_log10(kind, width, T, *, init="default", gain=1.0, seed=0, bptt_window=None):
    """What the lesson plots, by plain autograd: log10 of input_gradient_norms, −inf for zeros."""
    model = build_sequence_model(kind, width, init=init, gain=gain, seed=seed)
    norms = input_gradient_norms(model, random_sequence(T, width, seed=1000 + seed), bptt_window=bptt_window)
    with np.errstate(divide="ignore"):
        return np.log10(norms)


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
@pytest.mark.parametrize("init, gain, window", [("default", 1.0, None), ("orthogonal", 0.5, 7),
                                                ("orthogonal", 4.0, 1), ("default", 1.0, 30)])
def test_rescaled_bptt_equals_plain_autograd(kind, init, gain, window):
    got = bptt.recurrent_log_gradient_norms(kind, 6, 24, init=init, gain=gain, seeds=(0, 3), bptt_window=window)
    for row, seed in zip(got, (0, 3), strict=True):
        expected = reference_log10(kind, 6, 24, init=init, gain=gain, seed=seed, bptt_window=window)
        np.testing.assert_array_equal(np.isneginf(row), np.isneginf(expected))
        finite = np.isfinite(expected)
        np.testing.assert_allclose(row[finite], expected[finite], atol=1e-10)


def test_rescaled_bptt_keeps_norms_that_float64_autograd_rounds_to_zero():
    T = 512
    got = bptt.recurrent_log_gradient_norms("rnn", 32, T, seeds=(0,))[0]
    plain = reference_log10("rnn", 32, T)
    assert np.isneginf(plain[0]), "plain autograd should underflow here, or the test proves nothing"
    assert np.all(np.isfinite(got)) and got[0] < -154  # the norm's squares underflow below ~1e-154
    representable = np.isfinite(plain) & (plain > -140)
    np.testing.assert_allclose(got[representable], plain[representable], atol=1e-8)
    # Geometric decay: the log falls by a steady amount per step, so a straight line fits it well.
    slope, intercept = np.polyfit(np.arange(T), got, 1)
    assert slope > 0.2 and np.max(np.abs(got - (slope * np.arange(T) + intercept))) < 10


def test_rescaled_bptt_does_not_overflow_or_underflow_at_extreme_gains():
    explode = bptt.recurrent_log_gradient_norms("rnn", 16, 512, init="orthogonal", gain=8.0, seeds=(0,))[0]
    assert np.all(np.isfinite(explode))
    assert explode[0] > explode[-1] + 20
    vanish = bptt.recurrent_log_gradient_norms("rnn", 16, 512, init="orthogonal", gain=0.1, seeds=(0,))[0]
    assert np.all(np.isfinite(vanish)) and vanish[0] < -400  # far below float64's smallest number


def test_rescaled_bptt_rejects_bad_arguments():
    with pytest.raises(ValueError):
        bptt.recurrent_log_gradient_norms("transformer", 4, 4)
    with pytest.raises(ValueError):
        bptt.recurrent_log_gradient_norms("rnn", 4, 4, bptt_window=0)

