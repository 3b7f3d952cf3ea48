"""The cost lesson, declared: its settings (the sizes; the stopwatch's own range) and its views —
the exact complexity table and the crossover curves, and the stopwatch's forward passes timed on
this machine.  No Streamlit.  The runtime (explorer/serve) caches the views; explorer/lessons/cost/cost.py draws
them.

The stopwatch holds about a second of the server's CPU, which every visitor shares: one measurement
per width (and per "Measure again"), in ascending T, shared by every session.  The range slider
only filters it, so moving it never starts the stopwatch again.  The default width is timed for
everyone; another width when a visitor asks (`timed(d)` says whether it has been), then for everyone.
"""

from __future__ import annotations

import threading
import types
from dataclasses import dataclass

import torch

from explorer.analysis.timing import Timing, slower_at, slower_from
from explorer.caching import bounded_cache
from explorer.kit.claims import Claim
from explorer.kit.measured import Measured
from explorer.kit.settings import setting
from explorer.lessons.cost.counts import (
    ComplexityRow,
    complexity_rows,
    forward_times,
    operations_curves,
    operations_lengths,
)
from explorer.lessons.cost.numbers import count_text, times_text

from .boxes import attention_parameters, convolution_parallel

__all__ = ["COST_CLAIMS", "DEFAULT_WIDTH", "TIMING_BUDGET_S", "CostSettings", "CostView", "CrossoverSettings",
           "CrossoverView", "StopwatchSettings", "StopwatchView", "cost_facts", "cost_view", "crossover_view",
           "stopwatch_view", "timed"]

WIDTHS = (8, 16, 32, 64, 128, 256, 512, 1024)
DEFAULT_WIDTH = 64
TIMING_LENGTHS = (256, 512, 1024, 2048, 4096)
MEASURED_LENGTHS = tuple(2**p for p in range(4, 13))  # 16 … 4096: what one measurement times
TIMING_BUDGET_S = 1.0
CONVOLUTION_T = 64  # the convolution box counts its layers on a sequence of at most this length


@dataclass(frozen=True)
class CostSettings:
    T: int = setting(512, "Sequence length T", url="T", bounds=(2, 4096, 1))
    d: int = setting(DEFAULT_WIDTH, "Width d", url="d", options=WIDTHS, widget="select_slider")
    k: int = setting(3, "Convolution kernel size k", url="k", bounds=(2, 9, 1))
    n_layers: int = setting(1, "Layers N", url="layers", bounds=(1, 24, 1),
                            help="1 reproduces the lecture's per-layer table; more stacks N identical layers.")


@dataclass(frozen=True)
class CostView:
    settings: CostSettings
    rows: tuple[ComplexityRow, ...]  # CNN, RNN, self-attention, encoder layer: exact counts for the stack
    boxes: tuple[Measured, ...] = ()  # claims, measured: parameters against T and heads, a convolution's step

    def row(self, layer: str) -> ComplexityRow:
        return next(r for r in self.rows if r.layer == layer)


def cost_view(settings: CostSettings) -> CostView:
    s = settings
    boxes = (attention_parameters(s.d), convolution_parallel(min(s.T, CONVOLUTION_T), s.k))
    return CostView(s, tuple(complexity_rows(s.T, s.d, s.k, s.n_layers)), boxes)


@dataclass(frozen=True)
class CrossoverSettings:
    """The crossover section's settings: T and d follow the sidebar's (k and N do not change it)."""

    T: int = 512
    d: int = DEFAULT_WIDTH


@dataclass(frozen=True)
class CrossoverView:
    settings: CrossoverSettings
    T_values: tuple[int, ...]  # the chart's lengths
    operations: types.MappingProxyType  # series -> multiplications of one layer at each of T_values


def crossover_view(settings: CrossoverSettings) -> CrossoverView:
    T_values = tuple(operations_lengths(settings.T, settings.d))
    curves = {name: tuple(values) for name, values in operations_curves(settings.d, T_values).items()}
    return CrossoverView(settings, T_values, types.MappingProxyType(curves))


