"""What the live-training page shows: the untrained model before anyone presses Train, the probe's
tokens, and the part of a run a session has reached (a finished run is replayed at its own pace)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..analysis.caching import bounded_cache
from ..training.live import LiveSettings, Snapshot, live_task, probe, run_settings
from ..training.runs import LiveJob, RunView

__all__ = ["Progress", "columns", "first_snapshots", "probe_tokens", "progress", "repace", "step_zero", "untrained"]


def first_snapshots(job: LiveJob) -> tuple[tuple[Snapshot], ...]:
    """Step 0 of every runner of the job, one tuple per runner: what the run will start from (the
    same numbers, as the run is a function of its settings)."""
    return tuple((step_zero(untrained(settings)),) for settings in job.runners)


_DEFAULTS = LiveSettings()


def untrained(settings: LiveSettings) -> LiveSettings:
    """The settings with everything that only shapes the training (its length, pace, batches and
    snapshots) at the defaults: step 0 is the same for all of them, so they share one cached step 0
    (a change of steps, of race length or from one run to a race computes nothing new)."""
    return replace(settings, steps=_DEFAULTS.steps, snapshot_every=None, batch_size=_DEFAULTS.batch_size,
                   learning_rate=_DEFAULTS.learning_rate, schedule=_DEFAULTS.schedule,
                   max_seconds=_DEFAULTS.max_seconds)


@bounded_cache(48, max_bytes=16_000_000)
def step_zero(settings: LiveSettings) -> Snapshot:
    """Step 0 of a run of `settings`: the fresh model's held-out loss and accuracy and the probe's attention."""
    return next(run_settings(settings))


@bounded_cache(16, max_bytes=1_000_000)
def probe_tokens(task: str, letters: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(query tokens, key tokens) of the probe whose attention a run shows."""
    _, queries, keys = probe(live_task(task, letters))
    return tuple(queries), tuple(keys)


def columns(snapshots) -> dict[str, np.ndarray]:
    """step, loss, accuracy and seconds (of training) of a runner's snapshots, as arrays."""
    return {
        "steps": np.array([s.step for s in snapshots], dtype=np.int64),
        "loss": np.array([s.loss for s in snapshots], dtype=float),
        "accuracy": np.array([s.accuracy for s in snapshots], dtype=float),
        "seconds": np.array([s.training_seconds for s in snapshots], dtype=float),
    }


@dataclass(frozen=True)
class Progress:
    """The part of a run a session has reached: per runner, the snapshots shown so far; `complete`
    once every snapshot of a finished run is shown."""

    snapshots: tuple[tuple[Snapshot, ...], ...]
    complete: bool

    def fraction(self, settings: tuple[LiveSettings, ...], race_seconds: float | None) -> float:
        """How far along the run is, 0–1: steps of the planned steps, or seconds of the race's."""
        if self.complete:
            return 1.0
        done = []
        for runner, shown in zip(settings, self.snapshots, strict=True):
            if not shown:
                done.append(0.0)
            elif race_seconds is None:
                done.append(shown[-1].step / runner.steps)
            else:
                done.append(shown[-1].training_seconds / race_seconds)
        return float(min(1.0, max(0.0, min(done, default=0.0))))


def progress(view: RunView, watched_for: float) -> Progress:
    """The snapshots a session that has watched `view`'s run for `watched_for` seconds is shown:
    those that arrived by then (so a run that finished before the session asked is replayed at the
    pace it was computed, and every session sees it form from step 0)."""
    shown = tuple(
        tuple(s for s, arrived in zip(snapshots, times, strict=True) if arrived <= watched_for)
        for snapshots, times in zip(view.snapshots, view.arrived, strict=True)
    )
    finished = not view.active
    complete = finished and all(len(a) == len(b) for a, b in zip(shown, view.snapshots, strict=True))
    return Progress(shown, complete)


def repace(interval: float, wanted: float) -> bool:
    """Whether a page polling every `interval` seconds should rerun to poll every `wanted` seconds
    instead (a fragment's pace is set by a whole-page run, dearer than a poll): when a class has
    joined and the pace should slow by half again or more (the polls saved pay for the page run in a
    few seconds).  Never to speed up: a session keeps the slower pace to the end of its run (a few
    seconds between frames, still a live view), and no page reruns when a class leaves at once."""
    return wanted >= 1.5 * interval
