"""The app of benchmarks/label_cost.py: one page per figure in LABEL_COST_DIR (<name>.json, a Plotly
spec; order and titles in index.json), each drawing its title and that figure alone, as the app's
pages draw a chart (st.plotly_chart, full width)."""

import json
import os
from pathlib import Path

import plotly.graph_objects as go
import streamlit as st

FOLDER = Path(os.environ.get("LABEL_COST_DIR", "."))
st.set_page_config(page_title="label cost", layout="wide")


def make(name: str, title: str):
    def page() -> None:
        st.title(title)
        spec = json.loads((FOLDER / f"{name}.json").read_text())
        st.plotly_chart(go.Figure(spec, _validate=False), width="stretch", key="chart")
    return st.Page(page, title=title, url_path=name)


home = st.Page(lambda: st.title("Home"), title="Home", default=True)
index = json.loads((FOLDER / "index.json").read_text())
st.navigation([home, *(make(name, title) for name, title in index.items())]).run()