def cost_facts(view: CostView) -> dict[str, object]:
    """The numbers the lesson's steps name, read from the view: the RNN's and attention's exact
    counts for the stack (rnn_mult, att_mult, …_params, …_steps, …_path), their ratios, the two big-O
    terms, the share of attention's multiplications in its four projections; and each count and ratio
    written as the key figure prints it (…_text)."""
    s, rnn, att = view.settings, view.row("rnn").cost, view.row("attention").cost
    projections = 4 * s.T * s.d * s.d * s.n_layers
    facts = {
        "T": s.T, "d": s.d, "n": s.n_layers, "extra": s.n_layers - 1, "T_over_d": s.T / s.d,
        "Td2": s.T * s.d**2, "T2d": s.T**2 * s.d, "term_ratio": (s.T * s.d**2) / (s.T**2 * s.d),
        "rnn_mult": rnn.multiplications, "att_mult": att.multiplications,
        "ratio": att.multiplications / rnn.multiplications,
        "rnn_params": rnn.parameters, "att_params": att.parameters, "param_ratio": att.parameters / rnn.parameters,
        "rnn_steps": rnn.sequential_steps, "att_steps": att.sequential_steps,
        "rnn_path": rnn.path_length, "att_path": att.path_length,
        "projection_share": projections / att.multiplications,
    }
    # as the key figure prints them (explorer.lessons.cost.numbers): rnn_mult_text "4.19 M", ratio_text "10"
    texts = {f"{name}_text": count_text(facts[name]) for name in ("rnn_mult", "att_mult", "rnn_params", "att_params",
                                                                  "rnn_steps", "att_steps", "rnn_path", "att_path")}
    return {**facts, **texts, "ratio_text": times_text(facts["ratio"]),
            "param_ratio_text": times_text(facts["param_ratio"])}


def _claim(holds) -> Claim:
    return Claim(lambda shown: holds(cost_facts(shown.view)), lambda shown: cost_facts(shown.view))


# What each lesson step's answer says, as a predicate on the view (explorer/lessons/cost/lesson.toml names them).
COST_CLAIMS = types.MappingProxyType({
    "attention_multiplies_more": _claim(lambda f: f["att_mult"] > f["rnn_mult"] and f["T"] > f["d"]),
    "terms_cross": _claim(lambda f: f["Td2"] == f["T2d"] and f["att_mult"] > f["rnn_mult"]),
    "projections_dominate": _claim(lambda f: f["term_ratio"] > 1 and f["projection_share"] > 0.9),
    "long_context": _claim(lambda f: f["T2d"] > 10 * f["Td2"]),
    # "it has … (the Q, K, V and output projections, d² + d each)": one layer's count
    "parameters_fixed": _claim(lambda f: f["n"] == 1 and f["att_params"] > f["rnn_params"]),
    "steps_wait": _claim(lambda f: f["n"] == 1),
    "stack_wavefront": _claim(lambda f: f["n"] > 1),
})


# --- the stopwatch -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StopwatchSettings:
    """The stopwatch section's own settings: `d` follows the sidebar's; `attempt` counts this
    visitor's "Measure again" (a new attempt is a new measurement)."""

    d: int = DEFAULT_WIDTH
    attempt: int = 0
    time_T: int = setting(2048, "Time sequences up to T =", url="time_T", options=TIMING_LENGTHS,
                          widget="select_slider")


@dataclass(frozen=True)
class StopwatchView:
    settings: StopwatchSettings
    timings: tuple[Timing, ...]  # up to time_T; seconds None where the budget ran out
    threads: int  # torch's CPU threads when measured
    slower: int | None  # the shortest T from which attention stays slower than torch's RNN
    slower_at: tuple[int, ...]  # every T at which attention was slower


_timed_widths: set[int] = set()  # widths measured on this server (at most len(WIDTHS))
_lock = threading.Lock()


def timed(d: int) -> bool:
    """Has the stopwatch run at width d on this server (the default width counts as run)?"""
    with _lock:
        return d == DEFAULT_WIDTH or d in _timed_widths


@bounded_cache(2 * len(WIDTHS), max_bytes=1_000_000)
def _measured(d: int, attempt: int) -> tuple[tuple[Timing, ...], int]:
    timings = tuple(forward_times(MEASURED_LENGTHS, d, TIMING_BUDGET_S))
    with _lock:
        _timed_widths.add(d)
    return timings, torch.get_num_threads()


def stopwatch_view(settings: StopwatchSettings) -> StopwatchView:
    timings, threads = _measured(settings.d, settings.attempt)
    shown = tuple(t for t in timings if settings.time_T >= t.T)
    return StopwatchView(settings, shown, threads, slower_from(shown, "attention", "rnn"),
                         slower_at(shown, "attention", "rnn"))
