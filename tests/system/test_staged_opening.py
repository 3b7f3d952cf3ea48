"""A lesson opened in a browser shows its key figure before its controls (explorer/serve/opening.py),
against a real `streamlit run app.py` over the websocket.

The run that opens a lesson (free exploration) draws the title, the lead, the step bar and the key
figure, nothing in the sidebar, and announces one follow-up; the follow-up, asked as the browser's
timer asks it, draws the whole page and leaves no timer running.  The key figure of the opening run
is the whole page's, byte for byte and in the same place, from every link tried: each control of each
lesson moved one value from its default, all of them at once, presenting, and a link with junk in it.
"""

from __future__ import annotations

import math
from urllib.parse import urlencode

import pytest

from explorer.serve.lessons import LESSONS
from explorer.serve.links import Choice, Flag, Number
from explorer.views.settings import controls_of
from tests.support.apptest import run_async
from tests.support.server import streamlit_server
from tests.support.wsclient import RunResult, Session

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
    first = next(iter(each), "x")
    return ["", "present=1", "image=svg", *(urlencode({key: value}) for key, value in each.items()), urlencode(each),
            urlencode({first: "junk", "nonsense": "1"})]


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


@pytest.mark.parametrize("lesson", STAGED, ids=lambda lesson: lesson.page)
def test_the_key_figure_comes_first_and_is_the_whole_pages_from_every_link(server, lesson):
    for query in links(lesson):
        staged, announced, whole, left = run_async(open_staged(server.url, lesson.page, query))
        assert staged.ok and whole.ok, (query, staged.exceptions, whole.exceptions)
        assert len(announced) == 1 and left == {}, (query, announced, left)
        assert not [e for path, e in staged.elements if path[0] == 1], f"?{query}: nothing in the sidebar yet"
        assert [e for path, e in whole.elements if path[0] == 1], f"?{query}: the whole page has its controls"
        first, every = charts(staged), charts(whole)
        assert len(first) == 1, f"?{query}: the opening run draws the key figure, and no other chart"
        assert every[:len(first)] == first, f"?{query}: the key figure changed when the controls came"
        assert len(every) > len(first) or lesson.page == "train", f"?{query}: the other sections came too"


def test_a_lesson_step_link_opens_as_before_with_its_question(server):
    """A step hides the figures behind its question: nothing to stage, the page comes whole."""
    staged, announced, _, _ = run_async(open_staged(server.url, "attention", "step=1"))
    assert staged.ok and not announced
    hidden = {path[:-1] for path, chart in charts(staged) if b"_chart_code" in chart}  # the charts' code, loading
    assert len(hidden) == 1 and all(path[:-1] in hidden for path, _ in charts(staged)), "no figure before Reveal"
    assert [e for path, e in staged.elements if path[0] == 1], "the controls are there at once"
