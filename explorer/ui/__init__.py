"""The only Streamlit code of explorer: URL-bound controls, downloads, chart helpers, the page
catalog and the lesson text kept as Markdown beside the pages.  Loads without torch, so the home
page renders before torch is imported."""

from .controls import OWN_TEXT, UrlControls, altair_chart, download_csv, vega_lite_spec
from .present import plotly_chart, presenting
from .prose import lesson_text
from .steps import Lesson
from .text import escape_markdown, quoted

__all__ = [
           "OWN_TEXT",
           "Lesson",
           "UrlControls",
           "altair_chart",
           "download_csv",
           "escape_markdown",
           "lesson_text",
           "plotly_chart",
           "presenting",
           "quoted",
           "vega_lite_spec",
]
