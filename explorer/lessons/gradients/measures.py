"""What the gradient-flow lesson shows, computed and cached: pure torch + numpy, no Streamlit.

* `gradient_curves`: log10 ‖∂L/∂x_t‖ for a tanh RNN, an LSTM, a GRU and a causal attention layer on
  the same inputs, over several seeds (the recurrent ones by `explorer.analysis.bptt`, exact at any
  length; attention by autograd).
* `dependency_views` (explorer.analysis.dependency_views): ‖∂y_t/∂x_s‖ for a recurrent network, the causal
  attention layer and the same
  layer unmasked (`explorer.analysis.dependency`).
* `recall_accuracy`: the shipped recall models' accuracy per distance, evaluated once per process.

The depth lesson's curves are in `explorer.lessons.depth.view`.  Every cached function returns read-only
numpy arrays: the caches are shared by all sessions.
"""

from __future__ import annotations

import dataclasses
import itertools
import types
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch

from explorer.analysis.bptt import recurrent_gate_means, recurrent_log_gradient_norms
from explorer.analysis.dependency_views import DependencyViews, dependency_views
from explorer.analysis.gradients import (
    INPUT_SEED_OFFSET,
    build_sequence_model,
    forget_gate_values,
    input_gradient_norms,
    random_sequence,
    spectral_radius,
)
from explorer.caching import bounded_cache
from explorer.model.building import seeded
from explorer.model.rnn import RECURRENT_KINDS
from explorer.pieces import piece
from explorer.training.pretrained import build_model, distance_band_edges, load_model, recall_correct

__all__ = [
    "KIND_LABELS",
    "LEARNING_STEPS",
    "RECALL_MODELS",
    "DependencyViews",
    "GradientCurves",
    "RecallAccuracy",
    "TrainedGates",
    "accuracy_bands",
    "binned_accuracy",
    "dependency_views",
    "gain_probe",
    "gradient_curves",
    "orders_between",
    "path_lengths",
    "recall_accuracy",
    "recurrent_radius",
    "summarize_log_norms",
    "trained_forget_gates",
]

# The models compared, in `explorer.analysis.gradients.SEQUENCE_MODEL_KINDS` order, as the page names them.
KIND_LABELS = {"rnn": "tanh RNN", "lstm": "LSTM", "gru": "GRU", "transformer": "causal attention"}
# The recall task's shipped models, in the order the lesson draws them.
RECALL_MODELS = {
    "recall-rnn": "tanh RNN",
    "recall-lstm": "LSTM",
    "recall-gru": "GRU",
    "recall-sinusoidal-h4-l2": "causal transformer",
}


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


# --- gradient against position ---------------------------------------------------------------------


def _transformer_log_gradient_norms(width: int, T: int, seeds: tuple[int, ...]) -> np.ndarray:
    rows = []
    for s in seeds:
        model = build_sequence_model("transformer", width, seed=s).requires_grad_(False)  # ours: no weight grads
        norms = input_gradient_norms(model, random_sequence(T, width, seed=INPUT_SEED_OFFSET + s))
        with np.errstate(divide="ignore"):
            rows.append(np.log10(norms))
    return np.array(rows)


