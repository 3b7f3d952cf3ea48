"""explorer.views.train: the page's step 0 is the run's step 0, shared by settings that differ only
in how the run trains (length, pace, batches), and computed once for them."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.training.live import LiveSettings, run_settings
from explorer.training.runs import LiveJob
from explorer.views.train import first_snapshots, step_zero, untrained

pytestmark = pytest.mark.usefixtures("one_thread")

SETTINGS = LiveSettings(task="sort", n_heads=1, n_layers=1, d_model=16, seed=3)


def same_snapshot(a, b) -> None:
    assert (a.step, a.loss, a.accuracy) == (b.step, b.loss, b.accuracy)
    np.testing.assert_array_equal(a.attention, b.attention)


def test_step_zero_is_the_first_snapshot_of_the_run_itself():
    step_zero.cache_clear()
    for settings in (SETTINGS, LiveSettings(task="reverse", model="gru", seed=1)):
        (shown,), = first_snapshots(LiveJob.single(settings))
        same_snapshot(shown, next(run_settings(settings)))


def test_settings_that_only_change_the_training_share_one_step_zero():
    step_zero.cache_clear()
    first_snapshots(LiveJob.single(SETTINGS))
    misses = step_zero.cache_info().misses
    for other in (LiveSettings(task="sort", n_heads=1, n_layers=1, d_model=16, seed=3, steps=200, learning_rate=1e-3,
                               schedule="constant", batch_size=16, snapshot_every=10),
                  *LiveJob.race(SETTINGS, 15).runners[:1]):
        assert untrained(other) == untrained(SETTINGS)
        (shown,), = first_snapshots(LiveJob.single(other))
        same_snapshot(shown, next(run_settings(other)))  # the run's own step 0, whatever it trains like
    assert step_zero.cache_info().misses == misses, "nothing computed again"
    first_snapshots(LiveJob.race(SETTINGS, 10))
    assert step_zero.cache_info().misses == misses + 1, "a race adds only its recurrent runner"


def test_what_the_model_is_made_of_still_changes_step_zero():
    for change in ({"seed": 4}, {"encoding": "rope"}, {"n_layers": 2}, {"task": "reverse"}, {"model": "lstm"}):
        other = LiveSettings(**{**SETTINGS.__dict__, **change})
        assert untrained(other) != untrained(SETTINGS), change
