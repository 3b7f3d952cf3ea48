"""AppTest: the train-it-live page — step 0 before Train, a run trained in the server's background
manager and polled to the end, the scrubber, a second session sharing the run, Stop, the race.

AppTest does not run the fragment's timer: each `at.run()` here is one poll."""

from __future__ import annotations

import time

import numpy as np
import pytest

from explorer.lessons.train.view import TrainSettings
from explorer.training.live import LiveSettings, run_settings
from explorer.training.runs import LiveJob, default_manager
from harness import train_runs
from harness.apptest import info_text, plotly_array, plotly_array_1d, plotly_figure, plotly_figures, run_page

PAGE = "explorer/lessons/train/train.py"
SCRUB = "_train_scrub"
WATCH = "_train_watch"  # session state: the job the session watches (explorer/serve/live.py)



def grid(at) -> np.ndarray:
    """The probe's attention as drawn: (layers × heads, queries, keys), the first figure."""
    figure = plotly_figure(at, "train_grid")
    return np.stack([plotly_array(trace["z"]) for trace in figure["data"]])


def lesson_run(**settings) -> list:
    """The snapshots of the lesson's run with these settings (the page's own job)."""
    return list(train_runs.lesson_run(TrainSettings(**settings)))


def scrubber(at):
    return next((s for s in at.select_slider if s.key == SCRUB), None)


def poll_to_the_end(at, timeout: float = 240.0):
    """Rerun (as the fragment would) until the scrubber of the finished run appears."""
    deadline = time.monotonic() + timeout
    while scrubber(at) is None:
        assert not at.exception, [e.value for e in at.exception]
        assert time.monotonic() < deadline, "the run did not finish in time"
        time.sleep(0.5)
        at.run()
    return at


def test_before_training_the_page_shows_step_0_of_the_run():
    at = run_page(PAGE, {"seed": "11"})
    assert not at.info and scrubber(at) is None
    first = next(run_settings(TrainSettings(seed=11).job.runners[0]))
    np.testing.assert_allclose(grid(at), first.attention.reshape(-1, 7, 6), atol=1e-6)
    np.testing.assert_allclose(grid(at).sum(-1), 1, atol=1e-5)
    curves = plotly_figure(at, "train_curves")["data"]
    assert [len(plotly_array_1d(trace["y"])) for trace in curves] == [1, 1]
    assert plotly_array_1d(curves[0]["y"])[0] == pytest.approx(first.loss, rel=1e-6)
    assert "Step 0" in at.caption[0].value
    assert not at.button(key="train_start").disabled and at.button(key="train_stop").disabled


def test_train_polls_to_the_end_replays_and_is_shared_with_the_next_session():
    link = {"steps": "200", "seed": "12"}
    at = run_page(PAGE, link)
    at.button(key="train_start").click().run()
    assert at.button(key="train_start").disabled and not at.button(key="train_stop").disabled
    poll_to_the_end(at)
    expected = lesson_run(steps=200, seed=12)
    steps = [s.step for s in expected]
    assert list(scrubber(at).options) == [str(s) for s in steps] and scrubber(at).value == 200
    np.testing.assert_allclose(grid(at), expected[-1].attention.reshape(-1, 7, 6), atol=1e-6)
    curves = plotly_figure(at, "train_curves")["data"]
    np.testing.assert_allclose(plotly_array_1d(curves[1]["y"]), [100 * s.accuracy for s in expected], atol=1e-9)
    shown = "\n".join(m.value for m in at.markdown)
    assert f"**{100 * expected[-1].accuracy:.1f} %**" in shown
    rows = expected[-1].attention.max(-1).mean(-1)  # (layers, heads): the sentence names the sharpest
    layer, head = np.unravel_index(np.argmax(rows), rows.shape)
    assert f"layer {layer + 1} · head {head + 1}, each row's largest weight **{rows.max():.2f}**" in shown
    # The scrubber replays any snapshot.
    scrubber(at).set_value(steps[3]).run()
    np.testing.assert_allclose(grid(at), expected[3].attention.reshape(-1, 7, 6), atol=1e-6)

    # A new visitor opens on its own step 0, not on the run someone else finished (issue 29).  Its
    # Train shares that run, trained once: nothing is queued or trained again, and it is replayed
    # from step 0 to the same last snapshot.
    other = run_page(PAGE, link)
    assert scrubber(other) is None and "Step 0" in other.caption[0].value
    np.testing.assert_allclose(grid(other), expected[0].attention.reshape(-1, 7, 6), atol=1e-6)
    other.button(key="train_start").click().run()
    stats = default_manager().stats()
    assert stats["queued"] == 0 and stats["running"] == 0, stats
    poll_to_the_end(other)
    assert scrubber(other).value == 200
    np.testing.assert_allclose(grid(other), expected[-1].attention.reshape(-1, 7, 6), atol=1e-6)


