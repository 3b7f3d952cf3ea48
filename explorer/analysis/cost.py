"""Exact parameter and multiplication counts behind the lecture's big-O table.

Multiplications are those of the matrix products (the dominant cost, and what the big-O table
counts); element-wise work such as softmax, activations and normalisation is left out.  Parameter
counts include biases and LayerNorm scales, and match `explorer.model.parameters.count_parameters` on the built modules.

Big-O per layer for sequence length T, width d, kernel k:

    layer           parameters   operations       sequential steps   path length
    CNN             O(k·d²)      O(T·k·d²)        O(T)*              O(T/k)
    RNN             O(d²)        O(T·d²)          O(T)               O(T)
    self-attention  O(d²)        O(T²·d)          O(1)               O(1)

(*) as listed in the lecture notes; a convolution over a given input can run all positions at
once, but a stack of them still needs O(T/k) layers to connect distant positions.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Cost",
    "attention_cost",
    "conv1d_cost",
    "decoder_layer_cost",
    "encoder_layer_cost",
    "ffn_cost",
    "recurrent_cost",
]

_GATES = {"rnn": 1, "gru": 3, "lstm": 4}


@dataclass(frozen=True)
class Cost:
    """Exact counts for one layer on one sequence."""

    parameters: int
    multiplications: int
    sequential_steps: int
    path_length: int

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.parameters + other.parameters,
            self.multiplications + other.multiplications,
            self.sequential_steps + other.sequential_steps,
            self.path_length + other.path_length,
        )


def attention_cost(T_q: int, d: int, T_k: int | None = None) -> Cost:
    """Multi-head attention with Q, K, V and output projections (d×d + bias each).

    Projections cost (2·T_q + 2·T_k)·d² multiplications; QKᵀ and the weighted sum of values cost
    T_q·T_k·d each, whatever the number of heads (the heads split d between them).
    """
    T_k = T_q if T_k is None else T_k
    params = 4 * (d * d + d)
    mults = (2 * T_q + 2 * T_k) * d * d + 2 * T_q * T_k * d
    return Cost(params, mults, sequential_steps=1, path_length=1)


def ffn_cost(T: int, d: int, d_ff: int | None = None) -> Cost:
    """Two position-wise dense layers d → d_ff → d (d_ff = 4·d by default)."""
    d_ff = 4 * d if d_ff is None else d_ff
    return Cost(2 * d * d_ff + d_ff + d, 2 * T * d * d_ff, sequential_steps=1, path_length=1)


def _layer_norms(n: int, d: int) -> Cost:
    return Cost(2 * d * n, 0, 0, 0)


def encoder_layer_cost(T: int, d: int, d_ff: int | None = None) -> Cost:
    """Self-attention + FFN + two LayerNorms.  Steps and path length stay 1: a layer is one
    parallel step and connects any two positions directly."""
    c = attention_cost(T, d) + ffn_cost(T, d, d_ff) + _layer_norms(2, d)
    return Cost(c.parameters, c.multiplications, 1, 1)


def decoder_layer_cost(T: int, d: int, T_src: int | None = None, d_ff: int | None = None) -> Cost:
    """Masked self-attention + cross-attention to T_src encoder states + FFN + three LayerNorms.

    Counted for a full (teacher-forced) pass; the causal mask does not change the multiply count
    of a dense implementation.
    """
    T_src = T if T_src is None else T_src
    c = attention_cost(T, d) + attention_cost(T, d, T_src) + ffn_cost(T, d, d_ff) + _layer_norms(3, d)
    return Cost(c.parameters, c.multiplications, 1, 1)


def recurrent_cost(kind: str, T: int, d_in: int, d_hidden: int | None = None) -> Cost:
    """tanh RNN (1 gate block), GRU (3) or LSTM (4), with PyTorch's two bias vectors per block.

    Each step multiplies the input and the previous state by every gate's matrices:
    gates·(d_in + d_hidden)·d_hidden per step, T steps one after another.
    """
    if kind not in _GATES:
        raise ValueError(f"unknown recurrent kind {kind!r}")
    h = d_in if d_hidden is None else d_hidden
    g = _GATES[kind]
    params = g * (d_in * h + h * h + 2 * h)
    mults = T * g * (d_in + h) * h
    return Cost(params, mults, sequential_steps=T, path_length=T)


def conv1d_cost(T: int, d: int, k: int) -> Cost:
    """A 1-D convolution, d channels in and out, kernel k, 'same' padding (T outputs).

    Path length: a stack of such layers needs ⌈(T−1)/(k−1)⌉ layers before the last output can
    see the first input (the lecture's O(T/k)); sequential steps follow the lecture's table.
    """
    if k < 2:
        raise ValueError("kernel size must be >= 2: a width-1 convolution never connects two positions")
    path = max(1, -(-(T - 1) // (k - 1)))
    return Cost(k * d * d + d, T * k * d * d, sequential_steps=T, path_length=path)
