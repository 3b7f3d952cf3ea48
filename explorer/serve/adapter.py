"""The lesson runtime's adapter to Streamlit: `serve_lesson` turns a lesson's declaration into its page.

    serve_lesson(DEPTH, title="…", lead="…", sidebar="Stack",
                 sections=[Section("gradient", key_figure), Section("details", details)])

It makes the lesson's controls from its settings dataclass (URL-bound, each bad link value noted
with the default shown), its lesson steps, and the view and figures through the runtime's one cache
(figures converted to what Streamlit sends once per setting); then it draws the sections in order:
the first is the key figure, drawn in the page's run; the others are put off to a run of their own
when the page is opened in a browser (`below_the_fold`), so the key figure shows first.  The page
script holds no cache and no performance trick: only its sections and its prose.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import altair as alt
import plotly.graph_objects as go
import streamlit as st

from ..figures.common import frozen
from ..ui import below_the_fold, lesson_page, next_lesson, vega_lite_spec
from ..views.settings import controls_of
from . import runtime
from .lessons import LESSONS, LessonSpec

__all__ = ["Section", "sendable", "serve_lesson", "warm_lessons"]


@dataclass(frozen=True)
class Section:
    """A named part of a lesson page: `draw(shown)` draws it from the view and figures (runtime.Shown)."""

    name: str
    draw: Callable[[runtime.Shown], None]


def sendable(figures):
    """A lesson's figures (a dataclass) with every Altair chart as its Vega-Lite dict (data as Arrow
    bytes) and every Plotly figure frozen: what Streamlit sends, made once per setting."""
    changed = {}
    for field in dataclasses.fields(figures):
        value = getattr(figures, field.name)
        if isinstance(value, alt.TopLevelMixin):
            changed[field.name] = vega_lite_spec(value)
        elif isinstance(value, go.Figure):
            changed[field.name] = frozen(value)
    return dataclasses.replace(figures, **changed)


def warm_lessons() -> dict[str, float]:
    """Every lesson's default view and figures, as the pages will ask for them (app.py's warm-up)."""
    return runtime.warm(sendable, LESSONS)


def _settings(lesson: LessonSpec, controls, where) -> object:
    """The lesson's settings from its controls, one URL-bound widget per field."""
    values = {}
    defaults = {f.name: f.default for f in dataclasses.fields(lesson.settings)}
    for name, control in controls_of(lesson.settings):
        default, common = defaults[name], {"where": where, "help": control.help}
        if control.bounds is not None:
            low, high, step = control.bounds
            kind = int if isinstance(default, int) else float
            values[name] = controls.slider(control.label, kind(low), kind(high), default, kind(step), control.url,
                                           **common)
        elif all(isinstance(o, (int, float)) and not isinstance(o, bool) for o in control.options):
            values[name] = controls.select_slider(control.label, control.options, default, control.url, **common)
        else:
            values[name] = controls.selectbox(control.label, control.options, control.options.index(default),
                                              control.url, **common)
    return lesson.settings(**values)


def serve_lesson(lesson: LessonSpec, *, title: str, lead: str, sidebar: str, sections: Sequence[Section],
                 working: Callable[[object], str] | None = None) -> None:
    """Draw the lesson's page (see the module).  `working(settings)` is the spinner's text while its
    view is computed."""
    controls, steps = lesson_page(lesson.page, title, lead)
    st.sidebar.header(sidebar)
    settings = _settings(lesson, controls, st.sidebar)
    controls.report()
    if steps.revealed:
        with st.spinner(working(settings) if working else "Computing…"):
            shown = runtime.shown(lesson, settings, sendable)
        key, *rest = sections
        key.draw(shown)
        steps.explain(section="")
        for section in rest:
            below_the_fold(_section, section, shown, steps)
    next_lesson(lesson.page)


def _section(section: Section, shown: runtime.Shown, steps) -> None:
    section.draw(shown)
    steps.explain(section=section.name)
