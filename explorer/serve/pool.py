"""The runtime's work pool: where the lessons' heavy pieces run, shared fairly between sessions.

A heavy view is cut into pieces (explorer/pieces.py: `piece(fn, ...)`, a few tenths of a second of
CPU each).  For a page run, the runtime installs `POOL.runner(Requester(session, check))` as the
runner of those pieces, and each one runs on the pool's one thread while the session's script thread
waits (using no CPU).  So:

* at most one thread per server process does heavy work, whatever the number of sessions;
* sessions are served round-robin: each has at most one queued piece, and the pool takes the
  session that has waited longest, so one session asking for piece after piece cannot hold the
  thread while another waits for more than one piece;
* a newer request from a session replaces its queued, not yet started piece (that waiter gets
  `Superseded`), and a waiting rerun that its session has replaced (the user moved a slider again)
  stops after the piece in progress: superseded reruns do not keep computing;
* the queue is bounded (`max_sessions`); a request beyond it waits for room.

No Streamlit here: the page adapter (explorer/serve/page.py) names the session and its check, and
the warm-up (explorer/serve/runtime.py) runs as one more session.  An exception raised by a piece
reaches its caller.
"""

from __future__ import annotations

import functools
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import wait as wait_for
from dataclasses import dataclass

__all__ = ["POOL", "PoolFull", "Requester", "Superseded", "WorkPool", "threads_from_environment"]


class Superseded(Exception):
    """A queued piece was replaced by a newer request of the same session before it started."""


class PoolFull(Exception):
    """Every queue slot is taken (`WorkPool.max_sessions` sessions are waiting)."""


def _never() -> None:
    return None


@dataclass(frozen=True)
class Requester:
    """The session asking, and a check that raises when its run has been superseded (the page's
    user asked for a newer rerun): `run` calls it while waiting, so the old run stops there."""

    session: str
    check: Callable[[], None] = _never


class WorkPool:
    """`threads` worker threads (started on first use) serving at most one queued piece per session,
    sessions in the order they queued (round-robin for sessions that keep asking)."""

    def __init__(self, threads: int = 1, max_sessions: int = 256, poll_s: float = 0.05):
        self.threads, self.max_sessions, self.poll_s = threads, max_sessions, poll_s
        self._queue: OrderedDict[str, tuple[Future, Callable, tuple, dict]] = OrderedDict()
        self._changed = threading.Condition()
        self._workers: list[threading.Thread] = []

    def __len__(self) -> int:
        """Pieces queued, not yet started."""
        with self._changed:
            return len(self._queue)

    def submit(self, session: str, fn: Callable, *args, **kwargs) -> Future:
        """Queue fn(*args, **kwargs) for `session`, replacing its queued piece if it has one (that
        piece's future fails with Superseded).  Raises PoolFull when max_sessions others wait."""
        future: Future = Future()
        with self._changed:
            replaced = self._queue.pop(session, None)
            if replaced is None and len(self._queue) >= self.max_sessions:
                raise PoolFull(f"{len(self._queue)} sessions are waiting")
            self._queue[session] = (future, fn, args, kwargs)
            while len(self._workers) < self.threads:
                worker = threading.Thread(target=self._work, name=f"explorer-pool-{len(self._workers)}", daemon=True)
                self._workers.append(worker)
                worker.start()
            self._changed.notify()
        if replaced is not None and replaced[0].set_running_or_notify_cancel():
            replaced[0].set_exception(Superseded(f"replaced by a newer request of session {session}"))
        return future

    def withdraw(self, session: str, future: Future) -> None:
        """Take `future`'s piece off the queue if it has not started (its waiter gave up)."""
        with self._changed:
            queued = self._queue.get(session)
            if queued is not None and queued[0] is future:
                del self._queue[session]
        future.cancel()

    def _work(self) -> None:
        while True:
            with self._changed:
                while not self._queue:
                    self._changed.wait()
                _, (future, fn, args, kwargs) = self._queue.popitem(last=False)
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args, **kwargs)
            except BaseException as problem:  # handed to the waiter, whatever it is
                future.set_exception(problem)
            else:
                future.set_result(result)

    def run(self, requester: Requester, fn: Callable, *args, **kwargs):
        """fn(*args, **kwargs) on the pool for `requester`, waiting for the result.  Raises what fn
        raises, or what the requester's check raises once its run is superseded."""
        while True:
            requester.check()
            try:
                future = self.submit(requester.session, fn, *args, **kwargs)
                break
            except PoolFull:
                with self._changed:
                    self._changed.wait(self.poll_s)
        while not wait_for([future], timeout=self.poll_s).done:
            try:
                requester.check()
            except BaseException:
                self.withdraw(requester.session, future)
                raise
        return future.result()

    def runner(self, requester: Requester) -> Callable:
        """A runner of pieces (explorer.pieces) that runs each on this pool for `requester`."""
        return functools.partial(self.run, requester)


def threads_from_environment(value: str | None, default: int = 1, most: int = 4) -> int:
    """EXPLORER_POOL_THREADS, read once at import: the pool's threads per server process (1–4)."""
    try:
        return min(most, max(1, int(value))) if value else default
    except ValueError:
        return default


POOL = WorkPool(threads=threads_from_environment(os.environ.get("EXPLORER_POOL_THREADS")))
