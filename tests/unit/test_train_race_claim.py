"""The race step's answer (train lesson, step 6) is a claim read from the finished race: for equal
steps, where the recurrent network led, where the transformer overtook it for good, and the last
step both reached.  A race is timed, so how far each runner gets depends on the server: the claim is
checked here on made-up races, against the story told by hand for each."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.kit.claims import say
from explorer.kit.steps import load_steps
from explorer.lessons.train.claims import on_the_clock, race_story
from explorer.lessons.train.spec import TRAIN
from explorer.lessons.train.view import TrainSettings, at_moment, train_view
from explorer.serve.runtime import Shown
from explorer.training.live import Snapshot
from explorer.training.runs import RunView

RACE = TrainSettings(mode="race", race_seconds=20)
STEP = load_steps("train")[5]


def runner(accuracies: dict[int, float], attention: bool = True, per_step: float = 0.1) -> tuple[Snapshot, ...]:
    """Snapshots at these steps, each step taking `per_step` seconds of training."""
    weights = np.full((2, 1, 7, 6), 1 / 6) if attention else None
    return tuple(Snapshot(step, 1.0, accuracy, weights, step * per_step, step * per_step)
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
    # The GRU ahead at both steps before the overtake (100, 200); the transformer ahead for good from 300;
    # the last step both reached: 600 (the transformer stopped there, at 60 s; the GRU's latest by
    # then is its step 600 too).
    for quoted in ("before that the GRU was ahead at 2 of 2 steps",
                   "the transformer leads from step 300 to step 600, the last both measured (95.0 % against 65.0 %)",
                   "after 60.0 s each, the transformer leads (95.0 % against 65.0 %)"):
        assert quoted in said, said
    assert "overtakes" not in said


def test_an_overtake_at_the_last_common_step_is_told_as_such():
    """The transformer ahead only at the last step both measured: no "from step 600 to step 600" (the
    answer once read "overtakes it at step 1875 … leads at every step … after it, up to step 1875")."""
    transformer = runner({0: 0.0, 100: 0.0, 200: 0.12, 300: 0.4, 400: 0.5, 500: 0.55, 600: 0.7})
    story = race_story(transformer, GRU)
    assert (story["early"], story["over"], story["last"]) == (200, 600, 600)
    said = say(TRAIN.claims, STEP.claim, STEP.reveal, shown(transformer, GRU))
    assert "the transformer overtakes it only at step 600, the last both measured (70.0 % against 65.0 %)" in said
    assert "leads from step" not in said and said.count("step 600") == 1, said
    assert len(said) < len(STEP.reveal) + 150, said  # about two lines presenting, with the numbers


def test_equal_seconds_compare_the_two_at_the_seconds_both_reached():
    """The left panel read at the end of the shorter curve: each runner's latest accuracy by then."""
    gru = runner({0: 0.0, 100: 0.3, 200: 0.6, 300: 0.9}, attention=False, per_step=0.05)  # 15 s, cheaper steps
    transformer = runner({0: 0.0, 100: 0.2, 200: 0.5}, per_step=0.1)  # 20 s
    assert on_the_clock(transformer, gru) == "after 15.0 s each, the GRU leads (90.0 % against 20.0 %)"
    assert on_the_clock(transformer, gru, "LSTM").startswith("after 15.0 s each, the LSTM leads")
    level = runner({0: 0.0, 100: 0.2}, attention=False, per_step=0.1)
    assert on_the_clock(transformer, level) == "after 10.0 s each, they are level (20.0 %)"


def test_a_lead_lost_again_is_no_overtake():
    # The transformer ahead at 300 but behind at 400: it overtakes for good only at 500.
    story = race_story(TRANSFORMER, runner({0: 0, 100: 0.05, 200: 0.3, 300: 0.45, 400: 0.7, 500: 0.6, 600: 0.65}))
    assert (story["early"], story["over"], story["last"]) == (200, 500, 600)
    # before 500 the GRU is ahead at 100, 200 and 400, not at 300: "ahead at 3 of 4 steps", not "led first"
    assert (story["ahead"], story["measured"]) == (3, 4)


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
