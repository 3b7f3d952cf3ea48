"""What the depth lesson shows: the gradient reaching each layer of a deep stack for every wiring
(residual or not; post-norm, pre-norm or no LayerNorm), over several seeds.  Pure torch + numpy, no
Streamlit; the maths is `explorer.analysis.depth`.  The lesson is a declaration: `DepthSettings`
(its controls) and `depth_view(settings)`; the lesson runtime (explorer/serve) caches the view."""

from __future__ import annotations

import types
from dataclasses import dataclass

import numpy as np

from ..analysis.depth import depth_gradient_norms
from ..pieces import piece
from .claims import Claim
from .settings import setting

__all__ = ["DEPTH_CLAIMS", "DepthSettings", "depth_curves", "depth_view", "orders_lost"]


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


# ---- What the lesson's sentences state about the view (explorer/views/claims.py) ----

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
            "none_change": _change(lost["none_res"])}


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
