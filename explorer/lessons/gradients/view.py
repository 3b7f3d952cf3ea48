"""The gradient-flow lesson, declared: its settings (the controls), its views (settings → arrays),
one for the page and one per section with settings of its own.  The runtime (explorer/serve)
caches them; explorer/lessons/gradients/gradients.py draws them."""

from __future__ import annotations

import types
from dataclasses import dataclass

import numpy as np

from explorer.kit.claims import Claim, power_of_ten
from explorer.kit.settings import setting
from explorer.lessons.gradients.measures import (
    KIND_LABELS,
    RECALL_MODELS,
    DependencyViews,
    GradientCurves,
    TrainedGates,
    accuracy_bands,
    binned_accuracy,
    dependency_views,
    gain_probe,
    gradient_curves,
    orders_between,
    path_lengths,
    recall_accuracy,
    recall_learning,
    trained_forget_gates,
)
from explorer.model.rnn import RECURRENT_KINDS
from explorer.training.pretrained import PretrainedModelError, load_model
from explorer.training.tasks import RecallTask

__all__ = [
    "DEPENDENCY_CLAIMS",
    "DEPENDENCY_LABELS",
    "DEPENDENCY_WIDTH",
    "GRADIENT_CLAIMS",
    "KIND_LABELS",
    "ORTHOGONAL_REFERENCE",
    "TRAINED_LSTM",
    "TRY_GAINS",
    "TRY_PROBES",
    "DependencySettings",
    "GradientSettings",
    "GradientView",
    "RecallSettings",
    "RecallView",
    "dependency_numbers",
    "dependency_view",
    "gates_compared",
    "gradient_view",
    "loop_dependence",
    "orthogonal_reference",
    "recall_view",
    "try_gains",
]

DEPENDENCY_WIDTH = 16
DEPENDENCY_LABELS = {**KIND_LABELS, "birnn": "bidirectional RNN"}


def _orthogonal(settings) -> bool:
    return settings.init == "orthogonal"


@dataclass(frozen=True)
class GradientSettings:
    T: int = setting(64, "Sequence length T", url="T", options=(8, 16, 32, 64, 128, 256, 512))
    width: int = setting(32, "Width (size of x_t and of the state)", url="width", options=(8, 16, 32, 64))
    init: str = setting("default", "Recurrent weights W_hh", url="init", options=("default", "orthogonal"),
                        widget="radio", help="default: PyTorch's initialisation, every weight uniform(±1/√H); the "
                        "tanh RNN's W_hh then has a spectral radius near 1/√3 ≈ 0.58 (the caption under the chart "
                        "gives it). orthogonal: every recurrent matrix (one per gate) is a random orthogonal matrix "
                        "times the gain below.")
    gain: float = setting(1.0, "Orthogonal gain", url="gain", bounds=(0.1, 8.0, 0.1), enabled=_orthogonal,
                          help="Below 1 the recurrent matrix shrinks the state (and its gradient) at every step; "
                          "above 1 it stretches it. Try 1.6, 3 and 6: the reading under the chart says what "
                          "each does at this length and width.")
    # The forget gate: Gers, Schmidhuber & Cummins 2000 (Neural Computation 12(10), "Learning to forget").
    # +1: "adding a bias of 1 to the LSTM's forget gate" (Jozefowicz, Zaremba & Sutskever 2015, ICML, abstract).
    forget_bias: float = setting(1.0, "LSTM forget-gate bias", url="forget_bias", bounds=(0.0, 5.0, 0.5),
                                 help="Added to the bias of the LSTM's forget gate f, which multiplies the cell "
                                 "state carried to the next step (Gers, Schmidhuber & Cummins 2000). 0 is "
                                 "PyTorch's default (both biases drawn from uniform(±1/√H), so f starts near "
                                 "0.5); +1 is the value practitioners usually add (Jozefowicz, Zaremba & "
                                 "Sutskever 2015). The tanh RNN and the GRU have no forget gate: it does not "
                                 "change them (the GRU's update gate keeps PyTorch's default).")
    window: str = setting("full", "Truncated BPTT window", url="bptt", widget="select_slider",
                          options=("full", "1", "2", "4", "8", "16", "32", "64", "128", "256"),
                          help="Back-propagate through only the last n steps, as recurrent networks are "
                          "usually trained; 'full' goes back to the start.")
    n_seeds: int = setting(3, "Random seeds", url="seeds", bounds=(1, 5, 1),
                           help="Each seed draws new weights and a new input; the line is the mean of "
                           "log10 ‖∂L/∂x_t‖ and the band ± one standard deviation.")

    @property
    def effective_gain(self) -> float:
        """The gain the recurrent weights get: the slider's only for orthogonal weights."""
        return self.gain if _orthogonal(self) else 1.0


