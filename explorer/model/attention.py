"""Scaled dot-product and multi-head attention that return every intermediate they compute.

A lesson page shows the whole pipeline QKᵀ → ÷√d (+ positional bias) → mask → softmax, so the
functions here return each stage instead of only the output.  Masks follow one convention
everywhere: a boolean tensor where True means "this query may attend to this key".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

__all__ = [
    "AttentionTrace",
    "KVCache",
    "MultiHeadAttention",
    "attention_mask",
    "attention_pipeline",
    "causal_mask",
    "combine_masks",
    "key_padding_mask",
    "scaled_dot_product_attention",
    "sliding_window_mask",
]


def causal_mask(T: int, device: torch.device | None = None) -> torch.Tensor:
    """(T, T) boolean mask, True on and below the diagonal: position t sees positions ≤ t."""
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def sliding_window_mask(T: int, window: int, device: torch.device | None = None) -> torch.Tensor:
    """(T, T) boolean mask, True where 0 ≤ t − s < window: position t sees itself and the window − 1
    positions before it (causal, as Mistral's sliding window).  window ≥ T is the causal mask."""
    if isinstance(T, bool) or not isinstance(T, int) or T < 1 or isinstance(window, bool) \
            or not isinstance(window, int) or window < 1:
        raise ValueError(f"need positive integers T and window, got T={T!r}, window={window!r}")
    offset = torch.arange(T, device=device)[:, None] - torch.arange(T, device=device)[None, :]  # t − s
    return (offset >= 0) & (offset < window)


def key_padding_mask(valid: torch.Tensor) -> torch.Tensor:
    """Turn a (batch, T_k) "is a real token" tensor into a mask broadcastable to (B, H, T_q, T_k)."""
    return valid.bool()[:, None, None, :]


def combine_masks(*masks: torch.Tensor | None) -> torch.Tensor | None:
    """Logical AND of the given masks (None means "no restriction"); None if all are None."""
    result = None
    for mask in masks:
        if mask is None:
            continue
        result = mask if result is None else (result & mask)
    return result


def attention_mask(T: int, *, causal: bool, valid: torch.Tensor | None, device=None) -> torch.Tensor | None:
    """The self-attention mask of a stack (True = may attend), or None if nothing is hidden.

    causal: position t sees only positions ≤ t, (T, T).  valid: (B, T) booleans, False for padding
    keys, (B, 1, 1, T).  Both: their AND, broadcast to (B, 1, T, T).
    """
    return combine_masks(
        causal_mask(T, device) if causal else None,
        key_padding_mask(valid) if valid is not None else None,
    )


@dataclass
class AttentionTrace:
    """Every stage of one attention computation, each shaped (..., T_q, T_k) except `output`.

    raw_scores:    Q Kᵀ
    scaled_scores: Q Kᵀ · scale (+ positional bias, if any)
    masked_scores: scaled_scores with -inf where the mask forbids attention
    weights:       softmax of masked_scores over keys (rows with no visible key are all 0)
    output:        weights @ V, shaped (..., T_q, d_v)
    q, k, v:       what the scores were made of: (..., T_q, d), (..., T_k, d), (..., T_k, d_v)

    From MultiHeadAttention (None from attention_pipeline alone): q, k, v per head (B, heads, T, head_dim),
    after RoPE where the model uses it (keys and values: every position's, cached ones included; with
    grouped-query attention each query head's copy), and
    concatenated:  the heads' outputs side by side (B, T_q, d), before the output projection W_O
    projected:     concatenated W_Oᵀ + b_O (B, T_q, d), the attention sub-layer's output
    """

    raw_scores: torch.Tensor
    scaled_scores: torch.Tensor
    masked_scores: torch.Tensor
    weights: torch.Tensor
    output: torch.Tensor
    q: torch.Tensor | None = None
    k: torch.Tensor | None = None
    v: torch.Tensor | None = None
    concatenated: torch.Tensor | None = None
    projected: torch.Tensor | None = None


def attention_pipeline(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    scale: float | None = None,
) -> AttentionTrace:
    """Scaled dot-product attention, returning every intermediate.

    q: (..., T_q, d), k: (..., T_k, d), v: (..., T_k, d_v).
    mask: boolean, broadcastable to (..., T_q, T_k); True = may attend.
    bias: additive score bias (ALiBi, T5 relative bias), broadcastable to the scores.
    scale: multiplies the raw scores; defaults to 1/√d as in the paper.
    """
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    raw_scores = q @ k.transpose(-2, -1)
    scaled_scores = raw_scores * scale
    if bias is not None:
        scaled_scores = scaled_scores + bias
    masked_scores = scaled_scores if mask is None else scaled_scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(masked_scores, dim=-1)
    if mask is not None:
        # A query that may see no key at all (e.g. a padded query row) gets zero weights, not NaN.
        weights = torch.nan_to_num(weights, nan=0.0)
    return AttentionTrace(raw_scores, scaled_scores, masked_scores, weights, weights @ v, q, k, v)


def scaled_dot_product_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(QKᵀ/√d) V with a boolean "may attend" mask; returns (output, weights)."""
    trace = attention_pipeline(q, k, v, mask=mask)
    return trace.output, trace.weights


class KVCache:
    """The keys and values one attention module has computed, kept for later positions of one
    generation (made per generation, never stored on the shared module): (B, key/value heads, positions, head_dim).

    `KVCache()` is a self-attention's: each call adds the new positions' keys and values.
    `attention.cache(memory)` is a cross-attention's: the encoder output's, projected once, fixed."""

    def __init__(self, keys: torch.Tensor | None = None, values: torch.Tensor | None = None):
        self.keys, self.values = keys, values
        self.fixed = keys is not None

    @property
    def length(self) -> int:
        """Positions kept so far."""
        return 0 if self.keys is None else self.keys.shape[2]

    def extend(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Keep the new positions' k, v (B, kv heads, n, head_dim); return every position's."""
        self.keys = k if self.keys is None else torch.cat([self.keys, k], dim=2)
        self.values = v if self.values is None else torch.cat([self.values, v], dim=2)
        return self.keys, self.values


class MultiHeadAttention(nn.Module):
    """Multi-head attention with separate Q, K, V and output projections.

    Self-attention passes one sequence (`key_value` defaults to the `query`); cross-attention passes
    the decoder states as `query` and the encoder output as `key_value`.  An optional `rotary`
    callable (RoPE) rotates queries and keys per head before the dot product.  With a `KVCache` the
    same code runs one generation step: only the new positions are projected (see KVCache).

    n_kv_heads < n_heads is grouped-query attention (GQA; 1 is multi-query, MQA): the key and value
    projections output n_kv_heads · head_dim, and each group of n_heads / n_kv_heads query heads
    reads one key/value head, so a KV cache keeps n_kv_heads heads.  The default (n_heads) is
    ordinary multi-head attention.
    """

    def __init__(self, d_model: int, n_heads: int, bias: bool = True, n_kv_heads: int | None = None):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
        if not 1 <= n_kv_heads <= n_heads or n_heads % n_kv_heads:
            raise ValueError(f"n_kv_heads={n_kv_heads} must divide n_heads={n_heads} (1 = multi-query)")
        self.d_model = d_model
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads  # grouped-query attention: n_heads / n_kv_heads query heads share one
        self.head_dim = d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=bias)
        self.v_proj = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def _split_heads(self, x: torch.Tensor, heads: int | None = None) -> torch.Tensor:
        """(B, T, heads·head_dim) → (B, heads, T, head_dim): each head attends with its own slice."""
        batch, T, _ = x.shape
        return x.view(batch, T, self.n_heads if heads is None else heads, self.head_dim).transpose(1, 2)

    def _shared(self, kv: torch.Tensor) -> torch.Tensor:
        """(B, kv_heads, T, head_dim) → (B, heads, T, head_dim): query head i reads key/value head
        i // (heads / kv_heads), as torch's scaled_dot_product_attention(enable_gqa=True)."""
        if self.n_kv_heads == self.n_heads:
            return kv
        return kv.repeat_interleave(self.n_heads // self.n_kv_heads, dim=1)

    def cache(self, memory: torch.Tensor) -> KVCache:
        """A cross-attention's cache: the keys and values of `memory` (B, T_src, d), projected once
        (B, kv_heads, T_src, head_dim)."""
        g = self.n_kv_heads
        return KVCache(self._split_heads(self.k_proj(memory), g), self._split_heads(self.v_proj(memory), g))

    def forward(
        self,
        query: torch.Tensor,
        key_value: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        bias: torch.Tensor | None = None,
        rotary=None,
        cache: KVCache | None = None,
    ) -> tuple[torch.Tensor, AttentionTrace]:
        """query: (B, T_q, d), key_value: (B, T_k, d) → (output (B, T_q, d), per-head trace).

        The trace's scores and weights are shaped (B, heads, T_q, T_k); its `output` is the per-head
        (B, heads, T_q, head_dim) mix before the heads are concatenated (`concatenated`) and projected
        (`projected`, the output returned); q, k, v are per head, after RoPE.  With a `cache`, `query`
        holds the new positions only and the keys are every position's so far.
        """
        q = self._split_heads(self.q_proj(query))  # (B, heads, T_q, head_dim)
        if cache is not None and cache.fixed:  # cross-attention in a generation: the encoder's, made once
            k, v = cache.keys, cache.values  # (B, heads, T_k, head_dim)
        else:
            key_value = query if key_value is None else key_value
            k = self._split_heads(self.k_proj(key_value), self.n_kv_heads)  # (B, kv_heads, T_k, head_dim)
            v = self._split_heads(self.v_proj(key_value), self.n_kv_heads)  # (B, kv_heads, T_k, head_dim)
        if rotary is not None:  # RoPE: rotate each pair of dimensions by position × frequency
            start = 0 if cache is None else cache.length  # the new positions follow those kept
            positions = torch.arange(start, start + q.shape[2], device=q.device)
            q, k = rotary(q, positions), rotary(k, positions)
        if cache is not None and not cache.fixed:
            k, v = cache.extend(k, v)  # (B, kv_heads, every position so far, head_dim)
        k, v = self._shared(k), self._shared(v)  # (B, heads, T_k, head_dim)
        trace = attention_pipeline(q, k, v, mask=mask, bias=bias)  # weights (B, heads, T_q, T_k)
        batch, _, T_q, _ = trace.output.shape  # output (B, heads, T_q, head_dim)
        trace.concatenated = trace.output.transpose(1, 2).reshape(batch, T_q, self.d_model)  # side by side (B, T_q, d)
        trace.projected = self.out_proj(trace.concatenated)  # W_O mixes the heads: (B, T_q, d)
        return trace.projected, trace
