"""Attention Explorer — entry point.  Run with:  streamlit run app.py"""

import gc
import os
import threading
from pathlib import Path

# The models are tiny: extra threads cost more than they save, and sessions already run in parallel.
# Set before torch is first imported (torch reads it then); torch.set_num_threads(1) follows below.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import streamlit as st

from explorer.serve.later import note_page_opened
from explorer.ui.catalog import PAGES  # loads without torch (explorer/__init__.py)
from explorer.ui.present import presenting_from_link


@st.cache_resource(show_spinner=False)
def _import_in_background() -> threading.Thread:
    """Import torch and the library in the background after the first run, then compute every
    lesson's default view.  The home page needs neither, so a fresh server shows it without waiting
    for torch's import; a lesson page opened meanwhile waits for the rest of the
    import, as it would have anyway, and computes its own view if the warm-up has not reached it."""

    def work() -> None:
        import torch

        torch.set_num_threads(1)
        from explorer.serve.adapter import warm_lessons  # every lesson's views and figures, through LESSONS

        # Then every lesson's default view, so a lecturer's first click finds it computed.
        if os.environ.get("EXPLORER_WARM", "1") != "0":
            warm_lessons()  # every lesson's view(Settings()), as its page asks for it
        if os.environ.get("EXPLORER_GC_FREEZE", "1") != "0":  # as after a page's first run (below)
            gc.collect()
            gc.freeze()

    thread = threading.Thread(target=work, name="import-torch", daemon=True)
    thread.start()
    return thread

# A shipped icon: Material icons would be fetched from the internet for the browser tab.
# A projected link (?present=1) opens with the sidebar folded away, so the figure has the screen.
st.set_page_config(page_title="Attention Explorer", page_icon=Path(__file__).parent / "assets" / "icon.png",
                   layout="wide", initial_sidebar_state="collapsed" if presenting_from_link() else "auto")

navigation = st.navigation(
    [
        st.Page(page.path, title=page.title, icon=page.icon, default=not page.url_path,
                **({"url_path": page.url_path} if page.url_path else {}))
        for page in PAGES
    ]
)
note_page_opened(navigation.url_path)  # a lesson opened in a browser draws its key figure first
navigation.run()


# With streamlit, torch, plotly and pandas loaded, a full garbage collection walks every long-lived
# object they made.  After the first run of each page (its imports and models loaded), collect once
# and freeze what is left: Python's full collections (and Streamlit's after every run, where
# runner.postScriptGC is on; .streamlit/*.toml turn it off) skip those objects.  Measured in
# benchmarks/RESULTS.md (phase gc); EXPLORER_GC_FREEZE=0 turns it off there.
@st.cache_resource(show_spinner=False)
def _pages_run() -> set[str]:
    return set()


if navigation.url_path not in _pages_run():  # the first run of this page on this server
    _pages_run().add(navigation.url_path)
    if os.environ.get("EXPLORER_GC_FREEZE", "1") != "0":
        gc.collect()
        gc.freeze()
    # Last, so that the import does not compete with this run for the interpreter (started once).
    _import_in_background()
