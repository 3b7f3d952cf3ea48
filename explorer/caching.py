"""The library's one cache mechanism: every cache in explorer/ is made here, and every one is listed.

Two kinds, one implementation (least recently used first out; thread-safe; the computation runs
outside the lock, once per key at a time (`SingleFlight`): a class opening one lesson at once
computes its view once, and loads a model once, not once a student):

    bounded_cache(max_entries, max_bytes)   computed results: at most `max_entries` results and at
                                            most `max_bytes` of their arrays (numpy arrays, torch
                                            tensors, a module's parameters and buffers, found inside
                                            tuples, lists, dicts, mappings and dataclasses); a result
                                            larger than a quarter of the budget is returned, not kept
    loaded(max_entries)                     per-process loads of shipped files (models, corpora,
                                            lesson text): bounded by count, since the files are few

`functools.lru_cache(maxsize=n)` bounds how many results a process keeps, not how much memory: a
few entries of a large setting can outweigh many of a small one; it also lets two threads that miss
at once both compute.  Hence this module, and no other cache in the library
(tests/system/test_layers.py).

Every cache made here is registered in `CACHES`; the lesson runtime (explorer/serve/runtime.py)
owns them: it states the process's budget for computed results, which the byte budgets of all of
them must fit (tests/system/test_sessions.py), reports them and clears them.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import threading
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Mapping
from concurrent.futures import Future

import numpy as np

__all__ = ["CACHES", "CacheInfo", "Registered", "SingleFlight", "bounded_cache", "loaded", "nbytes"]

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
    torch = sys.modules.get("torch")  # not imported: nothing here holds a tensor (explorer.serve loads without it)
    if torch is not None and isinstance(value, torch.Tensor):
        return value.element_size() * value.nelement()
    if torch is not None and isinstance(value, torch.nn.Module):
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


@dataclasses.dataclass(frozen=True)
class Registered:
    """One cache made by this module: where (`name`, module.function), its kind ("result" or
    "load") and the function, which has cache_info() and cache_clear()."""

    name: str
    kind: str
    function: Callable


CACHES: list[Registered] = []  # every cache made by bounded_cache or loaded, in the order made


def bounded_cache(max_entries: int, max_bytes: int) -> Callable:
    """Decorator: like functools.lru_cache(maxsize=max_entries), also bounded by max_bytes (see the
    module).  The wrapper has cache_clear() and cache_info() (hits, misses, maxsize, currsize,
    bytes, max_bytes), and peek(*args, **kwargs): (True, the kept result) or (False, None), never
    computing.  Arguments must be hashable; keyword and positional calls are keyed apart."""
    if max_entries < 1 or max_bytes < 1:
        raise ValueError("a bounded cache needs max_entries ≥ 1 and max_bytes ≥ 1")
    return functools.partial(_cache, max_entries=max_entries, max_bytes=max_bytes, kind="result")


def loaded(max_entries: int) -> Callable:
    """Decorator for a load of shipped files, kept once per process: at most `max_entries` of them
    (cache_info().max_bytes is None).  A load that raises keeps nothing (restored files are read on
    the next call)."""
    if max_entries < 1:
        raise ValueError("a load cache needs max_entries ≥ 1")
    return functools.partial(_cache, max_entries=max_entries, max_bytes=None, kind="load")


def _key(args: tuple, kwargs: dict) -> tuple:
    """A call's key: keyword and positional calls are keyed apart."""
    return args, tuple(sorted(kwargs.items()))


def _cache(function: Callable, *, max_entries: int, max_bytes: int | None, kind: str) -> Callable:
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
        key = _key(args, kwargs)
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
            if max_bytes is None or size <= max_bytes // 4:
                with lock:
                    entries[key] = (result, size)
                    counts["bytes"] += size
                    while len(entries) > max_entries or (max_bytes is not None and counts["bytes"] > max_bytes):
                        counts["bytes"] -= entries.popitem(last=False)[1][1]
            return result

        return flights.run(key, compute_and_keep)

    def peek(*args, **kwargs) -> tuple[bool, object]:
        found, result = kept(_key(args, kwargs))
        if found:
            with lock:
                counts["hits"] += 1
        return found, result

    def cache_clear() -> None:
        with lock:
            entries.clear()
            counts.update(hits=0, misses=0, bytes=0)

    def cache_info() -> CacheInfo:
        with lock:
            return CacheInfo(counts["hits"], counts["misses"], max_entries, len(entries), counts["bytes"], max_bytes)

    cached.cache_clear, cached.cache_info, cached.peek = cache_clear, cache_info, peek
    CACHES.append(Registered(f"{function.__module__}.{function.__qualname__}", kind, cached))
    return cached
