"""explorer.training.runs and worker: the server's manager of live runs — background workers, the
queue and its positions, shared runs, one run per session, abandonment, the caps, the bounded
cache — and the child processes the runs compute in.

Jobs are tiny (20 steps) or long (MAX_STEPS, stopped by the test).  A fake clock drives the
abandonment and wall-time limits, so no test waits for them in real time.  Most tests train in the
manager's threads (processes=False, quicker); the last ones in child processes, as the server does."""

from __future__ import annotations

import itertools
import os
import signal
import time

import pytest

from explorer.serve.live import reached, repace
from explorer.training import runs
from explorer.training.live import MAX_STEPS, LiveSettings, run_settings
from explorer.training.runs import LiveJob, QueueFull, TrainingManager

_seeds = itertools.count(100)


def tiny() -> LiveJob:
    return LiveJob.single(LiveSettings(steps=20, snapshot_every=5, seed=next(_seeds)))


def long() -> LiveJob:
    return LiveJob.single(LiveSettings(steps=MAX_STEPS, snapshot_every=50, seed=next(_seeds)))


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def make():
    managers = []

    def build(**kwargs) -> TrainingManager:
        manager = TrainingManager(**{"processes": False, **kwargs})
        managers.append(manager)
        return manager

    yield build
    for manager in managers:
        manager.close()


def wait_for(condition, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)
    return value


def finish(manager: TrainingManager, session: str, job: LiveJob):
    return wait_for(lambda: (v := manager.poll(session, job)) is not None and not v.active and v)


def test_a_run_trains_in_the_background_to_the_same_numbers(make):
    manager = make()
    job = tiny()
    view = manager.request("a", job)
    assert view.state in ("queued", "running") and view.active
    done = finish(manager, "a", job)
    assert done.state == "done" and done.message == ""
    assert [s.step for s in done.snapshots[0]] == [0, 5, 10, 15, 20]
    assert len(done.arrived[0]) == 5 and list(done.arrived[0]) == sorted(done.arrived[0])
    alone = list(run_settings(job.runners[0]))
    assert [(s.step, s.loss, s.accuracy) for s in done.snapshots[0]] == [(s.step, s.loss, s.accuracy) for s in alone]
    assert manager.finished(job) == done


def test_two_sessions_share_one_run(make):
    manager = make()
    job = tiny()
    manager.request("a", job)
    manager.request("b", job)
    stats = manager.stats()
    assert stats["running"] + stats["queued"] == 1 and stats["sessions"] == 2
    first, second = finish(manager, "a", job), finish(manager, "b", job)
    assert first.snapshots == second.snapshots
    # A third session asking later gets the cached run at once, without training again.
    third = manager.request("c", job)
    assert third.state == "done" and third.snapshots == first.snapshots
    assert manager.stats()["running"] == manager.stats()["queued"] == 0


def test_more_requests_than_slots_wait_in_a_queue_with_positions(make):
    manager = make(slots=1, max_queue=2)
    first, second, third = long(), tiny(), tiny()
    manager.request("a", first)
    wait_for(lambda: manager.poll("a", first).state == "running")
    assert manager.request("b", second).position == 1
    view = manager.request("c", third)
    assert (view.state, view.position) == ("queued", 2)
    with pytest.raises(QueueFull):
        manager.request("d", tiny())
    manager.release("a")  # nobody else watches the first run: it stops, and the queue moves up
    wait_for(lambda: manager.poll("c", third).position == 1 or manager.poll("c", third).state != "queued")
    assert manager.poll("a", first) is None
    assert finish(manager, "c", third).state == "done"


def test_one_run_per_session(make):
    manager = make(slots=1)
    first, second = long(), tiny()
    manager.request("a", first)
    manager.request("b", first)  # someone else watches the first run too
    wait_for(lambda: manager.poll("a", first).state == "running")
    manager.request("a", second)  # "a" lets go of the first run; "b" keeps it going
    assert manager.poll("a", first) is None
    assert manager.poll("b", first).state == "running"
    manager.request("b", tiny())  # now nobody watches the first run: it is cancelled
    wait_for(lambda: manager.stats()["running"] == 0 or manager.poll("a", second).state == "running")
    assert manager.finished(first) is None
    assert finish(manager, "a", second).state == "done"


