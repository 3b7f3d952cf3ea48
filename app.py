"""Attention Explorer — entry point.  Run with:  streamlit run app.py"""

import gc
import os
from pathlib import Path

import streamlit as st
import torch

from explorer.catalog import PAGES

# The models are tiny: extra threads cost more than they save, and sessions already run in parallel.
torch.set_num_threads(1)

# A shipped icon: Material icons would be fetched from the internet for the browser tab.
st.set_page_config(page_title="Attention Explorer", page_icon=Path(__file__).parent / "assets" / "icon.png",
                   layout="wide")

navigation = st.navigation(
    [
        st.Page(page.path, title=page.title, icon=page.icon, default=not page.url_path,
                **({"url_path": page.url_path} if page.url_path else {}))
        for page in PAGES
    ]
)
navigation.run()


# Streamlit runs a full garbage collection after every script run (runner.postScriptGC).  With
# streamlit, torch, plotly and pandas loaded that walks ~300 000 long-lived objects, 60-150 ms on
# every rerun.  After the first run of each page (its imports and models loaded), collect once and
# freeze what is left: later collections skip those objects and take a few ms, and per-run garbage
# is still collected.  Measured in benchmarks/RESULTS.md; EXPLORER_GC_FREEZE=0 turns it off there.
@st.cache_resource(show_spinner=False)
def _gc_frozen_pages() -> set[str]:
    return set()


if os.environ.get("EXPLORER_GC_FREEZE", "1") != "0" and navigation.url_path not in _gc_frozen_pages():
    _gc_frozen_pages().add(navigation.url_path)
    gc.collect()
    gc.freeze()
