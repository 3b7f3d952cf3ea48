"""How far back does the gradient reach?  ‖∂L/∂x_t‖ for the loop and for attention, by autograd.

An RNN's gradient to an early input is a product of T Jacobians and shrinks (or grows)
geometrically with the distance; a causal attention layer reaches every earlier input in one step.
Everything here runs in float64: in float32 the RNN's norms underflow to exactly 0 for long
sequences, which would hide how small they really are.  The models and inputs of the gradient
lessons come from here (seed s: model seed s, input seed INPUT_SEED_OFFSET + s, the read-out
`default_readout`); `explorer.analysis.bptt` computes the same norms where autograd loses them,
`explorer.analysis.dependency` the matrix ‖∂y_t/∂x_s‖, `explorer.analysis.depth` depth instead of time.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..model.attention import causal_mask
from ..model.building import seeded
from ..model.positional import sinusoidal_encoding
from ..model.rnn import RECURRENT_KINDS, BidirectionalNet, RecurrentNet
from ..model.transformer import EncoderLayer

__all__ = [
    "BIDIRECTIONAL_KINDS",
    "INPUT_SEED_OFFSET",
    "READOUT_SEED",
    "SEQUENCE_MODEL_KINDS",
    "CausalAttentionStack",
    "build_sequence_model",
    "default_readout",
    "forget_gate_values",
    "input_gradient_norms",
    "random_sequence",
    "spectral_radius",
]

SEQUENCE_MODEL_KINDS = (*RECURRENT_KINDS, "transformer")  # the gradient curves' models, in the page's order
BIDIRECTIONAL_KINDS = ("birnn",)  # also built: a tanh RNN read both ways (torch's bidirectional=True)
INPUT_SEED_OFFSET = 1000  # seed s uses model seed s and input seed 1000 + s (independent streams)
READOUT_SEED = 1234  # the fixed random read-out through which every gradient here is measured


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
    """Adapter: a RecurrentNet's (or BidirectionalNet's) hidden states as its outputs, same call
    signature as the stack."""

    def __init__(self, net: RecurrentNet | BidirectionalNet):
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
    forget_bias: float = 0.0,
) -> nn.Module:
    """A float64 model mapping (B, T, width) → (B, T, width), seeded for reproducibility; "birnn"
    maps to (B, T, 2·width): the forward and the backward state of width `width` each.

    init: "default" keeps PyTorch's initialisation; "orthogonal" sets every recurrent matrix
    (W_hh, one block per gate, each direction's) to an orthogonal matrix times `gain` — gain < 1
    makes gradients vanish, gain > 1 makes them explode.  Ignored for the transformer.
    forget_bias: added to the LSTM's forget-gate bias (the second quarter of `bias_ih`, whose sum with
    `bias_hh` is the gate's bias); 0 keeps PyTorch's draws, uniform(±1/√width) each, so the gate starts
    near σ(0) = 0.5.  Only the LSTM has a forget gate: ignored for the other kinds.
    """
    kinds = (*SEQUENCE_MODEL_KINDS, *BIDIRECTIONAL_KINDS)
    if kind not in kinds:
        raise ValueError(f"unknown kind {kind!r}; expected one of {kinds}")
    if init not in ("default", "orthogonal"):
        raise ValueError("init must be 'default' or 'orthogonal'")
    with seeded(seed):
        if kind == "transformer":
            model = CausalAttentionStack(width, n_heads=n_heads, n_layers=n_layers, residual=residual)
        else:
            if kind == "birnn":
                net = BidirectionalNet("rnn", width, width)
                cells = [net.forward_net.cell, net.backward_net.cell]
            else:
                net = RecurrentNet(kind, width, width)
                cells = [net.cell]
            if init == "orthogonal":
                with torch.no_grad():
                    for block in (b for cell in cells for b in cell.weight_hh.split(width, dim=0)):
                        nn.init.orthogonal_(block, gain=gain)
            if kind == "lstm" and forget_bias:
                with torch.no_grad():
                    net.cell.bias_ih[width:2 * width] += forget_bias  # torch's gate order: i, f, g, o
            model = _RecurrentOutputs(net)
    return model.double().eval()


def spectral_radius(matrix: torch.Tensor) -> float:
    """The largest |eigenvalue| of a square matrix: over many steps, x ↦ W x scales a vector by about
    this factor per step (Gelfand's formula, ‖Wᵏ‖^(1/k) → ρ(W))."""
    return float(torch.linalg.eigvals(matrix.detach().to(torch.float64)).abs().max())


def forget_gate_values(cell: nn.LSTMCell, x: torch.Tensor) -> torch.Tensor:
    """The forget gate f_t of an LSTM cell run over x (B, T, input) from a zero state, PyTorch's equations
    (c_t = f_t ⊙ c_{t−1} + i_t ⊙ g_t): (B, T, hidden).  f_t is the fraction of each unit of the cell
    state carried into step t, and ∂c_t/∂c_{t−1} along that path."""
    hidden = cell.hidden_size
    with torch.no_grad():
        h = x.new_zeros(x.shape[0], hidden)
        c = x.new_zeros(x.shape[0], hidden)
        gates = []
        for t in range(x.shape[1]):
            a = x[:, t] @ cell.weight_ih.T + cell.bias_ih + h @ cell.weight_hh.T + cell.bias_hh
            a_i, a_f, a_g, a_o = a.chunk(4, dim=-1)
            f = torch.sigmoid(a_f)
            c = f * c + torch.sigmoid(a_i) * torch.tanh(a_g)
            h = torch.sigmoid(a_o) * torch.tanh(c)
            gates.append(f)
    return torch.stack(gates, 1)


def _seeded_normal(shape, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=torch.float64)


def default_readout(*shape: int) -> torch.Tensor:
    """The fixed random read-out of unit norm (float64, seeded by READOUT_SEED) that turns an output
    into the scalar loss L = readout · y: shaped (width,) for one output, (T, width) for all."""
    readout = _seeded_normal(shape, READOUT_SEED)
    return readout / readout.norm()


def input_gradient_norms(
    model: nn.Module, x: torch.Tensor, readout: torch.Tensor | None = None, bptt_window: int | None = None
) -> np.ndarray:
    """‖∂L/∂x_t‖ for every t, with L = readout · y_{T−1} (a fixed linear read-out of the last output).

    x: (T, width) one sequence.  readout defaults to `default_readout(width)`.
    """
    x = x.detach().to(torch.float64).clone().requires_grad_(True)
    y = model(x[None], bptt_window=bptt_window)[0]
    if readout is None:
        readout = default_readout(y.shape[-1])
    loss = (y[-1] * readout.to(y.dtype)).sum()
    (grad,) = torch.autograd.grad(loss, x)
    return grad.norm(dim=-1).numpy()


def random_sequence(T: int, width: int, seed: int = 0) -> torch.Tensor:
    """A reproducible (T, width) float64 input sequence with unit-variance entries."""
    return _seeded_normal((T, width), seed)
