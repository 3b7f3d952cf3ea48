"""Lesson steps (explorer/lessons/*/lesson.toml): every step of every page opens from its link with the
controls it names, hides the figures until Reveal, then shows them with its explanation; Next and
Back move between steps."""

import pytest

from explorer.kit.steps import STEP_DIR, load_steps
from explorer.lessons import LESSONS
from harness.apptest import assert_no_exception, page_test
from harness.claims import answer

STEPPED = [p for p in LESSONS if (STEP_DIR / p.url_path / "lesson.toml").exists()]
CASES = [(p, n) for p in STEPPED for n in range(1, len(load_steps(p.url_path)) + 1)]


def charts(at) -> int:
    return len(at.get("plotly_chart")) + len(at.get("vega_lite_chart"))


def test_every_lesson_has_four_to_eight_steps():
    assert STEPPED, "no lesson has steps"
    for page in STEPPED:
        assert 4 <= len(load_steps(page.url_path)) <= 8, page.url_path


@pytest.mark.parametrize(("page", "number"), CASES, ids=[f"{p.url_path}-{n}" for p, n in CASES])
def test_a_step_link_sets_its_controls_and_reveals_on_request(page, number):
    step = load_steps(page.url_path)[number - 1]
    at = page_test(page.path, {"step": str(number)}).run()
    assert_no_exception(at)
    for key, value in step.settings.items():
        assert at.session_state[key] == value, f"step {number} sets {key} = {value!r}"
    assert charts(at) == 0, "figures stay hidden until the class has predicted"
    assert any(step.predict in el.value for el in at.info)
    assert not any("not valid here" in el.value or "not a setting" in el.value for el in at.info)

    at.button(key="lesson_next").click().run()  # Reveal
    assert_no_exception(at)
    assert charts(at) > 0
    shown = answer(page.url_path, step)  # with its numbers read from the view (claims are code)
    assert sum(shown in el.value for el in [*at.success, *at.info]) == 1, "the answer is shown once"
    for key, value in step.settings.items():
        assert at.session_state[key] == value, f"after Reveal, {key} is still the step's {value!r}"


def test_next_and_back_move_between_steps_and_set_controls():
    page = STEPPED[0]
    steps = load_steps(page.url_path)
    at = page_test(page.path).run()
    assert charts(at) > 0, "step 0 is free exploration: figures show"
    at.button(key="lesson_next").click().run()
    assert at.session_state["step"] == 1 and charts(at) == 0
    at.button(key="lesson_next").click().run()  # reveal
    at.button(key="lesson_next").click().run()  # next
    assert at.session_state["step"] == 2
    for key, value in steps[1].settings.items():
        assert at.session_state[key] == value
    at.button(key="lesson_back").click().run()
    assert at.session_state["step"] == 1
    assert charts(at) > 0, "a step revealed once stays revealed"


def test_a_setting_in_the_link_wins_over_the_step():
    page = next(p for p in STEPPED if p.url_path == "depth")
    key, value = next(iter(load_steps(page.url_path)[0].settings.items()))
    other = {"layers": 5, "task": "sort"}.get(key, value)  # another allowed value of the first page's first setting
    assert other != value, "name another value for this setting here, or the test cannot fail"
    at = page_test(page.path, {"step": "1", key: str(other)}).run()
    assert at.session_state[key] == other


@pytest.mark.parametrize("page", STEPPED, ids=[p.url_path for p in STEPPED])
def test_walking_the_steps_with_next_shows_each_answer_as_its_link_does(page):
    """A lecturer clicks through the whole lesson with Next alone: each revealed step shows the answer
    its own link shows (a control the step leaves alone follows what the step sets, as the sentences
    follow the example the step picks: encoders step 3 → 4 once kept step 3's sentences)."""
    steps = load_steps(page.url_path)
    at = page_test(page.path, {"step": "1"}).run()
    for number, step in enumerate(steps, start=1):
        assert at.session_state["step"] == number
        for key, value in step.settings.items():  # the question already shows the step's controls
            assert at.session_state[key] == value, f"step {number}'s question: {key} is {at.session_state[key]!r}"
            linked = at.query_params.get(key)
            linked = linked[0] if isinstance(linked, list) else linked
            if isinstance(value, bool):
                same = linked == str(value).lower()
            else:
                same = linked == str(value) or (isinstance(value, (int, float)) and float(linked or "nan") == value)
            assert linked is None or same, f"step {number}: the address says {key}={linked}, the step {value!r}"
        at.button(key="lesson_next").click().run()  # Reveal
        assert_no_exception(at)
        shown = answer(page.url_path, step)
        assert sum(shown in el.value for el in [*at.success, *at.info]) == 1, f"step {number}: {shown!r} not shown once"
        if number < len(steps):
            at.button(key="lesson_next").click().run()  # Next


def test_presenting_a_long_answer_shows_two_lines_and_the_rest_behind_more():
    """Presenting, an answer past ANSWER_CHARS shows its first whole sentences and "…" in the step bar,
    the others in the "More" button's popover beside it; at a desk the same answer is whole."""
    from explorer.kit.steps import presented, step_heading

    def folded(page, number, step):
        return presented(step_heading(number, len(load_steps(page.url_path)), step.title), answer(page.url_path, step))

    page, number, step = next((p, n, load_steps(p.url_path)[n - 1]) for p, n in CASES
                              if folded(p, n, load_steps(p.url_path)[n - 1])[1])
    shown, rest = folded(page, number, step)
    at = page_test(page.path, {"step": str(number), "present": "1"}).run()
    at.button(key="lesson_next").click().run()  # Reveal
    assert_no_exception(at)
    said = [el.value for el in at.success if el.value.startswith(f"**Step {number} of")]
    assert len(said) == 1 and said[0].endswith(f"{shown} …"), said
    assert rest not in said[0] and sum(rest in el.value for el in at.markdown) == 1, "the rest, once, in the popover"
    desk = page_test(page.path, {"step": str(number)}).run()
    desk.button(key="lesson_next").click().run()
    assert any(el.value.endswith(answer(page.url_path, step)) for el in desk.success), "at a desk: whole"
