"""The lesson runtime's adapter to Streamlit: `serve_lesson` turns a lesson's declaration into its page.

    serve_lesson(DEPTH, lead="…", sidebar="Stack",
                 sections=[Section("gradient", key_figure), Section("details", details)])

It makes the lesson's controls from its settings dataclass (explorer.kit.settings: URL-bound,
each bad link value noted with the default shown), its lesson steps, and the view and figures
through the runtime's one cache (figures converted to what Streamlit sends once per setting); then
it draws the sections in order.  The first is the key figure, drawn in the page's run; the others
are put off to a run of their own when a Reveal shows the figures (`below_the_fold`), so the
key figure shows first; a lesson opened in a browser draws its key figure before any control
(explorer/serve/opening.py), and its whole page in the next run.

A section may have settings of its own (`part`, a LessonSpec): their controls are drawn in a row at
the top of the section, which is a fragment (moving them redraws that section alone), and its view
is cached by those settings.  Fields of the part's settings that have no control take the value of
the main settings' field of the same name.  A section with a `title` is anchored by its name; a
lesson step about it says, under the key figure, that its figure is further down (with the link).
A control marked `main` (explorer.kit.settings) is drawn in a row above the key figure instead
of the sidebar (under the section a revealed step is about, when that section is drawn first).  A
control drawn by the page itself (a preset picker with a text box) is passed in `custom`:
{field name: make(controls, where, settings_so_far)}.
A part drawn in stages gives `draw` as a tuple of functions and `rows`, how many of its
controls (in field order) stand above each: `Section("models", (shuffle, reversal), part=MODELS,
rows=(3, 3))` draws three controls, the shuffle, three more controls, the reversal.  `presets`
(explorer.kit.widgets.Preset) are buttons under the sidebar's controls that set several at once.

A view may fail for a reason the user should read (a damaged model file): the exceptions its
LessonSpec lists in `failures` are shown as an error — a part's in its section's place; the main
view's with `unavailable` above it, and the page ends there.

What a page may add, each a function of the settings or the view (no Streamlit in them):
    presets(settings)  rows of `Preset` buttons under the controls, each setting some of them
    notes(settings)    (control label, plain text): what the lesson could not read (typed text), noted
A part's section may be asked for (`ask(settings)` gives a message and a `Button`: its view is
computed once the visitor presses it — a measurement that holds the server's CPU) and taken
`again` (a `Button`): its settings' field `attempt` is this session's count of presses.

A lesson that trains on the server (`LessonSpec.live`) has its key section drawn by
explorer/serve/live.py: the start and Stop buttons, then the section at the moment of the session's
run (step 0 before any).  Revealing a step whose answer is about a run (its claim is not `ready`
before one) starts that run, as the start button would: a lecturer's clicker reveals, it cannot press.

The page script holds no cache and no performance trick: only its sections and its prose.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence

import altair as alt
import plotly.graph_objects as go
import streamlit as st

from ..figures.common import frozen
from ..kit.controls import NOWHERE, vega_lite_spec
from ..kit.first_chart import until_first_chart
from ..kit.sections import Preset, Section
from ..kit.settings import controls_of, so_far
from ..kit.spec import LessonSpec, Shown
from ..kit.steps import load_steps
from ..kit.text import escape_markdown
from ..kit.widgets import advancing_slider, preset_buttons, preset_text, row_places
from ..lessons import specs
from . import runtime
from .chart_code import load_chart_code
from .later import below_the_fold, drawn_anew, head_start, note_figures_appear
from .live import serve_live
from .opening import page_after_opening, staged_opening
from .page import lesson_page, next_lesson, page_settings, serve_heavy_work

__all__ = ["ATTEMPT", "sendable", "serve_lesson", "warm_lessons"]

Custom = Mapping[str, Callable]
NOTHING: Mapping = {}  # no custom controls, no given values (read only)
_DEFAULTS_KEY = "_explorer_dependent_defaults"  # session state: {url key: (its last default, resets_with)}
_STEP_KEY = "_explorer_step_drawn"  # session state: the lesson step of the page's last run
ATTEMPT = "attempt"  # a part's settings field that counts its `again` button's presses (see the module)
_ASKED_KEY = "_explorer_asked"  # session state: {(part name, settings)} whose view this session asked for


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
    """Every lesson's default view and figures, then every lesson step's, as the pages will ask for
    them (the server's warm-up: explorer/serve/startup.py)."""
    lessons = specs()
    pages = {lesson.page for lesson in lessons}
    return runtime.warm(sendable, lessons, {page: [step.settings for step in load_steps(page)] for page in pages})


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
    if control.presets is not None:
        return preset_text(control, default, controls, where, common)
    if control.max_chars is not None:
        lines = str(default).count("\n") + 1  # a box as tall as its default text (Streamlit's least: 68 px)
        return controls.text_area(control.label, default, control.url, control.max_chars,
                                  height=max(68, 24 * lines + 30), **common)
    if choices is None:
        low, high, step = control.limits(settings)
        number = int if all(isinstance(v, int) for v in (low, high, step, default)) else float
        if low == high:  # one value only (a slider needs two ends): say it instead of drawing one
            where.caption(f"{control.label}: {number(low)} (the only value here)")
            return number(low)
        if control.advance is not None:
            return advancing_slider(control, number(default), controls, where, common, number(low), number(high),
                                    number(step))
        return controls.slider(control.label, number(low), number(high), number(default), number(step),
                               control.url, **common)
    if kind == "radio":
        return controls.radio(control.label, choices, choices.index(default), control.url, horizontal=True,
                              captions=control.captions_at(settings), **common)
    numeric = all(isinstance(o, (int, float)) and not isinstance(o, bool) for o in choices)
    if kind == "select_slider" or (kind is None and numeric):
        return controls.select_slider(control.label, choices, default, control.url, **common)
    return controls.selectbox(control.label, choices, choices.index(default), control.url, **common)


def _shown(lesson: LessonSpec, settings, working: Callable[[object], str] | None):
    """The lesson at `settings`, as sent; while it is computed, a spinner (`working(settings)`: its
    text) — none when it is already made, as Streamlit's spinner starts a thread each time it is used."""
    made = runtime.ready(lesson, settings, sendable)
    if made is not None:
        return made
    with st.spinner(working(settings) if working else "Computing…"):
        return runtime.shown(lesson, settings, sendable)


def make_settings(settings_type: type, controls, places, custom: Custom = NOTHING, given: Mapping = NOTHING):
    """The settings from their controls, in field order (see explorer.kit.settings): `places` is
    where each control goes (one container for all, a list of one per control, a mapping of field
    names to containers with None for the rest, or a function of the field's name and the settings so far)."""
    values, made, heading = dict(given), 0, None
    remembered = st.session_state.setdefault(_DEFAULTS_KEY, {})
    for field in dataclasses.fields(settings_type):
        control = field.metadata.get("control")
        if control is None:
            values.setdefault(field.name, field.default)
            continue
        settings = so_far(values)
        default = control.default_from(settings) if control.default_from else field.default
        if control.default_from is not None or control.resets_with is not None:
            mark = (default, control.resets_with(settings) if control.resets_with else None)
            if control.url in remembered and remembered[control.url] != mark:  # what it follows changed
                st.session_state[control.url] = default
            remembered[control.url] = mark
        if not control.applies(settings):
            values[field.name] = default
            continue
        if control.url in st.session_state and not control.allows(st.session_state[control.url], settings):
            st.session_state[control.url] = default  # another page's value, or out of a range that shrank
        if callable(places):
            where = places(field.name, settings)
        else:
            where = places[made] if isinstance(places, list) else places
        if isinstance(where, Mapping):  # {field name: container}, None: every other field's
            where = where.get(field.name, where[None])
        if control.heading and control.heading != heading:  # the first control made of its group
            where.header(control.heading)
            heading = control.heading
        values[field.name] = _widget(field.name, control, default, controls, where, values, custom)
        if control.note is not None and (note := control.note(so_far(values))):
            where.caption(note)
        made += 1
    return settings_type(**values)


def url_keys(settings_type: type) -> tuple[str, ...]:
    """The URL keys of a settings dataclass's controls."""
    return tuple(url for _, control in controls_of(settings_type) for url in (control.url, control.text_url) if url)


def part_keys(sections: Sequence[Section]) -> tuple[str, ...]:
    """The URL keys of the sections' own controls."""
    return tuple(url for s in sections if s.part for url in url_keys(s.part.settings))


def serve_lesson(lesson: LessonSpec, *, lead: str, sidebar: str, sections: Sequence[Section],
                 working: Callable[[object], str] | None = None, custom: Custom = NOTHING,
                 presets: Callable[[object], Sequence[Preset]] | None = None,
                 notes: Callable[[object], Iterable[tuple[str, str]]] | None = None, unavailable: str = "") -> None:
    """Draw the lesson's page (see the module), titled as its card in lesson.toml.  `working(settings)` is
    the spinner's text while its view is computed."""
    controls, steps = lesson_page(lesson.page, lead)
    staged = staged_opening(steps)  # the key figure first, the controls a moment later
    page_settings(controls, NOWHERE if staged else st.sidebar)
    controls.know(url_keys(lesson.settings) + part_keys(sections))
    if controls.opened:
        st.session_state.pop(_DEFAULTS_KEY, None)  # a fresh visit
    elif st.session_state.get(_STEP_KEY) != steps.number and steps.step is not None:
        # A step set the controls it names: those keep its values even where what they follow changed;
        # a control it leaves alone still follows (the sentences follow the example the step picks).
        remembered = st.session_state.get(_DEFAULTS_KEY, {})
        for key in steps.step.settings:
            remembered.pop(key, None)
    st.session_state[_STEP_KEY] = steps.number
    (NOWHERE if staged else st.sidebar).header(sidebar)
    main = [name for name, control in controls_of(lesson.settings) if control.main]
    # A revealed step about another section has that section above the key figure's own controls, so
    # that its figure starts on the first screen (the controls stay with the key figure, under it).
    about_another = main and steps.section and steps.section != sections[0].name and \
        any(s.name == steps.section for s in sections)
    step_place = st.container() if about_another else None
    row = st.columns([2] * len(main) + [1], gap="large") if main else []
    places = {None: NOWHERE if staged else st.sidebar, **dict(zip(main, row, strict=False))}
    settings = make_settings(lesson.settings, controls, places, custom)
    if presets is not None and not staged:
        preset_buttons(presets(settings), lesson.settings, settings, st.sidebar)
    for about, message in notes(settings) if notes is not None else ():  # plain text, maybe typed
        controls.note(escape_markdown(message), about=about)
    if staged and controls.note_coming(later=part_keys(sections)):  # the link's note goes above the key figure:
        return page_after_opening()                                   # they come together, the figure unmoved
    notes_place = st.container()  # the link's notes, written last: the sections' own controls come further down
    shown, appearing = None, steps.just_revealed
    if steps.revealed:
        try:
            shown = _shown(lesson, settings, working)
        except lesson.failures as problem:
            st.error(f"{unavailable}\n\n{escape_markdown(problem)}".strip(), icon=":material/error:")
    if staged and shown is None:  # a view that failed: the whole page's run says so, with the controls
        return page_after_opening()
    if not steps.revealed and st.context.headers:  # a browser (AppTest has none, and no chart code to load)
        load_chart_code()  # the charts' code loads while the class thinks (a first Reveal waited for it)
    if shown is not None:
        if appearing:
            note_figures_appear()
        anew = drawn_anew(lesson.page, steps.number, settings)
        first, *rest = step_first(sections, steps.section)
        live = lesson.live is not None and first is sections[0]  # a run on the server: its moment shown live
        if not live and not any(s.part and s.name == steps.section for s in sections):  # a part answers in itself
            steps.answer(lesson.claims, shown)
        if live:
            with until_first_chart(staged):
                serve_live(lesson, shown, first.draw, sendable, answer=functools.partial(steps.answer, lesson.claims),
                           start=appearing and answers_a_run(lesson, steps.step, shown))
        elif step_place is not None:
            with step_place:
                _section(first, shown, steps, controls, custom)
        else:
            with until_first_chart(staged):
                _section(first, shown, steps, controls, custom, key=first is sections[0])
        if staged:
            return page_after_opening()
        if rest and anew:
            head_start()  # the key figure drawn before the sections under it arrive
        for section in rest:
            keys = part_keys([section])
            below_the_fold(_section, section, shown, steps, controls, custom, controls=controls, keys=keys)
    parts_alone = shown is None and steps.revealed and _parts_alone(sections, settings, steps, controls, custom)
    with notes_place:
        controls.report(later=() if shown is not None or parts_alone else part_keys(sections))
    next_lesson(lesson.page)


def _parts_alone(sections: Sequence[Section], settings, steps, controls, custom: Custom) -> bool:
    """The page's own view failed (a damaged model: the error above says which): the sections with views of
    their own still draw, each saying what it needs (the block page's decoder, another model).  Whether any did."""
    parts = [s for s in sections if s.part is not None]
    for section in parts:
        below_the_fold(_section, section, Shown(settings, None, None), steps, controls, custom,
                       controls=controls, keys=part_keys([section]))
    return bool(parts)


def answers_a_run(lesson: LessonSpec, step, shown: Shown) -> bool:
    """Whether a lesson step's answer is about a run not yet trained: its claim cannot be judged at the
    view shown before any run (`ready` is False there).  Revealing such a step starts its run: a
    clicker has no other way to press the start button."""
    return step is not None and step.claim in lesson.claims and not lesson.claims[step.claim].ready(shown)


def step_first(sections: Sequence[Section], name: str) -> list[Section]:
    """The sections in the order drawn: the one a revealed step is about first (its figure and the
    answer above it share the first screen), then the others as declared."""
    chosen = [s for s in sections if s.name == name]
    return chosen + [s for s in sections if s.name != name] if chosen else list(sections)


def _section(section: Section, shown: Shown, steps, controls, custom: Custom, key: bool = False) -> None:
    if section.part is None:
        if section.title and not key:
            st.subheader(section.title, anchor=section.name)
        section.draw(shown)
    else:
        st.fragment(_part)(section, shown.settings, controls, custom, steps)


def _part(section: Section, outer, controls, custom: Custom, steps) -> None:
    """A section with its own settings (a fragment: its controls redraw it alone), drawn in stages."""
    serve_heavy_work()
    part = section.part
    if section.title:
        st.subheader(section.title, anchor=section.name)
    given = runtime.given_by(part, outer)
    if section.again is not None:
        given[ATTEMPT] = st.session_state.get(section.again.key + "_count", 0)
    draws = section.draw if isinstance(section.draw, tuple) else (section.draw,)
    n_controls = len(controls_of(part.settings))
    holders, answer = [], None
    for _ in draws:
        above = st.container()
        answer = answer or st.container()  # a step about this section answers under its first controls
        holders.append((above, st.container()))
    places = row_places(part.settings, section.rows or (n_controls,), [above for above, _ in holders],
                        section.columns)
    settings = make_settings(part.settings, controls, places, custom, given)
    request = section.ask(settings) if section.ask is not None else None
    asked = st.session_state.setdefault(_ASKED_KEY, set())
    if request is not None and (part.name, settings) not in asked:
        message, button = request
        st.markdown(message)
        st.button(button.label, key=button.key, help=button.help, icon=button.icon, type="primary",
                  on_click=asked.add, args=((part.name, settings),))
        return
    try:
        shown = _shown(part, settings, section.working)
    except part.failures as problem:
        st.error(escape_markdown(problem), icon=":material/error:")
        return
    if steps.section == section.name:
        steps.answer(part.claims, shown, where=answer)
    for draw, (_, body) in zip(draws, holders, strict=True):
        with body:
            draw(shown)
    if section.again is not None:
        button, count = section.again, section.again.key + "_count"
        st.button(button.label, key=button.key, help=button.help, icon=button.icon,
                  on_click=st.session_state.update, args=({count: getattr(settings, ATTEMPT) + 1},))
