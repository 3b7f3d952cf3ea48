"""explorer.lessons.positions.relative against closed forms written out here: RoPE's angles and scores, ALiBi's
bias, T5's buckets."""

import math

import numpy as np
import pytest

from explorer.lessons.positions.relative import (
    alibi_causal_bias,
    rope_offset_scores,
    rope_rotation_degrees,
    rope_vectors,
    t5_exact_buckets,
    t5_offset_buckets,
    wrapped_degrees,
)
from explorer.model.positional import alibi_slopes, t5_relative_buckets


def test_wrapped_degrees():
    angles = np.array([0.0, math.pi, -math.pi, 3 * math.pi / 2, 10.0])
    wrapped = wrapped_degrees(angles)
    assert np.all((wrapped > -180) & (wrapped <= 180))
    np.testing.assert_allclose(np.mod(wrapped - np.degrees(angles), 360.0) % 360.0, 0.0, atol=1e-9)
    assert wrapped[1] == 180.0 and wrapped[2] == 180.0 and wrapped[3] == pytest.approx(-90.0)


def test_rope_rotation_degrees():
    degrees = rope_rotation_degrees(5, 4, 100.0)
    assert degrees.shape == (5, 2)
    assert degrees[1, 0] == pytest.approx(math.degrees(1.0))
    assert degrees[3, 1] == pytest.approx(math.degrees(3 / 10))


@pytest.mark.parametrize("kind", ["ones", "random"])
def test_rope_scores_are_the_closed_form_of_the_offset(kind):
    head_dim, base = 8, 10000.0
    q, k = rope_vectors(head_dim, kind)
    offsets = np.arange(-20, 21)
    scores = rope_offset_scores(q, k, [0, 7, 300], offsets, base)
    theta = base ** (-np.arange(0, head_dim, 2) / head_dim)
    phi = offsets[:, None] * theta[None, :]
    q0, q1, k0, k1 = q[0::2], q[1::2], k[0::2], k[1::2]
    expected = ((q0 * k0 + q1 * k1) * np.cos(phi) + (q1 * k0 - q0 * k1) * np.sin(phi)).sum(-1)
    for row in scores:
        np.testing.assert_allclose(row, expected, atol=1e-10)
    if kind == "ones":
        np.testing.assert_allclose(scores[0], 2 * np.cos(phi).sum(-1), atol=1e-10)


def test_rope_vectors():
    q, k = rope_vectors(6, "random", seed=3)
    q2, _ = rope_vectors(6, "random", seed=3)
    np.testing.assert_array_equal(q, q2)
    assert not np.array_equal(q, k)
    with pytest.raises(ValueError):
        rope_vectors(6, "zeros")


@pytest.mark.parametrize("heads", [1, 4, 6])
def test_alibi_causal_bias_is_minus_slope_times_distance(heads):
    T = 6
    bias = alibi_causal_bias(heads, T)
    slopes = alibi_slopes(heads)
    for h in range(heads):
        for q in range(T):
            for k in range(T):
                if k > q:
                    assert np.isnan(bias[h, q, k])
                else:
                    assert bias[h, q, k] == pytest.approx(-slopes[h] * (q - k))


@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_offset_buckets_match_the_matrix(bidirectional):
    offsets, buckets = t5_offset_buckets(40, bidirectional, 16, 64)
    assert offsets.tolist() == list(range(-40, 41))
    matrix = t5_relative_buckets(41, None, bidirectional, 16, 64)  # row 40: offsets −40 … 0
    np.testing.assert_array_equal(buckets[:41], matrix[40])
    np.testing.assert_array_equal(buckets[40:], matrix[0])  # row 0: offsets 0 … 40
    assert buckets[40] == 0
    if not bidirectional:
        assert np.all(buckets[41:] == 0), "a causal scheme puts every later key in bucket 0"


def test_t5_exact_buckets_and_the_distances_that_work():
    assert t5_exact_buckets(32, True) == 8 and t5_exact_buckets(32, False) == 16
    for buckets in (8, 16, 32, 64):
        for bidirectional in (True, False):
            exact = t5_exact_buckets(buckets, bidirectional)
            with np.errstate(all="raise"):  # beyond `exact` the logarithmic buckets are well defined
                _, b = t5_offset_buckets(300, bidirectional, buckets, 2 * exact)
            assert b.min() >= 0 and b.max() < buckets
