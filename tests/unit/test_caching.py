"""explorer.caching: a cache bounded by entries and by the bytes of its arrays."""

from __future__ import annotations

import concurrent.futures
import threading
import time
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from explorer.caching import CACHES, ENTRY_OVERHEAD, bounded_cache, loaded, nbytes


@dataclass(frozen=True)
class View:
    curves: dict
    extra: tuple


def test_nbytes_counts_the_arrays_inside_containers_once():
    a = np.zeros(100)  # 800 bytes
    t = torch.zeros(10, dtype=torch.float32)  # 40 bytes
    assert nbytes(View({"x": a, "y": t}, (a, 3, "text"))) == 840
    assert nbytes(torch.nn.Linear(4, 2)) == (4 * 2 + 2) * 4
    assert nbytes("no arrays") == 0


def test_evicts_the_least_recently_used_to_stay_under_the_byte_budget():
    calls = []

    @bounded_cache(max_entries=100, max_bytes=4 * (8000 + ENTRY_OVERHEAD))
    def view(n):
        calls.append(n)
        return np.zeros(1000)  # 8000 bytes each

    for n in range(4):
        view(n)
    view(0)  # 0 is now the most recent
    view(4)  # over budget: 1, the least recently used, goes
    info = view.cache_info()
    assert info.currsize == 4 and info.bytes <= info.max_bytes
    view(0), view(2), view(3), view(4)
    assert calls == [0, 1, 2, 3, 4]  # all hits
    view(1)
    assert calls == [0, 1, 2, 3, 4, 1]  # recomputed


def test_bounded_by_entries_too_and_cleared():
    @bounded_cache(max_entries=2, max_bytes=10**9)
    def square(n):
        return n * n

    for n in range(5):
        assert square(n) == n * n
    assert square.cache_info().currsize == 2
    assert square.cache_info().misses == 5
    square.cache_clear()
    assert square.cache_info().currsize == 0 and square.cache_info().bytes == 0


def test_a_result_larger_than_a_quarter_of_the_budget_is_returned_not_kept():
    @bounded_cache(max_entries=10, max_bytes=10_000)
    def big():
        return np.zeros(1000)  # 8000 bytes > 10 000 / 4

    assert big().shape == (1000,)
    assert big.cache_info().currsize == 0


def test_keyword_and_positional_calls_and_errors_are_not_cached():
    calls = []

    @bounded_cache(max_entries=10, max_bytes=10**6)
    def f(a, b=1):
        calls.append((a, b))
        if a < 0:
            raise ValueError("negative")
        return a + b

    assert f(1, b=2) == f(1, b=2) == 3
    assert calls == [(1, 2)]
    with pytest.raises(ValueError):
        f(-1)
    with pytest.raises(ValueError):
        f(-1)
    assert calls.count((-1, 1)) == 2


def test_callers_of_a_key_being_computed_wait_for_it_instead_of_computing_it_again():
    calls, started = [], threading.Event()

    @bounded_cache(4, max_bytes=1_000_000)
    def slow(x):
        calls.append(x)
        started.set()
        time.sleep(0.3)
        return np.full(3, x)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        first = pool.submit(slow, 1)
        started.wait(5)
        others = [pool.submit(slow, 1) for _ in range(7)] + [pool.submit(slow, 2)]
        results = [f.result(10) for f in (first, *others)]
    assert sorted(calls) == [1, 2]  # one computation per key
    assert all(r is results[0] for r in results[:8])  # the same shared result


def test_a_failure_is_not_handed_to_the_callers_that_waited_for_it():
    calls, started, release = [], threading.Event(), threading.Event()

    @bounded_cache(4, max_bytes=1_000_000)
    def flaky(x):
        calls.append(threading.current_thread().name)
        if len(calls) == 1:  # the first caller's own failure (as a superseded rerun)
            started.set()
            release.wait(5)
            raise RuntimeError("first caller's rerun was superseded")
        return np.arange(x)

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        first = pool.submit(flaky, 3)
        started.wait(5)
        waiting = [pool.submit(flaky, 3) for _ in range(3)]
        time.sleep(0.1)
        release.set()
        with pytest.raises(RuntimeError):
            first.result(10)
        assert all(np.array_equal(f.result(10), np.arange(3)) for f in waiting)
    assert len(calls) == 2  # the failure, then one computation for all three that waited


def test_a_load_is_kept_whatever_its_size_bounded_by_count_and_read_once_when_asked_at_once():
    calls, started = [], threading.Event()

    @loaded(2)
    def load(name):
        calls.append(name)
        started.set()
        time.sleep(0.2)
        return np.zeros(1_000_000)  # 8 MB: a result cache would need a 32 MB budget to keep it

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        first = pool.submit(load, "a")
        started.wait(5)
        results = [f.result(10) for f in (first, *[pool.submit(load, "a") for _ in range(3)])]
    assert calls == ["a"] and all(r is results[0] for r in results)  # lru_cache would load it up to 4 times
    load("b"), load("c")
    info = load.cache_info()
    assert (info.currsize, info.maxsize, info.max_bytes) == (2, 2, None)
    assert load("c") is load("c") and calls == ["a", "b", "c"]


def test_a_load_that_fails_keeps_nothing():
    attempts = []

    @loaded(4)
    def load(name):
        attempts.append(name)
        if len(attempts) == 1:
            raise FileNotFoundError(name)
        return name.upper()

    with pytest.raises(FileNotFoundError):
        load("model")
    assert load("model") == "MODEL" and load("model") == "MODEL" and attempts == ["model", "model"]


def test_every_cache_made_is_listed_with_its_kind():
    @bounded_cache(3, max_bytes=1000)
    def result(x):
        return x

    @loaded(1)
    def shipped(x):
        return x

    listed = {cache.name: cache for cache in CACHES}
    here = f"{__name__}.test_every_cache_made_is_listed_with_its_kind.<locals>"
    assert listed[f"{here}.result"].kind == "result" and listed[f"{here}.result"].function is result
    assert listed[f"{here}.shipped"].kind == "load" and listed[f"{here}.shipped"].function is shipped
    with pytest.raises(ValueError):
        loaded(0)


def test_peek_reads_what_is_kept_and_never_computes():
    calls = []

    @bounded_cache(max_entries=10, max_bytes=10**6)
    def f(a, b=1):
        calls.append((a, b))
        return a + b

    assert f.peek(1) == (False, None) and calls == []
    f(1)
    hits = f.cache_info().hits
    assert f.peek(1) == (True, 2) and f.cache_info().hits == hits + 1
    assert f.peek(1, b=1) == (False, None), "keyword and positional calls are keyed apart, as by the cache"
    assert calls == [(1, 1)]
