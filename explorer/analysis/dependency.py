"""‖∂y_t/∂x_s‖ for every output t and input s: how strongly each output depends on each input.

Row t is a fading lower triangle for an RNN, a flat lower triangle for causal attention and a full
square without the mask.  `dependency_matrix` computes it with torch.autograd.functional.jacobian
(the reference); `fast_dependency_matrix` gives the same numbers from a few batched backward passes.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..model.positional import sinusoidal_encoding
from .gradients import CausalAttentionStack

__all__ = ["UnmaskedAttentionStack", "dependency_matrix", "fast_dependency_matrix"]


def dependency_matrix(model: nn.Module, x: torch.Tensor) -> np.ndarray:
    """(T, T) matrix of ‖∂y_t/∂x_s‖ (Frobenius norm of each Jacobian block).

    Row t says how strongly output t depends on each input s: a fading lower triangle for an RNN,
    a flat lower triangle for causal attention, a full square without a mask.
    """
    x = x.detach().to(torch.float64)

    def run(inputs: torch.Tensor) -> torch.Tensor:
        return model(inputs[None])[0]

    jac = torch.autograd.functional.jacobian(run, x, vectorize=True)  # (T, d_out, T, d_in)
    return jac.pow(2).sum(dim=(1, 3)).sqrt().numpy()


class UnmaskedAttentionStack(nn.Module):
    """The same layers (and weights) as a CausalAttentionStack, run without the causal mask: the
    encoder's view, in which every output may read every input."""

    def __init__(self, causal: CausalAttentionStack):
        super().__init__()
        self.causal = causal

    def forward(self, x: torch.Tensor, bptt_window: int | None = None) -> torch.Tensor:
        T = x.shape[1]
        h = x + torch.from_numpy(sinusoidal_encoding(T, self.causal.width)).to(x.dtype)
        for layer in self.causal.layers:
            h, _ = layer(h, mask=None)
        return h


def fast_dependency_matrix(
    model: nn.Module, x: torch.Tensor, *, causal: bool = False, rows_per_chunk: int | None = None
) -> np.ndarray:
    """(T, T) matrix of ‖∂y_t/∂x_s‖ (Frobenius norm of each Jacobian block), float64.

    The same numbers as `dependency_matrix`, several times faster and with
    plain autograd (torch.func would pull in torch._dynamo, seconds of imports on first use).
    Rows are computed in chunks of output positions: for a chunk of n positions the sequence is
    repeated n·width times as a batch, batch element (t, i) back-propagates y_t[i] alone, and one
    backward pass gives all n·width rows of the Jacobian.  causal=True promises that y_t depends
    only on x_0 … x_t (an RNN, a causally masked layer with absolute positions); each chunk then
    runs on the prefix it needs, which halves the work.  For speed pass a model whose parameters do
    not require gradients (the function does not change the model).
    """
    x = x.detach().to(torch.float64)
    T, width = x.shape
    rows = rows_per_chunk or max(1, 128 // width)
    out = np.zeros((T, T))
    for t0 in range(0, T, rows):
        t1 = min(T, t0 + rows)
        n, length = t1 - t0, (t1 if causal else T)
        batch = x[None, :length].expand(n * width, length, width).clone().requires_grad_(True)
        y = model(batch)[:, t0:t1]  # (n·width, n, width): element (t, i) of the batch picks y_t[i]
        picked = y.reshape(n * width, n * width).diagonal()
        (grad,) = torch.autograd.grad(picked.sum(), batch)
        out[t0:t1, :length] = grad.reshape(n, width, length, width).pow(2).sum(dim=(1, 3)).sqrt().numpy()
    return out
