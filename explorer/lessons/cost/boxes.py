"""The cost lesson's "claims, measured" boxes: self-attention's parameters against length and heads, and a
convolution's one step against its path (explorer.kit.measured.Measured)."""

from __future__ import annotations

from explorer.analysis.claims import attention_parameters_by_heads, attention_parameters_by_length, convolution_steps
from explorer.kit.measured import Measured

__all__ = ["attention_parameters", "convolution_parallel"]

LENGTHS = (8, 64, 512)


def attention_parameters(d_model: int) -> Measured:
    heads = tuple(h for h in (1, 2, 4, 8) if d_model % h == 0)
    by_length = attention_parameters_by_length(d_model, heads[-1], LENGTHS)
    by_heads = attention_parameters_by_heads(d_model, heads)
    rows = tuple(("sequence length T", T, n) for T, n in by_length.items())
    rows += tuple(("heads", h, n) for h, n in by_heads.items())
    counts = set(by_length.values()) | set(by_heads.values())
    if len(counts) == 1:
        (count,) = counts
        finding = (f"The same module takes every length: {count:,} parameters at T = {LENGTHS[0]} and at T = "
                   f"{LENGTHS[-1]}, and at every number of heads, 4·(d² + d) for d = {d_model}. Self-attention's "
                   "parameters are O(d²); what grows with T is the work, O(T·d² + T²·d), not the weights.")
    else:
        finding = f"The counts differ: {sorted(counts)}."
    return Measured("Self-attention's parameters against T and heads",
                    "One version of the notes gives a transformer layer T times an RNN's parameters, O(T·d²), as if "
                    "every position had its own weights.",
                    ("what changes", "value", "parameters (counted on the built module)"), rows, finding)


def convolution_parallel(T: int, kernel: int) -> Measured:
    steps = convolution_steps(T, kernel)
    rows = (("steps within one layer that wait for another", steps.sequential_steps),
            ("layers before the last output depends on the first input", steps.layers_to_connect),
            ("the RNN's steps, for comparison", T))
    finding = (f"One call of torch's Conv1d gives all {T} outputs at once: no output waits for another "
               f"({steps.sequential_steps} step per layer). What a convolution pays for is the path: "
               f"{steps.layers_to_connect} stacked layers of width {kernel} before the last output can see the "
               f"first input, against 1 for self-attention.")
    return Measured("Do convolutions run in parallel?",
                    "The notes' table gives a convolution O(T) sequential steps, saying overlapping kernels "
                    "cannot be parallelised.", ("measured", "count"), rows, finding)