def test_runs_nobody_polls_are_cancelled_running_or_queued(make):
    clock = Clock()
    manager = make(slots=1, abandon_after=10.0, clock=clock)
    running, queued = long(), long()
    manager.request("a", running)
    wait_for(lambda: manager.poll("a", running).state == "running")
    manager.request("b", queued)
    clock.now += 5
    assert manager.poll("a", running).state == "running"  # "a" polled in time; "b" too, below
    assert manager.poll("b", queued).state == "queued"
    clock.now += 11  # both tabs were closed: nobody polls for longer than abandon_after
    wait_for(lambda: manager.stats()["running"] == 0 and manager.stats()["queued"] == 0)
    assert manager.stats()["sessions"] == 0 and manager.stats()["finished"] == 0
    assert manager.poll("a", running) is None and manager.poll("b", queued) is None


def test_wall_time_limit_stops_a_run(make):
    clock = Clock()
    manager = make(wall_limit=30.0, abandon_after=100.0, clock=clock)
    job = long()
    manager.request("a", job)
    wait_for(lambda: manager.poll("a", job).state == "running")
    clock.now += 31
    ended = finish(manager, "a", job)
    assert ended.state == "cancelled" and "30 s" in ended.message
    assert ended.snapshots[0] and ended.snapshots[0][-1].step < MAX_STEPS
    assert manager.finished(job) is None  # a run cut short is not shared as if it were the run


def test_the_servers_cap_on_seconds(make):
    manager = make(max_seconds=5.0)
    with pytest.raises(ValueError, match="5 s"):
        manager.request("a", LiveJob.single(LiveSettings(max_seconds=6.0)))
    with pytest.raises(ValueError, match="5 s"):
        manager.request("a", LiveJob.race(LiveSettings(max_seconds=5.0), 10.0))
    job = LiveJob.single(LiveSettings(steps=MAX_STEPS, max_seconds=0.5, seed=next(_seeds)))
    manager.request("a", job)
    capped = finish(manager, "a", job)
    assert capped.state == "done" and "limit of 0.5 s" in capped.message
    assert capped.snapshots[0][-1].step < MAX_STEPS


def test_the_cache_of_finished_runs_is_bounded(make):
    manager = make(keep_runs=1)
    first, second = tiny(), tiny()
    manager.request("a", first)
    finish(manager, "a", first)
    manager.request("a", second)
    finish(manager, "a", second)
    assert manager.finished(first) is None and manager.finished(second) is not None
    assert manager.stats()["finished"] == 1 and manager.stats()["bytes"] > 0
    small = make(keep_bytes=1)  # smaller than any run: nothing is kept
    job = tiny()
    small.request("a", job)
    wait_for(lambda: small.stats()["running"] == small.stats()["queued"] == 0)
    assert small.finished(job) is None and small.stats()["bytes"] == 0


def test_a_failing_run_is_reported_and_the_worker_goes_on(make, monkeypatch):
    manager = make(slots=1)
    broken, fine = tiny(), tiny()
    real = LiveJob.snapshots

    def snapshots(self, should_stop):
        if self == broken:
            raise RuntimeError("out of coffee")
        return real(self, should_stop)

    monkeypatch.setattr(LiveJob, "snapshots", snapshots)
    manager.request("a", broken)
    failed = finish(manager, "a", broken)
    assert failed.state == "failed" and "out of coffee" in failed.message
    manager.request("b", fine)
    assert finish(manager, "b", fine).state == "done"


def test_a_race_job_trains_both_runners(make):
    manager = make()
    job = LiveJob.race(LiveSettings(seed=next(_seeds)), 0.5)
    assert [r.model for r in job.runners] == ["transformer", "gru"]
    done = finish(manager, "a", job) if manager.request("a", job) else None
    assert done.state == "done" and all(len(s) >= 2 for s in done.snapshots)
    assert all(s[-1].training_seconds >= 0.5 for s in done.snapshots)
    with pytest.raises(ValueError):
        LiveJob.race(LiveSettings(), 10_000)


