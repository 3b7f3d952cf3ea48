"""Attention Explorer — entry point.  Run with:  streamlit run app.py"""

import os
from pathlib import Path

# The models are tiny: extra threads cost more than they save, and sessions already run in parallel.
# Set before torch is first imported (torch reads it then); torch.set_num_threads(1) follows in
# explorer/serve/startup.py, which imports torch in the background after the first run.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import streamlit as st

from explorer.kit.present import presenting_at_start
from explorer.serve.catalog import PAGES  # loads without torch (explorer/__init__.py)
from explorer.serve.chart_code import on_a_page_without_charts
from explorer.serve.later import note_page_opened
from explorer.serve.startup import after_page_run, serve_promptly

serve_promptly()  # TCP_NODELAY on the server's sockets, once: a switch's messages leave without delay

# A shipped icon: Material icons would be fetched from the internet for the browser tab.
# Presenting (a ?present=1 link, or the session's mode when another page opens), the sidebar starts
# folded away, so the figure has the screen.
st.set_page_config(page_title="Attention Explorer", page_icon=Path(__file__).parent / "assets" / "icon.png",
                   layout="wide", initial_sidebar_state="collapsed" if presenting_at_start() else "auto")

navigation = st.navigation(
    [
        st.Page(page.path, title=page.title, icon=page.icon, default=not page.url_path,
                **({"url_path": page.url_path} if page.url_path else {}))
        for page in PAGES
    ],
    expanded=True,  # every lesson listed: folded, the last three of twelve hid behind "View 3 more"
)
note_page_opened(navigation.url_path)  # a lesson opened in a browser draws its key figure first
navigation.run()
on_a_page_without_charts(navigation.url_path)  # home: the charts' code loads while the visitor reads
after_page_run(navigation.url_path)  # the first run of each page: a frozen heap, then the warm-up (once)
