"""The only Streamlit code of explorer: URL-bound controls, downloads, chart helpers and the page
catalog.  Loads without torch, so the home page renders before torch is imported."""

from .controls import OWN_TEXT, UrlControls, altair_chart, download_csv, page_header, sequence_input
from .text import escape_markdown, quoted

__all__ = ["OWN_TEXT", "UrlControls", "altair_chart", "download_csv", "escape_markdown", "page_header", "quoted",
           "sequence_input"]
