"""What the depth lesson shows: the gradient reaching each layer of a deep stack for every wiring
(residual or not; post-norm, pre-norm or no LayerNorm), over several seeds.  Pure torch + numpy, no
Streamlit; the maths is `explorer.analysis.depth`.  The lesson is a declaration: `DepthSettings`
(its controls) and `depth_view(settings)`; the lesson runtime (explorer/serve) caches the view."""

from __future__ import annotations

import types
from dataclasses import dataclass

import numpy as np

from explorer.analysis.addnorm import norm_batch_dependence, notes_residual_block
from explorer.analysis.depth import depth_gradient_norms
from explorer.caching import bounded_cache
from explorer.kit.claims import Claim
from explorer.kit.measured import Measured
from explorer.kit.settings import setting
from explorer.pieces import piece

__all__ = ["DEPTH_CLAIMS", "DepthSettings", "addnorm_boxes", "depth_curves", "depth_view", "orders_lost"]


@dataclass(frozen=True)
class DepthSettings:
    """The depth lesson's controls."""

    n_layers: int = setting(12, "Layers", url="layers", bounds=(2, 24, 1))  # one layer has no depth to fade over
    width: int = setting(32, "Width d_model", url="width", options=(16, 32, 64),
                         help="4 attention heads; the feed-forward layer is 4 × wider.")
    T: int = setting(16, "Sequence length", url="T", options=(4, 8, 16, 32))
    n_seeds: int = setting(3, "Random seeds", url="seeds", bounds=(1, 5, 1),
                           help="Each seed draws new weights and a new input; the line is the mean of log10 of the "
                                "norm, the band ± one standard deviation.")


def depth_view(settings: DepthSettings) -> types.MappingProxyType[tuple[str, bool], np.ndarray]:
    """The lesson's view: `depth_curves` at the settings."""
    return depth_curves(settings.n_layers, settings.width, settings.T, settings.n_seeds)


def depth_curves(
    n_layers: int = 12, width: int = 32, T: int = 16, n_seeds: int = 3
) -> types.MappingProxyType[tuple[str, bool], np.ndarray]:
    """`layer_gradient_norms` for every (norm, residual) in DEPTH_CONFIGS: each (n_seeds, n_layers),
    in a read-only mapping (the runtime's cache shares it between sessions).  Computed by
    `depth_gradient_norms`, the seeds as one batch, in pieces (explorer.pieces: a seed's weights, one
    wiring), each run where the runtime says."""
    if not 1 <= n_layers <= 64 or not 1 <= n_seeds <= 16:
        raise ValueError("n_layers must be 1–64 and n_seeds 1–16")
    curves = depth_gradient_norms(n_layers, width, T, n_seeds, run=piece)
    for values in curves.values():
        values.setflags(write=False)  # cached and shared between sessions
    return types.MappingProxyType(curves)


# ---- What the lesson's sentences state about the view (explorer/kit/claims.py) ----

def orders_lost(curves, norm: str, residual: bool) -> float:
    """Orders of magnitude the gradient loses from the last layer's input down to layer 0 (mean of
    log10 over the seeds; negative: it grows on the way down)."""
    logs = np.log10(np.asarray(curves[(norm, residual)], dtype=np.float64)).mean(axis=0)
    return float(logs[-1] - logs[0])


def _change(orders: float) -> str:
    return f"{'shrinks' if orders >= 0 else 'grows'} by {abs(orders):.2f} orders of magnitude"


def _depth_numbers(shown) -> dict:
    curves, n = shown.view, shown.settings.n_layers
    lost = {f"{norm}_{'res' if residual else 'bare'}": orders_lost(curves, norm, residual) for norm, residual in curves}
    residual_worst = max(abs(lost[f"{norm}_res"]) for norm in ("post", "pre", "none"))
    per_layer = lost["none_bare"] / max(n - 1, 1)
    return {**lost, "n_layers": n, "bare": lost["none_bare"], "residual_worst": residual_worst,
            "per_layer": per_layer, "per_layer_factor": f"{10 ** per_layer:,.0f}",
            "bare_factor": f"{10 ** lost['none_bare']:,.0f}",
            "post_change": _change(lost["post_res"]), "pre_change": _change(lost["pre_res"]),
            "none_change": _change(lost["none_res"]),
            # the same, short: "shrinks by 0.25" (a step's answer names the unit once)
            "post_moves": _change(lost["post_res"]).removesuffix(" orders of magnitude"),
            "pre_moves": _change(lost["pre_res"]).removesuffix(" orders of magnitude")}


def _numbers_with(test):
    return Claim(lambda s: bool(test(_depth_numbers(s))), _depth_numbers)


