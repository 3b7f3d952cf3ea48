"""The relative positional schemes, as the positions page shows them (no Streamlit).  They leave the
input alone and act on each attention score, by the offset between query and key:

* RoPE: the rotation angle of each dimension pair at each position, and the score of a fixed q and
  k against their offset (the same at every query position: rotations compose);
* ALiBi: the bias a causal decoder adds, −slope × distance per head;
* T5: the bucket of each offset, exact near the query and logarithmic farther out.
"""

from __future__ import annotations

import numpy as np
import torch

from explorer.model.positional import RotaryEmbedding, alibi_bias, rope_angles, t5_relative_buckets

__all__ = [
    "alibi_causal_bias",
    "rope_offset_scores",
    "rope_rotation_degrees",
    "rope_vectors",
    "t5_exact_buckets",
    "t5_offset_buckets",
    "wrapped_degrees",
]


def wrapped_degrees(angles: np.ndarray) -> np.ndarray:
    """Angles in radians → degrees in (−180, 180]: where the pair points, not how often it has turned."""
    degrees = np.degrees(np.asarray(angles, dtype=np.float64))
    return 180.0 - np.mod(180.0 - degrees, 360.0)


def rope_rotation_degrees(n_positions: int, head_dim: int, base: float) -> np.ndarray:
    """(positions, head_dim / 2) rotation of each pair, wrapped to (−180°, 180°]."""
    return wrapped_degrees(rope_angles(n_positions, head_dim, base))


def rope_vectors(head_dim: int, kind: str = "ones", seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A fixed query and key: both all ones, or standard normal from `seed`."""
    if kind == "ones":
        return np.ones(head_dim), np.ones(head_dim)
    if kind != "random":
        raise ValueError("kind must be 'ones' or 'random'")
    rng = np.random.default_rng(seed)
    return rng.standard_normal(head_dim), rng.standard_normal(head_dim)


def rope_offset_scores(q: np.ndarray, k: np.ndarray, query_positions, offsets, base: float = 10000.0) -> np.ndarray:
    """(len(query_positions), len(offsets)) scores RoPE(q, m) · RoPE(k, m + offset), computed with the
    library's RotaryEmbedding in float64.  Rotations compose, so each row is the same function of
    the offset wherever the query sits."""
    q_t = torch.as_tensor(np.asarray(q, dtype=np.float64))
    k_t = torch.as_tensor(np.asarray(k, dtype=np.float64))
    rotary = RotaryEmbedding(q_t.shape[-1], base)
    offsets_t = torch.as_tensor(np.asarray(offsets), dtype=torch.float64)
    rows = []
    for m in query_positions:
        q_rot = rotary(q_t[None], torch.tensor([float(m)], dtype=torch.float64))[0]
        k_rot = rotary(k_t.expand(len(offsets_t), -1), m + offsets_t)
        rows.append((k_rot @ q_rot).numpy())
    return np.stack(rows)


def alibi_causal_bias(n_heads: int, length: int) -> np.ndarray:
    """(heads, T, T) ALiBi bias as a causal decoder sees it: −slope·(q − k) for k ≤ q, NaN (masked) above."""
    bias = alibi_bias(n_heads, length)
    above = np.triu(np.ones((length, length), dtype=bool), 1)
    bias[:, above] = np.nan
    return bias


def t5_exact_buckets(num_buckets: int, bidirectional: bool = True) -> int:
    """How many offsets (per direction) T5 gives a bucket each; `max_distance` must exceed it, or the
    logarithmic buckets beyond are undefined (t5_relative_buckets divides by log(max_distance / this))."""
    return (num_buckets // 2 if bidirectional else num_buckets) // 2


def t5_offset_buckets(max_offset: int, bidirectional: bool = True, num_buckets: int = 32,
                      max_distance: int = 128) -> tuple[np.ndarray, np.ndarray]:
    """Offsets k − q from −max_offset to max_offset and T5's bucket for each."""
    buckets = t5_relative_buckets(max_offset + 1, 2 * max_offset + 1, bidirectional, num_buckets, max_distance)
    return np.arange(-max_offset, max_offset + 1), buckets[max_offset]
