"""explorer.analysis.depth: gradients through a deep stack against finite differences; the stacks of
every wiring share one seeded draw of weights."""

import numpy as np
import pytest
import torch

from explorer.analysis import depth
from explorer.analysis.gradients import default_readout, random_sequence


@pytest.mark.parametrize("norm", depth.DEPTH_NORMS)
@pytest.mark.parametrize("residual", [True, False])
def test_layer_gradient_norms_match_finite_differences(norm, residual):
    n_layers, width, T = 2, 4, 2
    stack = depth.build_layer_stack(n_layers, width, residual=residual, norm=norm, seed=5)
    x = random_sequence(T, width, seed=1005)[None]
    readout = default_readout(T, width)

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
    got = depth.layer_gradient_norms(n_layers, width, residual=residual, norm=norm, seed=5, T=T)
    assert got.dtype == np.float64 and got.shape == (n_layers,)
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_layer_stacks_share_weights_across_wirings_and_leave_the_global_rng_alone():
    torch.manual_seed(7)
    expected_next = torch.rand(2)
    torch.manual_seed(7)
    stacks = [depth.build_layer_stack(2, 8, residual=r, norm=n, seed=1) for n, r in depth.DEPTH_CONFIGS]
    assert torch.equal(torch.rand(2), expected_next)
    first = dict(stacks[0][0].named_parameters())
    for stack in stacks[1:]:
        for name, p in stack[0].named_parameters():
            if name in first:
                assert torch.equal(p, first[name])
    post, pre, none = (depth.build_layer_stack(1, 8, residual=True, norm=n) for n in depth.DEPTH_NORMS)
    assert isinstance(pre[-1], torch.nn.LayerNorm) and isinstance(post[-1], torch.nn.Identity)
    assert isinstance(none[0].attn_norm, torch.nn.Identity)
    with pytest.raises(ValueError):
        depth.build_layer_stack(2, 8, residual=True, norm="batch")


def test_deeper_draws_start_with_the_shallower_stack():
    """What lets one draw of 24 layers serve every depth: the seeded layers come out in order."""
    shallow, deep = depth._seeded_stack(3, 16, 2, 4), depth._seeded_stack(24, 16, 2, 4)
    for a, b in zip(shallow[:-1], deep[:3], strict=True):
        for (name, p), (_, q) in zip(a.named_parameters(), b.named_parameters(), strict=True):
            assert torch.equal(p, q), name

