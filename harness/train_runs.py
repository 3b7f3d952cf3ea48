"""The live-training lesson's runs, each trained once per test session: a run is a function of its
settings (on one machine), and the unit and page tests of the train lesson read the same ones."""

from __future__ import annotations

import functools

from explorer.lessons.train.view import TrainSettings
from explorer.training.live import Snapshot, run_settings

__all__ = ["lesson_run"]


@functools.lru_cache(maxsize=8)
def lesson_run(settings: TrainSettings) -> tuple[Snapshot, ...]:
    """Every snapshot of the transformer's run for these settings (a single run, not a race)."""
    return tuple(run_settings(settings.job.runners[0]))
