"""What the live-training lesson shows: its settings (the controls), the untrained model a run
starts from (step 0, before anyone presses Train) and the lesson's view at any moment of a run.
No Streamlit: the lesson runtime (explorer/serve) caches the view, trains the job in the server's
training manager and hands back the part of the run a session has reached (`at_moment`).

    view = train_view(TrainSettings(task="sort"))    # step 0 of every runner, the probe's tokens
    view = at_moment(view, run, index=3)             # a run's snapshots up to now, the 4th chosen
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import torch

from explorer.kit.settings import setting
from explorer.model.positional import ENCODINGS
from explorer.training.live import HELD_OUT, LIVE_TASKS, LiveSettings, Snapshot, live_task, probe, run_settings
from explorer.training.runs import LiveJob, RunView

__all__ = ["MODES", "RACE_TASKS", "LossAtStart", "TrainSettings", "TrainView", "at_moment", "first_snapshots",
           "loss_at_start", "score_gap", "train_view"]

RACE_TASKS = ("reverse", "sort")  # the recurrent baseline is an encoder–decoder
MODES = {"train": "the transformer alone", "race": "against a GRU, for the same seconds"}


def _modes(settings) -> tuple[str, ...]:
    return tuple(MODES) if settings.task in RACE_TASKS else ("train",)


@dataclass(frozen=True)
class TrainSettings:
    """The live-training lesson's controls (their URL names are the page's since it began)."""

    task: str = setting("reverse", "Task", url="task", options=LIVE_TASKS, widget="selectbox",
                        help="Reverse or sort 6 letters (encoder–decoder: the grid is cross-attention), "
                             "continue a repeated sequence (induction) or resolve “it” (coreference): the grid "
                             "is then self-attention.")
    encoding: str = setting(ENCODINGS[0], "Positional encoding", url="encoding", options=ENCODINGS,
                            widget="selectbox",
                            help="How the model learns where each token is; “none” gives it no positions at all.")
    n_heads: int = setting(1, "Heads per layer", url="heads", options=(1, 2, 4))
    n_layers: int = setting(2, "Layers", url="layers", bounds=(1, 3, 1))
    seed: int = setting(0, "Seed", url="seed", bounds=(0, 20, 1),
                        help="Draws the initial weights and the training batches: the same seed, the same run.")
    mode: str = setting("train", "Mode", url="mode", options=_modes, widget="radio",
                        captions=lambda s: tuple(MODES[m] for m in _modes(s)),
                        help="A race trains a GRU encoder–decoder with about as many parameters on the same "
                             "batches, taking turns with the transformer, each for the same seconds of training. "
                             "The GRU is an encoder–decoder, so only reverse and sort can race.")
    steps: int = setting(800, "Training steps", url="steps", options=(200, 400, 800, 1200, 1600),
                         when=lambda s: s.mode == "train",
                         help="Batches of 64 examples; the learning rate warms up, then decays to zero.")
    race_seconds: int = setting(10, "Seconds of training each", url="race_seconds", options=(5, 10, 15, 20),
                                when=lambda s: s.mode == "race")

    @property
    def race(self) -> bool:
        return self.mode == "race"

    @property
    def job(self) -> LiveJob:
        """What Train asks the server for: one run, or the race."""
        settings = LiveSettings(task=self.task, encoding=self.encoding, n_heads=self.n_heads, n_layers=self.n_layers,
                                seed=self.seed, steps=self.steps,
                                # Every sequence to reverse or sort as long as the probe's: then where
                                # each answer letter is in the input does not depend on the length,
                                # and the cross-attention forms a crisp line (found by benchmarks/train_search.py;
                                # phase train-default measures it).
                                shortest=LiveSettings.letters if self.task in RACE_TASKS else LiveSettings.shortest)
        return LiveJob.race(settings, self.race_seconds) if self.race else LiveJob.single(settings)


@dataclass(frozen=True)
class LossAtStart:
    """The untrained model's held-out loss against the cost of an even guess: `vocab` tokens the model
    chooses among (an even guess costs ln vocab per token), of which `answers` ever are an answer."""

    loss: float
    vocab: int
    answers: int

    @property
    def even(self) -> float:
        return math.log(self.vocab)

    @property
    def direction(self) -> str:
        """"above", "below" or "at" ln vocab (within 0.005)."""
        gap = self.loss - self.even
        return "at" if abs(gap) < 0.005 else "above" if gap > 0 else "below"


def loss_at_start(task_name: str, letters: int, loss: float, shortest: int = 2) -> LossAtStart:
    """The facts a sentence about the step-0 loss needs (see LossAtStart), read from the task and its
    held-out set, the one a run measures its loss on."""
    task = live_task(task_name, letters, shortest)
    targets = task.batch(HELD_OUT, torch.Generator().manual_seed(task.eval_seed)).targets
    answers = int(torch.unique(targets[targets != -100]).numel())
    return LossAtStart(float(loss), task.vocab_size, answers)


@dataclass(frozen=True)
class TrainView:
    """The lesson at one moment.  snapshots: per runner of the job, the snapshots shown (step 0 at
    least); index: the transformer's snapshot the grid shows (None: the latest).  state: untrained
    (no run watched), or the run's (queued, running, done, cancelled, failed), with its queue
    position and message."""

    job: LiveJob
    snapshots: tuple[tuple[Snapshot, ...], ...]
    queries: tuple[str, ...]
    keys: tuple[str, ...]
    start: LossAtStart
    index: int | None = None
    state: str = "untrained"
    position: int = 0
    message: str = ""

    @property
    def live(self) -> bool:
        """A run being watched as it trains (or replayed at its pace): no snapshot chosen yet."""
        return self.state != "untrained" and self.index is None

    @property
    def snapshot(self) -> Snapshot:
        """The transformer's snapshot the grid shows."""
        return self.snapshots[0][-1 if self.index is None else self.index]

    def sharpness(self) -> tuple[int, int, float]:
        """The shown snapshot's sharpest head: (layer, head) counted from 1 and its mean row maximum
        (the mean over query rows of the row's largest weight: 1 when every row rests on one cell)."""
        rows = self.snapshot.attention.max(-1).mean(-1)  # (layers, heads)
        layer, head = np.unravel_index(int(np.argmax(rows)), rows.shape)
        return int(layer) + 1, int(head) + 1, float(rows[layer, head])

    def fraction(self) -> float:
        """How far along the run is, 0–1: steps of the planned steps, or seconds of the race's."""
        done, race_seconds = [], self.job.race_seconds
        for runner, shown in zip(self.job.runners, self.snapshots, strict=True):
            if race_seconds is None:
                done.append(shown[-1].step / runner.steps)
            else:
                done.append(shown[-1].training_seconds / race_seconds)
        return float(min(1.0, max(0.0, min(done, default=0.0))))


