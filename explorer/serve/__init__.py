"""The lesson runtime, and the only Streamlit code of explorer: a lesson is a declaration (settings,
view, figures, named sections); this package owns what serving it takes — the one cache keyed by a
lesson's settings, the figures made once per setting, the warm-up of every lesson's default view,
and the adapter to Streamlit.

    runtime.py   the one cache, the budget of every cache, and the warm-up (no Streamlit)
    adapter.py   `serve_lesson`: a page script declares its sections; this draws them
    opening.py   a lesson opened in a browser: its key figure first, its controls a run later
    first_chart.py  that first run stops once its key figure is sent
    later.py     the sections under the key figure, drawn in a run of their own after a Reveal
    page.py      the page's frame: its steps, the presentation mode, the next lesson, the work pool's turn
    live.py      a lesson that trains on the server (`LessonSpec.live`): its buttons, the session's
                 run in the training manager, the polling fragment and the replay
    startup.py   once per server: torch's import and the warm-up in the background, gc.freeze
    sockets.py   once per server: TCP_NODELAY, so that each message of a run leaves as it is written
    controls.py, links.py, widgets.py   URL-bound controls (every link value read, bad ones noted)
    present.py   presentation mode (?present=1) and Plotly charts drawn for it
    steps.py, prose.py, text.py   lesson steps and lesson text, kept as files beside the pages
    chart_code.py  the charts' code fetched where no chart is shown yet (the home page, a step's question)
    catalog.py   the app's pages: home, then the lessons the registry finds (explorer/lessons);
    client.py    the visitor's address
    internals.py every use of Streamlit's non-public modules (tests/unit/test_streamlit_internals.py)

Every cache of the library is made by explorer/caching.py; runtime.py lists, budgets and clears them.
Every lesson page (explorer/lessons/<name>/<name>.py) is one call to `serve_lesson`; this package names no
lesson: it reaches them through the registry (explorer.lessons.LESSONS, specs()).

The names below are what a page script uses besides `serve_lesson`.  They load without torch, so
the home page renders before torch is imported.
"""

from .chart_code import load_chart_code
from .controls import OWN_TEXT, UrlControls, altair_chart, download_csv, vega_lite_spec
from .present import plotly_chart, presenting
from .prose import lesson_text
from .steps import Lesson
from .text import escape_markdown, quoted

__all__ = ["OWN_TEXT", "Lesson", "UrlControls", "altair_chart", "download_csv", "escape_markdown", "lesson_text",
           "load_chart_code", "plotly_chart", "presenting", "quoted", "vega_lite_spec"]