@dataclass(frozen=True)
class GradientView:
    """The four networks' gradient curves, the path lengths, and the orders of magnitude between
    the gradient at t = `first` and at t = T − 1 (`change[kind]`, None where the window cuts it to 0)."""

    settings: GradientSettings
    curves: GradientCurves
    paths: types.MappingProxyType  # kind -> path length per position
    first: int
    change: types.MappingProxyType  # kind -> float | None


def gradient_view(settings: GradientSettings) -> GradientView:
    window = None if settings.window == "full" else int(settings.window)
    curves = gradient_curves(settings.T, settings.width, settings.init, settings.effective_gain, window,
                             settings.n_seeds, forget_bias=settings.forget_bias)
    first, last = (1 if settings.T > 2 else 0), settings.T - 1
    change = {kind: orders_between(curves.log10_norms[kind], first, last) for kind in KIND_LABELS}
    paths = {kind: path_lengths(settings.T, kind) for kind in KIND_LABELS}
    return GradientView(settings, curves, types.MappingProxyType(paths), first, types.MappingProxyType(change))


def gates_compared(change) -> str:
    """How the gated networks' loss compares with the tanh RNN's at these settings (`GradientView.change`):
    less or more depending on the weights, the forget-gate bias and the gain (orthogonal weights near gain 1
    keep the tanh RNN's state its size), so it is read, never stated as a rule; nothing is said where the
    tanh RNN's gradient does not fade or a window cuts it."""
    rnn = change["rnn"]
    if rnn is None or rnn >= 0 or change["lstm"] is None or change["gru"] is None:
        return ""
    more = [KIND_LABELS[k] for k in ("lstm", "gru") if change[k] <= rnn]
    if not more:
        return "; here the LSTM and the GRU lose less than the tanh RNN"
    verb = "loses" if len(more) == 1 else "lose"
    return f"; here the {' and the '.join(more)} {verb} as much as the tanh RNN or more"


ORTHOGONAL_REFERENCE = 1.0  # the orthogonal gain the default weights are compared with: it keeps a vector's size


def orthogonal_reference(settings: GradientSettings) -> float | None:
    """The orders of magnitude the tanh RNN's number beside the chart would read with orthogonal W_hh at
    gain 1 (no window), at this length, width and seeds (`gain_probe`)."""
    probe = ((ORTHOGONAL_REFERENCE, "rnn"),)
    return gain_probe(settings.T, settings.width, settings.n_seeds, probe, settings.forget_bias)[probe[0]]


def loop_dependence(numbers: dict, distance: str) -> str:
    """How the loop's dependence changes with the `distance` back ("t − s") along the last row, from
    `dependency_numbers`: its straight-line fit on the log scale, across the whole row (the farthest
    input to the diagonal); within one order of magnitude it is "about as bright"."""
    orders = numbers["per_step"] * (numbers["T"] - 1)
    if orders > 1:
        return f"bright along the diagonal and fading with the distance {distance}"
    if orders < -1:
        return f"growing with the distance {distance}, brightest far from the diagonal"
    return f"about as bright at every distance {distance}"


TRY_GAINS = (1.6, 3.0, 6.0)  # the orthogonal gains the reading asks the reader to try
# what the reading says about each: the tanh RNN at the two lower, the gated networks at the highest
TRY_PROBES = ((TRY_GAINS[0], "rnn"), (TRY_GAINS[1], "rnn"), (TRY_GAINS[2], "lstm"), (TRY_GAINS[2], "gru"))


def _reads(change: float | None) -> str:
    """A number beside the chart and what it means for the line."""
    if change is None:
        return "gradient 0 (cut)"
    word = "exploding" if change > 1 else "still fading" if change < -1 else "about flat"
    return f"{change:+.1f} ({word})"


def try_gains(settings: GradientSettings) -> str:
    """The reading's sentence on what the gains of TRY_GAINS do at these settings, from `gain_probe`:
    whether a line explodes, fades or stays flat depends on the width and the length too (at width 8
    the tanh RNN's fades at every gain: its state saturates), so no gain is stated as a rule."""
    probe = gain_probe(settings.T, settings.width, settings.n_seeds, TRY_PROBES, settings.forget_bias)
    low, mid, high = TRY_GAINS
    return (f"At this length and width, with no truncation window, the tanh RNN's number beside the chart would "
            f"read {_reads(probe[low, 'rnn'])} at gain {low:g} and {_reads(probe[mid, 'rnn'])} at gain {mid:g}; at "
            f"gain {high:g} the LSTM's would read {_reads(probe[high, 'lstm'])} and the GRU's "
            f"{_reads(probe[high, 'gru'])}")


