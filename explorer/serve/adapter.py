"""The lesson runtime's adapter to Streamlit: `serve_lesson` turns a lesson's declaration into its page.

    serve_lesson(DEPTH, title="…", lead="…", sidebar="Stack",
                 sections=[Section("gradient", key_figure), Section("details", details)])

It makes the lesson's controls from its settings dataclass (explorer.views.settings: URL-bound,
each bad link value noted with the default shown), its lesson steps, and the view and figures
through the runtime's one cache (figures converted to what Streamlit sends once per setting); then
it draws the sections in order.  The first is the key figure, drawn in the page's run; the others
are put off to a run of their own when the page is opened in a browser (`below_the_fold`), so the
key figure shows first.

A section may have settings of its own (`part`, a LessonSpec): their controls are drawn in a row at
the top of the section, which is a fragment (moving them redraws that section alone), and its view
is cached by those settings.  Fields of the part's settings that have no control take the value of
the main settings' field of the same name.  A control drawn by the page itself (a preset picker
with a text box) is passed in `custom`: {field name: make(controls, where, settings_so_far)}.

A lesson that trains on the server (`LessonSpec.live`) has its key section drawn by
explorer/serve/live.py: the start and Stop buttons, then the section at the moment of the session's
run (step 0 before any).

The page script holds no cache and no performance trick: only its sections and its prose.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import altair as alt
import plotly.graph_objects as go
import streamlit as st

from ..figures.common import frozen
from ..ui import vega_lite_spec
from ..views.settings import controls_of, so_far
from . import runtime
from .later import below_the_fold
from .lessons import LESSONS, LessonSpec
from .live import serve_live
from .page import lesson_page, next_lesson, serve_heavy_work

__all__ = ["Section", "sendable", "serve_lesson", "warm_lessons"]

Custom = Mapping[str, Callable]
NOTHING: Mapping = {}  # no custom controls, no given values (read only)
_DEFAULTS_KEY = "_explorer_dependent_defaults"  # session state: {url key: the default it was last given}


@dataclass(frozen=True)
class Section:
    """A named part of a lesson page: `draw(shown)` draws it from the view and figures (runtime.Shown).
    With a `part`, the section has its own settings, controls and view (see the module); `title` is
    drawn above its controls."""

    name: str
    draw: Callable[[runtime.Shown], None]
    part: LessonSpec | None = None
    title: str | None = None


def sendable(figures):
    """A lesson's figures (a dataclass) with every Altair chart as its Vega-Lite dict (data as Arrow
    bytes) and every Plotly figure frozen: what Streamlit sends, made once per setting."""
    if not dataclasses.is_dataclass(figures):
        return figures
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


def _widget(name: str, control, default, controls, where, values: dict, custom: Custom):
    """Make one field's control; its value."""
    settings = so_far(values)
    common = {"where": where, "help": control.help}
    if control.enabled is not None:
        common["disabled"] = not control.enabled(settings)
    if name in custom:
        return custom[name](controls, where, settings)
    choices, kind = control.choices(settings), control.widget
    if control.format is not None and choices is not None:
        common["format_func"] = control.format
    if control.flag:
        return controls.toggle(control.label, default, control.url, **common)
    if control.max_chars is not None:
        return controls.text_area(control.label, default, control.url, control.max_chars, **common)
    if choices is None:
        low, high, step = control.limits(settings)
        number = int if all(isinstance(v, int) for v in (low, high, step, default)) else float
        return controls.slider(control.label, number(low), number(high), number(default), number(step),
                               control.url, **common)
    if kind == "radio":
        return controls.radio(control.label, choices, choices.index(default), control.url, horizontal=True,
                              captions=control.captions_at(settings), **common)
    numeric = all(isinstance(o, (int, float)) and not isinstance(o, bool) for o in choices)
    if kind == "select_slider" or (kind is None and numeric):
        return controls.select_slider(control.label, choices, default, control.url, **common)
    return controls.selectbox(control.label, choices, choices.index(default), control.url, **common)


def make_settings(settings_type: type, controls, places, custom: Custom = NOTHING, given: Mapping = NOTHING):
    """The settings from their controls, in field order (see explorer.views.settings): `places` is
    where each control goes (one container for all, or a list of one per control)."""
    values, made = dict(given), 0
    remembered = st.session_state.setdefault(_DEFAULTS_KEY, {})
    for field in dataclasses.fields(settings_type):
        control = field.metadata.get("control")
        if control is None:
            values.setdefault(field.name, field.default)
            continue
        settings = so_far(values)
        default = control.default_from(settings) if control.default_from else field.default
        if control.default_from is not None:  # the fields it follows changed: back to its new default
            if control.url in remembered and remembered[control.url] != default:
                st.session_state[control.url] = default
            remembered[control.url] = default
        if not control.applies(settings):
            values[field.name] = default
            continue
        if control.url in st.session_state and not control.allows(st.session_state[control.url], settings):
            st.session_state[control.url] = default  # another page's value, or out of a range that shrank
        where = places[made] if isinstance(places, list) else places
        values[field.name] = _widget(field.name, control, default, controls, where, values, custom)
        made += 1
    return settings_type(**values)


def part_keys(sections: Sequence[Section]) -> tuple[str, ...]:
    """The URL keys of the sections' own controls."""
    return tuple(control.url for s in sections if s.part for _, control in controls_of(s.part.settings))


def serve_lesson(lesson: LessonSpec, *, title: str, lead: str, sidebar: str, sections: Sequence[Section],
                 working: Callable[[object], str] | None = None, custom: Custom = NOTHING) -> None:
    """Draw the lesson's page (see the module).  `working(settings)` is the spinner's text while its
    view is computed."""
    controls, steps = lesson_page(lesson.page, title, lead)
    if controls.opened:  # a fresh visit: no default remembered from another lesson's run
        st.session_state.pop(_DEFAULTS_KEY, None)
    st.sidebar.header(sidebar)
    settings = make_settings(lesson.settings, controls, st.sidebar, custom)
    notes = st.container()  # the link's notes, written last: the sections' own controls come further down
    if steps.revealed:
        with st.spinner(working(settings) if working else "Computing…"):
            shown = runtime.shown(lesson, settings, sendable)
        key, *rest = sections
        if lesson.live is None:
            key.draw(shown)
        else:
            serve_live(lesson, shown, key.draw, sendable)
        steps.explain(section="")
        for section in rest:
            keys = part_keys([section])
            below_the_fold(_section, section, shown, steps, controls, custom, controls=controls, keys=keys)
    with notes:
        controls.report(later=() if steps.revealed else part_keys(sections))
    next_lesson(lesson.page)


def _section(section: Section, shown: runtime.Shown, steps, controls, custom: Custom) -> None:
    if section.part is None:
        if section.title:
            st.subheader(section.title)
        section.draw(shown)
    else:
        st.fragment(_part)(section, shown.settings, controls, custom)
    steps.explain(section=section.name)


def _part(section: Section, outer, controls, custom: Custom) -> None:
    """A section with its own settings (a fragment: its controls redraw it alone)."""
    serve_heavy_work()
    part = section.part
    if section.title:
        st.subheader(section.title)
    given = {f.name: getattr(outer, f.name) for f in dataclasses.fields(part.settings)
             if "control" not in f.metadata and hasattr(outer, f.name)}
    n_controls = len(controls_of(part.settings))
    places = list(st.columns([2] * n_controls + [1], gap="large"))[:n_controls] if n_controls else []
    settings = make_settings(part.settings, controls, places, custom, given)
    section.draw(runtime.shown(part, settings, sendable))
