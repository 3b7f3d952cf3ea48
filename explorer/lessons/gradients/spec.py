"""The gradients lesson on the runtime: the page's view and two sections with settings of their own."""

import functools

from explorer.kit.spec import LessonSpec

from . import figures
from . import view as gradients

GRADIENTS = LessonSpec("gradients", gradients.GradientSettings, gradients.gradient_view,
                       functools.partial(figures.gradient_figures, labels=gradients.KIND_LABELS),
                       claims=gradients.GRADIENT_CLAIMS)
GRADIENT_DEPENDENCY = LessonSpec("gradients", gradients.DependencySettings, gradients.dependency_view,
                                 figures.dependency_figures, section="dependency",
                                 claims=gradients.DEPENDENCY_CLAIMS)
GRADIENT_RECALL = LessonSpec("gradients", gradients.RecallSettings, gradients.recall_view,
                             figures.recall_figures, section="recall")
SPECS = (GRADIENTS, GRADIENT_DEPENDENCY, GRADIENT_RECALL)
