"""explorer.model.positional against closed forms and reference definitions written out here."""

import math

import numpy as np
import pytest
import torch

from explorer.model.positional import (
    ENCODINGS,
    AbsolutePositionalEncoding,
    RotaryEmbedding,
    T5RelativeBias,
    alibi_bias,
    alibi_slopes,
    index_encoding,
    rope_angles,
    sinusoidal_encoding,
    sinusoidal_wavelengths,
    t5_relative_buckets,
)

# --- sinusoidal -----------------------------------------------------------------------------------


def _sinusoid_reference(n_positions, d_model, base):
    pe = [[0.0] * d_model for _ in range(n_positions)]
    for p in range(n_positions):
        for dim in range(d_model):
            i = dim // 2
            angle = p / base ** (2 * i / d_model)
            pe[p][dim] = math.sin(angle) if dim % 2 == 0 else math.cos(angle)
    return np.array(pe)


@pytest.mark.parametrize("n,d,base", [(50, 16, 10000.0), (20, 8, 100.0), (13, 7, 10000.0), (5, 1, 100.0)])
def test_sinusoidal_matches_closed_form(n, d, base):
    pe = sinusoidal_encoding(n, d, base)
    assert pe.shape == (n, d)
    assert pe.dtype == np.float64
    np.testing.assert_allclose(pe, _sinusoid_reference(n, d, base), rtol=0, atol=1e-12)


def test_sinusoidal_lecture_table():
    """The lecture's table: d=4, base=100, positions 0..3, rounded to two decimals."""
    table = np.round(sinusoidal_encoding(4, 4, base=100.0), 2)
    expected = [[0, 1, 0, 1], [0.84, 0.54, 0.10, 1.00], [0.91, -0.42, 0.20, 0.98], [0.14, -0.99, 0.30, 0.96]]
    np.testing.assert_array_equal(table, np.array(expected))


def test_sinusoidal_similarity_is_toeplitz():
    """PE·PEᵀ[p, s] = Σ cos((p−s)·ω_i) depends only on the offset p − s."""
    pe = sinusoidal_encoding(24, 16)
    sim = pe @ pe.T
    for offset in range(-23, 24):
        diagonal = np.diagonal(sim, offset=offset)
        np.testing.assert_allclose(diagonal, diagonal[0], rtol=0, atol=1e-10)
    # ...and it is not constant: the similarity does change with the offset.
    assert abs(sim[0, 0] - sim[0, 5]) > 0.5


