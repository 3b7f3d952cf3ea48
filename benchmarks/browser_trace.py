"""Where a lesson switch's time goes in Chromium: a performance trace of one sidebar switch.

    .venv/bin/python -m benchmarks.browser_trace [--pages positions,lookup,gradients] [--reps 2]

For each page, against the app (and the matched floor of benchmarks/floor_nav_app.py, side by side):
home page → click the lesson in the sidebar → key figure drawn (as benchmarks/browser_speed.py), under
Chromium's tracing (devtools.timeline, v8).  Sums, over the renderer's main thread between the click
and the key figure drawn: all tasks, script evaluation and compilation (a lazily loaded chart library
is compiled here), function calls (React, Plotly, Vega), style recalculation, layout, paint and garbage
collection; and counts the fonts and scripts fetched.  The categories overlap (a function call can
force a layout), so they are read as shares, not as a partition.  Writes benchmarks/browser_trace.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from explorer.ui.catalog import LESSONS
from tests.support.server import ROOT, streamlit_server

from .browser import CHROMIUM, CHROMIUM_ARGS, INIT_JS, VIEWPORT
from .browser_speed import CLICK_JS, DRAWN_JS, MARK_JS, _record_profiles

CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8", "v8.execute", "blink.user_timing",
              "loading"]
BUCKETS = {
    "task": ("RunTask", "ThreadControllerImpl::RunTask"),
    "script_eval": ("EvaluateScript", "v8.evaluateModule"),
    "compile": ("v8.compile", "v8.compileModule", "V8.CompileCode", "v8.produceCache", "CompileScript"),
    "function_call": ("FunctionCall", "TimerFire", "FireAnimationFrame", "EventDispatch", "RunMicrotasks"),
    "style": ("UpdateLayoutTree", "RecalculateStyles", "ParseAuthorStyleSheet"),
    "layout": ("Layout",),
    "paint": ("Paint", "PaintImage", "Layerize", "UpdateLayer", "Commit", "RasterTask"),
    "gc": ("MinorGC", "MajorGC", "V8.GCScavenger", "V8.GCFinalizeMC", "BlinkGC.AtomicPhase"),
}


def summarise(trace: dict, start_ts: float, end_ts: float) -> dict:
    events = trace.get("traceEvents", trace if isinstance(trace, list) else [])
    main = {(e["pid"], e["tid"]) for e in events if e.get("name") == "thread_name"
            and e.get("args", {}).get("name") == "CrRendererMain"}
    sums = dict.fromkeys(BUCKETS, 0.0)
    fonts = scripts = 0
    for e in events:
        ts = e.get("ts", 0)
        if e.get("name") == "ResourceSendRequest" and start_ts <= ts <= end_ts:
            url = e.get("args", {}).get("data", {}).get("url", "")
            fonts += url.endswith((".woff2", ".woff", ".ttf"))
            scripts += url.endswith(".js")
        if e.get("ph") != "X" or (e.get("pid"), e.get("tid")) not in main or not start_ts <= ts <= end_ts:
            continue
        for bucket, names in BUCKETS.items():
            if e.get("name") in names:
                sums[bucket] += e.get("dur", 0) / 1000
    out = {k: round(v, 1) for k, v in sums.items()}
    out.update(fonts_fetched=fonts, scripts_fetched=scripts, window_ms=round((end_ts - start_ts) / 1000, 1))
    return out


def traced_switch(browser, url: str, info) -> dict:
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(INIT_JS + CLICK_JS)
    page = context.new_page()
    page.goto(url + "/")
    page.wait_for_selector('[data-testid="stSidebarNav"]')
    page.wait_for_timeout(800)
    page.evaluate(MARK_JS)
    browser.start_tracing(page=page, categories=CATEGORIES)
    page.evaluate("performance.mark('click')")
    page.locator(f'[data-testid="stSidebarNav"] a[href$="/{info.url_path}"]').first.click()
    page.wait_for_function(DRAWN_JS, arg={"noChart": info.url_path == "train", "title": info.title},
                           timeout=30_000, polling="raf")
    page.evaluate("performance.mark('drawn')")
    ms = page.evaluate("window.__drawnAt - window.__clickAt")
    raw = browser.stop_tracing()
    context.close()
    trace = json.loads(raw)
    events = trace.get("traceEvents", [])
    marks = {e["name"]: e["ts"] for e in events if e.get("cat", "").startswith("blink.user_timing")
             and e.get("name") in ("click", "drawn")}
    start, end = marks.get("click", 0), marks.get("drawn", float("inf"))
    return {"ms": round(ms, 1), **summarise(trace, start, end)}


def run(pages: list[str], reps: int, progress=print) -> dict:
    from playwright.sync_api import sync_playwright

    lessons = [p for p in LESSONS if p.url_path in pages]
    profile_dir = Path(tempfile.mkdtemp(prefix="attention-explorer-browser-trace-"))
    results: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                     "load_average_start": Path("/proc/loadavg").read_text().split()[:3], "pages": {}}
    with streamlit_server(name="trace-app") as app:
        asyncio.run(_record_profiles(app.url, profile_dir))
        with streamlit_server("benchmarks/floor_nav_app.py", name="trace-matched",
                              env={"FLOOR_MODE": "profile", "FLOOR_PROFILE_DIR": str(profile_dir)},
                              exclude_ports={app.port}) as matched, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            for info in lessons:
                cells: dict = {"app": [], "matched": []}
                for _ in range(reps):
                    for name, server in (("app", app), ("matched", matched)):
                        cells[name].append(traced_switch(browser, server.url, info))
                results["pages"][info.url_path] = {
                    name: {key: round(statistics.median(r[key] for r in runs), 1) for key in runs[0]}
                    for name, runs in cells.items()}
                progress(f"{info.url_path}: {results['pages'][info.url_path]}")
            browser.close()
    results["load_average_end"] = Path("/proc/loadavg").read_text().split()[:3]
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.browser_trace", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", default="positions,lookup,gradients")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "browser_trace.json"))
    args = parser.parse_args(argv)
    results = run([p for p in args.pages.split(",") if p], args.reps,
                  progress=lambda m: print(f"[{time.strftime('%H:%M:%S')}] {m}", flush=True))
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
