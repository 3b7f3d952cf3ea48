"""How far back does the gradient reach?  ‖∂L/∂x_t‖ and ‖∂y_t/∂x_s‖ for the loop and for attention.

An RNN's gradient to an early input is a product of T Jacobians and shrinks (or grows)
geometrically with the distance; a causal attention layer reaches every earlier input in one step.
Everything here runs in float64: in float32 the RNN's norms underflow to exactly 0 for long
sequences, which would hide how small they really are.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..model.attention import causal_mask
from ..model.positional import sinusoidal_encoding
from ..model.rnn import RECURRENT_KINDS, RecurrentNet
from ..model.transformer import EncoderLayer
from ..training.seeding import seeded

__all__ = [
    "SEQUENCE_MODEL_KINDS",
    "CausalAttentionStack",
    "build_sequence_model",
    "dependency_matrix",
    "input_gradient_norms",
]

SEQUENCE_MODEL_KINDS = (*RECURRENT_KINDS, "transformer")


class CausalAttentionStack(nn.Module):
    """A decoder-style stack on continuous inputs: sinusoidal positions, causal self-attention.

    With the default `residual=False` each layer is the lecture's "direct function": y_t is
    computed from x_1..x_t in one step, with no state passed along the sequence.
    """

    def __init__(self, width: int, n_heads: int = 1, n_layers: int = 1, residual: bool = False, norm: str = "pre"):
        super().__init__()
        self.width = width
        self.layers = nn.ModuleList(
            EncoderLayer(width, n_heads, 4 * width, norm=norm, residual=residual) for _ in range(n_layers)
        )

    def forward(self, x: torch.Tensor, bptt_window: int | None = None) -> torch.Tensor:
        """x: (B, T, width) → (B, T, width).  bptt_window is accepted and ignored: there is no
        time recursion to truncate."""
        T = x.shape[1]
        h = x + torch.from_numpy(sinusoidal_encoding(T, self.width)).to(x.dtype)
        mask = causal_mask(T)
        for layer in self.layers:
            h, _ = layer(h, mask=mask)
        return h


class _RecurrentOutputs(nn.Module):
    """Adapter: a RecurrentNet's hidden states as its outputs, same call signature as the stack."""

    def __init__(self, net: RecurrentNet):
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor, bptt_window: int | None = None) -> torch.Tensor:
        return self.net(x, bptt_window=bptt_window).hidden


def build_sequence_model(
    kind: str,
    width: int,
    *,
    init: str = "default",
    gain: float = 1.0,
    seed: int = 0,
    n_heads: int = 1,
    n_layers: int = 1,
    residual: bool = False,
) -> nn.Module:
    """A float64 model mapping (B, T, width) → (B, T, width), seeded for reproducibility.

    init: "default" keeps PyTorch's initialisation; "orthogonal" sets every recurrent matrix
    (W_hh, one block per gate) to an orthogonal matrix times `gain` — gain < 1 makes gradients
    vanish, gain > 1 makes them explode.  Ignored for the transformer.
    """
    if kind not in SEQUENCE_MODEL_KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {SEQUENCE_MODEL_KINDS}")
    if init not in ("default", "orthogonal"):
        raise ValueError("init must be 'default' or 'orthogonal'")
    with seeded(seed):
        if kind == "transformer":
            model = CausalAttentionStack(width, n_heads=n_heads, n_layers=n_layers, residual=residual)
        else:
            net = RecurrentNet(kind, width, width)
            if init == "orthogonal":
                with torch.no_grad():
                    for block in net.cell.weight_hh.split(width, dim=0):
                        nn.init.orthogonal_(block, gain=gain)
            model = _RecurrentOutputs(net)
    return model.double().eval()


def _seeded_normal(shape, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=torch.float64)


def input_gradient_norms(
    model: nn.Module, x: torch.Tensor, readout: torch.Tensor | None = None, bptt_window: int | None = None
) -> np.ndarray:
    """‖∂L/∂x_t‖ for every t, with L = readout · y_{T−1} (a fixed linear read-out of the last output).

    x: (T, width) one sequence.  readout defaults to a fixed random unit vector.
    """
    x = x.detach().to(torch.float64).clone().requires_grad_(True)
    y = model(x[None], bptt_window=bptt_window)[0]
    if readout is None:
        readout = _seeded_normal((y.shape[-1],), seed=1234)
        readout = readout / readout.norm()
    loss = (y[-1] * readout.to(y.dtype)).sum()
    (grad,) = torch.autograd.grad(loss, x)
    return grad.norm(dim=-1).numpy()


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


def random_sequence(T: int, width: int, seed: int = 0) -> torch.Tensor:
    """A reproducible (T, width) float64 input sequence with unit-variance entries."""
    return _seeded_normal((T, width), seed)
