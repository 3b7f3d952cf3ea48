"""What the gradient-flow and depth lessons compute: pure torch + numpy, no Streamlit.

* `gradient_curves`: log10 ‖∂L/∂x_t‖ for a tanh RNN, an LSTM, a GRU and a causal attention layer on
  the same inputs, over several seeds.  The recurrent networks are back-propagated step by step
  with the adjoint renormalised at every step (its scale kept as a logarithm), so the norms stay
  exact at any size.  Plain autograd loses them twice over: `Tensor.norm` squares the entries, so
  a gradient below about 1e-154 gets a norm of exactly 0 (a tanh RNN at T = 512 reaches 1e-188),
  and the entries themselves underflow below about 1e-308 (a tanh RNN with orthogonal gain 0.5
  gets there in ~800 steps) or overflow to inf when they explode.
* `fast_dependency_matrix`: ‖∂y_t/∂x_s‖ for every pair from a few batched backward passes instead
  of `explorer.analysis.gradients.dependency_matrix`'s torch.autograd.functional.jacobian — the same
  numbers, several times faster.
* `recall_accuracy`: the shipped recall models' accuracy per distance, evaluated once per process.
* `layer_gradient_norms`: the gradient reaching each layer's input in a deep stack, with or without
  residual connections, post-norm, pre-norm or without LayerNorm.

Every cached function returns read-only numpy arrays: the caches are shared by all sessions.
"""

from __future__ import annotations

import functools
import itertools
import math
import types
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..analysis.gradients import CausalAttentionStack, build_sequence_model, input_gradient_norms, random_sequence
from ..model.positional import sinusoidal_encoding
from ..model.rnn import RECURRENT_KINDS
from ..model.transformer import EncoderLayer
from ..training.pretrained import forward, load_model
from ..training.seeding import SEEDING_LOCK, seeded
from ..training.tasks import Batch

__all__ = [
    "DEPTH_CONFIGS",
    "DEPTH_NORMS",
    "GRADIENT_KINDS",
    "KIND_LABELS",
    "RECALL_MODELS",
    "SEEDING_LOCK",
    "DependencyViews",
    "GradientCurves",
    "RecallAccuracy",
    "UnmaskedAttentionStack",
    "accuracy_bands",
    "binned_accuracy",
    "build_layer_stack",
    "dependency_views",
    "depth_curves",
    "fast_dependency_matrix",
    "gradient_curves",
    "layer_gradient_norms",
    "path_lengths",
    "recall_accuracy",
    "recall_correct",
    "recurrent_log_gradient_norms",
    "summarize_log_norms",
]

GRADIENT_KINDS = (*RECURRENT_KINDS, "transformer")
KIND_LABELS = {"rnn": "tanh RNN", "lstm": "LSTM", "gru": "GRU", "transformer": "causal attention"}
# The recall task's shipped models, in the order the lesson draws them.
RECALL_MODELS = {
    "recall-rnn": "tanh RNN",
    "recall-lstm": "LSTM",
    "recall-gru": "GRU",
    "recall-sinusoidal-h4-l2": "causal transformer",
}
# Seeded construction goes through torch's global generator; explorer.training.seeding serialises it for all
# modules (sessions run in threads of one process and share the caches).
INPUT_SEED_OFFSET = 1000  # seed s uses model seed s and input seed 1000 + s (independent streams)
READOUT_SEED = 1234  # the same fixed read-out vector as explorer.analysis.gradients.input_gradient_norms

# The backward pass rescales its adjoint every this many steps.  One step changes the adjoint's norm
# by a bounded factor (the recurrent weights' norm, at most the page's largest gain of 8, times gate
# derivatives of at most 1), so in between float64 (1e±308) stays far from under- or overflow.
RESCALE_EVERY = 8


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _default_readout(width: int) -> torch.Tensor:
    """The fixed unit read-out vector that `input_gradient_norms` uses by default."""
    r = torch.randn(width, generator=torch.Generator().manual_seed(READOUT_SEED), dtype=torch.float64)
    return r / r.norm()


