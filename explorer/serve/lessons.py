"""Every lesson on the runtime, declared: its page, its settings dataclass (the controls), its view
(settings → arrays) and its figures (view → figures, made once per setting and shared)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from ..analysis.timing import TIMED_LAYERS
from ..figures import cost as cost_figures
from ..figures import depth as depth_figures
from ..figures import gradients as gradient_figures
from ..figures.lookup import lookup_figures
from ..views import cost_lesson as cost
from ..views import gradient_lesson as gradients
from ..views.depth import DepthSettings, depth_view
from ..views.lookup import LookupSettings, lookup_view

__all__ = ["COST", "COST_CROSSOVER", "COST_STOPWATCH", "DEPTH", "GRADIENTS", "GRADIENT_DEPENDENCY", "GRADIENT_RECALL",
           "LESSONS", "LOOKUP", "LessonSpec"]


def no_figures(view) -> None:
    """A lesson whose sections draw straight from its view."""


@dataclass(frozen=True)
class LessonSpec:
    """A lesson as data: `view(settings)` returns plain arrays (numpy, read-only); `figures(view)`
    returns what the sections draw (Plotly figures, Altair charts, frames), never changed once made."""

    page: str  # its url_path
    settings: type
    view: Callable
    figures: Callable = no_figures
    section: str | None = None  # a section's own settings and view (a part of the page's lesson)

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

LOOKUP = LessonSpec("lookup", LookupSettings, lookup_view, lookup_figures)

COST = LessonSpec("cost", cost.CostSettings, cost.cost_view, cost_figures.cost_figures)
COST_CROSSOVER = LessonSpec("cost", cost.CrossoverSettings, cost.crossover_view, cost_figures.crossover_figures,
                            section="crossover")
COST_STOPWATCH = LessonSpec("cost", cost.StopwatchSettings, cost.stopwatch_view,
                            functools.partial(cost_figures.stopwatch_figures, labels=TIMED_LAYERS), section="stopwatch")

LESSONS: tuple[LessonSpec, ...] = (DEPTH, GRADIENTS, GRADIENT_DEPENDENCY, GRADIENT_RECALL, LOOKUP, COST,
                                   COST_CROSSOVER, COST_STOPWATCH)
