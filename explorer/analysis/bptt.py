"""Back-propagation through time written out: log10 ‖∂L/∂x_t‖ for a tanh RNN, an LSTM and a GRU.

The recurrent networks are back-propagated step by step with the adjoint renormalised every few
steps (its scale kept as a logarithm), so the norms stay exact at any length.  Plain autograd
(`explorer.analysis.gradients.input_gradient_norms`, the reference in the tests) loses them twice
over: `Tensor.norm` squares the entries, so a gradient below about 1e-154 gets a norm of exactly 0
(a tanh RNN at T = 512 reaches 1e-188), and the entries themselves underflow below about 1e-308
(a tanh RNN with orthogonal gain 0.5 gets there in ~800 steps) or overflow to inf when they explode.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from ..model.rnn import RECURRENT_KINDS
from .gradients import INPUT_SEED_OFFSET, build_sequence_model, default_readout, random_sequence

__all__ = ["GATE_CARRYING_STATE", "RESCALE_EVERY", "recurrent_gate_means", "recurrent_log_gradient_norms"]

# The backward pass rescales its adjoint every this many steps.  One step changes the adjoint's norm
# by a bounded factor (the recurrent weights' norm, at most the page's largest gain of 8, times gate
# derivatives of at most 1), so in between float64 (1e±308) stays far from under- or overflow.
RESCALE_EVERY = 8


def _recurrent_cell(model: nn.Module) -> nn.RNNCellBase:
    return next(m for m in model.modules() if isinstance(m, nn.RNNCellBase))


def _forward(kind: str, gi_all: torch.Tensor, w_hh: torch.Tensor, b_hh: torch.Tensor) -> list[dict]:
    """Run PyTorch's RNNCell / LSTMCell / GRUCell equations, batched over seeds (each seed its own
    weights), and keep what the backward pass needs from every step.

    gi_all: (S, T, G·w) input projections x_t W_ihᵀ + b_ih.  w_hh: (S, G·w, w).  b_hh: (S, G·w).
    """
    S, T, _ = gi_all.shape
    width = w_hh.shape[-1]
    h = gi_all.new_zeros(S, width)
    c = gi_all.new_zeros(S, width)
    steps = []
    for t in range(T):
        gi = gi_all[:, t]
        gh = torch.baddbmm(b_hh[:, None], h[:, None], w_hh.transpose(1, 2))[:, 0]
        if kind == "rnn":
            h = torch.tanh(gi + gh)
            steps.append({"h": h})
        elif kind == "lstm":
            a_i, a_f, a_g, a_o = (gi + gh).chunk(4, dim=-1)
            i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
            c_prev, c = c, f * c + i * g
            tc = torch.tanh(c)
            h = o * tc
            steps.append({"i": i, "f": f, "g": g, "o": o, "c_prev": c_prev, "tc": tc})
        else:
            r_i, z_i, n_i = gi.chunk(3, dim=-1)
            r_h, z_h, n_h = gh.chunk(3, dim=-1)
            r, z = torch.sigmoid(r_i + r_h), torch.sigmoid(z_i + z_h)
            n = torch.tanh(n_i + r * n_h)
            h_prev, h = h, (1 - z) * n + z * h
            steps.append({"r": r, "z": z, "n": n, "n_h": n_h, "h_prev": h_prev})
    return steps


def _backward_step(kind: str, step: dict, d_h: torch.Tensor, d_c: torch.Tensor | None):
    """Back through one cell: the adjoints of h_t (and c_t) → (∂/∂ gate pre-activations from the
    input side, ∂/∂ gate pre-activations from the state side, ∂/∂c_{t−1})."""
    if kind == "rnn":
        d_a = d_h * (1 - step["h"] ** 2)
        return d_a, d_a, None
    if kind == "lstm":
        i, f, g, o, tc = step["i"], step["f"], step["g"], step["o"], step["tc"]
        d_c = d_c + d_h * o * (1 - tc**2)
        d_a = torch.cat([
            d_c * g * i * (1 - i),
            d_c * step["c_prev"] * f * (1 - f),
            d_c * i * (1 - g**2),
            d_h * tc * o * (1 - o),
        ], dim=-1)
        return d_a, d_a, d_c * f
    r, z, n = step["r"], step["z"], step["n"]
    d_an = d_h * (1 - z) * (1 - n**2)  # through n = tanh(n_i + r · n_h)
    d_ar = d_an * step["n_h"] * r * (1 - r)
    d_az = d_h * (step["h_prev"] - n) * z * (1 - z)
    return torch.cat([d_ar, d_az, d_an], dim=-1), torch.cat([d_ar, d_az, d_an * r], dim=-1), None


def _weights_and_inputs(kind: str, width: int, T: int, init: str, gain: float, forget_bias: float,
                        seeds: tuple[int, ...]) -> tuple[torch.Tensor, ...]:
    """Every seed's cell weights stacked (W_ih, W_hh, b_ih, b_hh) and its input (S, T, width)."""
    cells = [_recurrent_cell(build_sequence_model(kind, width, init=init, gain=gain, seed=s, forget_bias=forget_bias))
             for s in seeds]
    w_ih, w_hh, b_ih, b_hh = (torch.stack([getattr(c, name).detach() for c in cells])
                              for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
    x = torch.stack([random_sequence(T, width, seed=INPUT_SEED_OFFSET + s) for s in seeds])  # (S, T, w)
    return w_ih, w_hh, b_ih, b_hh, x


GATE_CARRYING_STATE = {"lstm": "f", "gru": "z"}  # the gate that multiplies the previous state


def recurrent_gate_means(
    kind: str,
    width: int,
    T: int,
    *,
    init: str = "default",
    gain: float = 1.0,
    seeds: tuple[int, ...] = (0,),
    forget_bias: float = 0.0,
) -> float:
    """The mean, over seeds, steps and units, of the gate that carries the previous state into the next
    on `recurrent_log_gradient_norms`' networks and inputs: the LSTM's forget gate f (c_t = f ⊙ c_{t−1}
    + i ⊙ g), the GRU's update gate z (h_t = (1 − z) ⊙ n + z ⊙ h_{t−1})."""
    if kind not in GATE_CARRYING_STATE:
        raise ValueError(f"only the LSTM and the GRU carry their state through a gate, not {kind!r}")
    w_ih, w_hh, b_ih, b_hh, x = _weights_and_inputs(kind, width, T, init, gain, forget_bias, seeds)
    with torch.no_grad():
        steps = _forward(kind, torch.baddbmm(b_ih[:, None], x, w_ih.transpose(1, 2)), w_hh, b_hh)
    return float(torch.stack([step[GATE_CARRYING_STATE[kind]] for step in steps]).mean())


def recurrent_log_gradient_norms(
    kind: str,
    width: int,
    T: int,
    *,
    init: str = "default",
    gain: float = 1.0,
    seeds: tuple[int, ...] = (0,),
    bptt_window: int | None = None,
    forget_bias: float = 0.0,
) -> np.ndarray:
    """log10 ‖∂L/∂x_t‖ for a recurrent model, shape (len(seeds), T); −inf where the gradient is 0.

    Seed s is `build_sequence_model(kind, width, init=init, gain=gain, seed=s, forget_bias=forget_bias)` on the input
    `random_sequence(T, width, seed=1000 + s)`, with L = r · h_{T−1} for `default_readout(width)` —
    exactly what `input_gradient_norms` computes.  Here back-propagation through time is written
    out step by step (the cells' own derivatives, batched over seeds), and after every step the
    adjoint ∂L/∂h_t (with ∂L/∂c_t for the LSTM) is divided by its norm every RESCALE_EVERY steps,
    the divisors being summed as logarithms, so nothing underflows or overflows however long the
    sequence.  bptt_window truncates like `RecurrentNet`: the state entering step T − window is
    detached, so inputs before it get exactly 0 (−inf here).
    """
    if kind not in RECURRENT_KINDS:
        raise ValueError(f"unknown recurrent kind {kind!r}; expected one of {RECURRENT_KINDS}")
    if bptt_window is not None and bptt_window < 1:
        raise ValueError("bptt_window must be at least 1 (or None for full back-propagation)")
    w_ih, w_hh, b_ih, b_hh, x = _weights_and_inputs(kind, width, T, init, gain, forget_bias, seeds)
    S = len(seeds)
    cut = None if bptt_window is None else T - bptt_window
    first = 0 if cut is None else max(0, cut)
    d_inputs = x.new_zeros(S, T, w_ih.shape[1])  # ∂L/∂(input projection at t), up to the scale in force at t
    log_scales = torch.zeros(S, T, dtype=torch.float64)
    with torch.no_grad():
        steps = _forward(kind, torch.baddbmm(b_ih[:, None], x, w_ih.transpose(1, 2)), w_hh, b_hh)
        d_h = default_readout(width).expand(S, width).clone()
        d_c = torch.zeros_like(d_h) if kind == "lstm" else None
        log_scale = torch.zeros(S, dtype=torch.float64)  # log10 of what the adjoint was divided by
        for t in reversed(range(first, T)):
            d_input, d_state, d_c = _backward_step(kind, steps[t], d_h, d_c)
            d_inputs[:, t] = d_input
            log_scales[:, t] = log_scale
            if t == cut:  # the state entering this step was detached: nothing flows further back
                break
            through_gates = torch.bmm(d_state[:, None], w_hh)[:, 0]
            # The GRU also passes h_{t−1} straight through, weighted by its update gate z.
            d_h = through_gates + d_h * steps[t]["z"] if kind == "gru" else through_gates
            if t % RESCALE_EVERY == 0:
                adjoints = [d_h] if d_c is None else [d_h, d_c]
                norm = torch.sqrt(sum(a.pow(2).sum(dim=-1) for a in adjoints))
                safe = torch.where(norm > 0, norm, torch.ones_like(norm))
                log_scale = torch.where(norm > 0, log_scale + torch.log10(safe), torch.full_like(log_scale, -math.inf))
                d_h = d_h / safe[:, None]
                d_c = None if d_c is None else d_c / safe[:, None]
        grad_norms = torch.bmm(d_inputs, w_ih).norm(dim=-1)  # ‖∂L/∂x_t‖ for every t at once, scaled
    with np.errstate(divide="ignore"):
        log10_norms = np.log10(grad_norms.numpy()) + log_scales.numpy()
    log10_norms[:, :first] = -np.inf
    return log10_norms
