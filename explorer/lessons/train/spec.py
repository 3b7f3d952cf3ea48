"""The live-training lesson on the runtime: its view at a moment of a run, and the job its button starts."""

from explorer.kit.spec import LessonSpec, LiveSpec

from . import figures
from . import view as train
from .claims import TRAIN_CLAIMS

TRAIN = LessonSpec("train", train.TrainSettings, train.train_view, figures.train_figures, claims=TRAIN_CLAIMS,
                   live=LiveSpec(lambda s: s.job, train.at_moment, start=lambda s: "Race" if s.race else "Train"))
SPECS = (TRAIN,)