@dataclass(frozen=True)
class DependencySettings:
    """Section 3's own settings; `init` and `gain` follow the sidebar's."""

    init: str = "default"
    gain: float = 1.0
    forget_bias: float = 1.0
    T: int = setting(32, "Sequence length for the matrices", url="dep_T", options=(8, 16, 24, 32, 48, 64))
    kind: str = setting("rnn", "Recurrent network in the matrices", url="dep_kind",
                        options=(*RECURRENT_KINDS, "birnn"), widget="radio",
                        help="birnn: a tanh RNN run both ways (as torch's nn.RNN(bidirectional=True)); each output "
                             "reads the forward and the backward state.")


def dependency_view(settings: DependencySettings) -> tuple[tuple[str, np.ndarray], ...]:
    """(title, ‖∂y_t/∂x_s‖) for the loop, causal attention and unmasked attention."""
    gain = settings.gain if settings.init == "orthogonal" else 1.0
    views: DependencyViews = dependency_views(settings.kind, settings.T, DEPENDENCY_WIDTH, settings.init, gain,
                                              forget_bias=settings.forget_bias)
    return ((f"{DEPENDENCY_LABELS[settings.kind]}: the loop", views.recurrent),
            ("causal attention: masked", views.causal), ("encoder attention: unmasked", views.unmasked))


@dataclass(frozen=True)
class RecallSettings:
    """Section 4 has no controls: the shipped recall models, evaluated once."""


@dataclass(frozen=True)
class RecallView:
    task: RecallTask
    results: tuple  # (label, RecallAccuracy) of the models that loaded
    missing: tuple[str, ...]  # Markdown: the models that did not, and why
    steps: tuple[int, ...]  # training steps of the loaded models
    learning: types.MappingProxyType  # (label, step) -> {band: accuracy}
    binned: types.MappingProxyType  # label -> accuracy over bins of 8 distances, per distance
    bands: types.MappingProxyType  # label -> [(band, accuracy)]
    gates: TrainedGates | None = None  # the trained LSTM's forget gates against a fresh one's (None: no LSTM)


def recall_view(settings: RecallSettings) -> RecallView:
    results, missing, steps, learning = [], [], set(), {}
    for name, label in RECALL_MODELS.items():
        try:
            results.append((label, recall_accuracy(name)))
        except PretrainedModelError as problem:
            missing.append(f"**{label}** (`{name}`): {problem}")
            continue
        steps.add(load_model(name).card["steps"])
        learning.update({(label, step): row for step, row in recall_learning(name).items()})
    binned = {label: binned_accuracy(result, 8) for label, result in results}
    bands = {label: accuracy_bands(result) for label, result in results}
    gates = trained_forget_gates(TRAINED_LSTM) if RECALL_MODELS[TRAINED_LSTM] in dict(results) else None
    return RecallView(RecallTask(), tuple(results), tuple(missing), tuple(sorted(steps)),
                      types.MappingProxyType(learning), types.MappingProxyType(binned), types.MappingProxyType(bands),
                      gates)


TRAINED_LSTM = "recall-lstm"  # the shipped LSTM whose forget gates section 4 compares with a fresh one's


# ---- What the lesson's sentences state about the views (explorer/kit/claims.py) ----

def _straight(mean: np.ndarray) -> tuple[float, float]:
    """(orders of magnitude lost per step back, R² of a straight line) over the finite part of a curve."""
    finite = np.isfinite(mean)
    t, y = np.arange(len(mean))[finite], mean[finite]
    if len(t) < 3 or y.var() == 0:
        return 0.0, 0.0
    slope, intercept = np.polyfit(t, y, 1)
    return float(slope), float(1 - (y - (slope * t + intercept)).var() / y.var())


def _gradient_numbers(shown) -> dict:
    view, T = shown.view, shown.settings.T
    numbers = {"T": T, "last": T - 1, "first": view.first, "forget_bias": shown.settings.forget_bias,
               "radius": view.curves.radius, "forget_gate": view.curves.gates["lstm"]}
    for kind, change in view.change.items():
        numbers[kind] = None if change is None else -change  # orders lost going back
        numbers[f"{kind}_change"] = change
    rnn_mean = view.curves.summary("rnn")[0]
    numbers["per_step"], numbers["rnn_r2"] = _straight(rnn_mean)
    numbers["factor"] = 10 ** -numbers["per_step"]
    finite = np.flatnonzero(np.isfinite(rnn_mean))
    numbers["cut"] = int(finite[0]) if len(finite) else T
    if view.change["rnn"] is not None and view.change["rnn"] > 0:
        numbers["rnn_power"] = power_of_ten(10 ** view.change["rnn"])
    return numbers


