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

import plotly.graph_objects as go
import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project root, for `benchmarks`

from benchmarks.profiles import load_profile

PROFILE_DIR = Path(os.environ.get("FLOOR_PROFILE_DIR", "benchmarks/profiles"))
ALERTS = {1: "error", 2: "warning", 3: "info", 4: "success"}

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
    where = st.sidebar if item.sidebar else st
    key = f"w{i}"
    if item.kind == "plotly":
        where.plotly_chart(go.Figure(item.payload, _validate=False), width="stretch", key=key)
    elif item.kind == "vega":
        spec, datasets, data = item.payload
        full = dict(spec)
        if datasets:
            full["datasets"] = datasets
        where.vega_lite_chart(data, spec=full, width="stretch", key=key)
    elif item.kind == "dataframe":
        where.dataframe(item.payload)
    elif item.kind == "markdown":
        where.markdown(item.payload)
    elif item.kind == "alert":
        getattr(where, ALERTS.get(item.payload[0], "info"))(item.payload[1])
    elif item.kind == "block":
        where.container()
    elif item.kind == "slider":
        label, low, high, step, data_type = item.payload
        if data_type == 0:  # Slider.DataType.INT: keep the number type of the original
            low, high, step = int(low), int(high), int(step)
        where.slider(label, min_value=low, max_value=high, step=step, key=key)
    elif item.kind == "select_slider":
        label, options = item.payload
        where.select_slider(label, options=options, key=key)
    elif item.kind == "selectbox":
        label, options = item.payload
        where.selectbox(label, options, key=key)
    elif item.kind == "radio":
        label, options = item.payload
        where.radio(label, options, key=key, horizontal=True)
    elif item.kind == "checkbox":
        where.toggle(item.payload[0], key=key)
    elif item.kind == "text_area":
        label, default, max_chars = item.payload
        where.text_area(label, default, max_chars=max_chars or None, key=key)
    elif item.kind == "button":
        where.button(item.payload or "button", key=key)
    elif item.kind == "download_button":
        label, data = item.payload
        where.download_button(label, data=data, file_name="data.csv", key=key, on_click="ignore")

freeze_once()
