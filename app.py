"""Attention Explorer — entry point.  Run with:  streamlit run app.py"""

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
