"""The block lesson on the runtime: one forward pass of the coreference encoder, stage by stage; plain and
residual stacks, trained."""

from explorer.kit.spec import LessonSpec
from explorer.training.pretrained import PretrainedModelError

from .claims import BLOCK_CLAIMS
from .embeddings import EMBEDDING_CLAIMS, EmbeddingSettings, embedding_figures, embedding_view
from .figures import block_figures
from .norms import NORM_CLAIMS, NormSettings, norm_view
from .sampling import SAMPLE_CLAIMS, SampleSettings, sample_figures, sample_view
from .stacks import STACK_CLAIMS, StackSettings, stack_figures, stack_view
from .view import BlockSettings, block_view

BLOCK = LessonSpec("block", BlockSettings, block_view, block_figures, claims=BLOCK_CLAIMS,
                   failures=(PretrainedModelError,))
BLOCK_STACKS = LessonSpec("block", StackSettings, stack_view, stack_figures, section="stacks", claims=STACK_CLAIMS)
BLOCK_SAMPLING = LessonSpec("block", SampleSettings, sample_view, sample_figures, section="sampling",
                            claims=SAMPLE_CLAIMS, failures=(PretrainedModelError,))
BLOCK_NORMS = LessonSpec("block", NormSettings, norm_view, section="norms", claims=NORM_CLAIMS,
                         failures=(PretrainedModelError,))
BLOCK_EMBEDDINGS = LessonSpec("block", EmbeddingSettings, embedding_view, embedding_figures, section="embeddings",
                              claims=EMBEDDING_CLAIMS, failures=(PretrainedModelError,))
SPECS = (BLOCK, BLOCK_EMBEDDINGS, BLOCK_NORMS, BLOCK_STACKS, BLOCK_SAMPLING)
