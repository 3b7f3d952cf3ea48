"""What a lesson page is made of, for `serve_lesson` (explorer.serve.adapter) to draw: its named
`Section`s, the `Button`s and `Preset`s of its controls, and two things a section draws — a claim's
sentence read from what is shown (`claimed`) and a "Claims, measured" box (`measured_box`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import streamlit as st

from .claims import say
from .prose import lesson_sections
from .spec import LessonSpec, Shown

__all__ = ["Button", "Preset", "Section", "claimed", "measured_box"]


@dataclass(frozen=True)
class Button:
    label: str
    key: str
    help: str | None = None
    icon: str | None = None


@dataclass(frozen=True)
class Preset:
    """A button that sets controls: `values` {field name: value}, each moved to the nearest value
    its control allows.  Presets with a `row` caption are drawn side by side under it."""

    button: Button
    values: Mapping[str, object]
    row: str | None = None


@dataclass(frozen=True)
class Section:
    """A named part of a lesson page: `draw(shown)` draws it from the view and figures (Shown).
    With a `part`, the section has its own settings, controls and view (see the module); `title` is
    drawn above its controls."""

    name: str
    draw: Callable[[Shown], None] | tuple[Callable[[Shown], None], ...]
    part: LessonSpec | None = None
    title: str | None = None
    working: Callable[[object], str] | None = None  # a part's spinner text, from its settings
    ask: Callable[[object], tuple[str, Button] | None] | None = None
    again: Button | None = None
    rows: tuple[int, ...] | None = None  # a part drawn in stages: its controls above each draw
    columns: int | None = None  # a part's controls: columns per row (default: as many as apply)


def claimed(lesson: LessonSpec, name: str, shown: Shown) -> str | None:
    """The sentence of claim `name` (the section "claim: name" of the lesson's explorer/lessons/<page>/prose.md)
    with its numbers read from what is shown; None where the claim does not hold for it."""
    return say(lesson.claims, name, lesson_sections(lesson.page)[f"claim: {name}"], shown)


def measured_box(box) -> None:
    """A "Claims, measured" box (explorer/kit/measured.py): folded, titled with its question; inside,
    what the notes say, the measurement as a table and the finding read from it."""
    with st.expander(f":material/science: Claims, measured: {box.title}"):
        st.markdown(f"**The notes:** {box.notes_say}")
        st.dataframe(dict(zip(box.columns, zip(*box.rows, strict=True), strict=True)), hide_index=True)
        st.markdown(f"**Measured here:** {box.finding}")
