"""Positional information for attention, absolute and relative.

Self-attention on its own is blind to order: permute the tokens and every output row moves with
its token.  The schemes here put order back in one of two ways:

* absolute — add a vector per position to the token embeddings: sinusoidal (the paper), learned,
  the raw index (the naive scheme that works badly), or none;
* relative — change the attention scores by the offset between query and key: RoPE rotates
  queries and keys, ALiBi adds −slope·distance, T5 adds a learned bias per distance bucket.

Every scheme can be drawn as a matrix (positions × dimensions, or query × key).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

__all__ = [
    "ABSOLUTE_ENCODINGS",
    "ENCODINGS",
    "RELATIVE_ENCODINGS",
    "AbsolutePositionalEncoding",
    "RotaryEmbedding",
    "T5RelativeBias",
    "alibi_bias",
    "alibi_slopes",
    "index_encoding",
    "rope_angles",
    "sinusoidal_encoding",
    "sinusoidal_wavelengths",
    "t5_relative_buckets",
]

ABSOLUTE_ENCODINGS = ("sinusoidal", "learned", "index", "none")
RELATIVE_ENCODINGS = ("rope", "alibi", "t5")
ENCODINGS = ABSOLUTE_ENCODINGS + RELATIVE_ENCODINGS


def sinusoidal_encoding(n_positions: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The paper's interleaved encoding: PE[p, 2i] = sin(p / base^(2i/d)), PE[p, 2i+1] = cos(same).

    Returns float64 of shape (n_positions, d_model).  An odd d_model ends with a sine column.
    """
    if n_positions < 0 or d_model < 1 or base <= 0:
        raise ValueError("need n_positions >= 0, d_model >= 1 and base > 0")
    positions = np.arange(n_positions, dtype=np.float64)[:, None]
    even_dims = np.arange(0, d_model, 2, dtype=np.float64)
    angles = positions / base ** (even_dims / d_model)  # (n_positions, ceil(d/2))
    pe = np.empty((n_positions, d_model), dtype=np.float64)
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe


def sinusoidal_wavelengths(d_model: int, base: float = 10000.0) -> np.ndarray:
    """Wavelength (in positions) of each sin/cos dimension pair: 2π·base^(2i/d)."""
    return 2 * np.pi * base ** (np.arange(0, d_model, 2, dtype=np.float64) / d_model)


def index_encoding(n_positions: int, d_model: int) -> np.ndarray:
    """The naive scheme: add the raw position index p to every dimension.

    Its values grow without bound, far beyond the scale of the token embeddings — the lesson's
    example of an encoding that does not work.  (In a pre-norm model it is worse than useless: a
    constant added to every dimension is exactly what LayerNorm subtracts, so the model never sees it.)
    """
    return np.repeat(np.arange(n_positions, dtype=np.float64)[:, None], d_model, axis=1)


class AbsolutePositionalEncoding(nn.Module):
    """The vector added to the token embedding at each position (sinusoidal, learned, index, none)."""

    def __init__(self, kind: str, max_len: int, d_model: int, base: float = 10000.0):
        super().__init__()
        if kind not in ABSOLUTE_ENCODINGS:
            raise ValueError(f"unknown absolute encoding {kind!r}; expected one of {ABSOLUTE_ENCODINGS}")
        self.kind = kind
        self.max_len = max_len
        self.d_model = d_model
        if kind == "learned":
            self.table = nn.Parameter(torch.randn(max_len, d_model) * 0.02)
        else:
            if kind == "sinusoidal":
                fixed = sinusoidal_encoding(max_len, d_model, base)
            elif kind == "index":
                fixed = index_encoding(max_len, d_model)
            else:
                fixed = np.zeros((max_len, d_model))
            # Not saved with the weights: it is a function of the config.
            self.register_buffer("table", torch.from_numpy(fixed).float(), persistent=False)

    def forward(self, T: int) -> torch.Tensor:
        """(T, d_model) vectors for positions 0..T-1."""
        if self.max_len < T:
            raise ValueError(f"sequence length {T} exceeds the model's max_len {self.max_len}")
        return self.table[:T]


# --- RoPE ---------------------------------------------------------------------------------------


def rope_angles(n_positions: int, head_dim: int, base: float = 10000.0) -> np.ndarray:
    """Rotation angle p·θ_i of dimension pair i at position p, θ_i = base^(−2i/head_dim).

    Shape (n_positions, head_dim // 2).
    """
    if head_dim % 2:
        raise ValueError("RoPE needs an even head dimension")
    theta = base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    return np.arange(n_positions, dtype=np.float64)[:, None] * theta[None, :]


