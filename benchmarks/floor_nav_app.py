"""Multipage floor apps for the browser benchmark (benchmarks/browser_speed.py): the same
Streamlit, the same page names and URL paths as the app (st.navigation over explorer.serve.catalog.PAGES),
so a sidebar switch can be timed on the floor exactly as on the app.

FLOOR_MODE=heatmap: every page draws a title and one 32×32 Plotly heatmap under a slider that shifts it.
FLOOR_MODE=profile: every page draws what one run of the real page sent (FLOOR_PROFILE_DIR/<page>.pkl,
recorded by browser_speed with benchmarks/profiles.py): the same number and kinds of figures with the same
arrays, tables, text and widgets; moving any slider shifts the first Plotly figure's data a little, so a
control change repaints that figure as on the app.  No model, no maths: what Streamlit and the browser
cost for that output.
FLOOR_MODE=alone: every page draws its title and its lesson's key figure (the first chart of the main
area the real page sent), nothing else: what the figure itself costs, with no text, control or other
section.
"""

import os
import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project root

from benchmarks.profiles import draw_item, load_profile
from explorer.serve.catalog import PAGES
from explorer.serve.chart_code import load_chart_code

MODE = os.environ.get("FLOOR_MODE", "heatmap")
PROFILE_DIR = Path(os.environ.get("FLOOR_PROFILE_DIR", "benchmarks/profiles"))

st.set_page_config(page_title="floor", layout="wide")


@st.cache_resource(show_spinner=False)
def profile(name: str):
    path = PROFILE_DIR / f"{name}.pkl"
    return load_profile(path) if path.exists() else []


def heatmap_page(title: str) -> None:
    st.title(title)
    shift = st.slider("Shift", 0.0, 1.0, 0.5, 0.05, key="shift")
    z = np.add.outer(np.arange(32), np.arange(32)) / 62.0 + shift
    st.plotly_chart(go.Figure(go.Heatmap(z=z), _validate=False), width="stretch", key="heat")


def _shifted(spec: dict, delta: float) -> dict:
    """The spec with the first numeric array of its first trace moved by `delta`."""
    data = [dict(t) for t in spec.get("data", [])]
    if data and delta:
        for name in ("z", "y", "x"):
            value = data[0].get(name)
            if isinstance(value, list):
                try:
                    value = np.asarray(value, dtype=float)
                except (TypeError, ValueError):
                    continue
            if isinstance(value, np.ndarray) and value.dtype.kind in "fiu" and value.size:
                value = value.astype(float)
                value.flat[0] += delta
                data[0][name] = value
                break
    return {**spec, "data": data}


def profile_page(name: str) -> None:
    items = profile(name)
    delta = sum(float(v) for k, v in st.session_state.items()
                if k.startswith("w") and isinstance(v, (int, float)) and not isinstance(v, bool)) * 1e-3
    first_plot, titled = True, False
    if MODE == "alone":  # the page's title and its key figure (the first chart of the main area)
        main = [item for item in items if not item.sidebar]
        items = [next(item for item in main if item.kind == "markdown"),
                 next(item for item in main if item.kind in ("plotly", "vega"))]
    for i, item in enumerate(items):
        where = st.sidebar if item.sidebar else st
        if item.kind == "plotly" and first_plot:
            first_plot = False
            draw_item(item, where, f"w{i}", plotly_spec=_shifted(item.payload, delta))
        elif item.kind == "markdown" and not item.sidebar and not titled:  # the page's title: an h1, as on the app
            titled = True
            st.title(item.payload)
        elif item.kind != "block":
            draw_item(item, where, f"w{i}")


def make(info):
    def page() -> None:
        if not info.url_path:  # home, as the app's: text, and the charts' code fetched while it is read
            st.title(info.title)
            st.markdown("The floor's home page: no chart shown.")
            load_chart_code()
        elif MODE in ("profile", "alone"):
            profile_page(info.url_path)
        else:
            heatmap_page(info.title)
    page.__name__ = f"page_{info.url_path or 'home'}"
    return page


st.navigation([st.Page(make(info), title=info.title, icon=info.icon, default=not info.url_path,
                       **({"url_path": info.url_path} if info.url_path else {})) for info in PAGES]).run()
