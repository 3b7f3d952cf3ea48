"""The charts' code, fetched before the first chart is needed.

A browser tab draws its first Plotly or Vega-Lite chart only once Streamlit has fetched and started
that chart library's code (several megabytes of JavaScript, loaded on first use).  Where a page shows
no chart yet — the home page, a lesson step whose question hides the figures — `load_chart_code()`
draws one tiny chart of each kind, never seen (display: none), so that the code loads while the
visitor reads, instead of in the moment they open a lesson or press Reveal.

The home page builds no figure of its own, so its run may be the first of this server to check a
Plotly figure while another thread (the warm-up, a lesson's first run) is still importing pandas.
Plotly asks whether a value is a pandas Series by looking pandas up among the loaded modules
without importing it (`_plotly_utils.optional_imports.get_module(..., should_load=False)`): it finds
the module half made and the check fails ("partially initialized module 'pandas' has no attribute
'Series'"), an error box on the home page of a class arriving at a fresh server.  An import
statement waits for another thread's import of the same module to finish, so `load_chart_code`
imports pandas before it draws (a lesson page has, through explorer.figures, before its first figure).
"""

from __future__ import annotations

import streamlit as st

from .later import opening

__all__ = ["load_chart_code", "on_a_page_without_charts"]

_KEY = "explorer-chart-code"
_TINY_PLOTLY = {"data": [{"type": "scatter", "x": [0], "y": [0]}], "layout": {"width": 10, "height": 10}}
_TINY_VEGA = {"mark": "point", "data": {"values": [{"x": 0}]}, "encoding": {"x": {"field": "x"}}}


def load_chart_code() -> None:
    """One tiny Plotly and one tiny Vega-Lite chart, hidden (see the module)."""
    import pandas  # noqa: F401  -- whole before Plotly looks for it (see the module)

    with st.container(key=_KEY):
        st.html(f"<style>.st-key-{_KEY} {{ display: none; }}</style>")
        st.plotly_chart(_TINY_PLOTLY, key="_chart_code_plotly")
        st.vega_lite_chart(_TINY_VEGA, key="_chart_code_vega")


def on_a_page_without_charts(url_path: str) -> None:
    """app.py, after every page run: the home page (`url_path` "") shows no chart, so the run that
    opens it in a browser loads their code for the first lesson the visitor opens (a later run of
    the same page leaves it out: the tab has the code by then).  AppTest has no browser, and no
    chart code to load (explorer/serve/later.py, `opening`)."""
    if not url_path and opening():
        load_chart_code()
