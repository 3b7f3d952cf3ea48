"""Every lesson on the runtime, declared: its page, its settings dataclass (the controls), its view
(settings → arrays) and its figures (view → figures, made once per setting and shared).  A lesson
that trains on the server declares its job too (`LiveSpec`, served by explorer/serve/live.py)."""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..analysis.timing import TIMED_LAYERS
from ..figures import attention as attention_figures
from ..figures import cost as cost_figures
from ..figures import decoder_lesson as decoder_figures
from ..figures import depth as depth_figures
from ..figures import encoders as encoder_figures
from ..figures import gradients as gradient_figures
from ..figures import length as length_figures
from ..figures import position_lesson as position_figures
from ..figures import real_lesson as real_figures
from ..figures import train as train_figures
from ..figures.lookup import lookup_figures
from ..training.pretrained import PretrainedModelError
from ..views import attention_lesson as attention
from ..views import cost_lesson as cost
from ..views import decoder_lesson as decoder
from ..views import decoder_steps, encoder_steps, encoders, length, length_parts, length_steps, position_facts, train
from ..views import gradient_lesson as gradients
from ..views import position_lesson as positions
from ..views import real_lesson as real
from ..views.attention_steps import ATTENTION_CLAIMS
from ..views.claims import Claim
from ..views.depth import DEPTH_CLAIMS, DepthSettings, depth_view
from ..views.lookup import LOOKUP_CLAIMS, LookupSettings, lookup_view
from ..views.train_steps import TRAIN_CLAIMS

__all__ = ["ATTENTION", "ATTENTION_COMPARE", "COST", "COST_CROSSOVER", "COST_STOPWATCH", "DECODER",
           "DECODER_ARCHITECTURES", "DECODER_CACHE", "DEPTH", "ENCODERS", "ENCODER_BIRNN", "ENCODER_SEARCH",
           "ENCODER_SIMILARITY", "ENCODER_SINKS", "GRADIENTS", "GRADIENT_DEPENDENCY", "GRADIENT_RECALL", "LENGTH",
           "LENGTH_GQA", "LENGTH_MEMORY", "LENGTH_TILED", "LENGTH_WINDOW", "LESSONS", "LOOKUP", "POSITIONS",
           "POSITION_MODELS", "POSITION_RELATIVE", "REAL", "REAL_REFERENT", "REAL_TABLES", "TRAIN", "LessonSpec",
           "LiveSpec"]


NO_CLAIMS: Mapping[str, Claim] = types.MappingProxyType({})


def no_figures(view) -> None:
    """A lesson whose sections draw straight from its view."""


def train_button(settings) -> str:
    return "Train"


@dataclass(frozen=True)
class LiveSpec:
    """A lesson that trains on the server's training manager (explorer.training.runs): `job(settings)`
    is what its start button asks for (a LiveJob: equal jobs share one run), `at(view, run, index)`
    the lesson's view at a moment of that run (run: a RunView holding the snapshots the session has
    reached, or None before any run; index: the snapshot chosen to replay, None for the latest).
    `start(settings)` is the start button's label.  The runtime's notes ("queue full", "client busy",
    "gone") are sections of the lesson's prose, app_pages/lessons/<page>.md."""

    job: Callable
    at: Callable
    start: Callable[[object], str] = train_button


@dataclass(frozen=True)
class LessonSpec:
    """A lesson as data: `view(settings)` returns plain arrays (numpy, read-only); `figures(view)`
    returns what the sections draw (Plotly figures, Altair charts, frames), never changed once made."""

    page: str  # its url_path
    settings: type
    view: Callable
    figures: Callable = no_figures
    section: str | None = None  # a section's own settings and view (a part of the page's lesson)
    # what its sentences state, as predicates (explorer/views/claims.py); not part of its identity
    claims: Mapping[str, Claim] = field(default_factory=lambda: NO_CLAIMS, compare=False)
    failures: tuple[type[Exception], ...] = ()  # what its view may raise for the user to read (a damaged file)
    live: LiveSpec | None = None  # a lesson that trains on the server: its key section shows the run

    @property
    def name(self) -> str:
        return self.page if self.section is None else f"{self.page}/{self.section}"


DEPTH = LessonSpec("depth", DepthSettings, depth_view, depth_figures.depth_figures, claims=DEPTH_CLAIMS)

GRADIENTS = LessonSpec("gradients", gradients.GradientSettings, gradients.gradient_view,
                       functools.partial(gradient_figures.gradient_figures, labels=gradients.KIND_LABELS),
                       claims=gradients.GRADIENT_CLAIMS)
GRADIENT_DEPENDENCY = LessonSpec("gradients", gradients.DependencySettings, gradients.dependency_view,
                                 gradient_figures.dependency_figures, section="dependency",
                                 claims=gradients.DEPENDENCY_CLAIMS)
GRADIENT_RECALL = LessonSpec("gradients", gradients.RecallSettings, gradients.recall_view,
                             gradient_figures.recall_figures, section="recall")

ATTENTION = LessonSpec("attention", attention.AttentionSettings, attention.attention_lesson_view,
                       attention_figures.attention_figures, claims=ATTENTION_CLAIMS)
ATTENTION_COMPARE = LessonSpec("attention", attention.CompareSettings, attention.compare_view,
                               attention_figures.compare_figures, section="compare")
DECODER = LessonSpec("decoder", decoder.DecoderSettings, decoder.decoder_view, decoder_figures.decoder_figures,
                     claims=decoder_steps.DECODER_CLAIMS)
DECODER_CACHE = LessonSpec("decoder", decoder.CacheSettings, decoder.cache_view, decoder_figures.cache_figures,
                           section="cache", claims=decoder_steps.CACHE_CLAIMS)
