"""The key figure first after Reveal (explorer/serve/later.py), against a real `streamlit run app.py`
over the websocket.

A lesson step hides the figures behind its question; the run that Reveal starts sends the key figure
with one-line placeholders for the sections under it, and announces their follow-up runs
(`auto_rerun`); each follow-up, asked as the browser's timer asks it, draws its section and stops its
timer (`stop_auto_rerun`).  The page's next run (a control moved) draws everything at once.  Together
the Reveal run and its follow-ups show the same charts as that plain run: nothing is left out.  (A
lesson opened outside a step draws its key figure before its controls: tests/system/test_staged_opening.py.)
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from explorer.serve.later import PLACEHOLDER
from harness.apptest import ROOT, run_async
from harness.server import streamlit_server
from harness.wsclient import RunResult, Session

# lesson → how many sections it sends after its key figure (below_the_fold calls reached at defaults)
DEFERRED = {"lookup": 2, "attention": 2, "decoder": 3, "positions": 3, "gradients": 4, "depth": 1, "cost": 3,
            "real": 5, "encoders": 6, "length": 6}
CHARTS = ("plotly_chart", "vega_lite_chart")


@pytest.fixture(scope="module")
def server():
    with streamlit_server(name="test-below-the-fold") as running:
        yield running


def charts(result: RunResult) -> list[str]:
    return [e.WhichOneof("type") for _, e in result.elements if e is not None and e.WhichOneof("type") in CHARTS]


def placeholders(result: RunResult) -> int:
    return sum(1 for _, e in result.elements
               if e is not None and e.WhichOneof("type") == "markdown" and e.markdown.body == PLACEHOLDER)


def reveal(session: Session) -> None:
    """Press the step bar's Reveal (Next) button for the next run."""
    session.set(next(w for w in session.widgets.values() if w.id.endswith("lesson_next")), True)


async def reveal_and_follow(url: str, page: str, query: str = "step=1") -> tuple[RunResult, list[RunResult],
                                                                                 RunResult, Session]:
    session = Session(url, page, query, keep_elements=True, use_message_cache=False)
    await session.connect()
    try:
        session.question = await session.open()  # the step's question, no figure
        assert session.question.ok
        reveal(session)
        revealed = await session.rerun()
        announced = dict(session.auto_reruns)
        follow_ups = [await session.rerun(fragment_id=fragment) for fragment in announced]
        left = dict(session.auto_reruns)
        plain = await session.rerun()
        session.announced, session.left = announced, left
        return revealed, follow_ups, plain, session
    finally:
        await session.close()


@pytest.mark.parametrize("page", list(DEFERRED))
def test_reveal_sends_the_key_figure_first_and_the_sections_just_after(server, page):
    revealed, follow_ups, plain, session = run_async(reveal_and_follow(server.url, page))
    assert revealed.ok and all(r.ok for r in follow_ups) and plain.ok, (revealed.exceptions, plain.exceptions)
    assert charts(revealed), "the figure the step is about is in the Reveal's run"
    assert placeholders(revealed) == DEFERRED[page] == len(session.announced)
    assert all(interval > 0 for interval in session.announced.values())
    assert session.left == {}, "every follow-up stopped its browser timer"
    assert all(placeholders(r) == 0 and len(r.elements) > 1 for r in follow_ups), "each follow-up draws its section"
    assert placeholders(plain) == 0 and session.auto_reruns == {}, "a control's rerun draws everything at once"
    assert len(charts(revealed)) + sum(len(charts(r)) for r in follow_ups) == len(charts(plain))


def test_a_deferred_sections_link_values_are_noted_under_it_not_called_unknown(server):
    revealed, follow_ups, _, session = run_async(reveal_and_follow(server.url, "gradients", "step=1&dep_T=999&T=5"))
    asked = session.question.infos + revealed.infos
    assert any("Sequence length T" in note for note in asked), asked
    assert not any("dep_T" in note for note in asked), "the section's control is not unknown"
    noted = [note for r in follow_ups for note in r.infos if "Sequence length for the matrices" in note]
    assert len(noted) == 1 and "999" in noted[0], [r.infos for r in follow_ups]


def test_apptest_has_no_browser_so_every_section_is_drawn_at_once():
    """Opening a lesson through app.py's navigation in AppTest: no browser would ask for the follow-ups."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page("explorer/lessons/depth/depth.py").run()
    assert not at.exception
    assert PLACEHOLDER not in [c.value for c in at.caption]
    # the key section's lines and the bars beside them, and the heatmap under them
    assert len(at.get("vega_lite_chart")) == 2 and len(at.get("plotly_chart")) == 1


def test_a_follow_up_that_arrives_after_a_control_change_is_dropped_and_the_page_stays_whole(server):
    """The race of a user moving a control within 0.2 s of opening: the whole-page run draws every
    section (and the browser drops its timers); a follow-up request already on its way names a
    fragment that run did not make, and Streamlit ignores it: nothing is drawn, nothing breaks."""

    async def race():
        session = Session(server.url, "gradients", keep_elements=True, use_message_cache=False)
        await session.connect()
        try:
            await session.rerun()
            stale = list(session.auto_reruns)
            plain = await session.rerun()
            late = await session.rerun(timeout=3, fragment_id=stale[0])
            after = await session.rerun()
            return stale, plain, late, after
        finally:
            await session.close()

    stale, plain, late, after = run_async(race())
    assert stale and plain.ok and after.ok
    assert late.status == "timeout" and not late.elements and not late.exceptions, "the stale request is ignored"
    assert placeholders(after) == 0 and len(after.elements) == len(plain.elements)
