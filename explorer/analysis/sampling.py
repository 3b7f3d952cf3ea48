"""From the logits of one position to the next token: temperature, top-k, top-p, then a draw.

A decoder's last layer gives one score per token of the vocabulary (the logits).  Softmax turns them
into a distribution; what is done to it before a token is drawn is the decoding strategy:

    temperature T > 0   divide the logits by T before softmax: T < 1 sharpens the distribution
                        (T → 0 puts all the mass on the likeliest token: greedy), T > 1 flattens it.
                        T = 0 itself is a division by zero, so it is refused: call `greedy` instead.
    top-k               keep the k tokens with the largest logits.  Ties: every token whose logit
                        equals the k-th largest is kept too, so a tie can keep more than k (as
                        Hugging Face's TopKLogitsWarper does).
    top-p (nucleus)     keep the smallest set of most probable tokens whose probabilities add up to
                        at least p, on the distribution after temperature and top-k, renormalised
                        (Hugging Face's TopPLogitsWarper).  Ties: tokens as probable as the least
                        probable one kept are kept too, so the set never depends on token order.
                        p = 1 (or None) keeps everything.

They run in that order, the order Hugging Face transformers applies them (temperature, then top-k,
then top-p); the tokens left are renormalised to sum to 1 and one is drawn.  `sampling_stages`
returns every stage for a page to draw; `sample` draws with a torch.Generator of its own (the same
seed gives the same token, and torch's global random state is never touched); `greedy` is the
argmax; `generate_sampled` runs a shipped decoder with all of it, one token at a time.
tests/unit/test_sampling.py checks the kept sets and distributions against transformers' own
warpers on random logits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..model.generation import IncrementalDecoder

__all__ = ["SampledRun", "SamplingStages", "generate_sampled", "greedy", "sample", "sampling_stages"]


@dataclass(frozen=True)
class SamplingStages:
    """Every stage from one position's logits to the distribution a token is drawn from; all (vocab,)
    float64 (boolean for the masks), read-only.

    logits:       the model's scores, as given
    probs:        softmax(logits / temperature): the distribution after temperature
    top_k_kept:   True where top-k keeps the token (without top-k: every token whose logit is not −∞)
    top_k_probs:  `probs` restricted to those tokens and renormalised: what top-p reads
    kept:         True where the token survives top-k and top-p: the tokens a draw can give
    distribution: `probs` restricted to `kept` and renormalised (zero elsewhere): what `sample` draws from
    """

    logits: np.ndarray
    temperature: float
    top_k: int | None
    top_p: float | None
    probs: np.ndarray
    top_k_kept: np.ndarray
    top_k_probs: np.ndarray
    kept: np.ndarray
    distribution: np.ndarray


def _vector(logits) -> np.ndarray:
    """One position's logits as a float64 vector; ValueError for anything else."""
    if isinstance(logits, torch.Tensor):
        logits = logits.detach().cpu().double().numpy()
    values = np.array(logits, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"logits: one vector of scores for one position, got shape {values.shape}")
    if np.isnan(values).any() or np.isposinf(values).any():
        raise ValueError("logits must not be NaN or +∞ (−∞ is allowed: a token that can never come)")
    if not np.isfinite(values).any():
        raise ValueError("every logit is −∞: no token can come next")
    return values


