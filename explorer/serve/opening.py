"""A lesson opened in a browser shows its key figure before its controls.

The browser lays out everything a run has sent before it draws a chart: a lesson's first run sends
some forty elements before its key figure — the sidebar's sliders, boxes and buttons — and the
figure waited for all of them (benchmarks/RESULTS.md, phase browser-speed).  So the run that opens
a lesson in a browser, in free exploration (no lesson step), is *staged*: it draws the title, the
lead, the step bar and the key figure, with the settings its controls are going to have, and nothing
in the sidebar.  It ends by announcing a fragment timer whose run asks for the whole page
(`page_after_opening`), a few tenths of a second later, which draws every control, the other sections
and the link's note, with the key figure's element unchanged in its place (the browser keeps it).

The settings of a staged run come from `Unseen`: the page's controls (explorer.serve.controls.UrlControls)
asked for the value each widget *will* take, without making it — the value this session holds for
it, else the link's value where its rule accepts it, else the default: what Streamlit gives a bound
widget made in the whole page's run.  A control drawn in the page itself (a `main` control, above the
key figure) is made for real.  tests/system/test_staged_opening.py opens every lesson from many links on
a real server and checks that the staged run's key figure is, byte for byte, the whole page's.
"""

from __future__ import annotations

import streamlit as st

from .internals import in_fragment_run, stop_fragment_timer
from .later import FOLLOW_UP_S, opening
from .links import Choice, Flag, Number, Text

__all__ = ["NOWHERE", "Unseen", "page_after_opening", "staged_opening"]


class _Nowhere:
    """A place that draws nothing: every Streamlit call on it is dropped (a staged run's sidebar)."""

    def __getattr__(self, name: str):
        return _nothing

    def __repr__(self) -> str:
        return "NOWHERE"


def _nothing(*args, **kwargs) -> None:
    return None


NOWHERE = _Nowhere()


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


class Unseen:
    """The page's controls, for a staged run: a control placed `NOWHERE` is not made, its value is
    the one the whole page's run will give it; any other is made by `controls` as usual."""

    def __init__(self, controls):
        self._controls = controls

    def _value(self, key: str, default, rule, valid):
        if key in st.session_state and valid(st.session_state[key]):
            return st.session_state[key]
        wanted = self._controls.link_value(key, rule)  # None: no value in the link, or one the rule rejects
        return default if wanted is None else wanted

    def slider(self, label, min_value, max_value, value, step, key, *, where=st, **kwargs):
        if where is not NOWHERE:
            return self._controls.slider(label, min_value, max_value, value, step, key, where=where, **kwargs)
        return self._value(key, value, Number(min_value, max_value, step),
                           lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
                           and min_value <= v <= max_value)

    def _choice(self, method: str, label, options, default, key, where, kwargs):
        if where is not NOWHERE:
            return getattr(self._controls, method)(label, options, default, key, where=where, **kwargs)
        options = list(options)
        chosen = options[default] if method in ("selectbox", "radio") else default
        return self._value(key, chosen, Choice(options, kwargs.get("format_func", str)), lambda v: v in options)

    def select_slider(self, label, options, value, key, *, where=st, **kwargs):
        return self._choice("select_slider", label, options, value, key, where, kwargs)

    def selectbox(self, label, options, index: int, key, *, where=st, **kwargs):
        return self._choice("selectbox", label, options, index, key, where, kwargs)

    def radio(self, label, options, index: int, key, *, where=st, **kwargs):
        return self._choice("radio", label, options, index, key, where, kwargs)

    def segmented_control(self, label, options, default, key, *, where=st, **kwargs):
        return self._choice("segmented_control", label, options, default, key, where, kwargs)

    def toggle(self, label, value: bool, key, *, where=st, **kwargs):
        if where is not NOWHERE:
            return self._controls.toggle(label, value, key, where=where, **kwargs)
        return self._value(key, value, Flag(), lambda v: isinstance(v, bool))

    def text_area(self, label, value: str, key, max_chars: int, *, where=st, **kwargs):
        if where is not NOWHERE:
            return self._controls.text_area(label, value, key, max_chars, where=where, **kwargs)
        return self._value(key, value, Text(max_chars), lambda v: isinstance(v, str))
