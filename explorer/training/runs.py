"""Live training on a shared server: a few background threads, a queue, and a cache of runs.

A page never trains in its own script thread.  It asks the manager for a job (`request`), then
polls it (`poll`) from a fragment that reruns every second or so, and draws what has arrived.

* At most `slots` runs train at once, each in a child process of its own with one torch thread
  (worker.py: a run trained in the server's process would hold its interpreter lock against every
  page of every user); more requests wait in a queue of bounded length and see their position.
* A session watches one run at a time: asking for another lets go of the first.
* A client (a source address: many sessions, tabs or scripts) may start at most `per_client` runs
  that are queued or training at once (`ClientBusy` past that), and the queue takes clients in
  turn (the one whose last run started longest ago first): one client cannot hold the queue,
  however many runs it asks for.  Runs asked for without a client (notebooks, tests) have no share.
* A run nobody has polled for `abandon_after` seconds is cancelled (the tab was closed), queued or
  running; so is a run whose last watcher let go of it.
* Every run is capped in steps and computing seconds (LiveSettings) and in wall time (`wall_limit`).
* A training process is started when a page that can start a run opens (`ready`), and ended when it
  has had no run for `idle_after` seconds: torch and its warm-up stay in memory only while someone
  is on such a page.
* Identical settings give identical runs, so runs are keyed by their job: a class pressing the same
  button shares one run.  Finished runs stay in a cache bounded by count and bytes (least recently
  used first out); snapshots are small, and a run has at most MAX_SNAPSHOTS per runner.
"""

from __future__ import annotations

import atexit
import math
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .live import LIVE_SECONDS, MAX_SECONDS, LiveSettings, Snapshot, race, race_settings, run_settings
from .worker import InlineRunner, ProcessRunner

__all__ = ["ACTIVE", "ClientBusy", "LiveJob", "QueueFull", "RunView", "TrainingManager", "default_manager"]

ACTIVE = ("queued", "running")
MIN_POLL, MAX_POLL = 1.5, 5.0  # seconds between a page's polls (poll_interval)
POLLING_WINDOW = 1.5 * MAX_POLL  # a session seen this recently is still polling


@dataclass(frozen=True)
class LiveJob:
    """What a session asks the server to train: one run, or a race of runners that each train for
    `race_seconds` (see live.race).  Hashable: the key under which sessions share a run."""

    runners: tuple[LiveSettings, ...]
    race_seconds: float | None = None

    def __post_init__(self):
        if not self.runners or (self.race_seconds is None and len(self.runners) != 1):
            raise ValueError("a job is one run, or a race of several runners with race_seconds")
        if self.race_seconds is not None and not 0 < self.race_seconds <= MAX_SECONDS:
            raise ValueError(f"a race lasts 0–{MAX_SECONDS:g} seconds")

    @classmethod
    def single(cls, settings: LiveSettings) -> LiveJob:
        return cls((settings,))

    @classmethod
    def race(cls, settings: LiveSettings, seconds: float, recurrent: str = "gru") -> LiveJob:
        return cls(race_settings(settings, recurrent), float(seconds))

    def snapshots(self, should_stop: Callable[[], bool]) -> Iterator[tuple[int, Snapshot]]:
        """(runner index, snapshot) as the job computes them."""
        if self.race_seconds is None:
            return ((0, snapshot) for snapshot in run_settings(self.runners[0], should_stop))
        return race(self.runners, self.race_seconds, should_stop)


@dataclass(frozen=True)
class RunView:
    """What a page sees of a run at one moment.  state: queued, running, done, cancelled or failed.
    position: 1 for the next run to start, 0 when not queued.  snapshots: one tuple per runner;
    arrived: beside each snapshot, the seconds from the run's start to its arrival (a page replaying
    a finished run shows each snapshot at that pace)."""

    job: LiveJob
    state: str
    position: int
    snapshots: tuple[tuple[Snapshot, ...], ...]
    arrived: tuple[tuple[float, ...], ...]
    message: str = ""

    @property
    def active(self) -> bool:
        return self.state in ACTIVE


class QueueFull(RuntimeError):
    """More runs are waiting than the server accepts; try again in a minute."""


class ClientBusy(RuntimeError):
    """The client already has its share of runs queued or training (`TrainingManager.per_client`)."""


