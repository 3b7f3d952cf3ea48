"""What the server the README starts spends on a page load, with and without Streamlit's file watcher.

    .venv/bin/python -m benchmarks.readme_server [--reps 4]

The README installs the venv in `.venv`, inside the app's folder, and starts `streamlit run app.py`.
Streamlit's file watcher watches that folder recursively; `.streamlit/config.toml` turns it off.  Two
servers run side by side, both started as the README says (harness.server.streamlit_server with
`as_typed`): the README's (watcher off) and the same with `--server.fileWatcherType auto`.  Each repetition opens
every lesson of PAGES on each server in turn (the order alternating), every time in a fresh browser
context, as a student's first visit is (no cached files), until the page's first Plotly chart is
drawn; then waits SETTLE_S for the server to go quiet.  Recorded: the load time, and the server
process's CPU seconds from the load's start to the end of the wait.  Phase `readme-server` of
benchmarks/run.py.
"""

from __future__ import annotations

import argparse
import statistics
import time

from harness.server import cpu_seconds, streamlit_server

from .browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT

PAGES = ("lookup", "attention", "positions")
SETTLE_S = 2.0
VARIANTS = {"README (config.toml: no file watcher)": {}, "file watcher on (`--server.fileWatcherType auto`)":
            {"server.fileWatcherType": "auto"}}


def _load(browser, url: str) -> float:
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        started = time.monotonic()
        page.goto(url)
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        return (time.monotonic() - started) * 1000
    finally:
        context.close()


def run(reps: int = 4, progress=print) -> dict:
    from playwright.sync_api import sync_playwright

    names = list(VARIANTS)
    samples = {name: {"ms": [], "cpu_s": []} for name in names}
    with streamlit_server(options=VARIANTS[names[0]], as_typed=True, name="readme-off") as off, \
            streamlit_server(options=VARIANTS[names[1]], as_typed=True, name="readme-watch") as on, \
            sync_playwright() as playwright:
        servers = dict(zip(names, (off, on), strict=True))
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            for rep in range(reps + 1):  # the first repetition warms both servers up, not counted
                for page_name in PAGES:
                    for name in (names if rep % 2 == 0 else names[::-1]):
                        server = servers[name]
                        before = cpu_seconds(server.process.pid)
                        ms = _load(browser, f"{server.url}/{page_name}")
                        time.sleep(SETTLE_S)
                        if rep:
                            samples[name]["ms"].append(ms)
                            samples[name]["cpu_s"].append(cpu_seconds(server.process.pid) - before)
                progress(f"  readme-server: repetition {rep}/{reps}")
        finally:
            browser.close()
    rows = {name: {"loads": len(s["ms"]), "load_ms": round(statistics.median(s["ms"]), 1),
                   "cpu_s_per_load": round(statistics.median(s["cpu_s"]), 2),
                   "cpu_s_max": round(max(s["cpu_s"]), 2)} for name, s in samples.items()}
    return {"reps": reps, "pages": list(PAGES), "settle_s": SETTLE_S, "servers": rows}


TITLE = "The README's server: a student's first visit, file watcher off and on (Chromium)"


def intro(result: dict) -> str:
    """RESULTS.md's words before the table: what was measured, and how."""
    return (f"`benchmarks/readme_server.py`, medians of {result.get('reps')} repetitions over "
            f"{', '.join(result.get('pages', []))}: two servers started as the README says (`streamlit run app.py`, "
            "its venv in `.venv` inside the app's folder), one with the repository's `config.toml` (no file "
            "watcher), one with `--server.fileWatcherType auto` added. Each load is a fresh browser context (a "
            "first visit: nothing cached) until the first Plotly chart is drawn; the server's CPU is counted from "
            f"the load's start to {result.get('settle_s')} s after it. The two servers are loaded in turn, in "
            "alternating order.")


def table(result: dict) -> str:
    lines = ["| server | loads | first visit → chart drawn, ms | server CPU per load, s | worst load, CPU s |",
             "|---|---:|---:|---:|---:|"]
    for name, row in result["servers"].items():
        lines.append(f"| {name} | {row['loads']} | {row['load_ms']} | {row['cpu_s_per_load']} | {row['cpu_s_max']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.readme_server", description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=4)
    args = parser.parse_args(argv)
    print(table(run(args.reps)))


if __name__ == "__main__":
    main()
