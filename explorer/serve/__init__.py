"""The lesson runtime: a lesson is a declaration (settings, view, figures, named sections); this
package owns what serving it takes — the one cache keyed by a lesson's settings, the figures made
once per setting, the warm-up of every lesson's default view, and the adapter to Streamlit.

    lessons.py   every lesson's declaration (`LessonSpec`) and the catalogue of them (`LESSONS`)
    runtime.py   the one cache and the warm-up (no Streamlit)
    adapter.py   `serve_lesson`: a page script declares its sections; this draws them
    live.py      a lesson that trains on the server (`LessonSpec.live`): its buttons, the session's
                 run in the training manager, the polling fragment and the replay
    startup.py   once per server: torch's import and the warm-up in the background, gc.freeze

Every cache of the library is made by explorer/caching.py; runtime.py lists, budgets and clears them.

Every lesson page (app_pages/, all but home.py) is one call to `serve_lesson`.
"""
