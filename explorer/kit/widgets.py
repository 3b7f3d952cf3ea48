"""Controls of the lesson runtime (explorer/serve/adapter.py) beyond one Streamlit widget per field:
a text with named presets, a number with a button that moves it on, and a part's controls in rows.
See explorer.kit.settings."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from explorer.kit.settings import controls_of

from .controls import OWN_TEXT
from .text import escape_markdown

__all__ = ["advancing_slider", "preset_buttons", "preset_text", "row_places"]


def preset_text(control, default: str, controls, where, common: dict) -> str:
    """A picker of the control's presets and "your own text…", which opens a text box (its own link
    name, `text_url`); the text chosen or typed.  A preset whose name is not its text shows the text."""
    names = list(control.presets)
    index = next((i for i, name in enumerate(names) if control.presets[name] == default), 0)
    disabled = common.get("disabled", False)
    picked = controls.selectbox(control.label, [*names, OWN_TEXT], index, control.url, where=where, disabled=disabled)
    if picked != OWN_TEXT:
        text = control.presets[picked]
        if text != picked:
            where.caption(f"“{escape_markdown(text)}”")
        return text
    return controls.text_area(control.text_label or control.label, default, control.text_url, control.max_chars,
                              **common)


def _advance(key: str, default, low, high, step) -> None:
    value = st.session_state.get(key, default) + step
    st.session_state[key] = low if value > high else value


def advancing_slider(control, default, controls, where, common: dict, low, high, step):
    """A slider with a button under it that moves it one step on (from the highest back to the
    lowest); the button's key is its label in lower case."""
    value = controls.slider(control.label, low, high, default, step, control.url, **common)
    where.button(control.advance, on_click=_advance, args=(control.url, default, low, high, step),
                 icon=":material/skip_next:", key=control.advance.lower(), disabled=common.get("disabled", False))
    return value


def row_places(settings_type: type, rows: tuple[int, ...], holders: list, columns: int | None = None):
    """Where each control of a part goes when its controls come in rows (a section drawn in stages):
    `rows[r]` fields (with controls, in order) go in a row of columns in `holders[r]`, made when the
    row's first control is; a row has `columns` columns, filled from the left (by default as many as
    its controls that apply then)."""
    fields = controls_of(settings_type)
    row_of, start = {}, 0
    for r, count in enumerate(rows):
        row_of.update({name: r for name, _ in fields[start:start + count]})
        start += count
    if start != len(fields):
        raise ValueError(f"{settings_type.__name__}: the rows hold {start} controls, the settings {len(fields)}")
    made: dict[int, list] = {}

    def place(name: str, settings):
        r = row_of[name]
        if r not in made:
            applying = [n for n, control in fields if row_of[n] == r and _applies(control, settings)]
            count = columns or len(applying)
            with holders[r]:
                made[r] = list(st.columns([2] * count + [1], gap="large"))[:count]
        return made[r].pop(0) if made[r] else holders[r]

    return place


def _applies(control, settings) -> bool:
    try:
        return control.applies(settings)
    except AttributeError:  # depends on a field of the same row not made yet
        return True


def preset_buttons(presets: Sequence, settings_type: type, settings, where) -> None:
    """The preset buttons (explorer.kit.sections.Preset), in rows under their captions."""
    controls = dict(controls_of(settings_type))
    rows: dict[str | None, list] = {}
    for preset in presets:
        rows.setdefault(preset.row, []).append(preset)
    for row, members in rows.items():
        if row is not None:
            where.caption(row)
        place = where.container(horizontal=True, gap="small") if row is not None else where
        for preset in members:
            values = {controls[name].url: controls[name].nearest(value, settings)
                      for name, value in preset.values.items()}
            button = preset.button
            place.button(button.label, key=button.key, help=button.help, icon=button.icon,
                         on_click=st.session_state.update, args=(values,))
