"""The floor app: draws a recorded page from precomputed data, with no model and no maths.

Run by the benchmark as `streamlit run benchmarks/floor_app.py` with FLOOR_PROFILE_DIR set; a
session opens it with `?profile=NAME` and every run draws the items of NAME.pkl (written by
benchmarks/profiles.py from one run of a real page) through the same public Streamlit calls the
pages use: the same number of Plotly figures with the same arrays, the same Vega-Lite charts and
data, dataframes, text and widgets.  Its rerun time is what Streamlit itself costs for that
output: the floor the page's own time is compared with.
"""

import gc
import os
import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project root, for `benchmarks`

from benchmarks.profiles import draw_item, load_profile

PROFILE_DIR = Path(os.environ.get("FLOOR_PROFILE_DIR", "benchmarks/profiles"))

st.set_page_config(page_title="floor", layout="wide")


@st.cache_resource(show_spinner=False)
def profile(name: str):
    """Parsed once per process: the precomputed arrays every run draws."""
    return load_profile(PROFILE_DIR / f"{Path(name).name}.pkl")


@st.cache_resource(show_spinner=False)
def freeze_once() -> bool:
    """Same garbage-collection treatment as app.py, so the comparison is about the page's own work."""
    if os.environ.get("EXPLORER_GC_FREEZE", "1") != "0":
        gc.collect()
        gc.freeze()
    return True


name = st.query_params.get("profile", "")
if not name:
    st.write("Open with ?profile=NAME")
    st.stop()

for i, item in enumerate(profile(name)):
    draw_item(item, st.sidebar if item.sidebar else st, f"w{i}")

freeze_once()
