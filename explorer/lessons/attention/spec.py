"""The attention lesson on the runtime: the page's view and the comparison section."""

from explorer.kit.spec import LessonSpec

from . import figures
from . import view as attention
from .claims import ATTENTION_CLAIMS

ATTENTION = LessonSpec("attention", attention.AttentionSettings, attention.attention_lesson_view,
                       figures.attention_figures, claims=ATTENTION_CLAIMS)
ATTENTION_COMPARE = LessonSpec("attention", attention.CompareSettings, attention.compare_view,
                               figures.compare_figures, section="compare")
SPECS = (ATTENTION, ATTENTION_COMPARE)