class RotaryEmbedding:
    """Rotate each (2i, 2i+1) pair of a query/key by the angle of its position (RoFormer's RoPE).

    Because rotations compose, the dot product of a rotated query at p and a rotated key at s
    depends on the content and on p − s only.  Stateless and parameter-free.
    """

    def __init__(self, head_dim: int, base: float = 10000.0):
        if head_dim % 2:
            raise ValueError("RoPE needs an even head dimension")
        self.head_dim = head_dim
        self.base = base

    def __call__(self, x: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
        """x: (..., T, head_dim) → rotated copy; positions default to 0..T-1."""
        T = x.shape[-2]
        if positions is None:
            positions = torch.arange(T, device=x.device)
        theta = self.base ** (-torch.arange(0, self.head_dim, 2, dtype=torch.float64) / self.head_dim)
        angles = (positions.double()[:, None] * theta[None, :]).to(x.dtype)  # (T, head_dim/2)
        cos, sin = torch.cos(angles), torch.sin(angles)
        x_even, x_odd = x[..., 0::2], x[..., 1::2]
        rotated = torch.stack((x_even * cos - x_odd * sin, x_even * sin + x_odd * cos), dim=-1)
        return rotated.flatten(-2)


# --- ALiBi --------------------------------------------------------------------------------------


def _geometric_slopes(n: int) -> list[float]:
    start = 2.0 ** (-8.0 / n)
    return [start ** (i + 1) for i in range(n)]


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi's per-head slopes (Press et al. 2022): 2^(-8/n), 2^(-16/n), … for n a power of two.

    For other head counts the paper takes the slopes of the nearest lower power of two and fills
    the rest with every other slope of the next power of two.
    """
    if n_heads < 1:
        raise ValueError("n_heads must be >= 1")
    lower = 2 ** math.floor(math.log2(n_heads))
    slopes = _geometric_slopes(lower)
    if lower != n_heads:
        slopes += _geometric_slopes(2 * lower)[0::2][: n_heads - lower]
    return np.array(slopes, dtype=np.float64)


def alibi_bias(n_heads: int, T_q: int, T_k: int | None = None) -> np.ndarray:
    """(heads, T_q, T_k) bias −slope_h·|q − k| added to the attention scores.

    Under a causal mask only k ≤ q is visible, where this is −slope·(distance back).
    """
    T_k = T_q if T_k is None else T_k
    distance = np.abs(np.arange(T_q)[:, None] - np.arange(T_k)[None, :]).astype(np.float64)
    return -alibi_slopes(n_heads)[:, None, None] * distance[None]


# --- T5 relative bias -----------------------------------------------------------------------------


def t5_relative_buckets(
    T_q: int,
    T_k: int | None = None,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> np.ndarray:
    """(T_q, T_k) bucket index of each offset k − q, as in T5.

    Small offsets each get their own bucket; larger ones share logarithmically wider buckets up to
    `max_distance`, beyond which all offsets share the last bucket.  Bidirectional bucketing
    spends half the buckets on keys after the query.
    """
    T_k = T_q if T_k is None else T_k
    exact = num_buckets // 4 if bidirectional else num_buckets // 2
    if exact < 1 or max_distance <= exact:
        raise ValueError(f"need at least {4 if bidirectional else 2} buckets and max_distance > {exact} "
                         "(the offsets that get a bucket each)")
    offset = np.arange(T_k)[None, :] - np.arange(T_q)[:, None]
    buckets = np.zeros_like(offset)
    if bidirectional:
        num_buckets //= 2
        buckets += (offset > 0) * num_buckets
        distance = np.abs(offset)
    else:
        distance = np.maximum(-offset, 0)
    max_exact = num_buckets // 2
    with np.errstate(divide="ignore"):
        log_ratio = np.log(np.maximum(distance, 1) / max_exact) / math.log(max_distance / max_exact)
    large = max_exact + (log_ratio * (num_buckets - max_exact)).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    buckets += np.where(distance < max_exact, distance, large)
    return buckets


class T5RelativeBias(nn.Module):
    """A learned scalar per (head, distance bucket), added to the attention scores."""

    def __init__(self, n_heads: int, bidirectional: bool, num_buckets: int = 32, max_distance: int = 128):
        super().__init__()
        self.bidirectional = bidirectional
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.bias = nn.Embedding(num_buckets, n_heads)

    def forward(self, T_q: int, T_k: int | None = None) -> torch.Tensor:
        """(1, heads, T_q, T_k) bias."""
        buckets = t5_relative_buckets(T_q, T_k, self.bidirectional, self.num_buckets, self.max_distance)
        index = torch.from_numpy(buckets).to(self.bias.weight.device)
        return self.bias(index).permute(2, 0, 1).unsqueeze(0)
