"""Tiled attention: the same output as softmax(QKᵀ/√d)V without ever holding the T_q × T_k scores.

FlashAttention's idea, written plainly.  The keys are read one block at a time; each query keeps
three running quantities instead of a row of scores:

    m   the largest score seen so far
    l   Σ exp(score − m) over the keys seen so far
    acc Σ exp(score − m) · value over the same keys

A new block with larger scores raises m; what was summed under the old maximum is rescaled by
exp(m_old − m_new), so after the last block acc / l is exactly the softmax-weighted mix of values.
Only one block of scores (T_q × block per head) exists at any time: O(T·block) memory, not O(T²).

Masks follow explorer.model.attention: boolean, True = "may attend".  A query that may see no key
gets an output of 0 (as attention_pipeline's all-zero weights give).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

__all__ = ["TiledBlock", "TiledTrace", "tiled_attention"]


@dataclass(frozen=True)
class TiledBlock:
    """The state after one key block: keys [start, stop), and per query (..., T_q) the running max and sum."""

    start: int
    stop: int
    running_max: torch.Tensor | None  # None when the call kept no states
    running_sum: torch.Tensor | None
    scores_held: int  # score values alive while this block was processed: its tile, (..., T_q, stop − start)


@dataclass
class TiledTrace:
    """Every block's state, and how many score values were held at most against the full matrix's count."""

    block: int
    blocks: list[TiledBlock] = field(default_factory=list)
    full_scores: int = 0  # values of the whole (..., T_q, T_k) score matrix, which is never made

    @property
    def peak_scores_held(self) -> int:
        return max((b.scores_held for b in self.blocks), default=0)


def _block_mask(mask: torch.Tensor | None, causal: bool, T_q: int, start: int, stop: int,
                device) -> torch.Tensor | None:
    """The (…, T_q, stop − start) part of the "may attend" mask for keys start … stop − 1."""
    part = None if mask is None else mask[..., start:stop]
    if causal:
        keys = torch.arange(start, stop, device=device)
        allowed = keys[None, :] <= torch.arange(T_q, device=device)[:, None]  # (T_q, block)
        part = allowed if part is None else part & allowed
    return part


@torch.no_grad()
def tiled_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block: int, mask: torch.Tensor | None = None,
    causal: bool = False, scale: float | None = None, keep_states: bool = True,
) -> tuple[torch.Tensor, TiledTrace]:
    """softmax(QKᵀ·scale) V by an online softmax over key blocks of `block` keys → (output, trace).

    q: (..., T_q, d), k: (..., T_k, d), v: (..., T_k, d_v).  mask: boolean, broadcastable to
    (..., T_q, T_k), True = may attend.  causal: query t sees keys ≤ t (with mask: both).  scale
    defaults to 1/√d.  The output is (..., T_q, d_v); the trace holds each block's running max and sum
    (a record for the lesson: blocks × T_q values of each, kept beside the computation, not needed by it;
    keep_states=False keeps only each block's bounds and size, running_max and running_sum None).
    """
    if isinstance(block, bool) or not isinstance(block, int) or block < 1:
        raise ValueError(f"block must be a positive integer, got {block!r}")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    T_q, T_k = q.shape[-2], k.shape[-2]
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if mask is not None:
        lead = torch.broadcast_shapes(lead, mask.shape[:-2])
    # Views (nothing copied), so each tile has the full leading shape and the mask applies in place.
    q, k, v = q.expand(*lead, T_q, q.shape[-1]), k.expand(*lead, T_k, k.shape[-1]), v.expand(*lead, T_k, v.shape[-1])
    running_max = torch.full((*lead, T_q), float("-inf"), dtype=q.dtype, device=q.device)
    running_sum = torch.zeros((*lead, T_q), dtype=q.dtype, device=q.device)
    acc = torch.zeros((*lead, T_q, v.shape[-1]), dtype=q.dtype, device=q.device)
    trace = TiledTrace(block, full_scores=math.prod(lead) * T_q * T_k)
    for start in range(0, T_k, block):
        stop = min(start + block, T_k)
        tile = (q @ k[..., start:stop, :].transpose(-2, -1)).mul_(scale)  # (..., T_q, block): the only scores
        allowed = _block_mask(mask, causal, T_q, start, stop, q.device)
        if allowed is not None:
            tile.masked_fill_(~allowed, float("-inf"))
        new_max = torch.maximum(running_max, tile.amax(dim=-1))
        safe_max = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)  # no key seen yet: 0
        rescale = torch.exp(running_max - safe_max)  # exp(m_old − m_new): 0 while nothing was seen
        tile.sub_(safe_max[..., None]).exp_()  # in place: exp(score − m), masked keys exactly 0
        running_sum = running_sum * rescale + tile.sum(dim=-1)
        acc = acc * rescale[..., None] + tile @ v[..., start:stop, :]
        running_max = new_max
        states = (running_max.clone(), running_sum.clone()) if keep_states else (None, None)
        trace.blocks.append(TiledBlock(start, stop, *states, tile.numel()))
    seen = running_sum > 0
    output = torch.where(seen[..., None], acc / torch.where(seen, running_sum, 1.0)[..., None], 0.0)
    return output, trace