DECODER_ARCHITECTURES = LessonSpec("decoder", decoder.ArchitectureSettings, decoder.architecture_view,
                                   decoder_figures.architecture_figures, section="architectures",
                                   claims=decoder_steps.ARCHITECTURE_CLAIMS)

LOOKUP = LessonSpec("lookup", LookupSettings, lookup_view, lookup_figures, claims=LOOKUP_CLAIMS)

COST = LessonSpec("cost", cost.CostSettings, cost.cost_view, cost_figures.cost_figures, claims=cost.COST_CLAIMS)
COST_CROSSOVER = LessonSpec("cost", cost.CrossoverSettings, cost.crossover_view, cost_figures.crossover_figures,
                            section="crossover")
COST_STOPWATCH = LessonSpec("cost", cost.StopwatchSettings, cost.stopwatch_view,
                            functools.partial(cost_figures.stopwatch_figures, labels=TIMED_LAYERS), section="stopwatch")

POSITIONS = LessonSpec("positions", positions.PositionSettings, positions.position_view,
                       position_figures.position_figures, claims=position_facts.POSITION_CLAIMS)
POSITION_MODELS = LessonSpec("positions", positions.ModelSettings, positions.models_view,
                             position_figures.model_figures, section="models", claims=position_facts.MODEL_CLAIMS,
                             failures=(PretrainedModelError,))
POSITION_RELATIVE = LessonSpec("positions", positions.RelativeSettings, positions.relative_view,
                               position_figures.relative_figures, section="relative",
                               claims=position_facts.RELATIVE_CLAIMS)

REAL = LessonSpec("real", real.RealSettings, real.lesson_view, real_figures.real_figures, claims=real.REAL_CLAIMS,
                  failures=(PretrainedModelError,))  # MiniLMError is one
REAL_REFERENT = LessonSpec("real", real.ReferentSettings, real.referent_view, real_figures.referent_figures,
                           section="referent", claims=real.REFERENT_CLAIMS, failures=(PretrainedModelError,))
REAL_TABLES = LessonSpec("real", real.TableSettings, real.table_view, real_figures.table_figures, section="positions",
                         claims=real.TABLE_CLAIMS, failures=(PretrainedModelError,))

TRAIN = LessonSpec("train", train.TrainSettings, train.train_view, train_figures.train_figures,
                   claims=TRAIN_CLAIMS,
                   live=LiveSpec(lambda s: s.job, train.at_moment, start=lambda s: "Race" if s.race else "Train"))

ENCODERS = LessonSpec("encoders", encoders.EncoderSettings, encoders.encoder_view, encoder_figures.encoder_figures,
                      claims=encoder_steps.ENCODER_CLAIMS)
ENCODER_SIMILARITY = LessonSpec("encoders", encoders.SimilaritySettings, encoders.similarity_view,
                                encoder_figures.similarity_figures, section="similarity",
                                claims=encoder_steps.SIMILARITY_CLAIMS)
ENCODER_SEARCH = LessonSpec("encoders", encoders.SearchSettings, encoders.search_view, encoder_figures.search_figures,
                            section="search", claims=encoder_steps.SEARCH_CLAIMS)
ENCODER_SINKS = LessonSpec("encoders", encoders.SinkSettings, encoders.sink_view, encoder_figures.sink_figures,
                           section="sinks", claims=encoder_steps.SINK_CLAIMS)
ENCODER_BIRNN = LessonSpec("encoders", encoders.BiRNNSettings, encoders.birnn_view, encoder_figures.birnn_figures,
                           section="birnn", claims=encoder_steps.BIRNN_CLAIMS)

LENGTH = LessonSpec("length", length.LengthSettings, length.length_view,
                    functools.partial(length_figures.length_figures, labels=length.ENCODING_LABELS),
                    claims=types.MappingProxyType({**length.LENGTH_CLAIMS, **length_steps.LENGTH_CLAIMS}))
LENGTH_MEMORY = LessonSpec("length", length.MemorySettings, length.memory_view, length_figures.memory_figures,
                           section="memory", failures=(PretrainedModelError,), claims=length_steps.MEMORY_CLAIMS)
LENGTH_GQA = LessonSpec("length", length_parts.GqaSettings, length_parts.gqa_view, length_figures.gqa_figures,
                        section="gqa", claims=length_steps.GQA_CLAIMS)
LENGTH_TILED = LessonSpec("length", length_parts.TiledSettings, length_parts.tiled_view,
                          length_figures.tiled_figures, section="tiled", claims=length_steps.TILED_CLAIMS)
LENGTH_WINDOW = LessonSpec("length", length_parts.WindowSettings, length_parts.window_view,
                           length_figures.window_figures, section="window", claims=length_steps.WINDOW_CLAIMS)

LESSONS: tuple[LessonSpec, ...] = (
    LOOKUP, ATTENTION, ATTENTION_COMPARE, DECODER, DECODER_CACHE, DECODER_ARCHITECTURES, POSITIONS, POSITION_MODELS,
    POSITION_RELATIVE, GRADIENTS, GRADIENT_DEPENDENCY, GRADIENT_RECALL, DEPTH, COST, COST_CROSSOVER, COST_STOPWATCH,
    TRAIN, REAL, REAL_REFERENT, REAL_TABLES, ENCODERS, ENCODER_SIMILARITY, ENCODER_SEARCH, ENCODER_SINKS,
    ENCODER_BIRNN, LENGTH, LENGTH_MEMORY, LENGTH_GQA, LENGTH_TILED, LENGTH_WINDOW,
)
