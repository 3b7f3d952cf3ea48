"""A lesson opened in a browser shows its key figure before its controls (explorer/serve/opening.py),
against a real `streamlit run app.py` over the websocket.

The run that opens a lesson (free exploration) draws the title, the lead, the step bar and the key
figure, nothing in the sidebar, and announces one follow-up; the follow-up, asked as the browser's
timer asks it, draws the whole page and leaves no timer running.  The key figure of the opening run
is the whole page's, byte for byte and in the same place, from every link tried: each control of each
lesson moved one value from its default, all of them at once, presenting.  A link with a value the
page cannot use is not staged past the lead: its note stands above the key figure, so they come together.
"""

from __future__ import annotations

import math
from urllib.parse import urlencode

import pytest

from explorer.kit.links import Choice, Flag, Number
from explorer.kit.settings import controls_of
from explorer.lessons import specs
from harness.apptest import run_async
from harness.server import streamlit_server
from harness.wsclient import RunResult, Session

LESSONS = specs()

CHARTS = ("plotly_chart", "vega_lite_chart")
STAGED = [lesson for lesson in LESSONS if lesson.section is None]


@pytest.fixture(scope="module")
def server():
    with streamlit_server(name="test-staged-opening") as running:
        yield running


def moved(lesson) -> dict[str, str]:
    """Each control of the lesson (that applies at its defaults) one value away from its default, as link text."""
    settings, out = lesson.settings(), {}
    for name, control in controls_of(lesson.settings):
        default = getattr(settings, name)
        if not control.applies(settings) or control.max_chars is not None:
            continue
        choices = control.choices(settings)
        if control.flag:
            out[control.url] = Flag().text(not default)
        elif choices is not None:
            options = list(choices)
            other = options[(options.index(default) + 1) % len(options)]
            out[control.url] = Choice(options, control.format or str).text(other)
        else:
            low, high, step = control.limits(settings)
            value = default + step if default + step <= high else default - step
            if low <= value <= high and not math.isclose(value, default):
                out[control.url] = Number(low, high, step).text(value)
    return out


def links(lesson) -> list[str]:
    each = moved(lesson)
    return ["", "present=1", "image=svg", *(urlencode({key: value}) for key, value in each.items()), urlencode(each)]


def unusable_links(lesson) -> list[str]:
    """Links whose note would stand above the key figure: a control's value it cannot take, a parameter no
    control reads, the app-wide settings' junk, and (the real model) a typed sentence it cannot read."""
    first = next(iter(moved(lesson)), None)
    junk = [urlencode({first: "junk"})] if first else []
    typed = ["sentence=%21%21%21"] if lesson.page == "real" else []
    return [*junk, "nonsense=1", "present=maybe", "image=gif", *typed]


def charts(result: RunResult) -> list[tuple[tuple[int, ...], bytes]]:
    return [(path, e.SerializeToString()) for path, e in result.elements
            if e is not None and e.WhichOneof("type") in CHARTS]


async def open_staged(url: str, page: str, query: str) -> tuple[RunResult, dict, RunResult, dict]:
    session = Session(url, page, query, keep_elements=True, use_message_cache=False)
    await session.connect()
    try:
        staged = await session.rerun()
        announced = dict(session.auto_reruns)
        whole = await session.rerun(fragment_id=next(iter(announced), ""))
        return staged, announced, whole, dict(session.auto_reruns)
    finally:
        await session.close()


def link_notes(result: RunResult) -> list[tuple[int, ...]]:
    """Where the page's note about its link stands (the settings it could not use)."""
    return [path for path, e in result.elements if e is not None and e.WhichOneof("type") == "alert"
            and "could not be used" in e.alert.body]


@pytest.mark.parametrize("lesson", STAGED, ids=lambda lesson: lesson.page)
def test_the_key_figure_comes_first_and_is_the_whole_pages_from_every_link(server, lesson):
    every_moved = urlencode(moved(lesson))
    for query in links(lesson):
        staged, announced, whole, left = run_async(open_staged(server.url, lesson.page, query))
        assert staged.ok and whole.ok, (query, staged.exceptions, whole.exceptions)
        assert len(announced) == 1 and left == {}, (query, announced, left)
        assert not [e for path, e in staged.elements if path[0] == 1], f"?{query}: nothing in the sidebar yet"
        assert [e for path, e in whole.elements if path[0] == 1], f"?{query}: the whole page has its controls"
        first, every = charts(staged), charts(whole)
        if query == every_moved and link_notes(whole):  # a moved control hid another one the link still names
            assert not first and link_notes(whole)[0] < every[0][0], f"?{query}: the note and the figure together"
            continue
        assert not link_notes(whole), f"?{query}: a link the page can use"
        assert len(first) == 1, f"?{query}: the opening run draws the key figure, and no other chart"
        assert every[:len(first)] == first, f"?{query}: the key figure changed when the controls came"
        assert len(every) > len(first) or lesson.page == "train", f"?{query}: the other sections came too"


@pytest.mark.parametrize("lesson", STAGED, ids=lambda lesson: lesson.page)
def test_a_link_with_a_value_it_cannot_use_brings_its_note_and_the_key_figure_together(server, lesson):
    for query in unusable_links(lesson):
        staged, announced, whole, left = run_async(open_staged(server.url, lesson.page, query))
        assert staged.ok and whole.ok, (query, staged.exceptions, whole.exceptions)
        assert len(announced) == 1 and left == {}, (query, announced, left)
        assert not charts(staged), f"?{query}: no key figure before the note that stands above it"
        assert not [e for path, e in staged.elements if path[0] == 1], f"?{query}: nothing in the sidebar yet"
        notes = link_notes(whole)
        assert len(notes) == 1 and notes[0] < charts(whole)[0][0], f"?{query}: one note, above the key figure"


def test_a_lesson_step_link_opens_as_before_with_its_question(server):
    """A step hides the figures behind its question: nothing to stage, the page comes whole."""
    staged, announced, _, _ = run_async(open_staged(server.url, "attention", "step=1"))
    assert staged.ok and not announced
    hidden = {path[:-1] for path, chart in charts(staged) if b"_chart_code" in chart}  # the charts' code, loading
    assert len(hidden) == 1 and all(path[:-1] in hidden for path, _ in charts(staged)), "no figure before Reveal"
    assert [e for path, e in staged.elements if path[0] == 1], "the controls are there at once"