# --- gradient against position ---------------------------------------------------------------------


def _recurrent_cell(model: nn.Module) -> nn.RNNCellBase:
    return next(m for m in model.modules() if isinstance(m, nn.RNNCellBase))


def _seeded_model(kind: str, width: int, **kwargs) -> nn.Module:
    with SEEDING_LOCK:
        return build_sequence_model(kind, width, **kwargs)


def _forward(kind: str, gi_all: torch.Tensor, w_hh: torch.Tensor, b_hh: torch.Tensor) -> list[dict]:
    """Run PyTorch's RNNCell / LSTMCell / GRUCell equations, batched over seeds (each seed its own
    weights), and keep what the backward pass needs from every step.

    gi_all: (S, T, G·w) input projections x_t W_ihᵀ + b_ih.  w_hh: (S, G·w, w).  b_hh: (S, G·w).
    """
    S, T, _ = gi_all.shape
    width = w_hh.shape[-1]
    h = gi_all.new_zeros(S, width)
    c = gi_all.new_zeros(S, width)
    steps = []
    for t in range(T):
        gi = gi_all[:, t]
        gh = torch.baddbmm(b_hh[:, None], h[:, None], w_hh.transpose(1, 2))[:, 0]
        if kind == "rnn":
            h = torch.tanh(gi + gh)
            steps.append({"h": h})
        elif kind == "lstm":
            a_i, a_f, a_g, a_o = (gi + gh).chunk(4, dim=-1)
            i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
            c_prev, c = c, f * c + i * g
            tc = torch.tanh(c)
            h = o * tc
            steps.append({"i": i, "f": f, "g": g, "o": o, "c_prev": c_prev, "tc": tc})
        else:
            r_i, z_i, n_i = gi.chunk(3, dim=-1)
            r_h, z_h, n_h = gh.chunk(3, dim=-1)
            r, z = torch.sigmoid(r_i + r_h), torch.sigmoid(z_i + z_h)
            n = torch.tanh(n_i + r * n_h)
            h_prev, h = h, (1 - z) * n + z * h
            steps.append({"r": r, "z": z, "n": n, "n_h": n_h, "h_prev": h_prev})
    return steps


def _backward_step(kind: str, step: dict, d_h: torch.Tensor, d_c: torch.Tensor | None):
    """Back through one cell: the adjoints of h_t (and c_t) → (∂/∂ gate pre-activations from the
    input side, ∂/∂ gate pre-activations from the state side, ∂/∂c_{t−1})."""
    if kind == "rnn":
        d_a = d_h * (1 - step["h"] ** 2)
        return d_a, d_a, None
    if kind == "lstm":
        i, f, g, o, tc = step["i"], step["f"], step["g"], step["o"], step["tc"]
        d_c = d_c + d_h * o * (1 - tc**2)
        d_a = torch.cat([
            d_c * g * i * (1 - i),
            d_c * step["c_prev"] * f * (1 - f),
            d_c * i * (1 - g**2),
            d_h * tc * o * (1 - o),
        ], dim=-1)
        return d_a, d_a, d_c * f
    r, z, n = step["r"], step["z"], step["n"]
    d_an = d_h * (1 - z) * (1 - n**2)  # through n = tanh(n_i + r · n_h)
    d_ar = d_an * step["n_h"] * r * (1 - r)
    d_az = d_h * (step["h_prev"] - n) * z * (1 - z)
    return torch.cat([d_ar, d_az, d_an], dim=-1), torch.cat([d_ar, d_az, d_an * r], dim=-1), None


