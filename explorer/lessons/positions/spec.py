"""The positions lesson on the runtime: the matrices, the shipped models and the relative schemes."""

from explorer.kit.spec import LessonSpec
from explorer.training.pretrained import PretrainedModelError

from . import claims, figures
from . import view as positions

POSITIONS = LessonSpec("positions", positions.PositionSettings, positions.position_view,
                       figures.position_figures, claims=claims.POSITION_CLAIMS)
POSITION_MODELS = LessonSpec("positions", positions.ModelSettings, positions.models_view,
                             figures.model_figures, section="models", claims=claims.MODEL_CLAIMS,
                             failures=(PretrainedModelError,))
POSITION_RELATIVE = LessonSpec("positions", positions.RelativeSettings, positions.relative_view,
                               figures.relative_figures, section="relative", claims=claims.RELATIVE_CLAIMS)
SPECS = (POSITIONS, POSITION_MODELS, POSITION_RELATIVE)
