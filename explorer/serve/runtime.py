"""The one cache of the lessons on the runtime, and their warm-up.  No Streamlit.

`shown(lesson, settings, prepare)` is the lesson's view and figures at those settings: computed once
per process (one computation per key at a time, `SingleFlight`), kept in one cache bounded by
entries, and shared by every session — never changed once made.  `prepare` turns the figures into
what is sent (the adapter passes Streamlit's own conversion), so that is done once too.

`shown_at(lesson, settings, key, view, prepare)` is the same for a view that is not a function of the
settings alone — a moment of a live run (explorer/serve/live.py): its figures are made once per
`key` (what identifies that moment) and shared by every session at the same point of the same run,
in a cache of their own, so that polling a run never pushes the lessons' views out of the first.

`warm()` computes every lesson's default view, `view(Settings())`: the defaults are the settings
dataclass's, not a copy of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from ..analysis.caching import bounded_cache
from ..views.pool import REQUESTER, Requester
from ..views.settings import check
from .lessons import LESSONS, LessonSpec

__all__ = ["Shown", "shown", "shown_at", "warm"]


@dataclass(frozen=True)
class Shown:
    """A lesson at one setting: its settings, its view (arrays) and its figures (ready to send)."""

    settings: object
    view: object
    figures: object


def _identity(figures):
    return figures


@bounded_cache(64, max_bytes=64_000_000)
def _shown(lesson: LessonSpec, settings, prepare: Callable) -> Shown:
    view = lesson.view(settings)
    return Shown(settings, view, prepare(lesson.figures(view)))


def shown(lesson: LessonSpec, settings, prepare: Callable = _identity) -> Shown:
    """The lesson at `settings` (checked against its controls: ValueError outside them)."""
    if not isinstance(settings, lesson.settings):
        raise TypeError(f"{lesson.name} takes {lesson.settings.__name__}, not {type(settings).__name__}")
    check(settings)
    return _shown(lesson, settings, prepare)


@dataclass(frozen=True)
class _Moment:
    key: Hashable
    view: object = field(compare=False)  # the key stands for it


@bounded_cache(96, max_bytes=16_000_000)
def _at(lesson: LessonSpec, settings, moment: _Moment, prepare: Callable) -> Shown:
    return Shown(settings, moment.view, prepare(lesson.figures(moment.view)))


def shown_at(lesson: LessonSpec, settings, key: Hashable, view, prepare: Callable = _identity) -> Shown:
    """The lesson's `view` at one moment (see the module), with its figures made once per `key`."""
    return _at(lesson, settings, _Moment(key, view), prepare)


def warm(prepare: Callable = _identity, lessons: tuple[LessonSpec, ...] = LESSONS) -> dict[str, float]:
    """Every lesson's default view and figures, computed now (through the work pool, as one more
    session); the seconds each took.  A failure is left for the page to report."""
    seconds = {}
    token = REQUESTER.set(Requester("server warm-up"))
    try:
        for lesson in lessons:
            started = time.perf_counter()
            try:
                shown(lesson, lesson.settings(), prepare)
            except Exception:
                continue
            seconds[lesson.name] = time.perf_counter() - started
    finally:
        REQUESTER.reset(token)
    return seconds