def test_polling_slows_down_when_a_class_is_watching(make):
    manager = make()
    job = long()
    assert manager.poll_interval() == 1.5
    for session in range(30):
        manager.request(f"s{session}", job)
    assert manager.stats()["running"] + manager.stats()["queued"] == 1
    assert manager.poll_interval() == 5.0


def test_the_default_manager_is_one_per_process(monkeypatch):
    monkeypatch.setattr(runs, "_DEFAULT", None)
    monkeypatch.setenv("EXPLORER_TRAIN_SLOTS", "2")
    first = runs.default_manager()
    try:
        assert first is runs.default_manager() and first.slots == 2
    finally:
        first.close()


def test_runs_compute_in_a_child_process_to_the_same_numbers(make):
    manager = make(processes=True)
    job = tiny()
    manager.request("a", job)
    done = finish(manager, "a", job)
    (pid,) = manager.stats()["trainer_pids"]
    assert pid is not None and pid != os.getpid()
    alone = list(run_settings(job.runners[0]))
    assert [(s.step, s.loss, s.accuracy) for s in done.snapshots[0]] == [(s.step, s.loss, s.accuracy) for s in alone]
    assert all(not s.attention.flags.writeable for s in done.snapshots[0])
    # Stopping a run in the child: quick, and the same child trains the next job.
    long_job = long()
    manager.request("a", long_job)
    wait_for(lambda: len(manager.poll("a", long_job).snapshots[0]) >= 2)
    manager.release("a")
    wait_for(lambda: manager.stats()["running"] == 0, timeout=30)
    second = tiny()
    manager.request("a", second)
    assert finish(manager, "a", second).state == "done"
    assert manager.stats()["trainer_pids"] == [pid]


def test_ready_starts_the_training_process_before_any_run_and_the_first_run_uses_it(make):
    """A page that can start a run calls ready() when it opens: the child imports torch then, not
    on the first press; the first run trains in that same child."""
    manager = make(processes=True)
    assert manager.stats()["trainer_pids"] == []
    manager.ready()
    wait_for(lambda: manager.stats()["trainer_pids"] and manager.stats()["trainer_pids"][0] is not None)
    (pid,) = manager.stats()["trainer_pids"]
    manager.ready()  # once is enough: no second worker, no second process
    assert manager.stats()["trainer_pids"] == [pid]
    job = tiny()
    manager.request("a", job)
    assert finish(manager, "a", job).state == "done" and manager.stats()["trainer_pids"] == [pid]
    manager.close()
    manager.ready()  # a closed manager starts nothing
    assert len(manager.stats()["trainer_pids"]) == 1


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_an_idle_training_process_ends_and_a_page_opening_starts_it_again(make):
    """The process (torch, its warm-up) stays only while someone may train: after idle_after seconds
    without a run it ends; the next page opening (ready) or run starts a new one."""
    manager = make(processes=True, idle_after=1.0)
    manager.ready()
    (pid,) = wait_for(lambda: [p for p in manager.stats()["trainer_pids"] if p])
    wait_for(lambda: manager.stats()["trainer_pids"] == [None])
    assert not _alive(pid)
    manager.ready()  # the page opened again
    (again,) = wait_for(lambda: [p for p in manager.stats()["trainer_pids"] if p])
    assert again != pid
    job = tiny()
    manager.request("a", job)
    assert finish(manager, "a", job).state == "done"
    wait_for(lambda: manager.stats()["trainer_pids"] == [None])  # idle again after its run
    assert not _alive(again)
    second = tiny()  # a run with no page opening first starts its own process
    manager.request("b", second)
    assert finish(manager, "b", second).state == "done"


def test_a_child_that_dies_fails_its_run_and_is_replaced(make):
    manager = make(processes=True)
    job = long()
    manager.request("a", job)
    wait_for(lambda: len(manager.poll("a", job).snapshots[0]) >= 1)
    (pid,) = manager.stats()["trainer_pids"]
    os.kill(pid, signal.SIGKILL)
    failed = finish(manager, "a", job)
    assert failed.state == "failed" and "ended unexpectedly" in failed.message
    second = tiny()
    manager.request("a", second)
    assert finish(manager, "a", second).state == "done"
    assert manager.stats()["trainer_pids"][0] not in (None, pid)


