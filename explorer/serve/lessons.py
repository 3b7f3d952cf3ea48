"""Every lesson on the runtime, declared: its page, its settings dataclass (the controls), its view
(settings → arrays) and its figures (view → figures, made once per setting and shared)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..figures import depth as depth_figures
from ..views.depth import DepthSettings, depth_view

__all__ = ["DEPTH", "LESSONS", "LessonSpec"]


@dataclass(frozen=True)
class LessonSpec:
    """A lesson as data: `view(settings)` returns plain arrays (numpy, read-only); `figures(view)`
    returns what the sections draw (Plotly figures, Altair charts, frames), never changed once made."""

    page: str  # its url_path
    settings: type
    view: Callable
    figures: Callable


DEPTH = LessonSpec("depth", DepthSettings, depth_view, depth_figures.depth_figures)

LESSONS: tuple[LessonSpec, ...] = (DEPTH,)
