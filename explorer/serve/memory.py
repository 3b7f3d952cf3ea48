"""Memory the server process has freed, given back to the system.

glibc's malloc keeps what a program frees for its own next allocations; it hands back to the system
only a free stretch at the very top of its heap.  A lesson's computation (every lesson's warm-up, a
gradient sweep at a long length, the stopwatch) allocates and frees many temporaries between objects
that stay (cached views, loaded models), so the freed memory sits in holes that malloc keeps: the
process looks as large as its busiest moment ever was, and a class server with several workers runs
out of the host's memory for no use.  `malloc_trim(0)` returns every free page of every arena
(benchmarks/RESULTS.md, phase load-serve, measures the server's memory with and without it).

    release()             give the free pages back now (on glibc; elsewhere it does nothing)
    keep_released()       from now on, a daemon thread that releases when the process has grown

What is kept (caches, models) is untouched: only pages malloc holds free are returned, and a later
allocation takes them back from the system as it would have from malloc.  EXPLORER_TRIM=0 turns it
off (to measure without it).
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Callable

__all__ = ["keep_released", "release", "resident_mb"]

PERIOD_S = 10.0  # how often the thread looks at the process's size
SLACK_MB = 64  # growth since the last release that is worth a release (a trim of a small heap is cheap anyway)


def _libc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, found among the process's own symbols (no search for the library)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to call
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


_TRIM = _libc_trim()


def enabled() -> bool:
    return _TRIM is not None and os.environ.get("EXPLORER_TRIM", "1") != "0"


def release() -> bool:
    """Return malloc's free pages to the system; True if any were (False: none, or not glibc)."""
    return bool(_TRIM(0)) if enabled() else False


def resident_mb() -> float:
    """The process's resident memory, MB (0 where /proc is not there)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError, IndexError):
        return 0.0


class Releaser:
    """Every `period_s`, `release()` if the process grew by more than `slack_mb` since the last one."""

    def __init__(self, period_s: float = PERIOD_S, slack_mb: float = SLACK_MB,
                 size: Callable[[], float] = resident_mb, give_back: Callable[[], bool] = release):
        self.period_s, self.slack_mb, self.size, self.give_back = period_s, slack_mb, size, give_back
        self.released_at = size()
        self.releases = 0

    def check(self) -> bool:
        """One look: release if grown (what the thread does each period); True if it released."""
        if self.size() - self.released_at <= self.slack_mb:
            return False
        self.give_back()
        self.released_at = self.size()
        self.releases += 1
        return True

    def run(self) -> None:
        while True:
            time.sleep(self.period_s)
            self.check()


_started: list[Releaser] = []
_lock = threading.Lock()


def keep_released() -> Releaser | None:
    """Release now, then start the process's one releasing thread (once; None where disabled)."""
    if not enabled():
        return None
    with _lock:
        if not _started:
            release()
            releaser = Releaser()
            threading.Thread(target=releaser.run, name="explorer-release-memory", daemon=True).start()
            _started.append(releaser)
        return _started[0]
