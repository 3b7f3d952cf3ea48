"""The key figure first: when a lesson's figures appear, the sections under it arrive in a run of their own.

Streamlit sends a page run's elements as the script makes them, and the browser draws what has
arrived in one pass: a lesson whose key figure has five more charts under it shows that figure only
when all six are laid out (benchmarks/RESULTS.md, phase browser-speed).  So in a run that shows a
page's figures where the browser had none — a Reveal (`note_figures_appear`), or a lesson step
opened from a link that this session has revealed before — `below_the_fold(draw, ...)` does not draw
its section: it leaves a one-line placeholder and announces a fragment (`st.fragment(run_every=...)`)
that the browser reruns once the page's run has been drawn.  That follow-up run draws the section
and stops the browser's timer.  Every other run — a control moved, a fragment's own rerun — draws
the section in place, as a plain function call; in a page's run whose figures changed, after a
short pause that lets the browser draw the key figure first (`head_start`).  (A lesson opened in
free exploration goes further: its first run draws the key figure before any control,
explorer/serve/opening.py, and the whole page follows in one run.)

Nothing is hidden: the placeholder says the section is on its way, and it is there a few tenths of
a second later, without a click.  AppTest runs a page with no browser (no request headers) that
would send the follow-up, so there every section is drawn at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import streamlit as st

from ..kit.internals import in_fragment_run, interrupted, stop_fragment_timer
from ..kit.present import presenting
from .page import serve_heavy_work

__all__ = ["FOLLOW_UP_S", "HEAD_START_S", "PLACEHOLDER", "below_the_fold", "drawn_anew", "head_start",
           "note_figures_appear", "note_page_opened", "opening"]

FOLLOW_UP_S = 0.2  # the browser's timer: the follow-up is asked for this long after it was announced
HEAD_START_S = 0.05  # a control's run: the key figure's lead over the sections under it (`head_start`)
PLACEHOLDER = ":material/hourglass_top: Drawing this section…"
_SHOWN_KEY, _OPENING_KEY, _DRAWN_KEY = "_explorer_page_shown", "_explorer_page_opening", "_explorer_page_drawn"


def note_page_opened(url_path: str) -> None:
    """Called by app.py before every whole-page run: is this run the one that opens the page in a
    browser (the session's previous page run was another page, or there was none)?"""
    opened = st.session_state.get(_SHOWN_KEY) != url_path
    st.session_state[_SHOWN_KEY] = url_path
    st.session_state[_OPENING_KEY] = opened and bool(st.context.headers)  # AppTest has no browser


def opening() -> bool:
    """Is this the run that opens the page in a browser (or a Reveal's: `note_figures_appear`)?"""
    return bool(st.session_state.get(_OPENING_KEY))


def note_figures_appear() -> None:
    """Called in a run that draws a page's figures where the page had none a moment ago (a step just
    revealed): like an opening, the sections under the first arrive in a run of their own, so the
    figure the step is about is drawn without waiting for the others; nothing on screen flickers."""
    st.session_state[_OPENING_KEY] = bool(st.context.headers)  # AppTest has no browser


def _in_browser() -> bool:
    return bool(st.context.headers)  # AppTest has none


def _wait(seconds: float) -> None:
    time.sleep(seconds)


def drawn_anew(page: str, step: int, settings) -> bool:
    """Does this run draw other figures, or in another order, than the session's previous page run
    did: another page, step, settings or presentation mode?  Called once per page run that has its
    view.  A run with the same (a rerun, the whole page after a staged opening) sends the figures the
    browser has already drawn, in the same places, and the browser keeps them."""
    drawn = (page, step, presenting(), settings)
    before = st.session_state.get(_DRAWN_KEY)
    st.session_state[_DRAWN_KEY] = drawn
    return drawn != before


def head_start() -> None:
    """Called between the key section and the sections under it, in a run whose figures changed
    (`drawn_anew`): a run that sends the figures the browser has already drawn has nothing to draw
    first, and does not wait.  In a run that draws the sections in place in a browser (a control
    moved, a step taken: not an opening, whose sections come in a run of their own), the run waits
    HEAD_START_S before the next section.  The browser draws what arrives together in one pass:
    without the pause, the sections' charts, sent a few milliseconds after the key figure, are drawn
    with it, and the key figure is repainted only when all of them are
    (benchmarks/RESULTS.md, phase browser-speed).  The pause is a fixed time, not a signal from the
    browser: a browser that takes longer over the key figure draws the next charts with it again."""
    if _in_browser() and not opening() and not in_fragment_run():
        _wait(HEAD_START_S)


def _section_after_the_page(draw: Callable[..., None], args: tuple, kwargs: dict, controls, keys) -> None:
    if not in_fragment_run():  # the page's own run: hold the section's place
        st.caption(PLACEHOLDER)
        return
    serve_heavy_work()  # this run's heavy work goes through the pool as the session's
    try:
        draw(*args, **kwargs)
        if controls is not None and keys:  # the page's note ran before these controls existed
            controls.report(only=keys)
    except BaseException as error:
        # A run Streamlit stops for a newer one leaves the section half drawn: the timer stays on and
        # its next tick draws it again.  A fault is shown once (the timer stops).
        if not interrupted(error):
            stop_fragment_timer()
        raise
    stop_fragment_timer()  # drawn whole: the follow-up is done


def below_the_fold(draw: Callable[..., None], *args, controls=None, keys: tuple[str, ...] = (), **kwargs) -> None:
    """draw(*args, **kwargs): in a run of its own just after the page's, if this run opens the page
    in a browser; otherwise now.  A section with its own URL-bound controls names their `keys` (and
    the page's `controls`): when it is put off, the page's note leaves them out
    (`UrlControls.put_off`), and the section's own run notes their link values under it."""
    if opening() and not in_fragment_run():
        if controls is not None:
            controls.put_off(keys)
        st.fragment(run_every=FOLLOW_UP_S)(_section_after_the_page)(draw, args, kwargs, controls, keys)
    else:
        draw(*args, **kwargs)
