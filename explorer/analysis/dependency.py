"""‖∂y_t/∂x_s‖ for every output t and input s: how strongly each output depends on each input.

Row t is a fading lower triangle for an RNN, a fading band both ways for a bidirectional RNN, a flat
lower triangle for causal attention and a full square without the mask.  `dependency_path_lengths`
gives the steps between y_t and x_s for each, in closed form.  `dependency_matrix` computes the
matrix with torch.autograd.functional.jacobian (the reference); `fast_dependency_matrix` gives the
same numbers from a few batched backward passes.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..model.positional import sinusoidal_encoding
from .gradients import CausalAttentionStack

__all__ = ["PATH_KINDS", "UnmaskedAttentionStack", "dependency_matrix", "dependency_path_lengths",
           "fast_dependency_matrix"]

PATH_KINDS = ("rnn", "lstm", "gru", "birnn", "transformer", "unmasked")


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
    with torch.no_grad():
        out_width = model(x[None, :1]).shape[-1]  # a bidirectional RNN's outputs are twice as wide
    rows = rows_per_chunk or max(1, 128 // out_width)
    out = np.zeros((T, T))
    for t0 in range(0, T, rows):
        t1 = min(T, t0 + rows)
        n, length = t1 - t0, (t1 if causal else T)
        batch = x[None, :length].expand(n * out_width, length, width).clone().requires_grad_(True)
        y = model(batch)[:, t0:t1]  # (n·out_width, n, out_width): element (t, i) of the batch picks y_t[i]
        picked = y.reshape(n * out_width, n * out_width).diagonal()
        (grad,) = torch.autograd.grad(picked.sum(), batch)
        out[t0:t1, :length] = grad.reshape(n, out_width, length, width).pow(2).sum(dim=(1, 3)).sqrt().numpy()
    return out


def dependency_path_lengths(T: int, kind: str, n_layers: int = 1) -> np.ndarray:
    """(T, T) steps on the shortest path from output y_t back to input x_s (inf: no path).

    One-way loop ("rnn", "lstm", "gru"): t − s + 1 cell steps for s ≤ t, none for s > t.
    Bidirectional loop ("birnn"): |t − s| + 1, through the forward states for s ≤ t and the
    backward states for s ≥ t.  Attention: one step per layer, to every earlier input
    ("transformer", causal) or to every input ("unmasked").  A stack of n_layers adds one step
    per layer above the first."""
    if kind not in PATH_KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {PATH_KINDS}")
    if T < 1 or n_layers < 1:
        raise ValueError("T and n_layers must be at least 1")
    t, s = np.arange(T)[:, None], np.arange(T)[None, :]
    if kind in ("transformer", "unmasked"):
        steps = np.full((T, T), float(n_layers))
    else:
        steps = np.abs(t - s) + 1.0 + (n_layers - 1)
    if kind not in ("birnn", "unmasked"):
        steps[s > t] = np.inf
    return steps
