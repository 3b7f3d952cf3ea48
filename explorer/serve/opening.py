"""A lesson opened in a browser shows its key figure before its controls.

The browser lays out everything a run has sent before it draws a chart: a lesson's first run sends
some forty elements before its key figure — the sidebar's sliders, boxes and buttons — and the
figure waited for all of them (benchmarks/RESULTS.md, phase browser-speed).  So the run that opens
a lesson in a browser, in free exploration (no lesson step), is *staged*: it draws the title, the
lead, the step bar and the key figure, with the settings its controls are going to have, and nothing
in the sidebar.  It ends by announcing a fragment timer whose run asks for the whole page
(`page_after_opening`), a few tenths of a second later, which draws every control and the other
sections, with the key figure's element unchanged in its place (the browser keeps it).  A link with
a value the page cannot use stops the staged run before its key figure (`UrlControls.note_coming`):
the note about it stands above the figure, so the two come together in the whole page's run, and
the note never pushes a figure already drawn down the page.

The settings of a staged run come from its sidebar's controls placed `NOWHERE`, a place that draws
nothing: the page's explorer.kit.controls.UrlControls then gives the value each widget *will* take,
without making it — the value this session holds for it, else the link's value where its rule
accepts it, else the default: what Streamlit gives a bound widget made in the whole page's run.  A
control drawn in the page itself (a `main` control, above the key figure) is made for real.
tests/system/test_staged_opening.py opens every lesson from many links on a real server and checks
that the staged run's key figure is, byte for byte, the whole page's.
"""

from __future__ import annotations

import streamlit as st

from ..kit.internals import in_fragment_run, stop_fragment_timer
from .later import FOLLOW_UP_S, opening

__all__ = ["page_after_opening", "staged_opening"]


def staged_opening(steps) -> bool:
    """Is this run the staged opening of a lesson (see the module)?  Not for a lesson step: its
    question hides the figures."""
    return opening() and not in_fragment_run() and steps.step is None


def page_after_opening() -> None:
    """End a staged run: the browser asks for the whole page FOLLOW_UP_S later (a fragment's timer,
    stopped by the run it starts)."""
    st.fragment(run_every=FOLLOW_UP_S)(_whole_page)()


def _whole_page() -> None:
    if in_fragment_run():
        stop_fragment_timer()
        st.rerun(scope="app")
