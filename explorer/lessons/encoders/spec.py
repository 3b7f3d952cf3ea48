"""The encoders lesson on the runtime: pooling, similarity, search, sinks and the BiRNN."""

from explorer.kit.spec import LessonSpec

from . import claims, figures
from . import view as encoders

ENCODERS = LessonSpec("encoders", encoders.EncoderSettings, encoders.encoder_view, figures.encoder_figures,
                      claims=claims.ENCODER_CLAIMS)
ENCODER_SIMILARITY = LessonSpec("encoders", encoders.SimilaritySettings, encoders.similarity_view,
                                figures.similarity_figures, section="similarity", claims=claims.SIMILARITY_CLAIMS)
ENCODER_SEARCH = LessonSpec("encoders", encoders.SearchSettings, encoders.search_view, figures.search_figures,
                            section="search", claims=claims.SEARCH_CLAIMS)
ENCODER_SINKS = LessonSpec("encoders", encoders.SinkSettings, encoders.sink_view, figures.sink_figures,
                           section="sinks", claims=claims.SINK_CLAIMS)
ENCODER_BIRNN = LessonSpec("encoders", encoders.BiRNNSettings, encoders.birnn_view, figures.birnn_figures,
                           section="birnn", claims=claims.BIRNN_CLAIMS)
SPECS = (ENCODERS, ENCODER_SIMILARITY, ENCODER_SEARCH, ENCODER_SINKS, ENCODER_BIRNN)
