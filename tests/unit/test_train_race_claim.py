"""The race step's answer (train lesson, step 6) is a claim read from the finished race: for equal
steps, where the recurrent network led, where the transformer overtook it for good, and the last
step both reached.  A race is timed, so how far each runner gets depends on the server: the claim is
checked here on made-up races, against the story told by hand for each."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.kit.claims import say
from explorer.kit.steps import load_steps
from explorer.lessons.train.claims import race_story
from explorer.lessons.train.spec import TRAIN
from explorer.lessons.train.view import TrainSettings, at_moment, train_view
from explorer.serve.runtime import Shown
from explorer.training.live import Snapshot
from explorer.training.runs import RunView

RACE = TrainSettings(mode="race", race_seconds=20)
STEP = load_steps("train")[5]


def runner(accuracies: dict[int, float], attention: bool = True) -> tuple[Snapshot, ...]:
    weights = np.full((2, 1, 7, 6), 1 / 6) if attention else None
    return tuple(Snapshot(step, 1.0, accuracy, weights, step / 10, step / 10)
                 for step, accuracy in sorted(accuracies.items()))


def shown(transformer, recurrent, state="done") -> Shown:
    run = RunView(RACE.job, state, 0, (transformer, recurrent), tuple(tuple(0.0 for _ in r) for r in
                                                                      (transformer, recurrent)))
    return Shown(RACE, at_moment(train_view(RACE), run, None), None)


TRANSFORMER = runner({0: 0.0, 100: 0.0, 200: 0.12, 300: 0.8, 400: 0.68, 500: 0.92, 600: 0.95})
GRU = runner({0: 0.0, 100: 0.05, 200: 0.315, 300: 0.45, 400: 0.56, 500: 0.6, 600: 0.65, 700: 0.7}, attention=False)


def test_the_answer_tells_the_race_as_it_went():
    assert STEP.claim == "race" and STEP.settings["mode"] == "race"
    said = say(TRAIN.claims, STEP.claim, STEP.reveal, shown(TRANSFORMER, GRU))
    assert said is not None
    # The GRU's largest lead before the overtake: step 200 (31.5 against 12); ahead for good from 300;
    # the last step both reached: 600 (the transformer stopped there).
    for quoted in ("step 200: 31.5 % against 12.0 %", "overtakes it at step 300 (80.0 % against 45.0 %)",
                   "up to step 600, the last both reached (95.0 % against 65.0 %)"):
        assert quoted in said


def test_a_lead_lost_again_is_no_overtake():
    # The transformer ahead at 300 but behind at 400: it overtakes for good only at 500.
    story = race_story(TRANSFORMER, runner({0: 0, 100: 0.05, 200: 0.3, 300: 0.45, 400: 0.7, 500: 0.6, 600: 0.65}))
    assert (story["early"], story["over"], story["last"]) == (200, 500, 600)


@pytest.mark.parametrize("gru", [
    runner({0: 0, 100: 0.0, 200: 0.1, 300: 0.2, 400: 0.3, 500: 0.4, 600: 0.5}),   # never ahead
    runner({0: 0, 100: 0.05, 200: 0.5, 300: 0.9, 400: 0.9, 500: 0.99, 600: 0.99}),  # ahead to the end
    runner({0: 0}),  # no step measured by both but step 0
], ids=["never-ahead", "ahead-to-the-end", "no-common-step"])
def test_a_race_that_went_otherwise_is_not_described(gru):
    assert race_story(TRANSFORMER, gru) is None
    assert say(TRAIN.claims, STEP.claim, STEP.reveal, shown(TRANSFORMER, gru)) is None


def test_the_answer_waits_for_the_race_to_end():
    claim = TRAIN.claims[STEP.claim]
    assert claim.ready(shown(TRANSFORMER, GRU))
    for state in ("queued", "running", "cancelled", "failed"):
        assert not claim.ready(shown(TRANSFORMER, GRU, state))
