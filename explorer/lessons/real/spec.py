"""The real-model lesson on the runtime: MiniLM's heads, the "it" pair's referent heads, its position tables."""

from explorer.kit.spec import LessonSpec
from explorer.training.pretrained import PretrainedModelError

from . import figures
from . import view as real

REAL = LessonSpec("real", real.RealSettings, real.lesson_view, figures.real_figures, claims=real.REAL_CLAIMS,
                  failures=(PretrainedModelError,))  # MiniLMError is one
REAL_REFERENT = LessonSpec("real", real.ReferentSettings, real.referent_view, figures.referent_figures,
                           section="referent", claims=real.REFERENT_CLAIMS, failures=(PretrainedModelError,))
REAL_TABLES = LessonSpec("real", real.TableSettings, real.table_view, figures.table_figures, section="positions",
                         claims=real.TABLE_CLAIMS, failures=(PretrainedModelError,))
SPECS = (REAL, REAL_REFERENT, REAL_TABLES)
