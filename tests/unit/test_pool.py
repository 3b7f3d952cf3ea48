"""explorer/serve/pool.py: the runtime's bounded work pool, which runs the heavy views' pieces
(explorer/pieces.py) for the session that asks."""

from __future__ import annotations

import contextvars
import itertools
import threading

import pytest

from explorer.pieces import piece, run_pieces_with
from explorer.serve.pool import PoolFull, Requester, Superseded, WorkPool

WAIT = 10  # seconds: only a deadlock ever takes this long


def hold(pool: WorkPool) -> threading.Event:
    """Keep the pool's thread busy until the returned event is set (so pieces stay queued)."""
    started, release = threading.Event(), threading.Event()

    def blocker():
        started.set()
        release.wait(WAIT)

    pool.submit("holder", blocker)
    assert started.wait(WAIT)
    return release


def in_session(pool: WorkPool, session: str, fn, *args, check=None):
    """Call fn(*args) in a fresh context whose pieces `pool` runs for `session` (as a page run's)."""
    def body():
        with run_pieces_with(pool.runner(Requester(session, check) if check else Requester(session))):
            return fn(*args)

    return contextvars.Context().run(body)


def as_session(pool: WorkPool, session: str, fn, *args, check=None):
    """fn(*args) as one piece of `session`'s work on `pool`."""
    return in_session(pool, session, piece, fn, *args, check=check)


def test_without_a_runner_a_piece_runs_in_the_callers_thread():
    pool = WorkPool()
    assert contextvars.Context().run(piece, threading.get_ident) == threading.get_ident()
    assert not pool._workers  # no thread started for it


def test_with_the_pools_runner_a_piece_runs_on_the_pool_thread():
    pool = WorkPool()
    ident = as_session(pool, "a", threading.get_ident)
    assert ident != threading.get_ident()
    assert as_session(pool, "b", threading.get_ident) == ident  # one thread serves everyone
    assert contextvars.Context().run(piece, threading.get_ident) == threading.get_ident()  # the block ended


def test_a_pieces_exception_reaches_its_caller():
    pool = WorkPool()

    def broken():
        raise ValueError("bad piece")

    with pytest.raises(ValueError, match="bad piece"):
        as_session(pool, "a", broken)
    assert as_session(pool, "a", lambda: 42) == 42  # the pool still works


def test_a_newer_request_replaces_the_sessions_queued_piece():
    pool, ran = WorkPool(), []
    release = hold(pool)
    first = pool.submit("a", ran.append, "first")
    second = pool.submit("a", ran.append, "second")
    other = pool.submit("b", ran.append, "other")
    assert len(pool) == 2  # one piece per session
    with pytest.raises(Superseded):
        first.result(WAIT)
    release.set()
    second.result(WAIT)
    other.result(WAIT)
    assert ran == ["second", "other"]


def test_sessions_are_served_round_robin():
    """Two sessions that each ask for piece after piece get the thread in turn."""
    pool, order = WorkPool(), []
    lock = threading.Lock()
    release = hold(pool)

    def work(name):
        with lock:
            order.append(name)
        threading.Event().wait(0.05)  # long enough for the other session to queue its next piece

    def session(name):
        for _ in range(4):
            as_session(pool, name, work, name)

    threads = [threading.Thread(target=session, args=(name,)) for name in "ab"]
    for thread in threads:
        thread.start()
    while len(pool) < 2:
        threading.Event().wait(0.005)
    release.set()
    for thread in threads:
        thread.join(WAIT)
    assert sorted(order) == ["a"] * 4 + ["b"] * 4
    assert all(x != y for x, y in itertools.pairwise(order)), order


def test_the_queue_is_bounded():
    pool = WorkPool(max_sessions=2)
    release = hold(pool)
    pool.submit("a", int)
    pool.submit("b", int)
    with pytest.raises(PoolFull):
        pool.submit("c", int)
    pool.submit("a", int)  # a session replacing its own piece needs no new slot
    release.set()


def test_a_superseded_run_stops_waiting_and_withdraws_its_piece():
    pool, ran = WorkPool(), []
    release = hold(pool)
    calls = []

    def check():
        calls.append(1)
        if len(calls) > 1:  # fine when the piece is queued, superseded while it waits
            raise Superseded("the user moved on")

    with pytest.raises(Superseded):
        as_session(pool, "a", ran.append, "stale", check=check)
    assert len(pool) == 0
    release.set()
    assert as_session(pool, "a", lambda: "fresh") == "fresh"
    assert ran == []  # the stale piece never ran


def test_one_thread_per_pool():
    pool = WorkPool(threads=1)
    for name in "abcd":
        as_session(pool, name, int)
    assert len(pool._workers) == 1


def test_the_heavy_views_give_the_same_numbers_in_pieces_on_the_pool():
    import numpy as np

    from explorer.analysis import dependency_views as dependency_views_module
    from explorer.lessons.depth import view as depth
    from explorer.lessons.gradients import measures as gradients
    from explorer.serve.pool import POOL

    def compute():
        for cached in (gradients.gradient_curves, gradients.dependency_views,
                       dependency_views_module._attention_dependency):
            cached.cache_clear()
        return (dict(depth.depth_curves(3, 16, 4, 2)), gradients.gradient_curves(16, 8, "orthogonal", 2.0, None, 2),
                gradients.dependency_views("gru", 8, 8))

    inline = compute()
    threads_before = len(POOL._workers)
    pooled = in_session(POOL, "a", compute)
    assert threads_before <= 1 and len(POOL._workers) == 1  # the pieces ran on the pool's one thread
    for key in inline[0]:
        np.testing.assert_array_equal(inline[0][key], pooled[0][key])
    for kind in inline[1].log10_norms:
        np.testing.assert_array_equal(inline[1].log10_norms[kind], pooled[1].log10_norms[kind])
    for name in ("recurrent", "causal", "unmasked"):
        np.testing.assert_array_equal(getattr(inline[2], name), getattr(pooled[2], name))


def test_the_pools_threads_come_from_the_environment_within_bounds():
    from explorer.serve.pool import threads_from_environment

    assert threads_from_environment(None) == 1 and threads_from_environment("") == 1
    assert threads_from_environment("2") == 2 and threads_from_environment("4") == 4
    assert threads_from_environment("64") == 4 and threads_from_environment("0") == 1
    assert threads_from_environment("-3") == 1 and threads_from_environment("two") == 1
