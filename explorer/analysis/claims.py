"""Claims, measured: where the lecture notes' common slips meet something the app can compute.

Each function measures one statement on the real modules (or states a published figure with its
source), so a page can show the number beside the sentence instead of asserting it:

    attention_parameters_by_length   self-attention's parameters do not grow with T (O(d²), not O(T·d²))
    attention_parameters_by_heads    more heads split d_model; the parameter count stays the same
    sinusoidal_range                 sinusoidal encodings lie in [−1, 1]
    added_or_concatenated            the position vector is added (width d) — concatenating would widen
                                     every projection after it
    convolution_steps                a convolution layer computes all positions at once (one step); what
                                     grows with T is the path: ⌈(T−1)/(k−1)⌉ layers to connect the ends
    self_match_wins                  does q = k_j win the dot-product lookup for every j? Keys of equal
                                     length guarantee it; unequal ones may still (the lecture's do)
    PUBLISHED_LENGTHS                maximum lengths as the papers give them
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..model.attention import MultiHeadAttention
from ..model.building import seeded
from ..model.parameters import count_parameters
from ..model.positional import sinusoidal_encoding

__all__ = ["PUBLISHED_LENGTHS", "PublishedLength", "added_or_concatenated", "attention_parameters_by_heads",
           "attention_parameters_by_length", "convolution_steps", "self_match_wins", "sinusoidal_range"]


def attention_parameters_by_length(d_model: int, n_heads: int, lengths: Sequence[int]) -> dict[int, int]:
    """{T: parameters} of one self-attention module run on T tokens: the same module, built once, takes
    any T (the count is taken after each run, so it is the module that actually ran)."""
    with seeded(0):
        attention = MultiHeadAttention(d_model, n_heads)
    counts = {}
    with torch.no_grad():
        for T in lengths:
            x = torch.zeros(1, T, d_model)
            out, _ = attention(x)
            if out.shape != (1, T, d_model):
                raise AssertionError("self-attention changed the sequence's shape")
            counts[T] = count_parameters(attention)
    return counts


def attention_parameters_by_heads(d_model: int, heads: Sequence[int]) -> dict[int, int]:
    """{h: parameters} of self-attention with h heads of d_model / h each (4·(d² + d) for every h)."""
    return {h: count_parameters(MultiHeadAttention(d_model, h)) for h in heads}


def sinusoidal_range(n_positions: int, d_model: int, base: float = 10000.0) -> tuple[float, float]:
    """(smallest, largest) value of the sinusoidal table: every entry is a sine or a cosine."""
    table = sinusoidal_encoding(n_positions, d_model, base)
    return float(table.min()), float(table.max())


@dataclass(frozen=True)
class Combined:
    width: int  # of each position's vector after combining token and position
    query_parameters: int  # of the query projection that reads it (d_in × d_model + d_model)


def added_or_concatenated(d_model: int, d_position: int | None = None) -> dict[str, Combined]:
    """The width after adding the position vector (d_model) or concatenating one of `d_position`
    (default d_model), and what the next projection (to d_model) then needs."""
    d_position = d_model if d_position is None else d_position
    return {"added": Combined(d_model, d_model * d_model + d_model),
            "concatenated": Combined(d_model + d_position, (d_model + d_position) * d_model + d_model)}


@dataclass(frozen=True)
class ConvolutionSteps:
    sequential_steps: int  # steps that must wait for the one before, within one layer
    layers_to_connect: int  # layers before the last output sees the first input


def convolution_steps(T: int, kernel: int) -> ConvolutionSteps:
    """Measured on torch's Conv1d (causal: left padding, weights of ones): one call gives all T outputs
    (no output waits for another), and the layers needed before the last output depends on the first
    input are counted by stacking layers until ∂y_{T−1}/∂x_0 is non-zero — ⌈(T−1)/(k−1)⌉."""
    if kernel < 2 or not 1 <= T <= 1024:
        raise ValueError("kernel must be ≥ 2 and T within 1–1024")
    conv = torch.nn.Conv1d(1, 1, kernel, bias=False)
    with torch.no_grad():
        conv.weight.fill_(1.0)
    x = torch.zeros(1, 1, T, dtype=conv.weight.dtype, requires_grad=True)
    h, layers = x, 0
    while T > 1:
        h = conv(torch.nn.functional.pad(h, (kernel - 1, 0)))  # (1, 1, T): every output in this one call
        layers += 1
        (gradient,) = torch.autograd.grad(h[0, 0, -1], x, retain_graph=True)
        if gradient[0, 0, 0] != 0:
            break
    return ConvolutionSteps(1, layers)


def self_match_wins(keys: np.ndarray) -> np.ndarray:
    """For each key j: does the query q = k_j give key j the largest dot product (ties lose)?"""
    keys = np.asarray(keys, dtype=np.float64)
    scores = keys @ keys.T  # row j: q = k_j against every key
    wins = []
    for j, row in enumerate(scores):
        others = np.delete(row, j)
        wins.append(bool(row[j] > others.max()) if len(others) else True)
    return np.array(wins)


@dataclass(frozen=True)
class PublishedLength:
    model: str
    positions: int | None  # None: no maximum built in
    what: str
    source: str


PUBLISHED_LENGTHS = (
    PublishedLength("Transformer (2017)", None,
                    "sinusoidal encodings, defined for any position; 512 is the base model's width d_model",
                    "Vaswani et al., Attention Is All You Need, §3.5 and Table 3"),
    PublishedLength("BERT (2018)", 512, "a learned table of 512 positions",
                    "Devlin et al., BERT, §A.2 (sequences of at most 512 tokens)"),
    PublishedLength("GPT-3 (2020)", 2048, "a context window of 2048 tokens",
                    "Brown et al., Language Models are Few-Shot Learners, §2.1"),
)