def test_sessions_that_stopped_polling_do_not_slow_the_others(make):
    clock = Clock()
    manager = make(abandon_after=60.0, clock=clock)
    job = long()
    for session in range(30):
        manager.request(f"s{session}", job)
    assert manager.poll_interval() == 5.0
    clock.now += 10  # the class has seen the whole run: nobody polls any more, but each still holds it
    assert manager.stats()["sessions"] == 30
    assert manager.watchers() == 0 and manager.poll_interval() == 1.5
    manager.poll("s0", job)
    assert manager.watchers() == 1


def test_a_page_reruns_for_a_new_pace_only_to_slow_down_by_half_again():
    assert repace(1.5, 5.0) and repace(1.5, 2.25)
    assert not repace(1.5, 2.0)  # a few more watchers: not worth a whole-page run
    assert not repace(5.0, 1.5)  # the class left: keep the slower pace to the end of the run


def test_a_session_is_shown_the_snapshots_that_arrived_while_it_watched():
    """A run that finished before the session asked is replayed at the pace it was computed."""
    snapshots = tuple(next(run_settings(LiveSettings(steps=2, seed=s))) for s in range(3))
    run = runs.RunView(LiveJob.single(LiveSettings(steps=2)), "done", 0, (snapshots,), ((0.0, 1.0, 2.0),))
    early, complete = reached(run, 1.5)
    assert early.snapshots == (snapshots[:2],) and early.arrived == ((0.0, 1.0),) and not complete
    assert reached(run, 2.0) == (run, True)
    training, complete = reached(runs.RunView(run.job, "running", 0, (snapshots,), ((0.0, 1.0, 2.0),)), 5.0)
    assert len(training.snapshots[0]) == 3 and not complete  # all arrived, but more may come


def test_a_client_may_have_its_share_of_runs_queued_or_training_and_no_more(make):
    manager = make(slots=1, per_client=2)
    first, second = long(), long()
    manager.request("a", first, "10.0.0.1")
    manager.request("b", second, "10.0.0.1")
    with pytest.raises(runs.ClientBusy, match=r"2 runs from 10\.0\.0\.1"):
        manager.request("c", long(), "10.0.0.1")
    shared = long()
    manager.request("d", shared, "10.0.0.2")  # another client's run ...
    assert manager.request("c", shared, "10.0.0.1").active  # ... is shared with a client at its share
    manager.release("b")  # one of its own runs stopped: room again
    assert manager.request("e", long(), "10.0.0.1").active


def test_the_queue_starts_a_run_of_a_client_with_nothing_training_before_a_second_run_of_one(make):
    manager = make(slots=1, per_client=3)
    running = long()
    manager.request("a", running, "10.0.0.1")
    wait_for(lambda: manager.poll("a", running).state == "running")
    own_second, other = long(), long()
    manager.request("b", own_second, "10.0.0.1")  # queued first ...
    manager.request("c", other, "10.0.0.2")  # ... this one after it
    manager.release("a")  # the running run stops
    wait_for(lambda: manager.poll("c", other).state == "running")
    assert manager.poll("b", own_second).state == "queued"  # the other client went first


def test_a_child_whose_pipe_closes_is_reaped_before_the_next_job():
    """A killed child's pipe can close before its process is seen to exit (a loaded machine widens that
    window): the runner then kills and reaps it at once, so the next job starts a new child instead of
    writing to the dead one's pipe (CI, loaded: the job after a killed child failed)."""
    from explorer.training.worker import ProcessRunner

    runner = ProcessRunner()
    try:
        snapshots = runner.run(long(), lambda: False)
        next(snapshots)  # the child is training
        child = runner._process
        child.poll = lambda: None  # the window: the pipe has closed, the exit is not yet visible
        os.kill(runner.pid, signal.SIGKILL)
        with pytest.raises(RuntimeError, match="ended unexpectedly"):
            for _ in snapshots:
                pass
        assert runner.pid is None, "the dead child is reaped with the failure, not left for the next job"
        assert sum(1 for _ in runner.run(tiny(), lambda: False)) == 5  # a new child: 0, 5, 10, 15, 20
    finally:
        runner.close()
