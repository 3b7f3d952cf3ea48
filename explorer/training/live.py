"""Train a small model live: a generator of snapshots a page can draw while it learns.

    for snapshot in train_live("reverse"):
        print(snapshot.step, snapshot.loss, snapshot.accuracy, snapshot.attention.shape)

Every snapshot has the step, the loss and accuracy on a small fixed held-out set, and the attention
weights of one fixed probe input, shaped (layers, heads, queries, keys): cross-attention for an
encoder–decoder task (which source letter each output looks at), self-attention otherwise.  Step 0
is the untrained model.  The run is a function of its settings: the model's weights and the batches
come from generators of their own, seeded from the settings, so the same settings give the same
snapshots whatever other threads do.

`model="gru"` (or "lstm") trains the recurrent encoder–decoder baseline on the same task and the
same batches; it has no attention (`attention` is None) and, unless `hidden_size` is given, about as
many parameters as the transformer it races.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ..model.building import seeded
from ..model.parameters import count_parameters
from ..model.positional import ENCODINGS
from ..model.seq2seq import SEQ2SEQ_KINDS, RecurrentSeq2Seq
from ..model.transformer import Transformer, TransformerConfig
from .tasks import BOS, EOS, Batch, CoreferenceTask, InductionTask, SequenceToSequenceTask, Task
from .train import _learning_rate as learning_rate

__all__ = [
    "LIVE_MODELS",
    "LIVE_SECONDS",
    "LIVE_TASKS",
    "MAX_SECONDS",
    "MAX_SNAPSHOTS",
    "MAX_STEPS",
    "LiveSettings",
    "Snapshot",
    "live_task",
    "probe",
    "race",
    "race_settings",
    "run_settings",
    "train_live",
]

LIVE_TASKS = ("reverse", "sort", "induction", "coreference")
LIVE_MODELS = ("transformer", *SEQ2SEQ_KINDS)
LIVE_MAX_SEQ = 6  # letters to reverse or sort: short enough to learn in seconds
MAX_STEPS = 4000  # the caps of any run
MAX_SECONDS = 600.0
LIVE_SECONDS = 120.0  # a run's default cap on its computing time (the server's cap, runs.py)
MAX_SNAPSHOTS = 200
RACE_SNAPSHOT_EVERY = 25
HELD_OUT = 200  # examples in the held-out set (drawn from the task's evaluation seed)


def live_task(name: str, letters: int = LIVE_MAX_SEQ, shortest: int = 2) -> Task:
    """The task a live run trains on: reverse and sort of `shortest` to `letters` letters, the
    induction and coreference tasks as shipped."""
    if name in ("reverse", "sort"):
        return SequenceToSequenceTask(name, min_len=shortest, max_seq=letters)
    if name == "induction":
        return InductionTask()
    if name == "coreference":
        return CoreferenceTask()
    raise ValueError(f"unknown live task {name!r}; expected one of {LIVE_TASKS}")


@dataclass(frozen=True)
class LiveSettings:
    """Everything a live run depends on (and so the key under which a server shares it)."""

    task: str = "reverse"
    letters: int = LIVE_MAX_SEQ  # the longest sequence to reverse or sort
    shortest: int = 2  # the shortest (= letters: every sequence that long)
    model: str = "transformer"
    encoding: str = "sinusoidal"
    n_heads: int = 2
    n_layers: int = 2
    d_model: int = 32
    hidden_size: int | None = None  # recurrent models; None = about the transformer's parameter count
    steps: int = 800
    seed: int = 0
    snapshot_every: int | None = None  # None: about 32 snapshots, at least one every 100 steps
    batch_size: int = 64
    learning_rate: float = 5e-3
    schedule: str = "cosine"  # warm-up then cosine decay to 0 over `steps`, or "constant" after the warm-up
    max_seconds: float = LIVE_SECONDS

    def __post_init__(self):
        problems = []
        if self.task not in LIVE_TASKS:
            problems.append(f"task must be one of {LIVE_TASKS}")
        if not 2 <= self.letters <= 10:
            problems.append("letters must be 2–10")
        elif not 2 <= self.shortest <= self.letters:
            problems.append("shortest must be 2–letters")
        if self.model not in LIVE_MODELS:
            problems.append(f"model must be one of {LIVE_MODELS}")
        elif self.model != "transformer" and self.task not in ("reverse", "sort"):
            problems.append("the recurrent baseline is an encoder–decoder: task must be reverse or sort")
        if self.encoding not in ENCODINGS:
            problems.append(f"encoding must be one of {ENCODINGS}")
        if not (1 <= self.n_heads <= 8 and 1 <= self.n_layers <= 4 and 8 <= self.d_model <= 128):
            problems.append("n_heads must be 1–8, n_layers 1–4 and d_model 8–128")
        elif self.d_model % self.n_heads:
            problems.append("d_model must be divisible by n_heads")
        if self.hidden_size is not None and not 4 <= self.hidden_size <= 256:
            problems.append("hidden_size must be 4–256")
        if not 1 <= self.steps <= MAX_STEPS:
            problems.append(f"steps must be 1–{MAX_STEPS}")
        if not 0 <= self.seed < 2**31:
            problems.append("seed must be from 0 to 2**31 − 1")
        if self.snapshot_every is not None and not 1 <= self.snapshot_every <= self.steps:
            problems.append("snapshot_every must be 1–steps")
        if not 1 <= self.batch_size <= 512:
            problems.append("batch_size must be 1–512")
        if not 0 < self.learning_rate <= 0.1:
            problems.append("learning_rate must be in (0, 0.1]")
        if self.schedule not in ("cosine", "constant"):
            problems.append("schedule must be 'cosine' or 'constant'")
        if not 0 < self.max_seconds <= MAX_SECONDS:
            problems.append(f"max_seconds must be in (0, {MAX_SECONDS:g}]")
        if problems:
            raise ValueError("invalid live settings: " + "; ".join(problems))

    def rate(self, step: int) -> float:
        """The learning rate of step `step` (from 0): the shipped models' warm-up and cosine decay,
        or the same warm-up, then constant."""
        if self.schedule == "constant":
            return self.learning_rate * min(1.0, (step + 1) / max(1, min(50, self.steps // 20)))
        return learning_rate(step, self.steps, self.learning_rate)

    @property
    def every(self) -> int:
        """Steps between snapshots: as asked (or steps/32, at most 100), never more than MAX_SNAPSHOTS."""
        every = self.snapshot_every or min(100, max(1, round(self.steps / 32)))
        return max(every, math.ceil(self.steps / (MAX_SNAPSHOTS - 1)))


@dataclass(frozen=True)
class Snapshot:
    """One moment of a run.  loss: cross-entropy on the held-out set (teacher forcing); accuracy:
    held-out, whole sequences by greedy decoding for reverse and sort, else predicted tokens.
    attention: (layers, heads, queries, keys) for the probe, read-only (None for a recurrent model).
    seconds: the time the run has computed so far (training and these measurements);
    training_seconds: the part spent in training steps."""

    step: int
    loss: float
    accuracy: float
    attention: np.ndarray | None
    seconds: float
    training_seconds: float

    @property
    def nbytes(self) -> int:
        return 200 + (0 if self.attention is None else self.attention.nbytes)


def probe(task: Task) -> tuple[Batch, list[str], list[str]]:
    """The fixed input whose attention a live run shows: (a batch of one, query tokens, key tokens)."""
    if isinstance(task, SequenceToSequenceTask):
        letters = list("BEADFC"[: task.max_seq] if task.max_seq <= 6 else task.symbols[: task.max_seq])
        answer = task.answer(letters)
        source = torch.tensor([task.encode(letters)])
        batch = Batch(source, torch.tensor([task.encode([*answer, EOS])]), torch.ones_like(source, dtype=torch.bool),
                      torch.tensor([task.encode([BOS, *answer])]), torch.ones(1, len(letters) + 1, dtype=torch.bool))
        return batch, [BOS, *answer], letters
    if isinstance(task, CoreferenceTask):
        tokens = task.sentence("animal", "cross", "street", 0, "tired")
    else:
        tokens = task.decode(task.batch(1, torch.Generator().manual_seed(task.eval_seed + 1)).inputs[0])
    ids = torch.tensor([task.encode(tokens)])
    return Batch(ids, torch.full_like(ids, -100), torch.ones_like(ids, dtype=torch.bool)), tokens, tokens


def build(settings: LiveSettings, task: Task) -> nn.Module:
    """The freshly initialised model of a run (weights drawn from its seed)."""
    config = TransformerConfig(vocab_size=task.vocab_size, d_model=settings.d_model, n_heads=settings.n_heads,
                               n_layers=settings.n_layers, architecture=task.architecture,
                               encoding=settings.encoding, norm="pre", max_len=task.max_len)
    with seeded(settings.seed):
        if settings.model == "transformer":
            return Transformer(config)
        hidden = settings.hidden_size or matched_hidden_size(settings.model, task, config)
        return RecurrentSeq2Seq(settings.model, task.vocab_size, hidden)


def matched_hidden_size(kind: str, task: Task, config: TransformerConfig) -> int:
    """The recurrent hidden size whose model has about as many parameters as the transformer."""
    with torch.device("meta"):  # counting only: no memory, no random draws
        target = count_parameters(Transformer(config))
        return min(range(4, 257, 4), key=lambda h: abs(count_parameters(RecurrentSeq2Seq(kind, task.vocab_size, h))
                                                       - target))


def logits_of(model: nn.Module, batch: Batch) -> torch.Tensor:
    """Teacher-forced logits, whatever the model."""
    if batch.decoder_inputs is not None:
        return model(batch.inputs, batch.decoder_inputs, valid=batch.valid, target_valid=batch.decoder_valid)[0]
    return model(batch.inputs, valid=batch.valid)[0]


def loss_of(model: nn.Module, batch: Batch) -> torch.Tensor:
    return F.cross_entropy(logits_of(model, batch).flatten(0, 1), batch.targets.flatten(), ignore_index=-100)


@torch.no_grad()
def held_out(model: nn.Module, task: Task, batch: Batch) -> tuple[float, float]:
    """(loss, accuracy) on the held-out batch; whole sequences by greedy decoding for reverse and sort."""
    model.eval()
    loss = loss_of(model, batch).item()
    scored = batch.targets != -100
    if isinstance(task, SequenceToSequenceTask):
        generated, _ = model.generate(batch.inputs, batch.targets.shape[1], task.index[BOS], valid=batch.valid)
        accuracy = ((generated == batch.targets) | ~scored).all(1).float().mean().item()
    else:
        accuracy = (logits_of(model, batch).argmax(-1)[scored] == batch.targets[scored]).float().mean().item()
    model.train()
    return loss, accuracy


@torch.no_grad()
def probe_attention(model: nn.Module, batch: Batch) -> np.ndarray | None:
    """(layers, heads, queries, keys) attention of the probe, read-only; None for a recurrent model."""
    if not isinstance(model, Transformer):
        return None
    model.eval()
    if batch.decoder_inputs is not None:
        _, trace = model(batch.inputs, batch.decoder_inputs, valid=batch.valid, target_valid=batch.decoder_valid)
        weights = [layer.cross_attention.weights[0] for layer in trace.decoder_layers]
    else:
        _, trace = model(batch.inputs, valid=batch.valid)
        weights = [layer.self_attention.weights[0] for layer in trace.layers]
    model.train()
    array = torch.stack(weights).numpy().astype(np.float32)
    array.flags.writeable = False
    return array


def train_live(task: str = "reverse", *, model: str = "transformer", encoding: str = "sinusoidal", n_heads: int = 2,
               n_layers: int = 2, steps: int | None = None, seed: int = 0, snapshot_every: int | None = None,
               should_stop: Callable[[], bool] | None = None, **more) -> Iterator[Snapshot]:
    """Snapshots of a live run: step 0, every `snapshot_every` steps, and the last step.

    task: a name of LIVE_TASKS.  model: "transformer", or "gru" / "lstm" for the recurrent baseline.
    steps: None for the default (800).  `more` are the other LiveSettings (d_model, hidden_size,
    batch_size, learning_rate, schedule, max_seconds).  The run ends after `steps`, after
    `max_seconds` of computing, or when `should_stop()` turns true (asked before every step)."""
    settings = LiveSettings(task=task, model=model, encoding=encoding, n_heads=n_heads, n_layers=n_layers,
                            seed=seed, snapshot_every=snapshot_every,
                            **({} if steps is None else {"steps": steps}), **more)
    return run_settings(settings, should_stop)


def run_settings(settings: LiveSettings, should_stop: Callable[[], bool] | None = None) -> Iterator[Snapshot]:
    """train_live for ready settings."""
    should_stop = should_stop or (lambda: False)
    clock = _Clock()
    with clock.computing():
        task = live_task(settings.task, settings.letters, settings.shortest)
        model = build(settings, task)
        evaluation = task.batch(HELD_OUT, torch.Generator().manual_seed(task.eval_seed))
        probe_batch = probe(task)[0]
        optimiser = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate, weight_decay=0.01)
        batches = torch.Generator().manual_seed(settings.seed + 1)
        model.train()

    def snapshot(step: int) -> Snapshot:
        with clock.computing():
            loss, accuracy = held_out(model, task, evaluation)
            attention = probe_attention(model, probe_batch)
        return Snapshot(step, loss, accuracy, attention, clock.seconds, clock.training)

    yield snapshot(0)
    for step in range(1, settings.steps + 1):
        if should_stop():
            return
        with clock.computing(training=True):
            for group in optimiser.param_groups:
                group["lr"] = settings.rate(step - 1)
            loss = loss_of(model, task.batch(settings.batch_size, batches))
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
        out_of_time = clock.seconds >= settings.max_seconds
        if step % settings.every == 0 or step == settings.steps or out_of_time:
            yield snapshot(step)
        if out_of_time:
            return


def race_settings(settings: LiveSettings, recurrent: str = "gru") -> tuple[LiveSettings, LiveSettings]:
    """The two runners of a race on `settings`' task and seed: the transformer and the recurrent
    baseline, with the same batches and learning rate, a constant rate after the warm-up (a race is
    stopped by the clock, not by a planned number of steps) and room for as many steps as the clock
    allows."""
    common = {"steps": MAX_STEPS, "schedule": "constant", "snapshot_every": RACE_SNAPSHOT_EVERY}
    return (dataclasses.replace(settings, model="transformer", **common),
            dataclasses.replace(settings, model=recurrent, **common))


def race(runners: tuple[LiveSettings, ...], seconds: float,
         should_stop: Callable[[], bool] | None = None) -> Iterator[tuple[int, Snapshot]]:
    """Train several runs in turns, each for `seconds` of training (the held-out measurements are
    not counted): (runner index, snapshot) pairs.  The runner with the least training time so far
    goes next, so on a busy machine both suffer alike."""
    if not 0 < seconds <= MAX_SECONDS:
        raise ValueError(f"a race lasts 0–{MAX_SECONDS:g} seconds")
    running = {i: run_settings(s, should_stop) for i, s in enumerate(runners)}
    trained = dict.fromkeys(running, 0.0)
    try:
        while running:
            index = min(running, key=lambda i: (trained[i], i))
            snapshot = next(running[index], None)
            if snapshot is None:
                del running[index]
                continue
            trained[index] = snapshot.training_seconds
            yield index, snapshot
            if snapshot.training_seconds >= seconds:
                running.pop(index).close()
    finally:
        for generator in running.values():
            generator.close()


class _Clock:
    """Seconds spent inside `with clock.computing():` blocks (all the run's work) and, of those,
    inside `with clock.computing(training=True):` — so time a consumer spends between snapshots is
    not counted."""

    def __init__(self):
        self.seconds = 0.0
        self.training = 0.0

    @contextlib.contextmanager
    def computing(self, training: bool = False):
        started = time.perf_counter()
        try:
            yield
        finally:
            spent = time.perf_counter() - started
            self.seconds += spent
            self.training += spent if training else 0.0
