"""A lesson as data, for the runtime: each lesson's spec.py declares its LessonSpecs in `SPECS`
(explorer/lessons finds them).  No Streamlit."""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .claims import Claim

__all__ = ["LESSON_FOLDER", "NO_CLAIMS", "LessonSpec", "LiveSpec", "Shown", "no_figures"]

# Where the lessons' folders are (explorer/lessons: one folder each, with its card, steps and prose); the kit
# reads a lesson's files from here and imports none of its code.
LESSON_FOLDER = Path(__file__).resolve().parents[1] / "lessons"
NO_CLAIMS: Mapping[str, Claim] = types.MappingProxyType({})


def no_figures(view) -> None:
    """A lesson whose sections draw straight from its view."""


def train_button(settings) -> str:
    return "Train"


@dataclass(frozen=True)
class LiveSpec:
    """A lesson that trains on the server's training manager (explorer.training.runs): `job(settings)`
    is what its start button asks for (a LiveJob: equal jobs share one run), `at(view, run, index)`
    the lesson's view at a moment of that run (run: a RunView holding the snapshots the session has
    reached, or None before any run; index: the snapshot chosen to replay, None for the latest).
    `start(settings)` is the start button's label.  The runtime's notes ("queue full", "client busy",
    "gone") are sections of the lesson's prose, explorer/lessons/<page>/prose.md."""

    job: Callable
    at: Callable
    start: Callable[[object], str] = train_button


@dataclass(frozen=True)
class LessonSpec:
    """A lesson as data: `view(settings)` returns plain arrays (numpy, read-only); `figures(view)`
    returns what the sections draw (Plotly figures, Altair charts, frames), never changed once made."""

    page: str  # its url_path: the lesson's folder name
    settings: type
    view: Callable
    figures: Callable = no_figures
    section: str | None = None  # a section's own settings and view (a part of the page's lesson)
    # what its sentences state, as predicates (explorer/kit/claims.py); not part of its identity
    claims: Mapping[str, Claim] = field(default_factory=lambda: NO_CLAIMS, compare=False)
    failures: tuple[type[Exception], ...] = ()  # what its view may raise for the user to read (a damaged file)
    live: LiveSpec | None = None  # a lesson that trains on the server: its key section shows the run

    @property
    def name(self) -> str:
        return self.page if self.section is None else f"{self.page}/{self.section}"


@dataclass(frozen=True)
class Shown:
    """A lesson at one setting, as its sections draw it: its settings, its view (arrays) and its figures
    (ready to send)."""

    settings: object
    view: object
    figures: object
