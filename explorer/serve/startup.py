"""What runs once per server process: torch's import and every lesson's warm-up in the background,
a frozen heap after each page's first run, and freed memory given back (explorer/serve/memory.py).
No torch at import: app.py imports this module before its first run, and the home page renders
without waiting for torch.

    after_page_run(url_path)   app.py, after every page run
    serve_promptly()           app.py, before every run: TCP_NODELAY on the server's sockets (once)
"""

from __future__ import annotations

import gc
import os
import threading

import streamlit as st

from .memory import keep_released
from .sockets import send_without_delay

__all__ = ["after_page_run", "serve_promptly"]


@st.cache_resource(show_spinner=False)
def serve_promptly() -> int:
    """Once per server, in its first run: every message leaves as soon as it is written
    (explorer/serve/sockets.py); the connections accepted later inherit the option.  How many sockets
    were set."""
    return send_without_delay()


@st.cache_resource(show_spinner=False)
def _import_in_background() -> threading.Thread:
    """Import torch and the library in the background after the first run, then compute every
    lesson's default view.  The home page needs neither, so a fresh server shows it without waiting
    for torch's import; a lesson page opened meanwhile waits for the rest of the
    import, as it would have anyway, and computes its own view if the warm-up has not reached it."""

    def work() -> None:
        import torch

        torch.set_num_threads(1)
        from .adapter import warm_lessons  # every lesson's views and figures, through LESSONS

        # Then every lesson's default view, so a lecturer's first click finds it computed.
        if os.environ.get("EXPLORER_WARM", "1") != "0":
            warm_lessons()  # every lesson's view(Settings()), as its page asks for it
        if os.environ.get("EXPLORER_GC_FREEZE", "1") != "0":  # as after a page's first run (below)
            gc.collect()
            gc.freeze()
        keep_released()  # the warm-up's temporaries back to the system, and later computations' too

    thread = threading.Thread(target=work, name="import-torch", daemon=True)
    thread.start()
    return thread


@st.cache_resource(show_spinner=False)
def _pages_run() -> set[str]:
    return set()


def after_page_run(url_path: str) -> None:
    """After the first run of each page on this server: collect once and freeze what is left, then
    start the background import (once).

    With streamlit, torch, plotly and pandas loaded, a full garbage collection walks every long-lived
    object they made.  After the first run of a page (its imports and models loaded), the objects
    left are frozen: Python's full collections (and Streamlit's after every run, where
    runner.postScriptGC is on; .streamlit/*.toml turn it off) skip them.  Measured in
    benchmarks/RESULTS.md (phase gc); EXPLORER_GC_FREEZE=0 turns it off there."""
    if url_path in _pages_run():
        return
    _pages_run().add(url_path)
    if os.environ.get("EXPLORER_GC_FREEZE", "1") != "0":
        gc.collect()
        gc.freeze()
    # Last, so that the import does not compete with this run for the interpreter (started once).
    _import_in_background()
