"""The frame every lesson page shares: title and lead, presentation mode, lesson steps, and the
link to the next lesson."""

from __future__ import annotations

import uuid

import streamlit as st

from .. import pieces
from ..kit.controls import NOWHERE, UrlControls
from ..kit.internals import StreamlitPageNotFoundError, yield_point
from ..kit.present import (
    IMAGE_FORMATS,
    IMAGE_KEY,
    PRESENT_KEY,
    PRESENT_RULE,
    on_phone,
    present_toggle,
    presenting,
    style_page,
    write_present_link,
)
from ..kit.steps import ANSWER_CHARS, Lesson
from ..lessons import LESSONS
from .catalog import HOME
from .pool import POOL, Requester

__all__ = ["lesson_page", "next_lesson", "page_settings", "serve_heavy_work", "session_key"]


_SESSION_KEY = "_explorer_session"


def session_key() -> str:
    """This browser session's own name, kept in its session state (the work pool's fairness unit)."""
    return st.session_state.setdefault(_SESSION_KEY, uuid.uuid4().hex)


def serve_heavy_work() -> None:
    """Run this run's heavy pieces (explorer.pieces) on the runtime's pool (explorer/serve/pool.py),
    as this session: fair between sessions, stopped when superseded.  Every lesson page calls it."""
    pieces.install(POOL.runner(Requester(session_key(), yield_point)))


def lesson_page(page: str, lead: str) -> tuple[UrlControls, Lesson]:
    """Start a lesson page (its url_path): its title (its card's), lead and step bar; returns the page's URL
    controls and its lesson steps.  Then `page_settings` draws the app's settings in the sidebar.

    Presenting, and on a phone, the lead folds into an expander so that the key figure is on the first screen
    (a phone's first screen held only the title, the lead and the step bar)."""
    style_page()
    serve_heavy_work()
    controls = UrlControls(page)
    st.title(next(card.title for card in LESSONS if card.url_path == page))
    if presenting() or on_phone():
        with st.expander("About this lesson"):
            st.markdown(lead)
    else:
        st.markdown(lead)
    return controls, Lesson(page, controls, fold_after=ANSWER_CHARS if presenting() else None)


def page_settings(controls: UrlControls, where=st.sidebar) -> None:
    """The sidebar's settings of the whole app, above the lesson's own controls: presentation mode
    and the charts' download format.  `where` NOWHERE (a staged opening, explorer/serve/opening.py):
    no widget is made, the link's values for them are only read."""
    controls.link_value(PRESENT_KEY, PRESENT_RULE)
    if where is not NOWHERE:
        shown = present_toggle(where)
        if controls.rejected(PRESENT_KEY):
            write_present_link()  # a value it could not use leaves the address (the note says why)
        controls.record(PRESENT_KEY, "Presentation mode", shown, PRESENT_RULE)
    controls.radio("Download charts as", list(IMAGE_FORMATS), 0, IMAGE_KEY, where=where, horizontal=True,
                   help="What the camera button at the top right of each chart saves: "
                   "PNG for slides, SVG to edit or print at any size.")


def next_lesson(page: str) -> None:
    """A link to the lesson after this one (the home page after the last)."""
    index = next(i for i, p in enumerate(LESSONS) if p.url_path == page)
    following = LESSONS[index + 1] if index + 1 < len(LESSONS) else HOME
    st.divider()
    label = f"Next lesson: {following.title}" if following.url_path else "Back to the start"
    try:
        st.page_link(following.path, label=label, icon=":material/arrow_forward:")
    except StreamlitPageNotFoundError:  # the page runs on its own (a test), without app.py's navigation
        st.markdown(f":material/arrow_forward: [{label}](/{following.url_path})")