def test_sinusoidal_wavelengths_closed_form():
    d, base = 10, 100.0
    expected = [2 * math.pi * base ** (2 * i / d) for i in range(d // 2)]
    np.testing.assert_allclose(sinusoidal_wavelengths(d, base), expected, rtol=1e-12)


@pytest.mark.parametrize("args", [(-1, 4), (4, 0), (4, 4, 0.0), (4, 4, -10.0)])
def test_sinusoidal_rejects_bad_arguments(args):
    with pytest.raises(ValueError):
        sinusoidal_encoding(*args)


def test_index_encoding_rows_are_constant_position():
    table = index_encoding(6, 3)
    assert table.shape == (6, 3)
    for p in range(6):
        assert table[p].tolist() == [p, p, p]


# --- absolute encodings as modules ----------------------------------------------------------------


def test_learned_encoding_is_trainable_and_fixed_ones_are_not():
    learned = AbsolutePositionalEncoding("learned", 10, 4)
    params = list(learned.parameters())
    assert len(params) == 1 and params[0].shape == (10, 4) and params[0].requires_grad
    for kind in ("sinusoidal", "index", "none"):
        assert list(AbsolutePositionalEncoding(kind, 10, 4).parameters()) == []


def test_fixed_encoding_tables():
    np.testing.assert_allclose(
        AbsolutePositionalEncoding("sinusoidal", 9, 6, base=100.0)(5).numpy(),
        _sinusoid_reference(5, 6, 100.0), atol=1e-6,
    )
    assert torch.equal(AbsolutePositionalEncoding("index", 9, 2)(3), torch.tensor([[0.0, 0.0], [1, 1], [2, 2]]))
    assert torch.equal(AbsolutePositionalEncoding("none", 9, 2)(4), torch.zeros(4, 2))


def test_absolute_encoding_rejects_long_sequences_and_unknown_kinds():
    with pytest.raises(ValueError, match="max_len"):
        AbsolutePositionalEncoding("sinusoidal", 8, 4)(9)
    with pytest.raises(ValueError):
        AbsolutePositionalEncoding("rope", 8, 4)


def test_encoding_names():
    assert set(ENCODINGS) == {"sinusoidal", "learned", "index", "none", "rope", "alibi", "t5"}


# --- RoPE -----------------------------------------------------------------------------------------


def test_rope_angles_closed_form():
    n, hd, base = 7, 6, 10000.0
    expected = [[p * base ** (-2 * i / hd) for i in range(hd // 2)] for p in range(n)]
    np.testing.assert_allclose(rope_angles(n, hd, base), expected, rtol=1e-12, atol=0)
    with pytest.raises(ValueError):
        rope_angles(4, 5)


def _rotate_complex(x, positions, base=10000.0):
    """RoPE written with complex numbers: pair (2i, 2i+1) is z_i, multiplied by e^{i·p·θ_i}."""
    hd = x.shape[-1]
    theta = base ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    z = torch.complex(x[..., 0::2], x[..., 1::2])
    z = z * torch.polar(torch.ones_like(theta), positions.double()[:, None] * theta)
    return torch.stack((z.real, z.imag), dim=-1).flatten(-2)


def test_rope_matches_complex_rotation():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 9, 8, dtype=torch.float64)
    rope = RotaryEmbedding(8)
    torch.testing.assert_close(rope(x), _rotate_complex(x, torch.arange(9)))
    positions = torch.tensor([5, 0, 17, 3, 3, 40, 1, 2, 9])
    torch.testing.assert_close(rope(x, positions), _rotate_complex(x, positions))


def test_rope_preserves_norms_and_position_zero_is_identity():
    torch.manual_seed(0)
    x = torch.randn(4, 10, 16, dtype=torch.float64)
    rotated = RotaryEmbedding(16)(x)
    torch.testing.assert_close(rotated.norm(dim=-1), x.norm(dim=-1))
    torch.testing.assert_close(rotated[:, 0], x[:, 0], rtol=0, atol=0)
    assert not torch.allclose(rotated[:, 1:], x[:, 1:])


def test_rope_score_depends_only_on_offset():
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(1, 8, generator=gen, dtype=torch.float64)
    k = torch.randn(1, 8, generator=gen, dtype=torch.float64)
    rope = RotaryEmbedding(8)

    def score(p, s):
        return (rope(q, torch.tensor([p])) * rope(k, torch.tensor([s]))).sum().item()

    for offset in (0, 2, 5, -3):
        scores = [score(s + offset, s) for s in (3, 10, 31, 100)]
        np.testing.assert_allclose(scores, scores[0], rtol=1e-9, atol=1e-12)
    assert abs(score(2, 0) - score(5, 0)) > 1e-3


def test_rope_rejects_odd_head_dim():
    with pytest.raises(ValueError):
        RotaryEmbedding(5)


# --- ALiBi ----------------------------------------------------------------------------------------


def _paper_slopes(n):
    """Press et al.'s reference `get_slopes`, written out independently."""

    def power_of_two(m):
        start = 2 ** (-(2 ** -(math.log2(m) - 3)))
        return [start * start**i for i in range(m)]

    if math.log2(n).is_integer():
        return power_of_two(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_two(closest) + _paper_slopes(2 * closest)[0::2][: n - closest]


def test_alibi_slopes_eight_heads():
    np.testing.assert_allclose(alibi_slopes(8), [1 / 2**i for i in range(1, 9)], rtol=1e-15)


@pytest.mark.parametrize("n", [1, 2, 4, 16])
def test_alibi_slopes_powers_of_two_are_geometric(n):
    np.testing.assert_allclose(alibi_slopes(n), [2 ** (-8 * k / n) for k in range(1, n + 1)], rtol=1e-12)


def test_alibi_slopes_six_heads():
    np.testing.assert_allclose(alibi_slopes(6), [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125], rtol=1e-15)


@pytest.mark.parametrize("n", [3, 5, 6, 12, 20])
def test_alibi_slopes_match_paper_reference(n):
    np.testing.assert_allclose(alibi_slopes(n), _paper_slopes(n), rtol=1e-12)


def test_alibi_slopes_twelve_heads_explicit():
    expected = [2.0 ** (-k) for k in range(1, 9)] + [2.0 ** (-0.5), 2.0 ** (-1.5), 2.0 ** (-2.5), 2.0 ** (-3.5)]
    np.testing.assert_allclose(alibi_slopes(12), expected, rtol=1e-12)


def test_alibi_slopes_reject_zero_heads():
    with pytest.raises(ValueError):
        alibi_slopes(0)


@pytest.mark.parametrize("T_q,T_k", [(5, None), (3, 6)])
def test_alibi_bias_is_minus_slope_times_distance(T_q, T_k):
    bias = alibi_bias(4, T_q, T_k)
    T_k = T_q if T_k is None else T_k
    assert bias.shape == (4, T_q, T_k)
    slopes = [2 ** (-8 * k / 4) for k in range(1, 5)]
    for h in range(4):
        for i in range(T_q):
            for j in range(T_k):
                assert bias[h, i, j] == pytest.approx(-slopes[h] * abs(i - j), abs=1e-15)


# --- T5 relative buckets --------------------------------------------------------------------------


def _t5_bucket(relative_position, bidirectional, num_buckets, max_distance):
    """Mesh-TensorFlow / T5 `_relative_position_bucket` for one relative_position = key − query."""
    ret = 0
    n = -relative_position
    if bidirectional:
        num_buckets //= 2
        if n < 0:
            ret += num_buckets
        n = abs(n)
    else:
        n = max(n, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return ret + n
    val = max_exact + int(math.log(n / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact))
    return ret + min(val, num_buckets - 1)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets,max_distance", [(32, 128), (16, 40), (8, 20)])
def test_t5_buckets_match_reference(bidirectional, num_buckets, max_distance):
    T_q, T_k = 60, 70
    buckets = t5_relative_buckets(T_q, T_k, bidirectional, num_buckets, max_distance)
    assert buckets.shape == (T_q, T_k)
    expected = [[_t5_bucket(k - q, bidirectional, num_buckets, max_distance) for k in range(T_k)] for q in range(T_q)]
    np.testing.assert_array_equal(buckets, np.array(expected))


def _buckets_by_offset(bidirectional, num_buckets=32, max_distance=128, reach=300):
    """Bucket of offsets 0..reach (keys after the query) and 0..-reach (keys before)."""
    after = t5_relative_buckets(1, reach + 1, bidirectional, num_buckets, max_distance)[0]
    before = t5_relative_buckets(reach + 1, 1, bidirectional, num_buckets, max_distance)[:, 0]
    return after, before  # after[o] is offset +o, before[o] is offset -o


def test_t5_small_offsets_get_their_own_bucket():
    after, before = _buckets_by_offset(True)
    small = [after[o] for o in range(8)] + [before[o] for o in range(1, 8)]  # |offset| < 32 / 4
    assert len(set(small)) == len(small) == 15


@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_bucket_range_monotonicity_and_saturation(bidirectional):
    num_buckets, max_distance = 32, 128
    after, before = _buckets_by_offset(bidirectional, num_buckets, max_distance)
    for side in (after, before):
        assert side.min() >= 0 and side.max() < num_buckets
        assert np.all(np.diff(side) >= 0), "buckets must not decrease with distance"
    assert np.all(before[max_distance:] == before[max_distance])
    if bidirectional:
        assert np.all(after[max_distance:] == num_buckets - 1)
        assert np.all(before[max_distance:] == num_buckets // 2 - 1)
        assert set(after[1:]).isdisjoint(set(before))  # keys after the query use the upper half
    else:
        assert np.all(after == 0)  # future keys all share bucket 0 with offset 0
        assert np.all(before[max_distance:] == num_buckets - 1)
        assert len(set(before[:16])) == 16


def test_t5_relative_bias_looks_up_buckets():
    torch.manual_seed(0)
    module = T5RelativeBias(n_heads=3, bidirectional=True, num_buckets=16, max_distance=20)
    bias = module(4, 6)
    assert bias.shape == (1, 3, 4, 6)
    table = module.bias.weight
    for q in range(4):
        for k in range(6):
            bucket = _t5_bucket(k - q, True, 16, 20)
            torch.testing.assert_close(bias[0, :, q, k], table[bucket])


def test_t5_buckets_reject_a_max_distance_inside_the_exact_range():
    """log(max_distance / max_exact) would be log(1) = 0: a division by zero, not a bucket."""
    with pytest.raises(ValueError, match="max_distance"):
        t5_relative_buckets(8, num_buckets=32, max_distance=8)
    with pytest.raises(ValueError):
        t5_relative_buckets(8, bidirectional=False, num_buckets=32, max_distance=16)