def _gradients_with(test, numbers=_gradient_numbers):
    return Claim(lambda s: bool(test(numbers(s), s)), numbers)


def _against_orthogonal(shown) -> dict:
    """`_gradient_numbers` and the orders the tanh RNN would lose with orthogonal W_hh at gain 1."""
    numbers = _gradient_numbers(shown)
    reference = orthogonal_reference(shown.settings) if numbers["rnn"] is not None else None
    numbers["orthogonal"] = None if reference is None else -reference
    numbers["ortho_gain"] = ORTHOGONAL_REFERENCE
    return numbers


def _lost(v, *kinds, above: float) -> bool:
    return all(v[k] is not None and v[k] > above for k in kinds)


def dependency_numbers(shown) -> dict:
    (_, loop), (_, causal), (_, unmasked) = shown.view
    t = shown.settings.T - 1
    row = loop[t, : t + 1]
    s = np.arange(t + 1)
    slope = np.polyfit(s[row > 0], np.log10(row[row > 0]), 1)[0] if (row > 0).sum() > 2 else 0.0
    reads = causal[t, :t]  # the last output's dependence on every earlier input
    numbers = {"T": t + 1, "per_step": float(slope), "diag": float(loop[t, t]), "att_lo": float(reads.min()),
               "att_hi": float(reads.max()), "upper": float(unmasked[np.triu_indices(t + 1, 1)].min())}
    for steps, name in ((10, "ten"), (30, "thirty")):
        numbers[name] = power_of_ten(loop[t, t - steps]) if t >= steps and loop[t, t - steps] > 0 else None
    return numbers


GRADIENT_CLAIMS = types.MappingProxyType({
    # the loop loses more than 4 orders (10,000×), each step the same factor; attention under one order; and
    # most of the loss is PyTorch's default W_hh (spectral radius < 1): orthogonal at gain 1 loses under half
    "loop_fades": _gradients_with(lambda v, s: _lost(v, "rnn", above=4) and v["rnn_r2"] > 0.98
                                  and v["transformer"] is not None and abs(v["transformer"]) < 1
                                  and s.settings.init == "default" and v["radius"] < 1
                                  and v["orthogonal"] is not None and v["orthogonal"] < v["rnn"] / 2,
                                  _against_orthogonal),
    "loop_fades_long": _gradients_with(lambda v, s: _lost(v, "rnn", "lstm", "gru", above=10) and v["rnn_r2"] > 0.98
                                       and v["transformer"] is not None and abs(v["transformer"]) < 1),
    # the tanh RNN explodes (its line rises from right to left), the gated networks change by under half as much;
    # attention stays within an order
    "explodes": _gradients_with(lambda v, s: v["rnn_change"] is not None and v["rnn_change"] > 1
                                and all(v[f"{k}_change"] is not None and abs(v[f"{k}_change"]) < v["rnn_change"] / 2
                                        for k in ("lstm", "gru"))
                                and v["transformer_change"] is not None and abs(v["transformer_change"]) < 1),
    # truncation: every recurrent gradient exactly 0 before the window; attention uncut
    "truncated": _gradients_with(lambda v, s: s.settings.window != "full"
                                 and all(v[k] is None for k in ("rnn", "lstm", "gru"))
                                 and v["cut"] == s.settings.T - int(s.settings.window)
                                 and v["transformer"] is not None),
    # the path from the loss to x₀: T steps through the loop, one through attention
    "path_lengths": Claim(lambda s: int(s.view.paths["rnn"][0]) == s.settings.T
                          and bool(np.all(np.asarray(s.view.paths["transformer"]) == 1)),
                          lambda s: {"T": s.settings.T}),
})

DEPENDENCY_CLAIMS = types.MappingProxyType({
    # with PyTorch's default W_hh the loop's dependence fades geometrically with distance; causal attention's
    # stays within 100×
    "loop_fades_attention_even": Claim(
        lambda s: (lambda v: s.settings.init == "default" and v["per_step"] > 0.1 and v["thirty"] is not None
                   and v["att_hi"] < 100 * v["att_lo"] and v["upper"] > 0)(dependency_numbers(s)), dependency_numbers),
})
