"""Heavy work in pieces: where a view cuts a long computation, and nothing about where it runs.

A heavy view (the gradient curves at T = 512, a 24-layer depth stack, the stopwatch) is cut into
pieces of at most a few tenths of a second of CPU each, and runs each one as `piece(fn, *args)`:

    curves = piece(recurrent_log_gradient_norms, kind, width, T, seeds=seeds)
    distance, right = recall_correct(model, task, run=piece)   # a function that takes a runner

Who runs the piece is the runtime's business (explorer/serve/pool.py: one bounded pool per server
process, fair between sessions, a superseded rerun stopped between pieces): it installs a runner for
each page run (`install`) and for its warm-up (`run_pieces_with`, a block).  Without one (tests,
scripts, benchmarks) the piece is called directly.  An exception raised by a piece reaches its
caller either way.

A foundation of the library, as explorer/caching.py: every layer may import it; it imports nothing
of explorer and holds no thread.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

__all__ = ["Runner", "install", "piece", "run_pieces_with"]

Runner = Callable[..., object]  # runner(fn, *args, **kwargs) -> fn(*args, **kwargs), run where it chooses

_RUNNER: ContextVar[Runner | None] = ContextVar("explorer_piece_runner", default=None)


def piece(fn: Callable, /, *args, **kwargs):
    """fn(*args, **kwargs), run by the runner of the current context (directly where there is none)."""
    runner = _RUNNER.get()
    return fn(*args, **kwargs) if runner is None else runner(fn, *args, **kwargs)


@contextlib.contextmanager
def run_pieces_with(runner: Runner | None) -> Iterator[None]:
    """Pieces started in this context, inside the block, are run by `runner` (None: directly)."""
    token = _RUNNER.set(runner)
    try:
        yield
    finally:
        _RUNNER.reset(token)


def install(runner: Runner | None) -> None:
    """Pieces started in this context, from now on, are run by `runner`: for a script run that owns
    its thread's context until it ends (explorer/serve/page.py)."""
    _RUNNER.set(runner)