def _check(temperature, top_k, top_p) -> None:
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.floating, np.integer)):
        raise ValueError(f"temperature must be a number, not {temperature!r}")
    if temperature == 0:
        raise ValueError("temperature 0 would divide the logits by zero; its limit is greedy decoding "
                         "(always the likeliest token): call greedy(logits) for that")
    if not (0 < temperature < math.inf):
        raise ValueError(f"temperature must be a positive finite number, not {temperature!r}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1):
        raise ValueError(f"top_k must be a whole number ≥ 1 (or None: no top-k), not {top_k!r}")
    if top_p is not None and (isinstance(top_p, bool) or not isinstance(top_p, (int, float, np.floating))
                              or not 0 < top_p <= 1):
        raise ValueError(f"top_p must be a number in (0, 1] (or None: no top-p), not {top_p!r}")


def _softmax(scores: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
    """Softmax over the entries `where` is True (all by default); zero elsewhere."""
    keep = np.isfinite(scores) if where is None else where & np.isfinite(scores)
    out = np.zeros_like(scores)
    shifted = scores[keep] - scores[keep].max()
    out[keep] = np.exp(shifted) / np.exp(shifted).sum()
    return out


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def sampling_stages(logits, temperature: float = 1.0, top_k: int | None = None,
                    top_p: float | None = None) -> SamplingStages:
    """Temperature, then top-k, then top-p on one position's logits (numpy or torch, (vocab,)).

    Raises ValueError for temperature ≤ 0 (0 would be greedy: see `greedy`), top_k < 1, top_p
    outside (0, 1], and logits that are not one vector or hold NaN or +∞."""
    _check(temperature, top_k, top_p)
    values = _vector(logits)
    # Shifted so the largest is 0 before dividing (softmax does not change): a tiny temperature then
    # sends the others to −∞ (probability 0) instead of the largest to +∞.
    scaled = (values - values[np.isfinite(values)].max()) / float(temperature)
    probs = _softmax(scaled)
    top_k_kept = np.isfinite(values)  # a logit of −∞ is a token that never comes
    if top_k is not None and top_k < values.size:
        kth = np.sort(values)[::-1][top_k - 1]  # ranked by the logits themselves: temperature keeps the order
        top_k_kept &= values >= kth  # every token tied with the k-th is kept too
    top_k_probs = _softmax(scaled, top_k_kept)
    kept = top_k_kept.copy()
    if top_p is not None and top_p < 1:
        order = np.argsort(-top_k_probs, kind="stable")
        before = np.concatenate([[0.0], np.cumsum(top_k_probs[order])[:-1]])  # mass of the more probable
        n_kept = max(1, int(np.count_nonzero(before < top_p)))  # the smallest set reaching p
        kept = top_k_kept & (top_k_probs >= top_k_probs[order[n_kept - 1]])  # and its ties
    distribution = _softmax(scaled, kept)
    return SamplingStages(_read_only(values), float(temperature), top_k, None if top_p is None else float(top_p),
                          _read_only(probs), _read_only(top_k_kept), _read_only(top_k_probs), _read_only(kept),
                          _read_only(distribution))


def greedy(logits) -> int:
    """The likeliest next token: the argmax of the logits (the lowest id among ties)."""
    return int(np.argmax(_vector(logits)))


def sample(distribution, seed: int) -> int:
    """One token drawn from `distribution` (a SamplingStages, or probabilities (vocab,) summing to 1)
    by torch.multinomial with a torch.Generator seeded with `seed`: the same seed gives the same token,
    and torch's global random generator is neither read nor advanced."""
    probs = distribution.distribution if isinstance(distribution, SamplingStages) else distribution
    probs = torch.as_tensor(np.array(probs, dtype=np.float64))
    if probs.dim() != 1 or probs.numel() == 0 or not torch.isfinite(probs).all() or (probs < 0).any():
        raise ValueError("sample needs one vector of probabilities: finite, not negative")
    if abs(float(probs.sum()) - 1) > 1e-6:
        raise ValueError(f"the probabilities sum to {float(probs.sum()):.6g}, not 1")
    generator = _generator(seed)
    return int(torch.multinomial(probs, 1, generator=generator))


def _generator(seed: int) -> torch.Generator:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a whole number ≥ 0, not {seed!r}")
    return torch.Generator().manual_seed(int(seed))


@dataclass(frozen=True)
class SampledRun:
    """A continuation drawn one token at a time: `tokens` (the drawn ids) and, for each step, the
    `stages` that led to its draw (the logits of the newest position and every stage after them)."""

    tokens: tuple[int, ...]
    stages: tuple[SamplingStages, ...]


@torch.no_grad()
def generate_sampled(model: nn.Module, tokens: Sequence[int] | torch.Tensor, n_steps: int,
                     temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                     seed: int = 0, *, start_token: int | None = None) -> SampledRun:
    """`n_steps` tokens, each drawn from the model's next-token distribution after temperature,
    top-k and top-p, and fed back in (a batch of one).

    tokens: a decoder-only model's prompt, or an encoder–decoder's source (then decoding starts from
    `start_token`, as in `Transformer.generate`).  One torch.Generator seeded with `seed` makes
    every draw of the run: the same seed gives the same continuation.  As the temperature goes to 0
    the draws become `Transformer.generate`'s greedy tokens.  The KV cache keeps each step to the
    new position (explorer.model.generation.IncrementalDecoder)."""
    _check(temperature, top_k, top_p)
    if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 0:
        raise ValueError(f"n_steps must be a whole number ≥ 0, not {n_steps!r}")
    arch = model.config.architecture
    if arch == "encoder":
        raise ValueError("an encoder-only model does not generate")
    if (arch == "encoder-decoder") == (start_token is None):
        raise ValueError("an encoder–decoder needs a start token; a decoder-only model takes none")
    ids = torch.as_tensor(tokens, dtype=torch.long).reshape(-1)
    if ids.numel() == 0:
        raise ValueError("tokens: the prompt or source is empty")
    generator = _generator(seed)
    if arch == "encoder-decoder":
        decoder, fed = IncrementalDecoder(model, ids[None]), [int(start_token)]
    else:
        decoder, fed = IncrementalDecoder(model), ids.tolist()
    drawn, stages = [], []
    for _ in range(n_steps):
        logits, _ = decoder.step(torch.tensor([fed]))
        step = sampling_stages(logits[0, -1], temperature, top_k, top_p)
        token = int(torch.multinomial(torch.from_numpy(step.distribution.copy()), 1, generator=generator))
        drawn.append(token)
        stages.append(step)
        fed = [token]
    return SampledRun(tuple(drawn), tuple(stages))