def score_gap(attention: np.ndarray) -> float:
    """The largest difference between two scores of one row before softmax, read from the weights: softmax
    makes the ratio of two weights of a row exp(score difference), so it is the largest ln(max / min) of a row."""
    return float(np.max(np.log(attention.max(-1) / attention.min(-1))))


def first_snapshots(job: LiveJob) -> tuple[tuple[Snapshot], ...]:
    """Step 0 of every runner of the job, one tuple per runner: what the run will start from (the
    same numbers, as the run is a function of its settings)."""
    return tuple((next(run_settings(settings)),) for settings in job.runners)


def train_view(settings: TrainSettings) -> TrainView:
    """Step 0 of the settings' job (no run yet), with the probe's tokens and the step-0 loss's facts."""
    job = settings.job
    first = first_snapshots(job)
    live = job.runners[0]
    _, queries, keys = probe(live_task(live.task, live.letters, live.shortest))
    return TrainView(job, first, tuple(queries), tuple(keys),
                     loss_at_start(live.task, live.letters, first[0][0].loss, live.shortest))


def at_moment(view: TrainView, run: RunView | None, index: int | None = None) -> TrainView:
    """The lesson's view at a moment of the run: `run` holds the snapshots a session has reached
    (None: no run watched, step 0); a runner with none yet shows its step 0 (the same numbers)."""
    if run is None:
        return replace(view, index=index)
    snapshots = tuple(shown or first for shown, first in zip(run.snapshots, view.snapshots, strict=True))
    return replace(view, snapshots=snapshots, index=index, state=run.state, position=run.position,
                   message=run.message)
