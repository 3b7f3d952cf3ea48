"""The length lesson on the runtime: past the trained length, memory, GQA, tiled attention, windows."""

import functools
import types

from explorer.kit.spec import LessonSpec
from explorer.training.pretrained import PretrainedModelError

from . import claims, figures, parts
from . import view as length

LENGTH = LessonSpec("length", length.LengthSettings, length.length_view,
                    functools.partial(figures.length_figures, labels=length.ENCODING_LABELS),
                    claims=types.MappingProxyType({**length.LENGTH_CLAIMS, **claims.LENGTH_CLAIMS}))
LENGTH_MEMORY = LessonSpec("length", length.MemorySettings, length.memory_view, figures.memory_figures,
                           section="memory", failures=(PretrainedModelError,), claims=claims.MEMORY_CLAIMS)
LENGTH_GQA = LessonSpec("length", parts.GqaSettings, parts.gqa_view, figures.gqa_figures,
                        section="gqa", claims=claims.GQA_CLAIMS)
LENGTH_TILED = LessonSpec("length", parts.TiledSettings, parts.tiled_view, figures.tiled_figures,
                          section="tiled", claims=claims.TILED_CLAIMS)
LENGTH_WINDOW = LessonSpec("length", parts.WindowSettings, parts.window_view, figures.window_figures,
                           section="window", claims=claims.WINDOW_CLAIMS)
SPECS = (LENGTH, LENGTH_MEMORY, LENGTH_GQA, LENGTH_TILED, LENGTH_WINDOW)
