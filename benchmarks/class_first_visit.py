"""A student's first visit through the class server: what crosses the network, gzipped or not.

    .venv/bin/python -m benchmarks.class_first_visit [--reps 3]

deploy/class-server.sh (2 workers behind HAProxy) gzips text responses: Streamlit sends its scripts
uncompressed.  One class server; each repetition opens PAGE in a fresh browser context (a first
visit: nothing cached) twice, in alternating order: as Chromium asks (`Accept-Encoding: gzip, …`,
HAProxy compresses) and asking for `identity` (what every browser got before: the same bytes
Streamlit sends), each unthrottled on loopback and at THROTTLE_MBIT (Chromium's network emulation:
a student's share of a classroom's Wi-Fi is less).  Recorded: bytes received over HTTP (Chromium's
encodedDataLength; the websocket not counted), load until the first Plotly chart is drawn, and
HAProxy's CPU seconds during the visit.  Phase `class-first-visit` of benchmarks/run.py.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from harness.server import cpu_seconds, process_tree, streamlit_server

from .browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT

PAGE = "attention"
THROTTLE_MBIT = 20.0
MODES = {"gzip (HAProxy compresses)": None, "identity (uncompressed, as before)": "identity"}


def _haproxy(root_pid: int) -> list[int]:
    pids = []
    for pid in process_tree(root_pid):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "haproxy":
                pids.append(pid)
        except OSError:
            pass
    return pids


def _visit(browser, url: str, encoding: str | None, throttle: bool, haproxy: list[int]) -> dict:
    context = browser.new_context(viewport=VIEWPORT, extra_http_headers={"Accept-Encoding": encoding}
                                  if encoding else None)
    try:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        if throttle:
            rate = THROTTLE_MBIT * 1e6 / 8
            cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": 20,
                                                          "downloadThroughput": rate, "uploadThroughput": rate})
        received: dict[str, int] = {}
        cdp.on("Network.loadingFinished", lambda e: received.__setitem__(e["requestId"], e["encodedDataLength"]))
        cpu = sum(cpu_seconds(pid) for pid in haproxy)
        started = time.monotonic()
        page.goto(url)
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
        ms = (time.monotonic() - started) * 1000
        page.wait_for_timeout(500)  # the last responses finish
        spent = sum(cpu_seconds(pid) for pid in haproxy) - cpu
        return {"ms": ms, "mb": sum(received.values()) / 1e6, "haproxy_cpu_s": spent}
    finally:
        context.close()


def run(reps: int = 3, progress=print) -> dict:
    from playwright.sync_api import sync_playwright

    samples = {(mode, throttle): [] for mode in MODES for throttle in (False, True)}
    with streamlit_server("app.py", workers=2, name="class-first-visit") as server, sync_playwright() as playwright:
        haproxy = _haproxy(server.process.pid)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            for rep in range(reps + 1):  # the first repetition warms the workers up, not counted
                for throttle in (False, True):
                    for mode in (list(MODES) if rep % 2 == 0 else list(MODES)[::-1]):
                        entry = _visit(browser, f"{server.url}/{PAGE}", MODES[mode], throttle, haproxy)
                        if rep:
                            samples[(mode, throttle)].append(entry)
                progress(f"  class-first-visit: repetition {rep}/{reps}")
        finally:
            browser.close()
    rows = []
    for (mode, throttle), entries in samples.items():
        rows.append({"mode": mode, "network": f"{THROTTLE_MBIT:g} Mbit/s, 20 ms" if throttle else "loopback",
                     "visits": len(entries), "mb": round(statistics.median(e["mb"] for e in entries), 2),
                     "load_ms": round(statistics.median(e["ms"] for e in entries)),
                     "haproxy_cpu_s": round(statistics.median(e["haproxy_cpu_s"] for e in entries), 3)})
    return {"reps": reps, "page": PAGE, "throttle_mbit": THROTTLE_MBIT, "rows": rows}


TITLE = "A student's first visit through the class server: gzipped or not (Chromium)"


def intro(result: dict) -> str:
    """RESULTS.md's words before the table: what was measured, and how."""
    return (f"`benchmarks/class_first_visit.py`, medians of {result.get('reps')} repetitions: `deploy/class-server.sh` "
            f"(2 workers behind HAProxy), the {result.get('page')} lesson opened in a fresh browser context (a first "
            "visit: nothing cached) as Chromium asks (`Accept-Encoding: gzip, …`: HAProxy compresses what Streamlit "
            "sends uncompressed) and asking for `identity` (the bytes every browser got before HAProxy compressed), "
            f"in alternating order, unthrottled and at {result.get('throttle_mbit')} Mbit/s with 20 ms latency "
            "(Chromium's network emulation; a student's share of a classroom's Wi-Fi is less). MB received over "
            "HTTP (the websocket not counted), the load until the first Plotly chart is drawn, HAProxy's CPU during "
            "the visit.")


def table(result: dict) -> str:
    lines = ["| response encoding | network | visits | MB received | first visit → chart drawn, ms | HAProxy CPU, s |",
             "|---|---|---:|---:|---:|---:|"]
    for row in result["rows"]:
        lines.append(f"| {row['mode']} | {row['network']} | {row['visits']} | {row['mb']} | {row['load_ms']} | "
                     f"{row['haproxy_cpu_s']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.class_first_visit",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args(argv)
    print(table(run(args.reps)))


if __name__ == "__main__":
    main()
