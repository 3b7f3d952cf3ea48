"""Every lesson on the runtime, declared: its page, its settings dataclass (the controls), its view
(settings → arrays) and its figures (view → figures, made once per setting and shared)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from ..figures import depth as depth_figures
from ..figures import gradients as gradient_figures
from ..figures import length as length_figures
from ..views import gradient_lesson as gradients
from ..views import length as length
from ..views import length_parts as length_parts
from ..views.depth import DepthSettings, depth_view

__all__ = ["DEPTH", "GRADIENTS", "GRADIENT_DEPENDENCY", "GRADIENT_RECALL", "LENGTH", "LENGTH_GQA", "LENGTH_MEMORY",
           "LENGTH_TILED", "LENGTH_WINDOW", "LESSONS", "LessonSpec"]


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

LENGTH = LessonSpec("length", length.LengthSettings, length.length_view,
                    functools.partial(length_figures.length_figures, labels=length.ENCODING_LABELS))
LENGTH_MEMORY = LessonSpec("length", length.MemorySettings, length.memory_view, length_figures.memory_figures,
                           section="memory")
LENGTH_GQA = LessonSpec("length", length_parts.GqaSettings, length_parts.gqa_view, length_figures.gqa_figures,
                        section="gqa")
LENGTH_TILED = LessonSpec("length", length_parts.TiledSettings, length_parts.tiled_view,
                          length_figures.tiled_figures, section="tiled")
LENGTH_WINDOW = LessonSpec("length", length_parts.WindowSettings, length_parts.window_view,
                           length_figures.window_figures, section="window")

LESSONS: tuple[LessonSpec, ...] = (DEPTH, GRADIENTS, GRADIENT_DEPENDENCY, GRADIENT_RECALL, LENGTH, LENGTH_MEMORY,
                                   LENGTH_GQA, LENGTH_TILED, LENGTH_WINDOW)
