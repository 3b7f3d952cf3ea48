"""The block lesson on the runtime: one forward pass of the coreference encoder, stage by stage."""

from explorer.kit.spec import LessonSpec
from explorer.training.pretrained import PretrainedModelError

from .claims import BLOCK_CLAIMS
from .figures import block_figures
from .view import BlockSettings, block_view

BLOCK = LessonSpec("block", BlockSettings, block_view, block_figures, claims=BLOCK_CLAIMS,
                   failures=(PretrainedModelError,))
SPECS = (BLOCK,)
