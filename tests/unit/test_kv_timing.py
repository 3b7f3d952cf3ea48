"""explorer.analysis.kv_timing: the crossover rule on made-up numbers, and the sweep's shape (not
its speed: timings are measured in benchmarks/, never asserted in a unit test)."""

import time

import numpy as np
import pytest

from explorer.analysis.kv_timing import cache_sweep, crossover


@pytest.mark.parametrize("uncached, cached, expected", [
    ([1, 2, 4, 8], [2, 2.5, 3, 3.5], 3),  # faster from the third length on
    ([1, 2, 4, 8], [0.5, 3, 3, 3.5], 3),  # an early lucky win does not count: it lost again after
    ([1, 2, 4, 8], [0.5, 1, 2, 4], 1),  # faster everywhere
    ([1, 2, 4, 8], [2, 3, 5, 9], None),  # never
    ([1, 2, 4, 8], [0.5, 1, 2, 9], None),  # not at the longest
])
def test_crossover_is_where_the_cache_starts_winning_for_good(uncached, cached, expected):
    lengths = [1, 2, 3, 4]
    assert crossover(lengths, uncached, cached) == expected


def test_a_sweep_times_every_length_both_ways():
    sweep = cache_sweep(16, 1, 2, lengths=(2, 4, 8), repeats=1)
    assert sweep.lengths.tolist() == [2, 4, 8]
    assert sweep.uncached.shape == sweep.cached.shape == (3,)
    assert np.all(np.isfinite(sweep.uncached)) and np.all(sweep.cached > 0)
    assert np.allclose(sweep.speedup, sweep.uncached / sweep.cached)
    assert sweep is cache_sweep(16, 1, 2, lengths=(2, 4, 8), repeats=1)  # measured once per shape
    assert sweep.clock == "perf_counter"
    cpu = cache_sweep(16, 1, 2, lengths=(2, 4, 8), repeats=1, clock=time.thread_time)  # the thread's CPU time
    assert cpu.clock == "thread_time" and np.all(cpu.uncached > 0) and np.all(cpu.cached > 0) and cpu is not sweep
    with pytest.raises(ValueError):
        cache_sweep(16, 1, 2, lengths=(8, 4))
    with pytest.raises(ValueError):
        cache_sweep(16, 1, 2, lengths=(1, 4))
