"""Wall time of a recurrent forward pass (sequential over T) against self-attention (one parallel
step), measured on this machine within a time budget.  Pure torch; no Streamlit.

The lesson's claim is about *sequential steps*: the loop cannot start step t before step t − 1 is
done, while attention computes every position at once.  On a single CPU thread the attention
layer's T·d² + T²·d work is not spread over anything, so what the numbers show depends on T and d — which
is exactly why it is worth measuring rather than asserting.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from ..model.building import seeded
from ..model.rnn import RecurrentNet

__all__ = ["TIMED_LAYERS", "Timing", "build_timed_layer", "measure_forward_times", "slower_from"]

TIMED_LAYERS = {
    "rnn": "tanh RNN, torch.nn.RNN (loop over T in C++)",
    "rnn-loop": "tanh RNN, this app's RecurrentNet (loop over T in Python)",
    "attention": "causal self-attention, torch.nn.MultiheadAttention (4 heads)",
}


@dataclass(frozen=True)
class Timing:
    """Best of `runs` forward passes (seconds), or None when the budget ran out first."""

    layer: str
    T: int
    d: int
    seconds: float | None
    runs: int


def build_timed_layer(layer: str, d: int, seed: int = 0) -> Callable[[torch.Tensor], object]:
    """A float32 forward function for one input (1, T, d), gradients off, seeded weights."""
    with seeded(seed):
        return _build(layer, d)


def _build(layer: str, d: int) -> Callable[[torch.Tensor], object]:
    if layer == "rnn":
        module = torch.nn.RNN(d, d, batch_first=True).eval()
        return lambda x: module(x)
    if layer == "rnn-loop":
        module = RecurrentNet("rnn", d, d).eval()
        return lambda x: module(x)
    if layer == "attention":
        module = torch.nn.MultiheadAttention(d, 4 if d % 4 == 0 else 1, batch_first=True).eval()

        def attend(x: torch.Tensor):
            T = x.shape[1]
            future = torch.ones(T, T, dtype=torch.bool).triu(1)  # True = may NOT attend (torch's rule)
            return module(x, x, x, attn_mask=future, need_weights=False)

        return attend
    raise ValueError(f"unknown layer {layer!r}; expected one of {sorted(TIMED_LAYERS)}")


def _call(fn, *args, **kwargs):
    return fn(*args, **kwargs)


def _built(layers: Sequence[str], d: int) -> dict[str, Callable[[torch.Tensor], object]]:
    return {layer: build_timed_layer(layer, d) for layer in layers}


def _pass(forward: Callable[[torch.Tensor], object], x: torch.Tensor) -> None:
    with torch.inference_mode():  # per thread: entered where the pass runs
        forward(x)


def _timed(forward: Callable[[torch.Tensor], object], x: torch.Tensor, clock: Callable[[], float]) -> float:
    """Seconds of one forward pass, measured where it runs."""
    with torch.inference_mode():
        began = clock()
        forward(x)
        return clock() - began


def measure_forward_times(
    T_values: Sequence[int],
    d: int,
    *,
    layers: Sequence[str] = tuple(TIMED_LAYERS),
    budget_s: float = 1.0,
    repeats: int = 5,
    clock: Callable[[], float] = time.perf_counter,
    max_pass_s: float = float("inf"),
    run: Callable = _call,
) -> list[Timing]:
    """Time each layer's forward pass at each T (ascending), keeping the total under `budget_s`.

    Each measurement is one warm-up run plus up to `repeats` timed runs (the best one is kept, the
    least disturbed by other work on the machine).  Before a measurement the cost is predicted
    from the previous T (assuming time grows like T², a safe over-estimate for every layer here);
    once a layer's prediction no longer fits in what is left of the budget, or one pass is predicted
    to take more than `max_pass_s`, it and every longer sequence for it are reported as None.

    Building the layers and every single forward pass is one `run(fn, *args)`, so a caller may run
    them as short pieces elsewhere (on a work pool).  The budget is wall time from the start, time
    spent waiting for such a pool included: a busy server measures less, not longer.
    """
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    start = clock()
    forwards = run(_built, layers, d)
    last: dict[str, tuple[int, float]] = {}
    out_of_budget: set[str] = set()
    results = []
    for T in sorted(set(int(t) for t in T_values)):
        x = torch.randn(1, T, d, generator=torch.Generator().manual_seed(T))
        for layer in layers:
            left = budget_s - (clock() - start)
            one_pass = last[layer][1] * (T / last[layer][0]) ** 2 if layer in last else 0.0
            if layer in out_of_budget or left <= 0 or 2 * one_pass > left or one_pass > max_pass_s:
                out_of_budget.add(layer)  # 2 × one pass: the warm-up and one timed run
                results.append(Timing(layer, T, d, None, 0))
                continue
            run(_pass, forwards[layer], x)  # warm-up: first call of this shape
            best, runs = float("inf"), 0
            while runs < repeats:
                best = min(best, run(_timed, forwards[layer], x, clock))
                runs += 1
                if budget_s - (clock() - start) < best:
                    break
            last[layer] = (T, best)
            results.append(Timing(layer, T, d, best, runs))
    return results


def _slower(timings: Sequence[Timing], layer: str, than: str) -> dict[int, bool]:
    """{T: was `layer` slower than `than`} at every T where both were measured, T ascending."""
    times = {(t.layer, t.T): t.seconds for t in timings if t.seconds is not None}
    both = sorted(T for (name, T) in times if name == layer and (than, T) in times)
    return {T: times[(layer, T)] > times[(than, T)] for T in both}


def slower_at(timings: Sequence[Timing], layer: str, than: str) -> tuple[int, ...]:
    """Every measured T at which `layer` was slower than `than`."""
    return tuple(T for T, slower in _slower(timings, layer, than).items() if slower)


def slower_from(timings: Sequence[Timing], layer: str, than: str) -> int | None:
    """The shortest measured T from which `layer` stays slower than `than` (None if it never is,
    or if the two were not both measured at some T)."""
    answer = None
    for T, slower in reversed(_slower(timings, layer, than).items()):
        if not slower:
            break
        answer = T
    return answer
