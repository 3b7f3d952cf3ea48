"""Where attention's gradient can still shrink, although its path from any input is one step: a softmax
that saturates passes almost nothing back to the scores that decide where to look, and a stack of
layers multiplies one Jacobian per layer again.  Measured for the gradients lesson's "Claims, measured"
box (explorer/lessons/gradients/limits.py), against the lecture notes' "gradients within a layer … can't
vanish or explode".  Pure torch, float64, seeded with its own generators.
"""

from __future__ import annotations

import math

import torch

from .depth import layer_gradient_norms
from .gradients import default_readout, random_sequence

__all__ = ["SCORE_SCALES", "score_gradient", "stacked_orders_lost"]

SCORE_SCALES = (1, 4, 16, 64, 256)  # the factor the scores are multiplied by (training can grow them this much)


def score_gradient(T: int, width: int, scale: float, seed: int = 0) -> dict[str, float]:
    """One attention head, the last of T positions reading all T (random input, weights drawn like
    nn.Linear's from `seed`), its scores q·k/√d multiplied by `scale`; L = r · (the head's output).
    Returns {"top": the largest weight of the row, "scores": ‖∂L/∂scores‖, "values": ‖∂L/∂V‖} by
    autograd.  The scores' gradient is (diag(p) − ppᵀ)·(V r): it falls to 0 as p becomes one-hot, while
    the values' gradient, p ⊗ r, does not."""
    generator = torch.Generator().manual_seed(seed)
    bound = 1 / math.sqrt(width)
    w_q, w_k, w_v = ((torch.rand(width, width, generator=generator, dtype=torch.float64) * 2 - 1) * bound
                     for _ in range(3))
    x = random_sequence(T, width, seed=seed)
    q, k = x[-1] @ w_q, x @ w_k  # (d,), (T, d)
    v = (x @ w_v).requires_grad_(True)  # (T, d)
    scores = (scale * (k @ q) / math.sqrt(width)).detach().requires_grad_(True)  # (T,)
    p = torch.softmax(scores, dim=0)
    loss = default_readout(width) @ (p @ v)
    d_scores, d_values = torch.autograd.grad(loss, (scores, v))
    return {"top": float(p.detach().max()), "scores": float(d_scores.norm()), "values": float(d_values.norm())}


def stacked_orders_lost(n_layers: int, width: int, T: int, seed: int = 0) -> float:
    """Orders of magnitude the gradient loses from the last layer's input down to the first in a stack of
    encoder layers without residual connections or LayerNorm (explorer.analysis.depth)."""
    norms = layer_gradient_norms(n_layers, width, residual=False, norm="none", seed=seed, T=T)
    return float(math.log10(norms[-1] / norms[0]))
