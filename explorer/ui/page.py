"""The frame every lesson page shares: title and lead, presentation mode, lesson steps, and the
link to the next lesson."""

from __future__ import annotations

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException, StopException
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType

from ..views.pool import REQUESTER, Requester
from .catalog import LESSONS, PAGES
from .controls import UrlControls
from .present import (
    IMAGE_FORMATS,
    IMAGE_KEY,
    PRESENT_KEY,
    PRESENT_RULE,
    present_toggle,
    presenting,
    style_page,
    write_present_link,
)
from .steps import Lesson

__all__ = ["lesson_page", "next_lesson", "serve_heavy_work"]


def _yield_point() -> None:
    """What Streamlit does at every st.* call: stop this run if its session asked for a newer one
    (raised while the run waits for the work pool, so a superseded rerun stops computing)."""
    ctx = get_script_run_ctx(suppress_warning=True)
    request = ctx.script_requests.on_scriptrunner_yield() if ctx is not None else None
    if request is None:
        return
    if request.type == ScriptRequestType.RERUN:
        raise RerunException(request.rerun_data)
    raise StopException()


def serve_heavy_work() -> None:
    """Route this run's heavy computations (explorer.views.pool) through the shared pool, as this
    session: fair between sessions, stopped when superseded.  Every lesson page calls it."""
    ctx = get_script_run_ctx(suppress_warning=True)
    REQUESTER.set(Requester(ctx.session_id, _yield_point) if ctx is not None else None)


def lesson_page(page: str, title: str, lead: str) -> tuple[UrlControls, Lesson]:
    """Start a lesson page (its url_path): returns the page's URL controls and its lesson steps.

    Presenting, the lead folds into an expander so that the key figure is on the first screen."""
    style_page()
    serve_heavy_work()
    controls = UrlControls(page)
    st.title(title)
    if presenting():
        with st.expander("About this lesson"):
            st.markdown(lead)
    else:
        st.markdown(lead)
    lesson = Lesson(page, controls)
    shown = present_toggle(st.sidebar)
    controls.link_value(PRESENT_KEY, PRESENT_RULE)
    if controls.rejected(PRESENT_KEY):
        write_present_link()  # a value it could not use leaves the address (the note says why)
    controls.record(PRESENT_KEY, "Presentation mode", shown, PRESENT_RULE)
    controls.radio("Download charts as", list(IMAGE_FORMATS), 0, IMAGE_KEY, where=st.sidebar, horizontal=True,
                   help="What the camera button at the top right of each chart saves: "
                   "PNG for slides, SVG to edit or print at any size.")
    return controls, lesson


def next_lesson(page: str) -> None:
    """A link to the lesson after this one (the home page after the last)."""
    index = next(i for i, p in enumerate(LESSONS) if p.url_path == page)
    following = LESSONS[index + 1] if index + 1 < len(LESSONS) else PAGES[0]
    st.divider()
    label = f"Next lesson: {following.title}" if following.url_path else "Back to the start"
    try:
        st.page_link(following.path, label=label, icon=":material/arrow_forward:")
    except StreamlitPageNotFoundError:  # the page runs on its own (a test), without app.py's navigation
        st.markdown(f":material/arrow_forward: [{label}](/{following.url_path})")
