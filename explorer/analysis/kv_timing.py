"""When the KV cache pays: time per generated token with and without the cache, across lengths.

Without the cache, the token at length T costs a forward pass over all T positions: its work grows
with T (and attention's with T²).  With it, the token costs one position's pass against T cached
keys and values: its work grows only with T, slowly, but each step pays a fixed cost of its own
(Python, appending to the cache, launching many small products).  On a tiny model at short lengths
that fixed cost is the larger one and the cache loses; past some length it wins, and it wins from
shorter lengths the wider the model.  `cache_sweep` measures both on this machine and finds that
crossover: the measurement, not a belief, decides what the page says.

The clock is the caller's: `time.perf_counter` (wall time, the default) or `time.thread_time`, the
CPU time of the one thread that runs the model (torch with one thread, as the app runs it): what
the step costs on an idle core, which other work on a shared machine stretches far less.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..caching import bounded_cache
from ..model.building import seeded
from ..model.generation import IncrementalDecoder
from ..model.transformer import Transformer, TransformerConfig

__all__ = ["CacheSweep", "cache_sweep", "crossover"]


@dataclass(frozen=True)
class CacheSweep:
    """Seconds per generated token at each length (the token written when T tokens are there)."""

    d_model: int
    n_layers: int
    n_heads: int
    lengths: np.ndarray  # int, ascending
    uncached: np.ndarray  # seconds: a forward pass over the T positions, keeping the last row
    cached: np.ndarray  # seconds: one step of one new position against T − 1 cached ones
    repeats: int
    clock: str = "perf_counter"  # the time function's name: perf_counter (wall) or thread_time (CPU)

    @property
    def crossover(self) -> int | None:
        return crossover(self.lengths, self.uncached, self.cached)

    @property
    def speedup(self) -> np.ndarray:
        """uncached / cached at each length (> 1: the cache is faster)."""
        return self.uncached / self.cached


def crossover(lengths: Sequence[int], uncached: Sequence[float], cached: Sequence[float]) -> int | None:
    """The shortest measured length from which the cache is faster at every longer measured length,
    or None if it is not faster at the longest."""
    faster = np.asarray(cached) < np.asarray(uncached)
    if not len(faster) or not faster[-1]:
        return None
    first = len(faster) - 1
    while first > 0 and faster[first - 1]:
        first -= 1
    return int(np.asarray(lengths)[first])


def _model(d_model: int, n_layers: int, n_heads: int, max_len: int, seed: int) -> Transformer:
    config = TransformerConfig(vocab_size=32, d_model=d_model, n_heads=n_heads, n_layers=n_layers,
                               architecture="decoder", encoding="sinusoidal", max_len=max_len)
    with seeded(seed):
        return Transformer(config).eval()


def _time_once(model: Transformer, tokens: torch.Tensor, T: int, clock: Callable[[], float]) -> tuple[float, float]:
    """(uncached, cached) seconds for the token at length T."""
    tick = clock()
    model(tokens[:, :T])
    uncached = clock() - tick
    decoder = IncrementalDecoder(model)
    decoder.step(tokens[:, :T - 1])  # the prompt, cached (untimed)
    tick = clock()
    decoder.step(tokens[:, T - 1:T])
    return uncached, clock() - tick


@bounded_cache(8, max_bytes=1_000_000)
def cache_sweep(d_model: int = 64, n_layers: int = 2, n_heads: int = 4,
                lengths: tuple[int, ...] = (4, 8, 16, 32, 64, 128, 256), repeats: int = 5, seed: int = 0,
                clock: Callable[[], float] = time.perf_counter) -> CacheSweep:
    """Time the token at each length both ways on a decoder-only model of this shape (random weights:
    the time does not depend on them), one untimed run first, then the fastest of `repeats` runs of
    each (the one least disturbed by other work on the machine), by `clock` (see the module).
    Cached per shape and clock."""
    if not lengths or min(lengths) < 2 or list(lengths) != sorted(set(lengths)) or max(lengths) > 4096:
        raise ValueError("lengths must be ascending, distinct, within 2–4096")
    if not 1 <= repeats <= 50:
        raise ValueError("repeats must be 1–50")
    model = _model(d_model, n_layers, n_heads, max(lengths), seed)
    generator = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, model.config.vocab_size, (1, max(lengths)), generator=generator)
    uncached, cached = np.full(len(lengths), np.inf), np.full(len(lengths), np.inf)
    with torch.inference_mode():
        for i, T in enumerate(lengths):
            _time_once(model, tokens, T, clock)  # warm-up: the first call of a shape is slower
            for _ in range(repeats):
                u, c = _time_once(model, tokens, T, clock)
                uncached[i], cached[i] = min(uncached[i], u), min(cached[i], c)
    read_only = [a.copy() for a in (np.array(lengths), uncached, cached)]
    for array in read_only:
        array.flags.writeable = False
    return CacheSweep(d_model, n_layers, n_heads, *read_only, repeats, clock.__name__)