def test_stop_cancels_the_run_and_a_settings_change_lets_it_go():
    job = TrainSettings(steps=1600, seed=13).job
    at = run_page(PAGE, {"steps": "1600", "seed": "13"})
    at.button(key="train_start").click().run()
    assert default_manager().poll("probe", job) is None  # watched by the page's session, not this one
    at.button(key="train_stop").click().run()
    assert not at.button(key="train_start").disabled
    deadline = time.monotonic() + 60
    while default_manager().stats()["running"] and time.monotonic() < deadline:  # the run winds down
        time.sleep(0.1)
    assert default_manager().finished(job) is None
    # Changing a setting while a run trains lets that run go too.
    at.button(key="train_start").click().run()
    at.slider(key="seed").set_value(14).run()
    assert not at.button(key="train_start").disabled and scrubber(at) is None


def test_the_race_trains_both_models_for_the_same_seconds():
    at = run_page(PAGE, {"mode": "race", "race_seconds": "5", "seed": "15"})
    race = plotly_figure(at, "train_race")["data"]
    assert plotly_figures(at)[0] == plotly_figure(at, "train_race")  # the race first, above the grid
    assert [trace["name"] for trace in race] == ["transformer", "transformer", "GRU", "GRU"]
    assert at.button(key="train_start").label == "Race"
    at.button(key="train_start").click().run()
    poll_to_the_end(at)
    race = plotly_figure(at, "train_race")["data"]
    for seconds in (plotly_array_1d(race[0]["x"]), plotly_array_1d(race[2]["x"])):
        assert seconds[0] == 0 and seconds[-1] >= 5 and seconds[-2] < 5
    assert "the GRU at step" in "\n".join(m.value for m in at.markdown)


@pytest.mark.parametrize(("link", "named"), [
    ({"heads": "3"}, "Heads per layer"), ({"layers": "9"}, "Layers"), ({"encoding": "sideways"}, "Positional encoding"),
    ({"mode": "race", "task": "induction"}, "Mode"), ({"mode": "race", "steps": "400"}, "steps"),
])
def test_bad_links_fall_back_with_a_note(link, named):
    at = run_page(PAGE, link)
    assert named in info_text(at)
    assert len(plotly_figures(at)) == 2


def test_a_busy_server_shows_the_queue_position():
    manager = default_manager()
    busy = LiveJob.single(LiveSettings(steps=4000, seed=19))
    manager.request("another class", busy)
    try:
        deadline = time.monotonic() + 60
        while manager.poll("another class", busy).state != "running":
            assert time.monotonic() < deadline
            time.sleep(0.1)
        at = run_page(PAGE, {"steps": "200", "seed": "18"})
        at.button(key="train_start").click().run()
        texts = [bar.proto.text for bar in at.get("progress")]
        assert any("position 1 in the queue" in t for t in texts), texts
        at.button(key="train_stop").click().run()  # leaves the queue
        assert manager.stats()["queued"] == 0
    finally:
        manager.release("another class")


def test_a_client_past_its_share_of_runs_is_told_so_and_nothing_is_queued(monkeypatch):
    from explorer.serve.client import LOCAL  # AppTest's session has no address: it counts as this machine

    manager = default_manager()
    # Runs an earlier test of this process let go may still be winding down, counted against this
    # machine (the tests run in any order on two workers: scripts/test.sh): let them end first.
    deadline = time.monotonic() + 60
    while manager.stats()["running"] + manager.stats()["queued"] and time.monotonic() < deadline:
        time.sleep(0.1)
    monkeypatch.setattr(manager, "per_client", 1)
    mine = LiveJob.single(LiveSettings(steps=1600, seed=14))
    manager.request("another tab", mine, LOCAL)
    try:
        at = run_page(PAGE, {"steps": "1600", "seed": "15"})
        at.button(key="train_start").click().run()
        assert "already has 1 runs training or waiting" in " ".join(i.value for i in [*at.info, *at.warning]), (
            [m.value for m in at.info])
        assert not at.button(key="train_start").disabled  # nothing is watched: Train stays available
        assert manager.poll("probe", TrainSettings(steps=1600, seed=15).job) is None
    finally:
        manager.release("another tab")


def answers(at, number: int, boxes) -> list[str]:
    return [box.value for box in boxes if f"Step {number} of" in box.value]


