"""explorer.views.depth: the cached, seed-batched depth curves equal the plain module stacks."""

import numpy as np
import pytest

from explorer.analysis.depth import layer_gradient_norms
from explorer.views.depth import depth_curves

pytestmark = pytest.mark.usefixtures("one_thread")  # as in the app: one torch thread


def test_depth_curves_equal_layer_gradient_norms_and_show_the_short_cut():
    curves = depth_curves(6, 8, 4, 2)
    for (norm, residual), values in curves.items():
        assert values.shape == (2, 6) and not values.flags.writeable
        np.testing.assert_allclose(
            values[1], layer_gradient_norms(6, 8, residual=residual, norm=norm, seed=1, T=4), rtol=1e-12)
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
    depth_curves.cache_clear()
    curves = depth_curves(n_layers, width, T, n_seeds)
    for (norm, residual), values in curves.items():
        assert values.shape == (n_seeds, n_layers)
        for seed in range(n_seeds):
            np.testing.assert_allclose(
                values[seed], layer_gradient_norms(n_layers, width, residual, norm, seed, T), rtol=1e-10)