@dataclass(eq=False)
class _Run:
    job: LiveJob
    client: str | None = None  # the source address of the session that asked for it first
    state: str = "queued"
    snapshots: list[list[Snapshot]] = field(default_factory=list)
    arrived: list[list[float]] = field(default_factory=list)
    message: str = ""
    watchers: dict[str, float] = field(default_factory=dict)  # session → when it last polled
    started: float | None = None
    cancel: bool = False
    nbytes: int = 0


class TrainingManager:
    """The server's live runs (see the module docstring).  Thread-safe; one per process is enough."""

    def __init__(self, *, slots: int = 1, max_queue: int = 48, per_client: int = 2, abandon_after: float = 20.0,
                 keep_runs: int = 32,
                 keep_bytes: int = 16 * 2**20, max_seconds: float = LIVE_SECONDS,
                 wall_limit: float = 2 * LIVE_SECONDS, processes: bool = True, idle_after: float = 600.0,
                 clock: Callable[[], float] = time.monotonic):
        if (slots < 1 or max_queue < 0 or per_client < 1 or abandon_after <= 0 or keep_runs < 0
                or min(wall_limit, max_seconds) <= 0):
            raise ValueError("slots ≥ 1, max_queue ≥ 0, per_client ≥ 1, keep_runs ≥ 0; abandon_after, max_seconds, "
                             "wall_limit > 0")
        self.slots, self.max_queue, self.abandon_after, self.max_seconds = slots, max_queue, abandon_after, max_seconds
        self.per_client = per_client
        self.keep_runs, self.keep_bytes, self.wall_limit = keep_runs, keep_bytes, wall_limit
        self.processes = processes  # False: train in the worker threads themselves (tests, notebooks)
        self.idle_after = idle_after  # seconds without a run after which a training process ends
        self._wanted = 0  # calls of ready(): a worker whose process has ended starts it again
        self._clock = clock
        self._lock = threading.Condition()
        self._runs: OrderedDict[LiveJob, _Run] = OrderedDict()  # active and finished, oldest first
        self._queue: deque[LiveJob] = deque()
        self._sessions: dict[str, LiveJob] = {}
        self._started: dict[str | None, float] = {}  # client → when its last run started (clients with runs)
        self._threads: list[threading.Thread] = []
        self._trainers: list = []
        self._closed = False

    # --- what pages call ---------------------------------------------------------------------------

    def ready(self) -> None:
        """Start the workers now (their training processes import torch and warm up: worker.py), so that
        the first run requested does not wait for that: a page that can start a run calls this when it opens."""
        with self._lock:
            if not self._closed:
                self._start_workers()
                self._wanted += 1
                self._lock.notify_all()

    def request(self, session: str, job: LiveJob, client: str | None = None) -> RunView:
        """Watch `job` from `session` (of `client`, its source address): the run in progress or in the
        cache, or a new one in the queue.  Lets go of the run the session watched before.  Raises
        QueueFull when the queue is full, ClientBusy when the client already has `per_client` runs
        queued or training (a run someone else started is shared, never refused), and ValueError for
        a job beyond the server's cap on computing seconds."""
        if max(runner.max_seconds for runner in job.runners) > self.max_seconds or (
                job.race_seconds or 0) > self.max_seconds:
            raise ValueError(f"this server trains a run for at most {self.max_seconds:g} s")
        with self._lock:
            now = self._clock()
            self._housekeep(now)
            previous = self._sessions.get(session)
            if previous is not None and previous != job:
                self._unwatch(session, previous)
            run = self._runs.get(job)
            if run is None or run.state in ("cancelled", "failed"):
                if len(self._queue) >= self.max_queue:
                    raise QueueFull(f"{len(self._queue)} runs are waiting already")
                if client is not None and sum(
                        r.client == client and r.state in ACTIVE for r in self._runs.values()) >= self.per_client:
                    raise ClientBusy(f"{self.per_client} runs from {client} are queued or training already")
                run = _Run(job, client, snapshots=[[] for _ in job.runners], arrived=[[] for _ in job.runners])
                self._runs[job] = run
                self._runs.move_to_end(job)
                self._queue.append(job)
                self._start_workers()
                self._lock.notify()
            elif run.state == "done":
                self._runs.move_to_end(job)  # recently used
            run.watchers[session] = now
            self._sessions[session] = job
            return self._view(run)

    def poll(self, session: str, job: LiveJob) -> RunView | None:
        """`job`'s run as `session` sees it now, and a sign that the session is still there (which
        keeps an active run alive).  None if the session does not watch an active run of `job`
        (it asked for another, or stopped, or was silent too long) and the run is not finished."""
        with self._lock:
            now = self._clock()
            self._housekeep(now)
            run = self._runs.get(job)
            if run is None or (run.state in ACTIVE and session not in run.watchers):
                return None
            if self._sessions.get(session, job) != job:
                return None
            run.watchers[session] = now
            self._sessions[session] = job
            return self._view(run)

    def finished(self, job: LiveJob) -> RunView | None:
        """A finished run of `job` in the cache, if any (without watching it)."""
        with self._lock:
            run = self._runs.get(job)
            return self._view(run) if run is not None and run.state == "done" else None

    def release(self, session: str) -> None:
        """The session watches nothing any more (its run is cancelled if nobody else watches it)."""
        with self._lock:
            job = self._sessions.get(session)
            if job is not None:
                self._unwatch(session, job)

    def watchers(self) -> int:
        """Sessions polling a run now: those that polled (or asked) in the last POLLING_WINDOW
        seconds.  A session that has shown the whole of its run stops polling and no longer counts,
        although it still holds the run until it asks for another (or goes silent for `abandon_after`)."""
        with self._lock:
            now = self._clock()
            return sum(now - seen <= POLLING_WINDOW for run in self._runs.values() for seen in run.watchers.values())

    def poll_interval(self) -> float:
        """Seconds between a page's polls: MIN_POLL, slower when a whole class is watching (MAX_POLL
        for 30 sessions: 6 polls a second in all), so that polling stays a small part of the server's
        work (benchmarks/RESULTS.md, phase train-load: the trainers' polls and what they send)."""
        return min(MAX_POLL, max(MIN_POLL, self.watchers() / 6))

    def stats(self) -> dict:
        with self._lock:
            states = [run.state for run in self._runs.values()]
            return {"running": states.count("running"), "queued": len(self._queue), "finished": states.count("done"),
                    "bytes": sum(run.nbytes for run in self._runs.values()), "sessions": len(self._sessions),
                    "trainer_pids": [getattr(trainer, "pid", None) for trainer in self._trainers]}

    def close(self) -> None:
        """Cancel everything and stop the threads (tests)."""
        with self._lock:
            self._closed = True
            for run in self._runs.values():
                run.cancel = True
            self._queue.clear()
            self._lock.notify_all()
        for thread in self._threads:
            thread.join(timeout=30)

    # --- inside the lock ------------------------------------------------------------------------------

    def _view(self, run: _Run) -> RunView:
        position = self._queue.index(run.job) + 1 if run.state == "queued" else 0
        return RunView(run.job, run.state, position, tuple(map(tuple, run.snapshots)), tuple(map(tuple, run.arrived)),
                       run.message)

    def _unwatch(self, session: str, job: LiveJob) -> None:
        self._sessions.pop(session, None)
        run = self._runs.get(job)
        if run is None:
            return
        run.watchers.pop(session, None)
        if run.state in ACTIVE and not run.watchers:
            self._cancel(run)

    def _cancel(self, run: _Run) -> None:
        run.cancel = True
        if run.state == "queued":
            self._queue.remove(run.job)
            run.state, run.message = "cancelled", "nobody was watching"
            del self._runs[run.job]

    def _housekeep(self, now: float) -> None:
        """Forget sessions that stopped polling; cancel active runs nobody watches."""
        for run in list(self._runs.values()):
            for session, seen in list(run.watchers.items()):
                if now - seen > self.abandon_after:
                    del run.watchers[session]
                    if self._sessions.get(session) == run.job:
                        del self._sessions[session]
            if run.state in ACTIVE and not run.watchers:
                self._cancel(run)

    def _evict(self) -> None:
        """Drop the least recently used finished runs beyond the count and byte bounds."""
        finished = [job for job, run in self._runs.items() if run.state not in ACTIVE]
        total = sum(self._runs[job].nbytes for job in finished)
        while finished and (len(finished) > self.keep_runs or total > self.keep_bytes):
            run = self._runs.pop(finished.pop(0))
            total -= run.nbytes
            for session in run.watchers:
                if self._sessions.get(session) == run.job:
                    del self._sessions[session]

    # --- the worker threads ---------------------------------------------------------------------------

    def _start_workers(self) -> None:
        while len(self._threads) < self.slots:
            name = f"live-training-{len(self._threads)}"
            runner = ProcessRunner(name) if self.processes else InlineRunner()
            self._trainers.append(runner)
            thread = threading.Thread(target=self._work, args=(runner,), name=name, daemon=True)
            self._threads.append(thread)
            thread.start()

    def _next(self, idle_since: float | None, served: int) -> _Run | str | None:
        """The next run to train; "start" (a page called ready() since `served`: start the process),
        "rest" (no run since `idle_since` for idle_after: end the process), or None (closed)."""
        with self._lock:
            while not self._queue and not self._closed:
                if self._wanted > served:
                    return "start"
                if idle_since is not None and self._clock() - idle_since >= self.idle_after:
                    return "rest"
                self._lock.wait(timeout=1.0)
                self._housekeep(self._clock())
            if self._closed:
                return None
            # Clients in turn: the queued run whose client started a run longest ago (never: first), in
            # queue order among equals.  Only clients with a run in the queue or training are remembered.
            job = min(self._queue, key=lambda j: self._started.get(self._runs[j].client, -math.inf))
            self._queue.remove(job)
            run = self._runs[job]
            run.state, run.started = "running", self._clock()
            active = {r.client for r in self._runs.values() if r.state in ACTIVE}
            self._started = {c: t for c, t in self._started.items() if c in active}
            self._started[run.client] = run.started
            return run

    def _should_stop(self, run: _Run) -> bool:
        with self._lock:
            now = self._clock()
            self._housekeep(now)
            if now - run.started > self.wall_limit:
                run.message = f"stopped at the server's limit of {self.wall_limit:g} s"
                run.cancel = True
            return run.cancel

    def _work(self, trainer) -> None:
        served, idle_since = 0, None  # ready() calls answered; since when the process has had no run
        try:
            while (run := self._next(idle_since, served)) is not None:
                if run == "rest":
                    trainer.close()  # its memory back; the next run starts a new one
                    idle_since = None
                    continue
                if run == "start":
                    served = self._wanted
                    if isinstance(trainer, ProcessRunner):
                        trainer.start()  # the child imports torch and warms up while the page is read
                else:
                    self._train(trainer, run)
                idle_since = self._clock()
        finally:
            trainer.close()

    def _train(self, trainer, run: _Run) -> None:
        """Run one job to its end, recording its snapshots as they arrive, then its outcome."""
        try:
            for runner, snapshot in trainer.run(run.job, lambda run=run: self._should_stop(run)):
                with self._lock:
                    run.snapshots[runner].append(snapshot)
                    run.arrived[runner].append(self._clock() - run.started)
                    run.nbytes += snapshot.nbytes
            state, message = ("cancelled", run.message or "nobody was watching") if run.cancel else ("done", "")
            last = run.snapshots[0][-1] if run.snapshots[0] else None
            if state == "done" and run.job.race_seconds is None and last and last.step < run.job.runners[0].steps:
                message = (f"it reached the limit of {run.job.runners[0].max_seconds:g} s of computing at step "
                           f"{last.step}")
        except Exception as problem:  # a bug must not kill the worker: the page shows the message
            state, message = "failed", f"{type(problem).__name__}: {str(problem)[:300]}"
        with self._lock:
            run.state, run.message = state, message
            if state == "cancelled" and not run.watchers:
                self._runs.pop(run.job, None)
            self._evict()


_DEFAULT: TrainingManager | None = None
_DEFAULT_LOCK = threading.Lock()


def default_manager() -> TrainingManager:
    """The process's manager, made on first use.  EXPLORER_TRAIN_SLOTS sets the runs that train at
    once (default 1: a Streamlit process computes on one core, and its pages need a share of it),
    EXPLORER_TRAIN_PER_CLIENT the runs one source address may have queued or training (default 2)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            slots = os.environ.get("EXPLORER_TRAIN_SLOTS", "1")
            per_client = os.environ.get("EXPLORER_TRAIN_PER_CLIENT", "2")
            _DEFAULT = TrainingManager(slots=max(1, min(4, int(slots) if slots.isdigit() else 1)),
                                       per_client=max(1, min(48, int(per_client) if per_client.isdigit() else 2)))
            # Stop the threads before the interpreter goes: torch code still running in a daemon
            # thread at exit aborts the process.
            atexit.register(_DEFAULT.close)
        return _DEFAULT
