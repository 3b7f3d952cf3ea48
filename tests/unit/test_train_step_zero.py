"""explorer.lessons.train.view: the page's step 0 is the run's step 0 — the same numbers whatever the run's
length or pace, and for each runner of a race — and what the model is made of changes it."""

from __future__ import annotations

import dataclasses

import numpy as np

from explorer.lessons.train.spec import TRAIN
from explorer.lessons.train.view import TrainSettings, first_snapshots, train_view
from explorer.serve import runtime
from explorer.training.live import LiveSettings, run_settings
from explorer.training.runs import LiveJob

SETTINGS = LiveSettings(task="sort", n_heads=1, n_layers=1, d_model=16, seed=3)
LESSON = TrainSettings(task="sort", n_heads=1, n_layers=1, seed=3)


def same_snapshot(a, b) -> None:
    assert (a.step, a.loss, a.accuracy) == (b.step, b.loss, b.accuracy)
    np.testing.assert_array_equal(a.attention, b.attention)


def test_step_zero_is_the_first_snapshot_of_the_run_itself():
    for settings in (SETTINGS, LiveSettings(task="reverse", model="gru", seed=1)):
        (shown,), = first_snapshots(LiveJob.single(settings))
        same_snapshot(shown, next(run_settings(settings)))


def test_settings_that_only_change_the_training_show_the_same_step_zero():
    for other in (LiveSettings(task="sort", n_heads=1, n_layers=1, d_model=16, seed=3, steps=200, learning_rate=1e-3,
                               schedule="constant", batch_size=16, snapshot_every=10),
                  *LiveJob.race(SETTINGS, 15).runners[:1]):
        (shown,), = first_snapshots(LiveJob.single(other))
        same_snapshot(shown, next(run_settings(SETTINGS)))  # the run's own step 0, whatever it trains like
    # The lesson's view: its length (steps, a race's seconds) leaves step 0 alone; a race adds the GRU's.
    single = train_view(LESSON)
    for steps in (200, 1600):
        same_snapshot(train_view(dataclasses.replace(LESSON, steps=steps)).snapshots[0][0], single.snapshots[0][0])
    for seconds in (5, 20):
        race = train_view(dataclasses.replace(LESSON, mode="race", race_seconds=seconds))
        same_snapshot(race.snapshots[0][0], single.snapshots[0][0])
        same_snapshot(race.snapshots[1][0], next(run_settings(race.job.runners[1])))
        assert race.snapshots[1][0].attention is None  # the GRU has none


def test_the_runtime_computes_a_setting_once_for_every_session():
    runtime._shown.cache_clear()
    first = runtime.shown(TRAIN, LESSON)
    misses = runtime._shown.cache_info().misses
    assert runtime.shown(TRAIN, TrainSettings(task="sort", n_heads=1, n_layers=1, seed=3)) is first
    assert runtime._shown.cache_info().misses == misses


def test_what_the_model_is_made_of_still_changes_step_zero():
    base = train_view(LESSON).snapshots[0][0]
    for change in ({"seed": 4}, {"encoding": "rope"}, {"n_layers": 2}, {"task": "reverse"}, {"n_heads": 2}):
        other = train_view(dataclasses.replace(LESSON, **change)).snapshots[0][0]
        assert other.loss != base.loss or other.attention.shape != base.attention.shape or not np.array_equal(
            other.attention, base.attention), change
