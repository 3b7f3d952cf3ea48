"""A least-recently-used cache bounded by entries *and* by bytes, for results that hold arrays.

`functools.lru_cache(maxsize=n)` bounds how many results a process keeps, not how much memory: a
few entries of a large setting can outweigh many of a small one.  `bounded_cache`
keeps at most `max_entries` results and at most `max_bytes` of their arrays (numpy arrays, torch
tensors, a module's parameters and buffers, found inside tuples, lists, dicts, mappings and
dataclasses), evicting the least recently used first; a result larger than a quarter of the budget
is returned but not kept.  Thread-safe; the computation runs outside the lock, once per key at a
time (`SingleFlight`): a class opening one lesson at once computes its view once, not once a student.

Budgets: each decorator states its own.  Together the bounded caches of explorer.views and
explorer.analysis may keep at most 156 MB of arrays per server process (the largest: the depth
lesson's drawn weights 32 MB; the attention lesson's random models, the positions matrices, the
MiniLM views and the live-training snapshots 16 MB each; the length lesson's reversal models 8 MB;
the KV-cache sweeps 1 MB), plus the lesson runtime's one cache (explorer/serve/runtime.py, 64 MB);
the few count-bounded lru_caches left (at most 8 entries each) hold per-process loads, and MiniLM's corpus vectors for
search (explorer/training/minilm.py: 2 corpora of at most 2048 sentences, both poolings, 12.6 MB).
`tests/system/test_sessions.py` checks that every result cache there is bounded by bytes.
Streamlit's caches cannot be bounded by bytes, only by entries: the largest is explorer.ui's chart
specs (96 entries, pickled; the largest charts are the gradients lesson's at its longest T); the
servers' memory under a class's load is measured in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Mapping
from concurrent.futures import Future

import numpy as np
import torch
from torch import nn

__all__ = ["CacheInfo", "SingleFlight", "bounded_cache", "nbytes"]

CacheInfo = namedtuple("CacheInfo", ["hits", "misses", "maxsize", "currsize", "bytes", "max_bytes"])
ENTRY_OVERHEAD = 256  # bytes counted per entry besides its arrays (key, bookkeeping)


def nbytes(value, _seen: set[int] | None = None) -> int:
    """Bytes of the arrays held by `value` (each array counted once)."""
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, torch.Tensor):
        return value.element_size() * value.nelement()
    if isinstance(value, nn.Module):
        return sum(nbytes(t, seen) for t in (*value.parameters(), *value.buffers()))
    if isinstance(value, Mapping):
        return sum(nbytes(v, seen) for v in value.values())
    if isinstance(value, (tuple, list, set, frozenset)):
        return sum(nbytes(v, seen) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(nbytes(getattr(value, f.name), seen) for f in dataclasses.fields(value))
    return 0


class SingleFlight:
    """One computation per key at a time.  A caller that finds its key being computed waits for that
    result instead of computing it again.  A failure is not shared (it may be the first caller's own,
    e.g. its rerun was superseded): the callers that waited then compute for themselves."""

    def __init__(self):
        self._lock = threading.Lock()
        self._running: dict[object, Future] = {}

    def run(self, key, compute: Callable[[], object]):
        while True:
            with self._lock:
                future = self._running.get(key)
                first = future is None
                if first:
                    future = self._running[key] = Future()
            if not first:
                try:
                    return future.result()
                except BaseException:  # the first caller's failure: try again, computing if need be
                    continue
            try:
                result = compute()
            except BaseException as problem:
                future.set_exception(problem)
                raise
            else:
                future.set_result(result)
                return result
            finally:
                with self._lock:
                    del self._running[key]


def bounded_cache(max_entries: int, max_bytes: int) -> Callable:
    """Decorator: like functools.lru_cache(maxsize=max_entries), also bounded by max_bytes (see the
    module).  The wrapper has cache_clear() and cache_info() (hits, misses, maxsize, currsize,
    bytes, max_bytes).  Arguments must be hashable; keyword and positional calls are keyed apart."""
    if max_entries < 1 or max_bytes < 1:
        raise ValueError("a bounded cache needs max_entries ≥ 1 and max_bytes ≥ 1")

    def decorate(function: Callable) -> Callable:
        entries: OrderedDict[tuple, tuple[object, int]] = OrderedDict()
        lock = threading.Lock()
        counts = {"hits": 0, "misses": 0, "bytes": 0}
        flights = SingleFlight()

        def kept(key) -> tuple[bool, object]:
            with lock:
                if key not in entries:
                    return False, None
                entries.move_to_end(key)
                return True, entries[key][0]

        @functools.wraps(function)
        def cached(*args, **kwargs):
            key = (args, tuple(sorted(kwargs.items())))
            found, result = kept(key)
            with lock:
                counts["hits" if found else "misses"] += 1
            if found:
                return result

            def compute_and_keep():
                found, result = kept(key)  # kept by a computation that finished since the look above
                if found:
                    return result
                result = function(*args, **kwargs)
                size = nbytes(result) + ENTRY_OVERHEAD
                if size <= max_bytes // 4:
                    with lock:
                        entries[key] = (result, size)
                        counts["bytes"] += size
                        while len(entries) > max_entries or counts["bytes"] > max_bytes:
                            counts["bytes"] -= entries.popitem(last=False)[1][1]
                return result

            return flights.run(key, compute_and_keep)

        def cache_clear() -> None:
            with lock:
                entries.clear()
                counts.update(hits=0, misses=0, bytes=0)

        def cache_info() -> CacheInfo:
            with lock:
                return CacheInfo(counts["hits"], counts["misses"], max_entries, len(entries), counts["bytes"],
                                 max_bytes)

        cached.cache_clear, cached.cache_info = cache_clear, cache_info
        return cached

    return decorate
