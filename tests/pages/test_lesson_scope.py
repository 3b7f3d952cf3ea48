"""Each lesson opens as itself: a lesson opened from another one (through app.py's navigation, as the
sidebar does) after two of that one's controls were moved shows exactly what a fresh visit shows.
The same control names mean different things on different lessons (`width`, `head`, `T`), and
Streamlit's session state is shared by every page of a session."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from explorer.kit.controls import UrlControls
from explorer.lessons import LESSONS
from harness.apptest import ROOT, assert_no_exception

KINDS = ("select_slider", "slider", "selectbox", "radio", "toggle")


def opened(page_path: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.switch_page(page_path).run()
    assert_no_exception(at)
    return at


def lesson_widgets(at: AppTest) -> list:
    """The lesson's controls, sidebar and page (not the app-wide ones: presentation mode, the image format)."""
    return [w for kind in KINDS for w in getattr(at, kind)
            if w.key and not w.key.startswith("_") and w.key not in UrlControls.SESSION_WIDE and not w.disabled]


def lesson_values(at: AppTest) -> dict[str, object]:
    return {w.key: w.value for w in lesson_widgets(at)}


def other_value(widget):
    """A value the widget can take other than its own."""
    if hasattr(widget, "options") and widget.options:
        options = list(widget.options)
        shown = str(widget.format_func(widget.value)) if hasattr(widget, "format_func") else str(widget.value)
        others = [o for o in options if o != shown]
        choice = others[-1] if others else None
        return widget.indices_to_value(options.index(choice)) if hasattr(widget, "indices_to_value") and choice \
            else choice
    if isinstance(widget.value, bool):
        return not widget.value
    return widget.max if widget.value != widget.max else widget.min


@pytest.mark.parametrize("lesson", LESSONS, ids=[page.url_path for page in LESSONS])
def test_a_lesson_opened_from_another_is_a_fresh_visit(lesson):
    fresh = lesson_values(opened(lesson.path))
    previous = LESSONS[LESSONS.index(lesson) - 1]  # the lesson before it (the last one for the first)
    at = opened(previous.path)
    widgets = lesson_widgets(at)
    widgets.sort(key=lambda w: w.key not in fresh)  # controls whose names the lesson also uses first
    moved = 0
    for widget in widgets:
        if moved == 2:
            break
        value = other_value(widget)
        if value is None or value == widget.value:
            continue
        widget.set_value(value)
        at.run()
        assert_no_exception(at)
        moved += 1
    assert moved == 2, f"{previous.url_path}: two controls to move"
    at.switch_page(lesson.path).run()
    assert_no_exception(at)
    assert lesson_values(at) == fresh
