"""A lecturer's first press of Train on a fresh server, against a later press (Chromium).

    .venv/bin/python -m benchmarks.train_first [--reps 3] [--wait 3]   (phase `train-first` of benchmarks/run.py)

Each repetition starts a new `streamlit run app.py`, opens the Train lesson in Chromium, waits `--wait`
seconds (the lecturer introducing it), presses Train and measures the seconds from the click until the
attention grid first changes (the run's first snapshot drawn); then presses Stop and does the same with
another seed, a run the server has not cached: a later press.  The ratio first ÷ later is what the
first press costs beyond any press: the training process started, its code imported, torch's first
pass (explorer/training/worker.py; the page asks for the process when it opens).
"""

from __future__ import annotations

import argparse
import statistics
import time

from playwright.sync_api import sync_playwright

from harness.server import streamlit_server

from .browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT

GRID_JS = """() => { const plot = document.querySelector('.js-plotly-plot');
  return plot && plot._fullData ? JSON.stringify(plot._fullData.map((t) => t.z)) : null; }"""


def _press(page, url: str, wait_s: float) -> float:
    """Open `url`, wait, press Train: seconds from the click until the grid changes."""
    page.goto(url)
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
    page.wait_for_timeout(wait_s * 1000)
    before = page.evaluate(GRID_JS)
    started = time.monotonic()
    page.get_by_role("button", name="Train", exact=True).click()
    page.wait_for_function(f"(before) => ({GRID_JS})() !== before", arg=before, timeout=60_000, polling="raf")
    seconds = time.monotonic() - started
    page.get_by_role("button", name="Stop", exact=True).click()
    page.wait_for_timeout(1000)
    return seconds


def run(reps: int = 3, wait_s: float = 3.0) -> dict:
    """Phase `train-first`: the first and a later press's seconds, each repetition on a fresh server."""
    first, later = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            for rep in range(reps):
                with streamlit_server("app.py", name="train-first") as server:
                    page = browser.new_page(viewport=VIEWPORT)
                    first.append(_press(page, f"{server.url}/train?steps=400&seed={100 + 2 * rep}", wait_s))
                    later.append(_press(page, f"{server.url}/train?steps=400&seed={101 + 2 * rep}", wait_s))
                    page.close()
        finally:
            browser.close()
    first_s, later_s = statistics.median(first), statistics.median(later)
    return {"reps": reps, "wait_s": wait_s, "first_s": [round(s, 2) for s in first],
            "later_s": [round(s, 2) for s in later], "first_median_s": round(first_s, 2),
            "later_median_s": round(later_s, 2), "ratio": round(first_s / later_s, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--wait", type=float, default=3.0, help="seconds between opening the lesson and pressing Train")
    args = parser.parse_args()
    result = run(args.reps, args.wait)
    print(f"first press {result['first_s']} s, later press {result['later_s']} s, first ÷ later {result['ratio']}")


if __name__ == "__main__":
    main()
