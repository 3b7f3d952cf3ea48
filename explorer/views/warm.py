"""Compute every lesson's default view once, when a server starts, so that a lecturer's first click
on each lesson finds its numbers already cached (a fresh server's first visit to the gradient lesson
took 7.6 s).  app.py runs this in its background thread after the first page is shown.

The arguments are the pages' defaults; tests/unit/test_warm.py runs each page after warming and
checks that its cached computations were hits, so the two cannot drift apart.
"""

from __future__ import annotations

import time

from .attention import PRESETS, ModelChoice, default_shape, view_for
from .pool import REQUESTER, Requester

__all__ = ["warm_default_views"]

# The defaults of the lesson pages' controls (app_pages/*.py).
ATTENTION_TASK = "reverse"


def warm_default_views() -> dict[str, float]:
    """Compute the default views; returns the seconds each lesson took (a failure, such as a damaged
    model file, is left for the page to report and skipped here)."""
    encoding, heads, layers = default_shape(ATTENTION_TASK)
    tokens = tuple(PRESETS[ATTENTION_TASK][0].split())
    steps = {
        "attention": lambda: view_for(ModelChoice(ATTENTION_TASK, encoding, heads, layers, True), tokens, "causal",
                                      len(tokens)),
    }
    seconds = {}
    # The heavy pieces go through the work pool as one more session, taking turns with the visitors.
    token = REQUESTER.set(Requester("server warm-up"))
    try:
        _run_steps(steps, seconds)
    finally:
        REQUESTER.reset(token)
    return seconds


def _run_steps(steps: dict, seconds: dict[str, float]) -> None:
    for lesson, compute in steps.items():
        started = time.perf_counter()
        try:
            compute()
        except Exception:
            continue
        seconds[lesson] = time.perf_counter() - started
