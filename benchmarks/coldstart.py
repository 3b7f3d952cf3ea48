"""Cold start: process start to the home page rendered, then the first visit to every page.

Each round starts a fresh `streamlit run app.py` (same flags as the other benchmarks), waits for
/_stcore/health, opens the home page over the websocket and waits for its `script_finished`, then
visits every page of explorer.serve.catalog.PAGES once in catalog order, each in a new session (what the
first student to open each page waits for: imports, model loading, first figures).
"""

from __future__ import annotations

import asyncio
import statistics
import time

from explorer.serve.catalog import PAGES
from harness.server import streamlit_server
from harness.wsclient import Session

from .latency import page_label


async def _visit(url: str, url_path: str) -> tuple[float, bool, str]:
    session = Session(url, url_path)
    try:
        await session.connect()
        result = await session.open()  # with the sections under the key figure, as a browser
        return result.seconds, result.ok, result.status
    finally:
        await session.close()


def run_cold_start(rounds: int = 3, options: dict | None = None) -> dict:
    runs = []
    for _ in range(rounds):
        with streamlit_server(options=options, name="coldstart") as server:
            healthy = server.ready_seconds
            home_seconds, ok, status = asyncio.run(_visit(server.url, ""))
            to_home = time.monotonic() - server.started
            first_visits = {}
            for info in PAGES:
                if not info.url_path:
                    continue
                seconds, page_ok, page_status = asyncio.run(_visit(server.url, info.url_path))
                first_visits[page_label(info.url_path)] = {"ms": round(seconds * 1000, 1), "ok": page_ok,
                                                           "status": page_status}
            runs.append({"health_s": round(healthy, 2), "home_run_s": round(home_seconds, 2),
                         "start_to_home_s": round(to_home, 2), "home_ok": ok, "home_status": status,
                         "first_visit": first_visits, "rss_mb_after": round(server.rss_mb(), 1)})
    pages = [page_label(p.url_path) for p in PAGES if p.url_path]
    return {
        "rounds": runs,
        "start_to_home_s_median": round(statistics.median(r["start_to_home_s"] for r in runs), 2),
        "start_to_home_s_max": round(max(r["start_to_home_s"] for r in runs), 2),
        "first_visit_ms_median": {p: round(statistics.median(r["first_visit"][p]["ms"] for r in runs), 1)
                                  for p in pages},
    }
