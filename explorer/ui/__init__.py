"""The only Streamlit code of explorer: URL-bound controls, downloads, chart helpers and the page
catalog.  Loads without torch, so the home page renders before torch is imported."""

from .controls import OWN_TEXT, UrlControls, altair_chart, download_csv, page_header, sequence_input

__all__ = ["OWN_TEXT", "UrlControls", "altair_chart", "download_csv", "page_header", "sequence_input"]
