"""Every lesson on the runtime, declared: its page, its settings dataclass (the controls), its view
(settings → arrays) and its figures (view → figures, made once per setting and shared)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from ..figures import depth as depth_figures
from ..figures import encoders as encoder_figures
from ..figures import gradients as gradient_figures
from ..views import encoders
from ..views import gradient_lesson as gradients
from ..views.depth import DepthSettings, depth_view

__all__ = ["DEPTH", "ENCODERS", "ENCODER_BIRNN", "ENCODER_SEARCH", "ENCODER_SIMILARITY", "ENCODER_SINKS", "GRADIENTS",
           "GRADIENT_DEPENDENCY", "GRADIENT_RECALL", "LESSONS", "LessonSpec"]


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

ENCODERS = LessonSpec("encoders", encoders.EncoderSettings, encoders.encoder_view, encoder_figures.encoder_figures)
ENCODER_SIMILARITY = LessonSpec("encoders", encoders.SimilaritySettings, encoders.similarity_view,
                                encoder_figures.similarity_figures, section="similarity")
ENCODER_SEARCH = LessonSpec("encoders", encoders.SearchSettings, encoders.search_view, encoder_figures.search_figures,
                            section="search")
ENCODER_SINKS = LessonSpec("encoders", encoders.SinkSettings, encoders.sink_view, encoder_figures.sink_figures,
                           section="sinks")
ENCODER_BIRNN = LessonSpec("encoders", encoders.BiRNNSettings, encoders.birnn_view, encoder_figures.birnn_figures,
                           section="birnn")

LESSONS: tuple[LessonSpec, ...] = (DEPTH, GRADIENTS, GRADIENT_DEPENDENCY, GRADIENT_RECALL, ENCODERS, ENCODER_SIMILARITY,
                                   ENCODER_SEARCH, ENCODER_SINKS, ENCODER_BIRNN)
