"""The only Streamlit code of explorer: URL-bound controls, downloads, chart helpers, the page
catalog and the lesson text kept as Markdown beside the pages.  Loads without torch, so the home
page renders before torch is imported."""

from .controls import OWN_TEXT, UrlControls, altair_chart, download_csv, page_header, sequence_input
from .lessons import lesson_text

__all__ = ["OWN_TEXT", "UrlControls", "altair_chart", "download_csv", "lesson_text", "page_header", "sequence_input"]
