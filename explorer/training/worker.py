"""Where a live run computes: in a child process, so that training never holds the server's GIL.

A Streamlit server runs every session's script in one Python process; a run trained in a thread of
that process takes its turns at the interpreter lock with every page of every user (a first version
did, and in the classroom benchmark both the run and the other pages slowed down several times over;
benchmarks/RESULTS.md, phase train-load, measures the class pressing Train now).

A `ProcessRunner` owns one child process (started on first use, kept for the next job, restarted if
it dies) and trains one job at a time in it: one torch thread, at a lower CPU priority than the
server; the snapshots come back over a pipe.  `InlineRunner` computes in the calling thread (a
notebook, a test).  Both have the same `run(job, should_stop)`.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection, Pipe
from pathlib import Path

__all__ = ["InlineRunner", "ProcessRunner"]

STOP_GRACE_S = 10.0  # a child that does not stop this long after being told is killed
ROOT = Path(__file__).resolve().parents[2]
# The child runs at a lower CPU priority than the server, so that when the machine is busy the pages
# of every user are served first and training takes what is left (it slows down; pages do not).
NICENESS = 10


class InlineRunner:
    """Computes the job in the calling thread."""

    def run(self, job, should_stop: Callable[[], bool]) -> Iterator:
        return job.snapshots(should_stop)

    def close(self) -> None:
        pass


class ProcessRunner:
    """One child process, one job at a time (see the module docstring)."""

    def __init__(self, name: str = "live-training"):
        self.name = name
        self._process: subprocess.Popen | None = None
        self._connection: Connection | None = None
        self._jobs = itertools.count(1)

    def start(self) -> None:
        """Start the child now (it imports torch: a second or two), if it is not running.

        `python -m explorer.training.worker`, not multiprocessing's spawn: spawn would import the
        parent's main module in the child (under `streamlit run`, all of Streamlit)."""
        if self._process is not None and self._process.poll() is None:
            return
        self.kill()
        self._connection, child = Pipe()
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        self._process = subprocess.Popen([sys.executable, "-m", "explorer.training.worker", str(child.fileno())],
                                         pass_fds=(child.fileno(),), cwd=ROOT, stdin=subprocess.DEVNULL,
                                         env=dict(os.environ, PYTHONPATH=path))
        child.close()

    def run(self, job, should_stop: Callable[[], bool]) -> Iterator:
        """(runner, snapshot) pairs as the child computes them.  should_stop is asked every 0.2 s;
        when it turns true the child is told to stop (and killed if it does not)."""
        self.start()
        number = next(self._jobs)
        self._connection.send((number, job))
        told = None
        while True:
            if self._connection.poll(0.2):
                try:
                    message = self._connection.recv()
                except (EOFError, OSError):  # the pipe closed: the child is gone, or still on its way out
                    self.kill()  # reaped here: the next job must not find it "running" and write to its pipe
                    raise RuntimeError("the training process ended unexpectedly") from None
                kind, about, *rest = message
                if about != number:
                    continue
                if kind == "snapshot":
                    runner, snapshot = rest
                    if snapshot.attention is not None:
                        snapshot.attention.flags.writeable = False
                    yield runner, snapshot
                    continue
                if kind == "failed":
                    if self._process.poll() is not None:  # the child itself is gone: start afresh next time
                        self.kill()
                    raise RuntimeError(rest[0])
                return  # done
            if self._process.poll() is not None:
                self.kill()
                raise RuntimeError("the training process ended unexpectedly")
            if told is None and should_stop():
                self._connection.send(("stop", number))
                told = time.monotonic()
            elif told is not None and time.monotonic() - told > STOP_GRACE_S:
                self.kill()
                return

    def kill(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait(timeout=5)
        if self._connection is not None:
            self._connection.close()
        self._process = self._connection = None

    def close(self) -> None:
        """Ask the child to finish, then make sure it has."""
        if self._process is not None and self._process.poll() is None:
            try:
                self._connection.send(None)
                self._process.wait(timeout=5)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        self.kill()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None


def _warm_up() -> None:
    """What only a process's first run pays, paid before any job arrives: the training code's imports
    and torch's first forward and backward pass (one step of the default run, thrown away).  A first
    job that arrives after it sends its first snapshot as soon as a later job does."""
    from .live import LiveSettings, run_settings

    asked = iter([False])  # one training step, then stop
    try:
        for _ in run_settings(LiveSettings(), lambda: next(asked, True)):
            pass
    except Exception:  # a warm-up that fails must not end the child: the jobs report their own faults
        pass


def _child(connection: Connection) -> None:
    """The child's loop: a job in, its snapshots out, until None arrives or the server is gone."""
    import torch

    torch.set_num_threads(1)  # this process's own setting: one thread, like the app
    os.nice(NICENESS)
    _warm_up()
    stopped: set[int] = set()
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):  # the server has gone
            return
        if message is None:
            return
        if message[0] == "stop":
            continue  # a stop for a job that had already finished
        number, job = message

        def should_stop(number=number) -> bool:
            while connection.poll():
                incoming = connection.recv()
                if incoming is None:
                    raise SystemExit(0)
                if incoming[0] == "stop":
                    stopped.add(incoming[1])
            return number in stopped

        try:
            for runner, snapshot in job.snapshots(should_stop):
                connection.send(("snapshot", number, runner, snapshot))
            connection.send(("done", number))
        except Exception as problem:  # reported to the server, which shows it on the page
            connection.send(("failed", number, f"{type(problem).__name__}: {str(problem)[:300]}"))


if __name__ == "__main__":
    _child(Connection(int(sys.argv[1])))
