"""The gradients lesson's "Claims, measured" box on the notes' "gradients within a layer don't flow
backwards: always a single step — can't vanish or explode" (lecture 003): what the one-step path
guarantees and what it does not, measured (explorer/analysis/attention_limits.py).  Frozen results,
cached for all sessions."""

from __future__ import annotations

from explorer.analysis.attention_limits import SCORE_SCALES, score_gradient, stacked_orders_lost
from explorer.caching import bounded_cache
from explorer.kit.claims import scientific
from explorer.kit.measured import Measured

__all__ = ["STACK_LAYERS", "attention_limits_box"]

STACK_LAYERS = 12
STACK_T = 32  # the stack is the depth lesson's: sequences up to 32


@bounded_cache(16, max_bytes=1_000_000)
def attention_limits_box(T: int, width: int) -> Measured:
    """The box at the page's length and width."""
    runs = {scale: score_gradient(T, width, scale) for scale in SCORE_SCALES}
    lost = stacked_orders_lost(STACK_LAYERS, width, min(T, STACK_T))
    rows = tuple((f"one layer, scores × {scale}", f"{r['top']:.3f}", scientific(r["scores"]), scientific(r["values"]))
                 for scale, r in runs.items())
    peak = max(runs.values(), key=lambda r: r["scores"])
    last = runs[SCORE_SCALES[-1]]
    saturates = last["top"] > 0.99 and last["scores"] < 0.1 * peak["scores"] and last["values"] > 0.5 * peak["values"]
    if saturates and lost > 3:
        finding = (
            "Within one layer the path is one step, as the notes say, and the values keep their gradient "
            f"({last['values']:.2g} with the scores × {SCORE_SCALES[-1]}). But the gradient reaching the "
            f"scores, which decide where to look, falls from {scientific(peak['scores'])} to "
            f"{scientific(last['scores'])} once the softmax saturates (largest weight {last['top']:.3f}): the "
            "reason Vaswani et al. (2017, §3.2.1) give for dividing the scores by √d. And a stack multiplies one "
            f"Jacobian per layer, as the loop does per step: {STACK_LAYERS} layers without residuals lose "
            f"{lost:.1f} orders of magnitude (the depth lesson). One step within a layer does not make the "
            "gradient safe; residuals and LayerNorm do much of that work.")
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
