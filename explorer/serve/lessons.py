"""Every lesson on the runtime, declared: its page, its settings dataclass (the controls), its view
(settings → arrays) and its figures (view → figures, made once per setting and shared).  A lesson
that trains on the server declares its job too (`LiveSpec`, served by explorer/serve/live.py)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from ..figures import depth as depth_figures
from ..figures import gradients as gradient_figures
from ..figures import train as train_figures
from ..views import gradient_lesson as gradients
from ..views import train
from ..views.depth import DepthSettings, depth_view

__all__ = ["DEPTH", "GRADIENTS", "GRADIENT_DEPENDENCY", "GRADIENT_RECALL", "LESSONS", "TRAIN", "LessonSpec", "LiveSpec"]


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
    "gone") are sections of the lesson's prose, app_pages/lessons/<page>.md."""

    job: Callable
    at: Callable
    start: Callable[[object], str] = train_button


@dataclass(frozen=True)
class LessonSpec:
    """A lesson as data: `view(settings)` returns plain arrays (numpy, read-only); `figures(view)`
    returns what the sections draw (Plotly figures, Altair charts, frames), never changed once made."""

    page: str  # its url_path
    settings: type
    view: Callable
    figures: Callable = no_figures
    section: str | None = None  # a section's own settings and view (a part of the page's lesson)
    live: LiveSpec | None = None  # a lesson that trains on the server: its key section shows the run

    @property
    def name(self) -> str:
        return self.page if self.section is None else f"{self.page}/{self.section}"


DEPTH = LessonSpec("depth", DepthSettings, depth_view, depth_figures.depth_figures)

GRADIENTS = LessonSpec("gradients", gradients.GradientSettings, gradients.gradient_view,
                       functools.partial(gradient_figures.gradient_figures, labels=gradients.KIND_LABELS))
GRADIENT_DEPENDENCY = LessonSpec("gradients", gradients.DependencySettings, gradients.dependency_view,
                                 gradient_figures.dependency_figures, section="dependency")
GRADIENT_RECALL = LessonSpec("gradients", gradients.RecallSettings, gradients.recall_view,
                             gradient_figures.recall_figures, section="recall")

TRAIN = LessonSpec("train", train.TrainSettings, train.train_view, train_figures.train_figures,
                   live=LiveSpec(lambda s: s.job, train.at_moment, start=lambda s: "Race" if s.race else "Train"))

LESSONS: tuple[LessonSpec, ...] = (DEPTH, GRADIENTS, GRADIENT_DEPENDENCY, GRADIENT_RECALL, TRAIN)