DEPTH_CLAIMS = types.MappingProxyType({
    # the bare stack loses about one order (10×) already; every residual wiring stays near flat
    "two_layers": _numbers_with(lambda v: 0.5 <= v["bare"] < 2 and v["residual_worst"] < 0.5),
    # deep: the bare stack collapses, every residual wiring stays within an order of flat
    "bare_collapses": _numbers_with(lambda v: v["bare"] > 5 and v["residual_worst"] < 1),
    # LayerNorm alone: better than nothing, worse than the residual
    "norm_partly": _numbers_with(lambda v: v["residual_worst"] < min(v["post_bare"], v["pre_bare"])
                                 and max(v["post_bare"], v["pre_bare"]) < v["bare"]),
    # with residuals, pre-norm's gradient at layer 0 is closer to the last layer's than post-norm's
    "pre_closer": _numbers_with(lambda v: abs(v["pre_res"]) < abs(v["post_res"])),
    # "What to notice", sentence by sentence
    "notice_bare": _numbers_with(lambda v: v["bare"] > 2 and abs(v["none_res"]) < 0.5),
    "notice_norm": _numbers_with(lambda v: v["residual_worst"] < min(v["post_bare"], v["pre_bare"])
                                 and max(v["post_bare"], v["pre_bare"]) < v["bare"]),
    "notice_shallow": _numbers_with(lambda v: v["bare"] <= 2),
})


# ---- "Claims, measured": what the notes say about Add & Norm (explorer/kit/measured.py's boxes) ----

UNMOVED = 1e-6  # a change below this is rounding: "does not move"

NORM_CASES = {"other sentences": "the batch's other sentences replaced",
              "padding": "every sentence padded with zeros",
              "inference": "inference, the sentence alone (eval mode)"}


def _norm_box(width: int, T: int) -> Measured:
    changes = norm_batch_dependence(width, T)
    layer, batch = changes["LayerNorm"], changes["BatchNorm"]
    rows = tuple((label, f"{layer[case]:.2g}", f"{batch[case]:.2f}") for case, label in NORM_CASES.items())
    if max(layer.values()) < UNMOVED and min(batch.values()) > 100 * UNMOVED:
        finding = (f"Nothing about the first sentence changed, yet BatchNorm's output for it moved by up to "
                   f"{max(batch.values()):.2f}: it normalises each feature with statistics of the whole batch "
                   "(padding included, unless it is masked out) and at inference swaps them for running averages "
                   "kept in training. LayerNorm's output did not move: it normalises each token over its own "
                   "d features, the same in training and at inference, for any batch size or length. That is the "
                   "case Ba, Kiros & Hinton (2016) made for layer normalisation; the Transformer uses it "
                   "(Vaswani et al., 2017, §3.1), and BatchNorm trains transformers on text worse (Shen et al., "
                   "2020, “PowerNorm”).")
    else:
        finding = (f"LayerNorm's output moved by up to {max(layer.values()):.2g} and BatchNorm's by up to "
                   f"{max(batch.values()):.2g}.")
    return Measured(
        title="Batch or layer normalisation?",
        notes_say="the Norm of Add & Norm is “Batch (or other) Normalization”.",
        columns=(f"4 sentences of {T} tokens × {width} features; the first unchanged, but",
                 "LayerNorm: its output moves by", "BatchNorm: its output moves by"),
        rows=rows, finding=finding)


def _residual_box(width: int) -> Measured:
    cases = ((width, width), (width, 4 * width))
    runs = {hidden: notes_residual_block(width, hidden) for _, hidden in cases}
    rows = tuple((f"input {width}, hidden {hidden}",
                  "runs" if r["runs"] else f"fails: size mismatch ({width} ≠ {hidden})",
                  "—" if r["passed"] is None else f"{r['passed']:.0%}", f"{r['add_passed']:.0%}")
                 for hidden, r in runs.items())
    same, wider = runs[width], runs[4 * width]
    if same["runs"] and not wider["runs"] and same["passed"] < 1 and same["add_passed"] == 1:
        finding = (f"The block runs only when the hidden width equals the input's: its second residual adds the "
                   f"{4 * width}-wide hidden layer to a {width}-wide tensor. And its ReLU after the add sits on "
                   f"the short cut: with the sublayers switched off it passes on {same['passed']:.0%} of the "
                   "input's values (the negative ones become 0), where x + F(x) passes all of them. Residual "
                   "networks later took the ReLU off that path for this reason (He et al., 2016, “Identity "
                   "Mappings in Deep Residual Networks”); a transformer's Add has no activation on it.")
    else:
        finding = f"At these widths the block {'runs' if wider['runs'] else 'fails'} with a wider hidden layer."
    return Measured(
        title="The notes' residual block",
        notes_say="a ResidualBlock whose forward adds the input and the first layer's output after ReLU "
                  "(`out += residual1 + residual2`), then applies a ReLU.",
        columns=("widths", "the notes' block", "input passed on unchanged (sublayers off)",
                 "x + F(x): passed on unchanged"),
        rows=rows, finding=finding)


@bounded_cache(8, max_bytes=1_000_000)
def addnorm_boxes(width: int, T: int) -> tuple[Measured, ...]:
    """The depth lesson's "Claims, measured" boxes at a width and length of the page (frozen: the cache
    shares them between sessions)."""
    return _norm_box(width, T), _residual_box(width)
