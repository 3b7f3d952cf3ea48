"""The one cache of the lessons on the runtime, and their warm-up.  No Streamlit.

`shown(lesson, settings, prepare)` is the lesson's view and figures at those settings: computed once
per process (one computation per key at a time, `SingleFlight`), kept in one cache bounded by
entries, and shared by every session — never changed once made.  `prepare` turns the figures into
what is sent (the adapter passes Streamlit's own conversion), so that is done once too.

`ready(lesson, settings, prepare)` is what `shown` would return if it is already made, else None: a
caller shows that work is under way (a spinner, whose timer is a thread started per use) only for work.

`shown_at(lesson, settings, key, view, prepare)` is the same for a view that is not a function of the
settings alone — a moment of a live run (explorer/serve/live.py): its figures are made once per
`key` (what identifies that moment) and shared by every session at the same point of the same run,
in a cache of their own, so that polling a run never pushes the lessons' views out of the first.

`warm()` computes every lesson's default view, `view(Settings())`: the defaults are the settings
dataclass's, not a copy of them; every page's key view first, then its sections'; then the view of
every lesson step (`at_step`: a step's values, as a link gives them), so that a lecturer's Reveal
finds its view computed.

Every cache in the library is made by explorer/caching.py and listed there; the runtime owns them:
`RESULT_BUDGET` is what a server process may keep of computed results, all caches together (the
sum of their byte budgets must fit it: tests/system/test_sessions.py); `caches()` lists them with
their use and `clear()` empties them (a test that replaces the shipped files, a benchmark's cold run).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

from explorer.kit.settings import check, from_link

from .. import caching
from ..caching import bounded_cache
from ..kit.spec import LessonSpec, Shown
from ..lessons import specs
from ..pieces import run_pieces_with
from .pool import POOL, Requester

__all__ = ["RESULT_BUDGET", "Shown", "at_step", "caches", "clear", "given_by", "ready", "shown", "shown_at", "warm"]

# Bytes of computed results one server process may keep, in every cache of the library together
# (the loads of shipped files come on top: they are few, and each is loaded once).
RESULT_BUDGET = 256_000_000


def _identity(figures):
    return figures


@bounded_cache(256, max_bytes=64_000_000)  # every lesson's defaults and every step's views, and visitors' own
def _shown(lesson: LessonSpec, settings, prepare: Callable) -> Shown:
    view = lesson.view(settings)
    return Shown(settings, view, prepare(lesson.figures(view)))


def _checked(lesson: LessonSpec, settings) -> None:
    if not isinstance(settings, lesson.settings):
        raise TypeError(f"{lesson.name} takes {lesson.settings.__name__}, not {type(settings).__name__}")
    check(settings)


def shown(lesson: LessonSpec, settings, prepare: Callable = _identity) -> Shown:
    """The lesson at `settings` (checked against its controls: ValueError outside them)."""
    _checked(lesson, settings)
    return _shown(lesson, settings, prepare)


def ready(lesson: LessonSpec, settings, prepare: Callable = _identity) -> Shown | None:
    """`shown(lesson, settings, prepare)` if it is already made (nothing computed, nothing waited
    for), else None."""
    _checked(lesson, settings)
    found, made = _shown.peek(lesson, settings, prepare)
    return made if found else None


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


def at_step(lesson: LessonSpec, values: Mapping[str, object], page_settings=None):
    """The settings a lesson step's (or a link's) `values` give `lesson`, keyed by the controls' URL
    names; a section with settings of its own takes the fields it shares with its page's settings
    (`page_settings`) from them, as the page gives them."""
    return from_link(lesson.settings, values, **({} if page_settings is None else given_by(lesson, page_settings)))


def given_by(lesson: LessonSpec, page_settings) -> dict:
    """The fields of a section's settings that are not its own controls, taken from its page's settings."""
    return {f.name: getattr(page_settings, f.name) for f in dataclasses.fields(lesson.settings)
            if "control" not in f.metadata and hasattr(page_settings, f.name)}


def warm(prepare: Callable = _identity, lessons: tuple[LessonSpec, ...] | None = None,
         steps: Mapping[str, Sequence[Mapping[str, object]]] | None = None) -> dict[str, float]:
    """Every lesson's default view and figures, computed now (through the work pool, as one more
    session): first every page's own (its key figure's, which a page opened in a browser draws
    first), then its sections' (`section`: further down the page), then every step's (`steps`: each
    page's steps' values); the seconds each lesson's defaults took, and "steps of <page>" for each
    page's steps.  A failure is left for the page to report."""
    lessons = specs() if lessons is None else lessons
    seconds = {}
    with run_pieces_with(POOL.runner(Requester("server warm-up"))):
        for lesson in sorted(lessons, key=lambda lesson: lesson.section is not None):  # stable: pages first
            started = time.perf_counter()
            try:
                shown(lesson, lesson.settings(), prepare)
            except Exception:
                continue
            seconds[lesson.name] = time.perf_counter() - started
        for page, values in (steps or {}).items():
            started = time.perf_counter()
            main = next(lesson for lesson in lessons if lesson.page == page and lesson.section is None)
            parts = [lesson for lesson in lessons if lesson.page == page and lesson.section is not None]
            for step in values:
                try:
                    settings = at_step(main, step)
                    shown(main, settings, prepare)
                    for part in parts:
                        shown(part, at_step(part, step, settings), prepare)
                except Exception:
                    continue
            seconds[f"steps of {page}"] = time.perf_counter() - started
    return seconds


def caches() -> list[tuple[str, str, caching.CacheInfo]]:
    """(name, kind, cache_info()) of every cache in the library loaded so far (kind "result" or "load")."""
    return [(cache.name, cache.kind, cache.function.cache_info()) for cache in caching.CACHES]


def clear(kinds: tuple[str, ...] = ("result", "load"), keep: frozenset[str] = frozenset()) -> None:
    """Empty every cache of these kinds (`keep`: names of caches left as they are)."""
    for cache in caching.CACHES:
        if cache.kind in kinds and cache.name not in keep:
            cache.function.cache_clear()