def recurrent_log_gradient_norms(
    kind: str,
    width: int,
    T: int,
    *,
    init: str = "default",
    gain: float = 1.0,
    seeds: tuple[int, ...] = (0,),
    bptt_window: int | None = None,
) -> np.ndarray:
    """log10 ‖∂L/∂x_t‖ for a recurrent model, shape (len(seeds), T); −inf where the gradient is 0.

    Seed s is `build_sequence_model(kind, width, init=init, gain=gain, seed=s)` on the input
    `random_sequence(T, width, seed=1000 + s)`, with L = r · h_{T−1} for the default read-out r —
    exactly what `input_gradient_norms` computes.  Here back-propagation through time is written
    out step by step (the cells' own derivatives, batched over seeds), and after every step the
    adjoint ∂L/∂h_t (with ∂L/∂c_t for the LSTM) is divided by its norm every RESCALE_EVERY steps,
    the divisors being summed as logarithms, so nothing underflows or overflows however long the
    sequence.  bptt_window truncates like `RecurrentNet`: the state entering step T − window is
    detached, so inputs before it get exactly 0 (−inf here).
    """
    if kind not in RECURRENT_KINDS:
        raise ValueError(f"unknown recurrent kind {kind!r}; expected one of {RECURRENT_KINDS}")
    if bptt_window is not None and bptt_window < 1:
        raise ValueError("bptt_window must be at least 1 (or None for full back-propagation)")
    cells = [_recurrent_cell(_seeded_model(kind, width, init=init, gain=gain, seed=s)) for s in seeds]
    w_ih, w_hh, b_ih, b_hh = (torch.stack([getattr(c, name).detach() for c in cells])
                              for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
    x = torch.stack([random_sequence(T, width, seed=INPUT_SEED_OFFSET + s) for s in seeds])  # (S, T, w)
    S = len(seeds)
    cut = None if bptt_window is None else T - bptt_window
    first = 0 if cut is None else max(0, cut)
    grad_norms = torch.zeros(S, T, dtype=torch.float64)  # ‖∂L/∂x_t‖ up to the scale in force at step t
    log_scales = torch.zeros(S, T, dtype=torch.float64)
    with torch.no_grad():
        steps = _forward(kind, torch.baddbmm(b_ih[:, None], x, w_ih.transpose(1, 2)), w_hh, b_hh)
        d_h = _default_readout(width).expand(S, width).clone()
        d_c = torch.zeros_like(d_h) if kind == "lstm" else None
        log_scale = torch.zeros(S, dtype=torch.float64)  # log10 of what the adjoint was divided by
        for t in reversed(range(first, T)):
            d_input, d_state, d_c = _backward_step(kind, steps[t], d_h, d_c)
            grad_norms[:, t] = torch.bmm(d_input[:, None], w_ih)[:, 0].norm(dim=-1)  # ‖∂L/∂x_t‖, scaled
            log_scales[:, t] = log_scale
            if t == cut:  # the state entering this step was detached: nothing flows further back
                break
            through_gates = torch.bmm(d_state[:, None], w_hh)[:, 0]
            # The GRU also passes h_{t−1} straight through, weighted by its update gate z.
            d_h = through_gates + d_h * steps[t]["z"] if kind == "gru" else through_gates
            if t % RESCALE_EVERY == 0:
                adjoints = [d_h] if d_c is None else [d_h, d_c]
                norm = torch.sqrt(sum(a.pow(2).sum(dim=-1) for a in adjoints))
                safe = torch.where(norm > 0, norm, torch.ones_like(norm))
                log_scale = torch.where(norm > 0, log_scale + torch.log10(safe), torch.full_like(log_scale, -math.inf))
                d_h = d_h / safe[:, None]
                d_c = None if d_c is None else d_c / safe[:, None]
    with np.errstate(divide="ignore"):
        log10_norms = np.log10(grad_norms.numpy()) + log_scales.numpy()
    log10_norms[:, :first] = -np.inf
    return log10_norms


def _transformer_log_gradient_norms(width: int, T: int, seeds: tuple[int, ...]) -> np.ndarray:
    rows = []
    for s in seeds:
        model = _seeded_model("transformer", width, seed=s).requires_grad_(False)  # ours: no weight grads
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

    def summary(self, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mean, low, high) of log10 over seeds, see `summarize_log_norms`."""
        return summarize_log_norms(self.log10_norms[kind])


@functools.lru_cache(maxsize=32)
def gradient_curves(
    T: int = 64,
    width: int = 32,
    init: str = "default",
    gain: float = 1.0,
    bptt_window: int | None = None,
    n_seeds: int = 3,
) -> GradientCurves:
    """The four models on the same inputs (seed s: model seed s, input seed 1000 + s), cached."""
    if not 2 <= T <= 4096 or not 1 <= width <= 512 or not 1 <= n_seeds <= 16:
        raise ValueError("T must be 2–4096, width 1–512 and n_seeds 1–16")
    seeds = tuple(range(n_seeds))
    norms = {
        kind: _frozen(recurrent_log_gradient_norms(kind, width, T, init=init, gain=gain, seeds=seeds,
                                                   bptt_window=bptt_window))
        for kind in RECURRENT_KINDS
    }
    norms["transformer"] = _frozen(_transformer_log_gradient_norms(width, T, seeds))
    return GradientCurves(T, width, init, gain, bptt_window, seeds, norms)


def path_lengths(T: int, kind: str, n_layers: int = 1) -> np.ndarray:
    """Steps the gradient of a loss on y_{T−1} takes back to each input x_t (t = 0 … T−1).

    Recurrent: through h_{T−1}, h_{T−2}, …, h_t — T − t cell steps.  Attention: one step per
    layer, whatever t is.
    """
    t = np.arange(T)
    if kind == "transformer":
        return np.full(T, n_layers)
    if kind in RECURRENT_KINDS:
        return T - t + (n_layers - 1)
    raise ValueError(f"unknown kind {kind!r}")


# --- dependency matrix -----------------------------------------------------------------------------


class UnmaskedAttentionStack(nn.Module):
    """The same layers (and weights) as a CausalAttentionStack, run without the causal mask: the
    encoder's view, in which every output may read every input."""

    def __init__(self, causal: CausalAttentionStack):
        super().__init__()
        self.causal = causal

    def forward(self, x: torch.Tensor, bptt_window: int | None = None) -> torch.Tensor:
        T = x.shape[1]
        h = x + torch.from_numpy(sinusoidal_encoding(T, self.causal.width)).to(x.dtype)
        for layer in self.causal.layers:
            h, _ = layer(h, mask=None)
        return h


def fast_dependency_matrix(
    model: nn.Module, x: torch.Tensor, *, causal: bool = False, rows_per_chunk: int | None = None
) -> np.ndarray:
    """(T, T) matrix of ‖∂y_t/∂x_s‖ (Frobenius norm of each Jacobian block), float64.

    The same numbers as `explorer.analysis.gradients.dependency_matrix`, several times faster and with
    plain autograd (torch.func would pull in torch._dynamo, seconds of imports on first use).
    Rows are computed in chunks of output positions: for a chunk of n positions the sequence is
    repeated n·width times as a batch, batch element (t, i) back-propagates y_t[i] alone, and one
    backward pass gives all n·width rows of the Jacobian.  causal=True promises that y_t depends
    only on x_0 … x_t (an RNN, a causally masked layer with absolute positions); each chunk then
    runs on the prefix it needs, which halves the work.  For speed pass a model whose parameters do
    not require gradients (the function does not change the model).
    """
    x = x.detach().to(torch.float64)
    T, width = x.shape
    rows = rows_per_chunk or max(1, 128 // width)
    out = np.zeros((T, T))
    for t0 in range(0, T, rows):
        t1 = min(T, t0 + rows)
        n, length = t1 - t0, (t1 if causal else T)
        batch = x[None, :length].expand(n * width, length, width).clone().requires_grad_(True)
        y = model(batch)[:, t0:t1]  # (n·width, n, width): element (t, i) of the batch picks y_t[i]
        picked = y.reshape(n * width, n * width).diagonal()
        (grad,) = torch.autograd.grad(picked.sum(), batch)
        out[t0:t1, :length] = grad.reshape(n, width, length, width).pow(2).sum(dim=(1, 3)).sqrt().numpy()
    return out


@dataclass(frozen=True)
class DependencyViews:
    """‖∂y_t/∂x_s‖ for the recurrent model, the causal attention layer and the same layer unmasked."""

    kind: str
    recurrent: np.ndarray
    causal: np.ndarray
    unmasked: np.ndarray


@functools.lru_cache(maxsize=32)
def dependency_views(
    kind: str = "rnn", T: int = 32, width: int = 16, init: str = "default", gain: float = 1.0, seed: int = 0
) -> DependencyViews:
    """The three dependency matrices on one input (random_sequence(T, width, seed=1000 + seed))."""
    if not 1 <= T <= 128 or not 1 <= width <= 64:
        raise ValueError("the dependency view is bounded to T ≤ 128 and width ≤ 64")
    x = random_sequence(T, width, seed=INPUT_SEED_OFFSET + seed)
    # A fresh model of our own, so its parameters can be frozen (no graph for the weights).
    recurrent = _seeded_model(kind, width, init=init, gain=gain, seed=seed).requires_grad_(False)
    causal, unmasked = _attention_dependency(T, width, seed)
    return DependencyViews(kind, _frozen(fast_dependency_matrix(recurrent, x, causal=True)), causal, unmasked)


@functools.lru_cache(maxsize=16)
def _attention_dependency(T: int, width: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The attention layer's two matrices (causal, unmasked), cached on their own: they do not depend
    on the recurrent network's kind or initialisation, and they are the costlier part (about 0.4 s
    at T = 64), so changing those settings recomputes only the recurrent matrix."""
    x = random_sequence(T, width, seed=INPUT_SEED_OFFSET + seed)
    causal = _seeded_model("transformer", width, seed=seed).requires_grad_(False)
    return (_frozen(fast_dependency_matrix(causal, x, causal=True)),
            _frozen(fast_dependency_matrix(UnmaskedAttentionStack(causal), x)))


# --- trained models on the recall task -------------------------------------------------------------


@dataclass(frozen=True)
class RecallAccuracy:
    """Accuracy at each distance on the recall task's fixed evaluation set."""

    name: str
    distances: np.ndarray  # int
    accuracy: np.ndarray  # fraction right, per distance
    examples: np.ndarray  # evaluation examples per distance
    heldout_accuracy: float | None  # the card's overall figure, for reference


@torch.no_grad()
def recall_correct(model: nn.Module, task, chunk: int = 128) -> tuple[np.ndarray, np.ndarray]:
    """(distance, right) for every example of the recall task's evaluation set.

    The same answers as `explorer.training.pretrained.accuracy_by_distance`, in bounded memory: examples are
    sorted by distance and run in chunks cut to the chunk's longest gap (the answer at '?' does not
    depend on the padding after it: the models are causal), instead of one (2048 × 129) batch whose
    attention traces alone take gigabytes.
    """
    batch = task.evaluation()
    if batch.distance is None:
        raise ValueError("recall_correct needs the recall task")
    order = torch.argsort(batch.distance, stable=True)
    distance, right = [], []
    for start in range(0, len(order), chunk):
        rows = order[start:start + chunk]
        d = batch.distance[rows]
        length = int(d.max()) + 1
        part = Batch(batch.inputs[rows, :length], batch.targets[rows, :length], batch.valid[rows, :length],
                     distance=d)
        logits = forward(model, part)
        index = torch.arange(len(rows))
        right.append((logits[index, d].argmax(-1) == part.targets[index, d]).numpy())
        distance.append(d.numpy())
    return np.concatenate(distance), np.concatenate(right)


@functools.lru_cache(maxsize=8)
def recall_accuracy(name: str) -> RecallAccuracy:
    """Evaluate a shipped recall model per distance, once per process (the model itself is shared
    and only read).  Raises PretrainedModelError if the model is missing or damaged (not cached,
    so a model that finishes training later is picked up)."""
    loaded = load_model(name)
    if loaded.task.name != "recall":
        raise ValueError(f"{name} is not a recall-task model")
    distance, right = recall_correct(loaded.model, loaded.task)
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
    by examples: the ~16 examples per distance make the raw curve jumpy, the bins much less so."""
    bins = (result.distances - 1) // width
    right = result.accuracy * result.examples
    totals = {b: (right[bins == b].sum(), result.examples[bins == b].sum()) for b in np.unique(bins)}
    return np.array([totals[b][0] / totals[b][1] for b in bins], dtype=np.float64)


def accuracy_bands(result: RecallAccuracy, edges: tuple[int, ...] | None = None) -> list[tuple[str, float]]:
    """Accuracy over ranges of distance [edges[i], edges[i+1]), weighted by examples, so that the
    noise of ~16 examples per distance averages out.  Default edges: 1, 9, 33, 65, … up to the
    longest distance."""
    if edges is None:
        longest = int(result.distances.max()) if len(result.distances) else 1
        edges = (*[e for e in (1, 9, 33, 65) if e <= longest], longest + 1)
    bands = []
    for lo, hi in itertools.pairwise(edges):
        chosen = (result.distances >= lo) & (result.distances < hi)
        if chosen.any():
            right = float((result.accuracy[chosen] * result.examples[chosen]).sum())
            bands.append((f"{lo}–{hi - 1}", right / float(result.examples[chosen].sum())))
    return bands


# --- depth: residual connections and Add & Norm ----------------------------------------------------

DEPTH_NORMS = ("post", "pre", "none")
DEPTH_CONFIGS = tuple((norm, residual) for norm in DEPTH_NORMS for residual in (True, False))


def _seeded_stack(n_layers: int, width: int, seed: int, n_heads: int) -> nn.ModuleList:
    """n_layers post-norm EncoderLayers and a final LayerNorm, float64, drawn from the seed (other
    wirings are these layers `rewired`)."""
    with seeded(seed):
        layers = [EncoderLayer(width, n_heads, 4 * width) for _ in range(n_layers)]
    return nn.ModuleList([*layers, nn.LayerNorm(width)]).double().eval().requires_grad_(False)


def build_layer_stack(
    n_layers: int, width: int, *, residual: bool, norm: str, seed: int = 0, n_heads: int = 4
) -> nn.ModuleList:
    """n_layers EncoderLayers (unmasked self-attention + FFN with d_ff = 4·width) and a last module
    that is a final LayerNorm for pre-norm (as in `explorer.model.transformer`) or an Identity; float64,
    seeded without touching the global random state.

    norm: "post" (the paper: LayerNorm after each residual add), "pre" (LayerNorm before each
    sublayer) or "none" (no LayerNorm at all, for comparison).  A given seed gives the same
    weights whatever the norm and residual settings: only the wiring differs, so the comparison
    isolates it.
    """
    if norm not in DEPTH_NORMS:
        raise ValueError(f"norm must be one of {DEPTH_NORMS}")
    stack = _seeded_stack(n_layers, width, seed, n_heads)
    layers = [layer.rewired(norm, residual) for layer in stack[:-1]]  # the same weights, wired as asked
    return nn.ModuleList([*layers, stack[-1] if norm == "pre" else nn.Identity()])


def _depth_readout(T: int, width: int) -> torch.Tensor:
    r = torch.randn(T, width, generator=torch.Generator().manual_seed(READOUT_SEED), dtype=torch.float64)
    return r / r.norm()


def _stack_gradient_norms(stack: nn.ModuleList, x: torch.Tensor) -> np.ndarray:
    h = x[None].clone().requires_grad_(True)
    inputs = []
    for layer in stack[:-1]:
        inputs.append(h)
        h, _ = layer(h)
    h = stack[-1](h)
    loss = (h[0] * _depth_readout(*x.shape)).sum()
    grads = torch.autograd.grad(loss, inputs)
    return np.array([g.norm().item() for g in grads], dtype=np.float64)


def layer_gradient_norms(
    n_layers: int, width: int = 32, residual: bool = True, norm: str = "post", seed: int = 0, T: int = 16
) -> np.ndarray:
    """‖∂L/∂h_l‖ at the input h_l of every layer l = 0 … n_layers−1 (h_0 is the stack's input), float64.

    The stack is `build_layer_stack(...)` (unmasked self-attention, 4 heads; norm "post", "pre" or
    "none"), the input random_sequence(T, width, seed=1000 + seed), and L = Σ_t r_t · y_t for a
    fixed unit read-out r of the whole output.
    """
    if n_layers < 1:
        raise ValueError("n_layers must be at least 1")
    stack = build_layer_stack(n_layers, width, residual=residual, norm=norm, seed=seed)
    return _stack_gradient_norms(stack, random_sequence(T, width, seed=INPUT_SEED_OFFSET + seed))


DEPTH_CACHED_LAYERS = 24  # the depth page's deepest stack; weights are drawn once per (width, seed) up to it


@functools.lru_cache(maxsize=16)
def _seed_weights(width: int, seed: int, n_layers: int) -> tuple[dict[str, torch.Tensor], ...]:
    """The weights of `_seeded_stack(n_layers, width, seed, 4)` as tensors, layer by layer, then the
    final LayerNorm's.  Layers are drawn in order from the seed, so the first L layers of a deeper
    stack are the L-layer stack: one draw up to DEPTH_CACHED_LAYERS serves every depth below it.
    Linear maps are transposed for x @ W."""
    stack = _seeded_stack(n_layers, width, seed, 4)
    layers = []
    for layer in stack[:-1]:
        attn, ffn = layer.self_attn, layer.ffn
        layers.append({
            "qkv_w": torch.cat([attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight]).t().contiguous(),
            "qkv_b": torch.cat([attn.q_proj.bias, attn.k_proj.bias, attn.v_proj.bias]),
            "out_w": attn.out_proj.weight.t().contiguous(), "out_b": attn.out_proj.bias,
            "ff1_w": ffn.linear1.weight.t().contiguous(), "ff1_b": ffn.linear1.bias,
            "ff2_w": ffn.linear2.weight.t().contiguous(), "ff2_b": ffn.linear2.bias,
            "attn_norm_w": layer.attn_norm.weight, "attn_norm_b": layer.attn_norm.bias,
            "ffn_norm_w": layer.ffn_norm.weight, "ffn_norm_b": layer.ffn_norm.bias,
        })
    layers.append({"norm_w": stack[-1].weight, "norm_b": stack[-1].bias})
    # Kept in float32, which holds them exactly, at half the memory (~30 MB for every width and seed).
    return tuple({name: t.float() for name, t in layer.items()} for layer in layers)


def _stacked_seed_weights(width: int, n_layers: int, n_seeds: int) -> list[dict[str, torch.Tensor]]:
    """Per layer, each weight of seeds 0 … n_seeds−1 stacked on a new first axis (biases and norm
    parameters shaped (S, 1, n) to broadcast over positions)."""
    drawn = max(n_layers, DEPTH_CACHED_LAYERS)
    seeds = [_seed_weights(width, s, drawn) for s in range(n_seeds)]
    picked = [*range(n_layers), drawn]  # the first n_layers layers and the final LayerNorm
    matrices = {"qkv_w", "out_w", "ff1_w", "ff2_w"}
    stacked = []
    for i in picked:
        layer = {name: torch.stack([weights[i][name] for weights in seeds]).double() for name in seeds[0][i]}
        stacked.append({name: t if name in matrices else t[:, None] for name, t in layer.items()})
    return stacked


def _layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """LayerNorm over the last axis with a weight and bias per batch item, shaped (B, 1, d)."""
    mean = x.mean(-1, keepdim=True)
    var = (x - mean).pow(2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def _seed_batched_norms(layers: list[dict[str, torch.Tensor]], inputs: torch.Tensor, norm: str, residual: bool,
                        n_heads: int = 4) -> torch.Tensor:
    """`_stack_gradient_norms` of every seed's stack under one wiring, the seeds as one batch.

    The same computation as `EncoderLayer.forward` (wired by `EncoderLayer.rewired`) — sublayer h = LN(x) for pre-norm,
    x + F(h) with a residual, LN of that for post-norm, a final LayerNorm for pre-norm only — written
    with batched matrix products over per-seed weights (`_stacked_seed_weights`), so S seeds cost one
    pass of small operations instead of S (checked against `layer_gradient_norms` in the tests).
    inputs: (S, T, width) float64.  Returns (S, n_layers).
    """
    S, T, width = inputs.shape
    dh = width // n_heads

    def attention(h, w):
        q, k, v = torch.baddbmm(w["qkv_b"], h, w["qkv_w"]).view(S, T, 3, n_heads, dh).permute(2, 0, 3, 1, 4)
        weights = torch.softmax(q @ k.transpose(-2, -1) * (1.0 / math.sqrt(dh)), dim=-1)
        return torch.baddbmm(w["out_b"], (weights @ v).transpose(1, 2).reshape(S, T, width), w["out_w"])

    def feed_forward(h, w):
        return torch.baddbmm(w["ff2_b"], torch.relu(torch.baddbmm(w["ff1_b"], h, w["ff1_w"])), w["ff2_w"])

    def wrapped(x, norm_w, norm_b, sublayer):
        h = _layer_norm(x, norm_w, norm_b) if norm == "pre" else x
        y = x + sublayer(h) if residual else sublayer(h)
        return _layer_norm(y, norm_w, norm_b) if norm == "post" else y

    with torch.enable_grad():
        h = inputs.clone().requires_grad_(True)
        layer_inputs = []
        for w in layers[:-1]:
            layer_inputs.append(h)
            h = wrapped(h, w["attn_norm_w"], w["attn_norm_b"], lambda x, w=w: attention(x, w))
            h = wrapped(h, w["ffn_norm_w"], w["ffn_norm_b"], lambda x, w=w: feed_forward(x, w))
        if norm == "pre":
            h = _layer_norm(h, layers[-1]["norm_w"], layers[-1]["norm_b"])
        loss = (h * _depth_readout(T, width)).sum()
        grads = torch.autograd.grad(loss, layer_inputs)
    return torch.stack([g.flatten(1).norm(dim=1) for g in grads], dim=1)


@functools.lru_cache(maxsize=32)
def depth_curves(
    n_layers: int = 12, width: int = 32, T: int = 16, n_seeds: int = 3
) -> types.MappingProxyType[tuple[str, bool], np.ndarray]:
    """`layer_gradient_norms` for every (norm, residual) in DEPTH_CONFIGS: each (n_seeds, n_layers),
    in a read-only mapping (the cache is shared).  The seeds run as one batch (`_seed_batched_norms`)
    on weights drawn once per (width, seed) (`_seed_weights`)."""
    if not 1 <= n_layers <= 64 or not 1 <= n_seeds <= 16:
        raise ValueError("n_layers must be 1–64 and n_seeds 1–16")
    layers = _stacked_seed_weights(width, n_layers, n_seeds)
    inputs = torch.stack([random_sequence(T, width, seed=INPUT_SEED_OFFSET + s) for s in range(n_seeds)])
    return types.MappingProxyType({
        (norm, residual): _frozen(_seed_batched_norms(layers, inputs, norm, residual).numpy())
        for norm, residual in DEPTH_CONFIGS
    })
