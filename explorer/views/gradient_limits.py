"""The gradients lesson's "Claims, measured" box on the notes' "gradients within a layer don't flow
backwards: always a single step — can't vanish or explode" (lecture 003): what the one-step path
guarantees and what it does not, measured (explorer/analysis/attention_limits.py).  Frozen results,
cached for all sessions."""

from __future__ import annotations

from ..analysis.attention_limits import SCORE_SCALES, score_gradient, stacked_orders_lost
from ..caching import bounded_cache
from .claims import _SUPERSCRIPT
from .measured import Measured

__all__ = ["STACK_LAYERS", "attention_limits_box"]

STACK_LAYERS = 12
STACK_T = 32  # the stack is the depth lesson's: sequences up to 32


def _number(x: float) -> str:
    """0.26, or 1.1×10⁻⁵ below 0.01 (not Python's 1.1e-05)."""
    if x >= 0.01 or x == 0:
        return f"{x:.2g}"
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"{mantissa}×10{str(int(exponent)).translate(_SUPERSCRIPT)}"


@bounded_cache(16, max_bytes=1_000_000)
def attention_limits_box(T: int, width: int) -> Measured:
    """The box at the page's length and width."""
    runs = {scale: score_gradient(T, width, scale) for scale in SCORE_SCALES}
    lost = stacked_orders_lost(STACK_LAYERS, width, min(T, STACK_T))
    rows = tuple((f"one layer, scores × {scale}", f"{r['top']:.3f}", _number(r["scores"]), _number(r["values"]))
                 for scale, r in runs.items())
    peak = max(runs.values(), key=lambda r: r["scores"])
    last = runs[SCORE_SCALES[-1]]
    saturates = last["top"] > 0.99 and last["scores"] < 0.1 * peak["scores"] and last["values"] > 0.5 * peak["values"]
    if saturates and lost > 3:
        finding = (
            "Within one layer the path is one step, as the notes say, and the values keep their gradient "
            f"({last['values']:.2g} with the scores × {SCORE_SCALES[-1]}). But the gradient reaching the scores, "
            f"which decide where to look, falls from {_number(peak['scores'])} to {_number(last['scores'])} once the "
            f"softmax saturates (largest weight {last['top']:.3f}): the reason Vaswani et al. (2017, §3.2.1) give for "
            f"dividing the scores by √d. And a stack multiplies one Jacobian per layer, as the loop does per step: "
            f"{STACK_LAYERS} layers without residuals lose {lost:.1f} orders of magnitude (the depth lesson). One "
            "step within a layer does not make the gradient safe; residuals and LayerNorm do much of that work.")
    else:
        finding = (f"The gradient reaching the scores ranges from {min(r['scores'] for r in runs.values()):.2g} to "
                   f"{peak['scores']:.2g}; {STACK_LAYERS} stacked layers without residuals lose {lost:.1f} orders.")
    return Measured(
        title="Can attention's gradient vanish?",
        notes_say="gradients within a layer don't flow backwards, always a single step, so they can't vanish or "
                  "explode.",
        columns=(f"the last of {T} positions, width {width}", "largest weight in its row",
                 "gradient to the scores ‖∂L/∂s‖", "gradient to the values ‖∂L/∂V‖"),
        rows=rows, finding=finding)
