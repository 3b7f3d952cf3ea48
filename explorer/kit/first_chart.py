"""A staged opening (explorer/serve/opening.py) ends its run once the key figure is sent: whatever
the key section draws after its first chart (a second chart beside it, a table, the text under it)
comes with the whole page, a run later, so that the browser lays out nothing else before drawing it.

    with until_first_chart(staged):      # the adapter, around the key section
        section.draw(shown)
    chart_sent()                         # the chart helpers, after sending a chart

Every chart of a page is sent through explorer.serve's `plotly_chart` or `altair_chart`, which call
`chart_sent()`.  Each script run has its own thread, so the flag is the thread's.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["chart_sent", "until_first_chart"]

_run = threading.local()


class _KeyFigureSent(Exception):
    """Raised in a staged run by `chart_sent`: the rest of the key section waits for the whole page."""


@contextmanager
def until_first_chart(staged: bool) -> Iterator[None]:
    """Around the key section: with `staged`, its drawing stops right after its first chart."""
    _run.stop_after_chart = staged
    try:
        yield
    except _KeyFigureSent:
        pass
    finally:
        _run.stop_after_chart = False


def chart_sent() -> None:
    """Called right after a chart is sent: ends the key section's drawing in a staged run."""
    if getattr(_run, "stop_after_chart", False):
        _run.stop_after_chart = False
        raise _KeyFigureSent
