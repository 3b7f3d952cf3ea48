"""The decoder lesson on the runtime: the stepping view, the KV cache and the three architectures."""

from explorer.kit.spec import LessonSpec

from . import claims, figures
from . import view as decoder

DECODER = LessonSpec("decoder", decoder.DecoderSettings, decoder.decoder_view, figures.decoder_figures,
                     claims=claims.DECODER_CLAIMS)
DECODER_CACHE = LessonSpec("decoder", decoder.CacheSettings, decoder.cache_view, figures.cache_figures,
                           section="cache", claims=claims.CACHE_CLAIMS)
DECODER_ARCHITECTURES = LessonSpec("decoder", decoder.ArchitectureSettings, decoder.architecture_view,
                                   figures.architecture_figures, section="architectures",
                                   claims=claims.ARCHITECTURE_CLAIMS)
SPECS = (DECODER, DECODER_CACHE, DECODER_ARCHITECTURES)
