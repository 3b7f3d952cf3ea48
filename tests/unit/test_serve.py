"""The lesson runtime (explorer/serve): declarations, the one cache, the warm-up, the adapter."""

from __future__ import annotations

import dataclasses
from dataclasses import FrozenInstanceError, dataclass

import pytest
import streamlit as st

from explorer.kit.settings import check, controls_of, setting
from explorer.kit.steps import load_steps
from explorer.lessons import specs
from explorer.serve import runtime
from explorer.serve.adapter import ATTEMPT, sendable, warm_lessons
from harness.apptest import page_test, run_page

LESSONS = specs()

PAGES = [lesson for lesson in LESSONS if lesson.section is None]


@pytest.fixture(scope="module")
def warmed() -> set[str]:
    """One warm-up from an empty cache, shared by the tests below (each checks that its pages then
    compute nothing; a warm-up per test cost 4 s each)."""
    runtime._shown.cache_clear()
    return set(warm_lessons())


def test_the_warm_up_names_every_lesson_and_every_page_s_steps(warmed):
    assert {name for name in warmed if not name.startswith("steps of ")} == {spec.name for spec in LESSONS}
    assert {name for name in warmed if name.startswith("steps of ")} == {f"steps of {page.page}" for page in PAGES}


@pytest.mark.parametrize("lesson", PAGES, ids=lambda lesson: lesson.page)
def test_after_the_warm_up_a_page_and_the_reveal_of_any_step_compute_nothing(lesson, warmed):
    """A visitor's first page, and a lecturer's Reveal of any step, find their views (the page's and
    its sections') computed."""
    misses = runtime._shown.cache_info().misses
    at = run_page(f"explorer/lessons/{lesson.page}/{lesson.page}.py")
    assert not at.exception and not at.info
    assert runtime._shown.cache_info().misses == misses, "the page found its default view warmed"
    for number in range(1, len(load_steps(lesson.page)) + 1):
        at = page_test(f"explorer/lessons/{lesson.page}/{lesson.page}.py", {"step": str(number)}).run()
        at.button(key="lesson_next").click().run()  # Reveal
        assert not at.exception, [e.value for e in at.exception]
        assert runtime._shown.cache_info().misses == misses, f"step {number} computed a view"


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.name)
def test_a_lesson_is_a_frozen_settings_dataclass_whose_every_field_is_a_bounded_control(lesson):
    """Every field is a control, or (a section's) one the page's main settings give by name."""
    defaults = lesson.settings()
    check(defaults)
    with pytest.raises(FrozenInstanceError):
        defaults.__setattr__(dataclasses.fields(defaults)[0].name if vars(defaults) else "x", 0)
    page = next(spec for spec in PAGES if spec.page == lesson.page)
    urls = [control.url for _, control in controls_of(lesson.settings)]
    own = {name for name, _ in controls_of(lesson.settings)}
    given = {f.name for f in dataclasses.fields(lesson.settings)} - own
    assert len(urls) == len(set(urls))
    assert lesson.section is not None or not given, "a page's settings are all controls"
    from_page = given - {ATTEMPT}  # a part's attempt counts its "again" button's presses (the adapter gives it)
    assert from_page <= {f.name for f in dataclasses.fields(page.settings)}, "given by the page's settings"
    every_page_url = [c.url for spec in LESSONS if spec.page == lesson.page for _, c in controls_of(spec.settings)]
    assert len(every_page_url) == len(set(every_page_url)), "one URL name per control of the page"
    shown = runtime.shown(lesson, defaults, sendable)
    assert shown is runtime.shown(lesson, lesson.settings(), sendable)  # one cache, keyed by the settings


def test_settings_outside_their_controls_are_refused():
    @dataclass(frozen=True)
    class Probe:
        n: int = setting(2, "N", url="n", bounds=(1, 4, 1))
        kind: str = setting("a", "Kind", url="kind", options=("a", "b"))

    check(Probe(4, "b"))
    for wrong in (Probe(5, "a"), Probe(0, "a"), Probe(2, "c"), Probe(True, "a")):
        with pytest.raises(ValueError, match="outside their controls"):
            check(wrong)
    with pytest.raises(ValueError, match="default"):
        setting(9, "N", url="n", bounds=(1, 4, 1))
    with pytest.raises(ValueError, match="one of bounds, options"):
        setting(1, "N", url="n")
    with pytest.raises(ValueError, match="one of bounds, options"):
        setting(1, "N", url="n", bounds=(1, 4, 1), options=(1, 2))


def test_a_control_that_depends_on_the_fields_before_it():
    """A head slider runs up to the chosen number of heads; a padding length exists only with the
    padding mask (else it holds its default); a mask's default follows the task."""

    @dataclass(frozen=True)
    class Probe:
        task: str = setting("sort", "Task", url="task", options=("sort", "reverse"))
        mask: str = setting("none", "Mask", url="mask", options=("none", "causal", "padding"),
                            default_from=lambda s: "causal" if s.task == "reverse" else "none")
        heads: int = setting(2, "Heads", url="heads", options=(1, 2, 4))
        head: int = setting(1, "Head", url="head", options=lambda s: tuple(range(1, s.heads + 1)))
        pad: int = setting(8, "Pad to", url="pad", bounds=(2, 16, 1), when=lambda s: s.mask == "padding")

    check(Probe())
    check(Probe(heads=4, head=4))
    check(Probe(mask="padding", pad=12))
    for wrong in (Probe(heads=2, head=4), Probe(mask="none", pad=12), Probe(mask="padding", pad=17)):
        with pytest.raises(ValueError, match="outside their controls"):
            check(wrong)
    head = dict(controls_of(Probe))["head"]
    assert head.choices(Probe(heads=4)) == (1, 2, 3, 4)
    assert dict(controls_of(Probe))["mask"].default_from(Probe(task="reverse")) == "causal"


