"""A lecturer's first click on each lesson of a fresh server, with and without the warm-up.

    .venv/bin/python -m benchmarks.first_click [--wait 20]   (phase `first-click` of benchmarks/run.py)

For each setting (EXPLORER_WARM=1, then 0) a new `streamlit run app.py` is started; Chromium opens
the home page (the server's first run, which starts the background import and warm-up), waits
`--wait` seconds (the lecturer introducing the lesson), then clicks each lesson in the sidebar in
turn and measures the time from the click until that page's script has finished and its first chart
is drawn.  Prints one line per lesson and setting.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from playwright.sync_api import sync_playwright

from explorer.lessons import LESSONS
from harness.server import streamlit_server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
CHART = ".js-plotly-plot .main-svg, .vega-embed canvas, .vega-embed svg"


def first_clicks(warm: bool, wait_s: float) -> dict[str, float]:
    times = {}
    with streamlit_server(env={"EXPLORER_WARM": "1" if warm else "0"}, name=f"first-click-{int(warm)}") as server, \
            sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True,
                                                                args=ARGS, viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.goto(server.url, wait_until="domcontentloaded")
        page.wait_for_selector(IDLE, timeout=60_000)
        time.sleep(wait_s)
        for lesson in LESSONS:
            link = page.locator(f"[data-testid='stSidebarNav'] a[href$='/{lesson.url_path}']").first
            started = time.perf_counter()
            link.click()
            page.wait_for_url(f"**/{lesson.url_path}*", timeout=60_000)
            page.wait_for_selector(CHART, timeout=120_000)
            page.wait_for_selector(IDLE, timeout=120_000)
            times[lesson.url_path] = time.perf_counter() - started
        context.close()
    return times


def run(wait_s: float = 20.0) -> dict:
    """Phase `first-click` of benchmarks/run.py: seconds per lesson, warm-up on and off."""
    on, off = first_clicks(True, wait_s), first_clicks(False, wait_s)
    return {"wait_s": wait_s, "lessons": {lesson: {"warm_s": round(on[lesson], 2), "cold_s": round(off[lesson], 2)}
                                          for lesson in on}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wait", type=float, default=20.0, help="seconds between opening the home page and the clicks")
    args = parser.parse_args()
    result = run(args.wait)
    print(f"{'lesson':<12} {'warm-up on':>11} {'warm-up off':>12}")
    for lesson, row in result["lessons"].items():
        print(f"{lesson:<12} {row['warm_s']:>10.2f}s {row['cold_s']:>11.2f}s")


if __name__ == "__main__":
    main()
