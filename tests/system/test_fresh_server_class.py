"""A class arriving at a fresh server: thirty first visits at once, spread over every page, the home
page among them, on the README's server (`streamlit run app.py`).  Every session loads, and none
shows an error box.

On a fresh server the first page run starts the warm-up, which imports the library (pandas with
it) in the background, while the other sessions' runs draw their pages.  The home page checks a
Plotly figure (the hidden chart that loads the charts' code, explorer/serve/chart_code.py); Plotly
looks pandas up among the loaded modules without importing it, so a home page run that met pandas
half imported showed "partially initialized module 'pandas' has no attribute 'Series'" (3 of 30
sessions, every time, before the fix).
"""

from __future__ import annotations

from explorer.serve.catalog import PAGES
from harness.apptest import run_async
from harness.burst import burst
from harness.server import streamlit_server

CLASS = 30


def test_a_class_opening_every_page_of_a_fresh_server_at_once_all_load():
    pages = [page.url_path for page in PAGES]
    assert "" in pages  # the home page is among them
    with streamlit_server(name="fresh-class") as server:
        result = run_async(burst(server.url, pages, CLASS))
    summary = result.summary()
    print(f"{CLASS} first visits over {len(pages)} pages: slowest {summary['slowest_s']} s")
    assert (summary["loaded"], summary["errors"]) == (CLASS, 0), summary["problems"]
