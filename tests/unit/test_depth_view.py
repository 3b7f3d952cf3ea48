"""explorer.lessons.depth.view: the cached, seed-batched depth curves equal the plain module stacks."""

import numpy as np
import pytest

from explorer.analysis.depth import layer_gradient_norms
from explorer.lessons.depth.view import depth_curves

FLOAT32_RTOL = 2e-3  # the page's pass runs in float32: ~1e-5 typically, ~5e-4 for 24 pre-norm layers with residual


def test_depth_curves_equal_layer_gradient_norms_and_show_the_short_cut():
    curves = depth_curves(6, 8, 4, 2)
    for (norm, residual), values in curves.items():
        assert values.shape == (2, 6) and not values.flags.writeable
        np.testing.assert_allclose(
            values[1], layer_gradient_norms(6, 8, residual=residual, norm=norm, seed=1, T=4), rtol=FLOAT32_RTOL)
    plain = np.log10(curves[("none", False)]).mean(axis=0)
    short_cut = np.log10(curves[("none", True)]).mean(axis=0)
    assert plain[-1] - plain[0] > 3, "without residual or norm the gradient should vanish with depth"
    assert abs(short_cut[-1] - short_cut[0]) < 1
    with pytest.raises(TypeError):
        curves[("post", True)] = None  # the cached mapping is read-only


@pytest.mark.parametrize("n_layers, width, T, n_seeds", [(1, 16, 4, 1), (5, 16, 8, 3), (24, 32, 4, 2), (26, 16, 4, 2),
                                                     (24, 64, 32, 2), (24, 16, 8, 1)])
def test_seed_batched_depth_curves_equal_each_plain_stack(n_layers, width, T, n_seeds):
    """The seed-batched float32 pass on cached weights (a prefix of a 24-layer draw, or a deeper draw
    above it) gives every seed's and wiring's norms as the plain float64 module stack of rewired layers
    does, to float32's rounding: also the gradient that has vanished to ~1e-30 without residual or
    LayerNorm (the loss scaling keeps it in float32's range)."""
    curves = depth_curves(n_layers, width, T, n_seeds)
    for (norm, residual), values in curves.items():
        assert values.shape == (n_seeds, n_layers)
        for seed in range(n_seeds):
            np.testing.assert_allclose(
                values[seed], layer_gradient_norms(n_layers, width, residual, norm, seed, T), rtol=FLOAT32_RTOL)


def test_a_gradient_beyond_float32s_range_is_computed_in_float64():
    """60 layers without residual or LayerNorm: the gradient falls to ~1e-70, out of float32's reach
    even with the loss scaled, so those wirings are computed again in float64 (exactly the reference)."""
    curves = depth_curves(60, 16, 4, 1)
    assert curves[("none", False)].min() < 1e-60
    for (norm, residual), values in curves.items():
        exact = not residual  # the three wirings without a residual are one piece, computed again
        np.testing.assert_allclose(values[0], layer_gradient_norms(60, 16, residual, norm, 0, 4),
                                   rtol=1e-10 if exact else FLOAT32_RTOL)