def test_a_steps_answer_waits_for_its_run_then_quotes_it():
    """Step 4 (one layer): Reveal starts the step's run (a clicker cannot press Train), so the answer
    says it waits for the run (no number shown yet, and no call to press Train); once the run has
    finished, the answer quotes that run's own numbers."""
    at = run_page(PAGE, {"step": "4"})
    at.button(key="lesson_next").click().run()  # Reveal
    waiting = answers(at, 4, at.info)
    assert len(waiting) == 1 and "appears here when the run has finished" in waiting[0], waiting
    assert "Press" not in waiting[0], waiting  # it is training already
    assert not answers(at, 4, at.success)
    assert at.button(key="train_start").disabled and not at.button(key="train_stop").disabled
    poll_to_the_end(at)
    expected = lesson_run(n_layers=1)
    reached = next(s.step for s in expected if s.accuracy >= 0.9)
    said = answers(at, 4, at.success)
    assert len(said) == 1, [box.value for box in [*at.success, *at.info]]
    assert f"passes 90 % at step {reached}" in said[0] and f"ends at {100 * expected[-1].accuracy:.1f} %" in said[0]
    # Moving a control away after the run: the answer is withdrawn, and the step says why.
    at.slider(key="seed").set_value(3).run()
    assert not answers(at, 4, at.success)


def test_revealing_step_2_trains_its_run_without_a_press_of_train():
    """The clicker's PageDown is Reveal: on step 2 it asks the server's manager for the step's job (Train
    never pressed), the answer waits for it, then quotes the finished run's numbers, read here from
    the manager's own copy of the run."""
    job = TrainSettings().job  # step 2's settings are the page's defaults
    at = run_page(PAGE, {"step": "2"})
    assert WATCH not in at.session_state and at.button(key="lesson_next").label == "Reveal"  # the question only
    at.button(key="lesson_next").click().run()  # Reveal
    assert at.session_state[WATCH][0] == job
    assert at.button(key="train_start").disabled
    assert answers(at, 2, at.info) and "appears here when the run has finished" in answers(at, 2, at.info)[0]
    poll_to_the_end(at)
    run = default_manager().finished(job).snapshots[0]
    first = next(s.step for s in run if s.accuracy >= 0.9)
    said = answers(at, 2, at.success)
    assert len(said) == 1, [box.value for box in [*at.success, *at.info]]
    assert f"passes 90 % at step {first} and ends at {100 * run[-1].accuracy:.1f} %" in said[0], said


def test_revealing_step_1_starts_no_run():
    """Step 1 is about the untrained model (its claim is ready at step 0): its Reveal trains nothing,
    and its answer says the next step trains it."""
    at = run_page(PAGE, {"step": "1"})
    at.button(key="lesson_next").click().run()  # Reveal
    assert WATCH not in at.session_state and not at.button(key="train_start").disabled
    said = answers(at, 1, at.success)
    assert len(said) == 1 and "The next step trains it" in said[0], said
    assert not at.get("progress")


def test_moving_on_during_a_run_is_never_held_up():
    """Step 5's run is training when the lecturer presses Next: step 6's question shows at once (with
    Reveal), and its Reveal starts the race, which the session then watches in place of step 5's run."""
    sort_job = TrainSettings(task="sort").job
    at = run_page(PAGE, {"step": "5"})
    at.button(key="lesson_next").click().run()  # Reveal: step 5's run starts
    assert at.session_state[WATCH][0] == sort_job
    at.button(key="lesson_next").click().run()  # Next, during the run
    assert not at.exception and at.session_state["step"] == 6
    assert at.button(key="lesson_next").label == "Reveal"
    assert answers(at, 6, at.info) and not answers(at, 5, [*at.info, *at.success])
    at.button(key="lesson_next").click().run()  # Reveal: the race
    race = TrainSettings(mode="race", race_seconds=20).job
    try:
        assert at.session_state[WATCH][0] == race and at.button(key="train_start").label == "Race"
        assert at.button(key="train_start").disabled
        waiting = answers(at, 6, at.info)
        assert len(waiting) == 1 and "appears here when the run has finished" in waiting[0], waiting
    finally:
        at.button(key="train_stop").click().run()  # the race ends here: the test needs none of it


def test_an_answer_whose_claim_fails_at_its_own_settings_says_so(monkeypatch):
    """Where a step's answer does not hold for what is shown although the controls are the step's (a
    run that went otherwise on this machine), the step says so instead of claiming the controls moved."""
    import dataclasses

    from explorer.kit.claims import Claim
    from explorer.lessons.train import spec as lessons

    never = dataclasses.replace(lessons.TRAIN, claims={**lessons.TRAIN.claims, "even_at_start": Claim(lambda s: False)})
    monkeypatch.setattr(lessons, "TRAIN", never)
    at = run_page(PAGE, {"step": "1"})
    at.button(key="lesson_next").click().run()  # Reveal
    said = [box.value for box in at.info if "Step 1 of" in box.value]
    assert len(said) == 1 and "did not turn out as this step's answer describes" in said[0], said
    assert not [box.value for box in at.success if "Step 1 of" in box.value]