def summarize_log_norms(log10_norms: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Across seeds (axis 0): mean of log10 (the geometric mean of the norms) and mean ± one
    standard deviation of log10.  A position where any seed's gradient is exactly 0 gets −inf."""
    log10_norms = np.asarray(log10_norms, dtype=np.float64)
    zero = np.isneginf(log10_norms).any(axis=0)
    finite = np.where(np.isfinite(log10_norms), log10_norms, 0.0)
    mean = finite.mean(axis=0)
    spread = finite.std(axis=0)
    mean = np.where(zero, -np.inf, mean)
    return mean, np.where(zero, -np.inf, mean - spread), np.where(zero, -np.inf, mean + spread)


@dataclass(frozen=True)
class GradientCurves:
    """log10 ‖∂L/∂x_t‖ per kind, each (n_seeds, T), −inf where exactly 0.  Positions t = 0 … T−1;
    the loss reads the last output, y_{T−1}."""

    T: int
    width: int
    init: str
    gain: float
    bptt_window: int | None
    seeds: tuple[int, ...]
    log10_norms: dict[str, np.ndarray]
    forget_bias: float = 0.0  # added to the LSTM's forget-gate bias (0: PyTorch's draws)
    # "lstm": its mean forget gate, "gru": its mean update gate (`recurrent_gate_means`)
    gates: Mapping = dataclasses.field(default_factory=lambda: types.MappingProxyType({}))
    radius: float = float("nan")  # the tanh RNN's W_hh: its spectral radius, mean over seeds

    def summary(self, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mean, low, high) of log10 over seeds, see `summarize_log_norms`."""
        return summarize_log_norms(self.log10_norms[kind])


@bounded_cache(32, max_bytes=8_000_000)
def gradient_curves(
    T: int = 64,
    width: int = 32,
    init: str = "default",
    gain: float = 1.0,
    bptt_window: int | None = None,
    n_seeds: int = 3,
    forget_bias: float = 0.0,
) -> GradientCurves:
    """The four models on the same inputs (seed s: model seed s, input seed 1000 + s), cached.  Each
    model is one piece of work (explorer.pieces), short even at the page's largest settings
    (benchmarks/RESULTS.md, phase heavy).  forget_bias is added to the LSTM's forget-gate bias
    (`build_sequence_model`); with the curves: the gated networks' mean state-carrying gate
    (`recurrent_gate_means`) and the tanh RNN's recurrent spectral radius (`recurrent_radius`)."""
    if not 2 <= T <= 4096 or not 1 <= width <= 512 or not 1 <= n_seeds <= 16:
        raise ValueError("T must be 2–4096, width 1–512 and n_seeds 1–16")
    seeds = tuple(range(n_seeds))
    norms = {
        kind: _frozen(piece(recurrent_log_gradient_norms, kind, width, T, init=init, gain=gain, seeds=seeds,
                            bptt_window=bptt_window, forget_bias=forget_bias))
        for kind in RECURRENT_KINDS
    }
    norms["transformer"] = _frozen(piece(_transformer_log_gradient_norms, width, T, seeds))
    gates = {kind: piece(recurrent_gate_means, kind, width, T, init=init, gain=gain, seeds=seeds,
                         forget_bias=forget_bias) for kind in ("lstm", "gru")}
    return GradientCurves(T, width, init, gain, bptt_window, seeds, norms, forget_bias, types.MappingProxyType(gates),
                          recurrent_radius(width, init, gain, seeds))


def recurrent_radius(width: int, init: str = "default", gain: float = 1.0, seeds: tuple[int, ...] = (0,)) -> float:
    """The spectral radius of the tanh RNN's recurrent matrix W_hh, mean over the seeds' networks
    (`build_sequence_model`): PyTorch's default draws it uniform(±1/√width), whose radius is near
    1/√3 ≈ 0.58 at any width (the circular law); orthogonal times a gain has radius exactly the gain."""
    return float(np.mean([spectral_radius(build_sequence_model("rnn", width, init=init, gain=gain, seed=s).net.cell
                                          .weight_hh) for s in seeds]))


def orders_between(log10_norms: np.ndarray, first: int, last: int) -> float | None:
    """Orders of magnitude between the gradient at `first` and at `last`, from log10 norms (seeds, T):
    the difference of the means over seeds; None where the gradient at `first` is exactly 0."""
    mean = summarize_log_norms(log10_norms)[0]
    return None if mean[first] == float("-inf") else float(mean[first] - mean[last])


@bounded_cache(32, max_bytes=100_000)
def gain_probe(T: int, width: int, n_seeds: int, probes: tuple[tuple[float, str], ...],
               forget_bias: float = 0.0) -> Mapping:
    """{(gain, kind): orders between t = 1 (0 when T ≤ 2) and t = T − 1} with orthogonal weights and no
    truncation, on gradient_curves' models and inputs (the LSTM's forget-gate bias too): what moving the
    gain there would show.  Only the networks asked for are run, one piece of work each; read-only
    (shared by every session)."""
    seeds, first = tuple(range(n_seeds)), (1 if T > 2 else 0)
    return types.MappingProxyType({
        (gain, kind): orders_between(piece(recurrent_log_gradient_norms, kind, width, T, init="orthogonal", gain=gain,
                                           seeds=seeds, bptt_window=None, forget_bias=forget_bias), first, T - 1)
        for gain, kind in probes})


def path_lengths(T: int, kind: str, n_layers: int = 1) -> np.ndarray:
    """Steps the gradient of a loss on y_{T−1} takes back to each input x_t (t = 0 … T−1).

    Recurrent: through h_{T−1}, h_{T−2}, …, h_t — T − t cell steps; the bidirectional RNN too (its
    backward state at T − 1 has read x_{T−1} alone).  Attention: one step per layer, whatever t is.
    Row T − 1 of `explorer.analysis.dependency.dependency_path_lengths` for every pair (t, s).
    """
    t = np.arange(T)
    if kind == "transformer":
        return np.full(T, n_layers)
    if kind in (*RECURRENT_KINDS, "birnn"):
        return T - t + (n_layers - 1)
    raise ValueError(f"unknown kind {kind!r}")


# --- dependency matrix -----------------------------------------------------------------------------












# --- trained models on the recall task -------------------------------------------------------------


@dataclass(frozen=True)
class RecallAccuracy:
    """Accuracy at each distance on the recall task's fixed evaluation set."""

    name: str
    distances: np.ndarray  # int
    accuracy: np.ndarray  # fraction right, per distance
    examples: np.ndarray  # evaluation examples per distance
    heldout_accuracy: float | None  # the card's overall figure, for reference


@bounded_cache(8, max_bytes=1_000_000)  # one evaluation at a time per model (warm-up and visitors)
def recall_accuracy(name: str) -> RecallAccuracy:
    """Evaluate a shipped recall model per distance, once per process (the model itself is shared
    and only read).  Raises PretrainedModelError if the model is missing or damaged (not cached,
    so a model that finishes training later is picked up)."""
    loaded = load_model(name)
    if loaded.task.name != "recall":
        raise ValueError(f"{name} is not a recall-task model")
    distance, right = recall_correct(loaded.model, loaded.task, run=piece)  # in pieces
    distances = np.unique(distance)
    return RecallAccuracy(
        name,
        _frozen(distances.astype(np.int64)),
        _frozen(np.array([right[distance == d].mean() for d in distances], dtype=np.float64)),
        _frozen(np.array([(distance == d).sum() for d in distances], dtype=np.int64)),
        loaded.card.get("heldout_accuracy"),
    )


def binned_accuracy(result: RecallAccuracy, width: int = 8) -> np.ndarray:
    """For each distance, the accuracy over its bin of `width` distances (1–8, 9–16, …), weighted
    by examples: the few examples per distance make the raw curve jumpy, the bins much less so."""
    bins = (result.distances - 1) // width
    right = result.accuracy * result.examples
    totals = {b: (right[bins == b].sum(), result.examples[bins == b].sum()) for b in np.unique(bins)}
    return np.array([totals[b][0] / totals[b][1] for b in bins], dtype=np.float64)


def accuracy_bands(result: RecallAccuracy, edges: tuple[int, ...] | None = None) -> list[tuple[str, float]]:
    """Accuracy over ranges of distance [edges[i], edges[i+1]), weighted by examples, so that the
    noise of a few examples per distance averages out.  Default edges: 1, 9, 33, 65, then doubling
    (129, 257, …) up to the longest distance (`distance_band_edges`)."""
    if edges is None:
        edges = distance_band_edges(int(result.distances.max()) if len(result.distances) else 1)
    bands = []
    for lo, hi in itertools.pairwise(edges):
        chosen = (result.distances >= lo) & (result.distances < hi)
        if chosen.any():
            right = float((result.accuracy[chosen] * result.examples[chosen]).sum())
            bands.append((f"{lo}–{hi - 1}", right / float(result.examples[chosen].sum())))
    return bands


@dataclass(frozen=True)
class TrainedGates:
    """A shipped LSTM's forget gates on its task's evaluation inputs (every position up to the '?'),
    and those of a freshly initialised LSTM of the same shape (PyTorch's default, the training's start)."""

    name: str
    trained: float  # mean forget gate, trained
    initial: float  # mean forget gate, freshly initialised
    trained_open: float  # fraction of the trained gates' values above 0.9
    trained_bias: float  # mean forget-gate bias (b_ih + b_hh), trained


@torch.no_grad()
def _forget_gates(model, inputs: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """A RecurrentTagger LSTM's forget gates at the valid positions of `inputs`: (positions, hidden)."""
    return forget_gate_values(model.rnn.cell, model.embed(inputs))[valid]


@bounded_cache(4, max_bytes=10_000)
def trained_forget_gates(name: str = "recall-lstm") -> TrainedGates:
    """What training did to a shipped LSTM's forget gates, once per process.  The fresh LSTM is built
    as training builds it (`explorer.training.train`: under its card's seed, PyTorch's initialisation);
    both run on the same evaluation inputs.  Raises PretrainedModelError if the model is missing."""
    loaded = load_model(name)
    if loaded.card["kind"] != "lstm":
        raise ValueError(f"{name} is not an LSTM")
    with seeded(loaded.card["seed"]):
        fresh = build_model("lstm", loaded.task, loaded.card["config"])
    batch = loaded.task.evaluation()
    order = torch.argsort(batch.distance, stable=True)
    values = ([], [])
    for start in range(0, len(order), 128):  # chunks of similar distances, each cut at its longest '?'
        rows = order[start:start + 128]
        length = int(batch.distance[rows].max()) + 1
        inputs, valid = batch.inputs[rows, :length], batch.valid[rows, :length]
        for model, into in zip((loaded.model, fresh), values, strict=True):
            into.append(piece(_forget_gates, model, inputs, valid))
    trained, initial = (torch.cat(parts) for parts in values)
    cell = loaded.model.rnn.cell
    hidden = cell.hidden_size
    bias = (cell.bias_ih + cell.bias_hh)[hidden:2 * hidden].detach()
    return TrainedGates(name, float(trained.mean()), float(initial.mean()), float((trained > 0.9).double().mean()),
                        float(bias.mean()))


LEARNING_STEPS = (100, 200, 400, 600)  # training steps at which the recall lesson compares the models


def recall_learning(name: str, steps: tuple[int, ...] = LEARNING_STEPS) -> dict[int, dict[str, float]]:
    """From a shipped recall model's card: held-out accuracy per distance band after each of `steps`
    training steps ({step: {band: accuracy}}), where the card recorded them; {} for an older card."""
    curve = load_model(name).card.get("learning_curve") or {}
    recorded = curve.get("steps", [])
    return {step: {band: values[recorded.index(step)] for band, values in curve.get("accuracy", {}).items()}
            for step in steps if step in recorded}