def test_flags_and_text_are_controls_too():
    @dataclass(frozen=True)
    class Probe:
        scale: bool = setting(False, "Scale", url="scale", flag=True)
        text: str = setting("A B", "Text", url="text", max_chars=5)

    check(Probe(True, "A B C"))
    for wrong in (Probe(1, "A"), Probe(False, "A B C D")):
        with pytest.raises(ValueError, match="outside their controls"):
            check(wrong)


def _not_made(lesson, key: str, values):
    """The first of `values` for control `key` whose view is not made yet (other tests share the cache)."""
    for value in values:
        settings = runtime.at_step(lesson, {key: value})
        if runtime.ready(lesson, settings, sendable) is None:
            return value, settings
    raise AssertionError(f"every {key} in {values} is made")


def test_ready_is_the_made_view_or_none_and_computes_nothing():
    lesson = next(spec for spec in LESSONS if spec.name == "positions")
    _, settings = _not_made(lesson, "positions", range(37, 1024, 13))
    misses = runtime._shown.cache_info().misses
    assert runtime.ready(lesson, settings, sendable) is None and runtime._shown.cache_info().misses == misses
    made = runtime.shown(lesson, settings, sendable)
    assert runtime.ready(lesson, settings, sendable) is made
    with pytest.raises(TypeError):
        runtime.ready(lesson, object(), sendable)


def test_a_run_whose_views_are_made_starts_no_spinner(monkeypatch, warmed):
    """Streamlit's spinner starts a timer thread each time it is used: a run that computes nothing
    (the page's views made) uses none; a run that computes a view shows one."""
    used, real = [], st.spinner
    monkeypatch.setattr(st, "spinner", lambda *args, **kwargs: used.append(args) or real(*args, **kwargs))
    run_page("explorer/lessons/positions/positions.py")  # its views warmed
    assert used == []
    lesson = next(spec for spec in LESSONS if spec.name == "positions")
    value, _ = _not_made(lesson, "positions", range(41, 1024, 17))
    run_page("explorer/lessons/positions/positions.py", {"positions": str(value)})
    assert used, "computing a view shows the spinner"


@pytest.mark.parametrize(("page", "key_charts"), [("positions", 1), ("gradients", 1), ("real", 3), ("attention", 3)])
def test_a_browser_s_run_pauses_once_after_the_key_figure_before_the_sections_under_it(page, key_charts, monkeypatch,
                                                                                        warmed):
    """explorer.serve.later.head_start: in a browser's run that draws a page's sections in place, the
    run waits once, after the key section's charts (real and attention: the large head, its lines and
    every head) and before any chart of the sections under it; in a run with no browser (AppTest), it
    does not wait."""
    from explorer.kit import controls, present
    from explorer.serve import later

    charts, pauses = [], []
    for module in (present, controls):  # every chart is sent through these two (they call chart_sent)
        monkeypatch.setattr(module, "chart_sent", lambda _real=module.chart_sent: charts.append(1) or _real())
    monkeypatch.setattr(later, "_wait", lambda seconds: pauses.append((seconds, list(charts))))
    run_page(f"explorer/lessons/{page}/{page}.py")
    assert pauses == [] and len(charts) > 1, "no browser: no pause"
    charts.clear()
    monkeypatch.setattr(later, "_in_browser", lambda: True)
    at = run_page(f"explorer/lessons/{page}/{page}.py")
    assert not at.exception
    assert len(pauses) == 1, pauses
    seconds, before = pauses[0]
    assert seconds == later.HEAD_START_S
    assert len(before) == key_charts, f"the pause comes right after the key section: {before}"
    assert len(charts) > 1, "the sections under the key figure are drawn in the same run"


def test_a_run_that_sends_the_figures_already_drawn_does_not_pause(monkeypatch, warmed):
    """explorer.serve.later.drawn_anew: the pause is for a key figure that changed.  A rerun with the
    same settings (as the whole page after a staged opening) sends what the browser has drawn, and
    does not wait; a control moved does, once, and so does presentation mode turned on (its figures
    are drawn larger)."""
    from explorer.serve import later

    pauses = []
    monkeypatch.setattr(later, "_wait", pauses.append)
    monkeypatch.setattr(later, "_in_browser", lambda: True)
    at = run_page("explorer/lessons/positions/positions.py")
    assert pauses == [later.HEAD_START_S], "the session's first run draws its figures anew"
    at.run()
    assert not at.exception and pauses == [later.HEAD_START_S], "the same settings again: no pause"
    at.slider(key="positions").set_value(9).run()
    assert not at.exception and pauses == [later.HEAD_START_S] * 2, "a control moved: one pause"
    at.run()
    assert pauses == [later.HEAD_START_S] * 2
    at.toggle(key="_present_toggle").set_value(True).run()
    assert not at.exception and pauses == [later.HEAD_START_S] * 3, "presentation mode: the figures drawn anew"


def test_the_warm_up_computes_every_page_s_key_view_before_any_section(monkeypatch):
    """A page opened in a browser draws its key figure first: a fresh server has every page's ready
    before it turns to the sections further down (gradients' recall section takes seconds)."""
    order = []
    monkeypatch.setattr(runtime, "shown", lambda lesson, settings, prepare=None: order.append(lesson.name))
    runtime.warm(lessons=LESSONS)
    assert order[:len(PAGES)] == [page.name for page in PAGES]
    assert order[len(PAGES):] == [lesson.name for lesson in LESSONS if lesson.section is not None]
