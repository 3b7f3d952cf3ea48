"""The server: what serving the lessons takes, for any lesson (it names none, and reaches them through
the registry, explorer.lessons). A lesson's page script calls `serve_lesson` (adapter.py) with its
sections; what the page draws with is the lesson kit's (explorer/kit).

    adapter.py   `serve_lesson`: a page script declares its sections; this draws them
    runtime.py   the one cache, the budget of every cache, and the warm-up (no Streamlit)
    opening.py   a lesson opened in a browser: its key figure first, its controls a run later
    later.py     the sections under the key figure, drawn in a run of their own after a Reveal
    page.py      the page's frame: its steps, the presentation mode, the next lesson, the work pool's turn
    pool.py      the work pool: the views' computations, fair between sessions
    live.py      a lesson that trains on the server (`LessonSpec.live`): its buttons, the session's
                 run in the training manager, the polling fragment and the replay
    startup.py   once per server: torch's import and the warm-up in the background, gc.freeze
    sockets.py   once per server: TCP_NODELAY, so that each message of a run leaves as it is written
    memory.py    once per server: freed memory handed back to the system
    chart_code.py  the charts' code fetched where no chart is shown yet (the home page, a step's question)
    catalog.py   the app's pages: home, then the lessons the registry finds (explorer/lessons)
    client.py    the visitor's address

Every cache of the library is made by explorer/caching.py; runtime.py lists, budgets and clears them.
This package file imports nothing, so that app.py's navigation (catalog.py) loads without torch.
"""
