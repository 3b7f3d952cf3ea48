"""Browser timings in headless Debian Chromium (Playwright): cold start to a rendered home page, and
control change to repainted key figure on every page that has a slider and a chart.

Control change: the page is opened and settled; a slider is found (in page order) whose arrow key
changes the key figure, the page's first chart (Plotly or Vega-Lite); where none does, one that
changes one of the next three charts (that chart is then the one timed).  Then, `reps` times, one
arrow key (alternately right and left) is pressed on it.  The time runs from the key event reaching
the page (a capture-phase keydown listener stamps `performance.now()`) to the first animation frame
in which the chart's drawn data (Plotly's `_fullData`, Vega's svg or canvas) differs from before.
That includes the slider's own debounce in the frontend, the websocket round trip, the script run
and the chart's redraw.
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import time

from explorer.serve.catalog import PAGES
from harness.browser_runs import RUN_TRACKER_JS
from harness.server import streamlit_server

from .latency import page_label

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1400, "height": 900}
WAIT_MS = 30_000

# The shared run counter (harness/browser_runs.py), and when the last key was pressed.
INIT_JS = RUN_TRACKER_JS + """
document.addEventListener('keydown', () => { window.__keyAt = performance.now(); }, true);
window.__keyAt = 0;
"""

SETTLED_JS = """
({after, quietMs}) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (window.__stRunsDone <= after) return false;
  if (!document.querySelector('[data-testid="stMain"] h1')) return false;
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;
  for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
    const plot = chart.querySelector('.js-plotly-plot');
    if (!plot || !plot._fullData) return false;
  }
  for (const chart of document.querySelectorAll('[data-testid="stVegaLiteChart"]'))  // not a hidden one (chart_code.py)
    if (chart.getClientRects().length && !chart.querySelector('svg.marks, canvas')) return false;
  return performance.now() - window.__stLastChange >= quietMs;
}
"""

# The page's charts in page order: Plotly's plots and Vega-Lite's (Altair's) charts.
CHARTS = '.js-plotly-plot, [data-testid="stVegaLiteChart"]'

# A cheap fingerprint of what a chart (the `index`-th of CHARTS) has drawn: for Plotly, its traces' type,
# size and first rows of z / y / x (x: horizontal bar charts); for Vega, a hash of its svg's markup (or of
# its canvas's pixels, where it draws on one).
_FINGERPRINT = """
  const plot = document.querySelectorAll(""" + json.dumps(CHARTS) + """)[index];
  if (!plot) return null;
  let now;
  if (plot.classList.contains('js-plotly-plot')) {
    if (!plot._fullData) return null;
    const part = (v) => v == null ? null : Array.from(v.slice(0, 3), (row) =>
        (row != null && typeof row === 'object') ? Array.from(row).slice(0, 40) : row);
    now = JSON.stringify(plot._fullData.map((t) => [t.type, t.z ? t.z.length : null, part(t.z),
        t.y ? t.y.length : null, part(t.y), t.x ? t.x.length : null, part(t.x)]));
  } else {
    const drawn = plot.querySelector('svg.marks, canvas');
    if (!drawn) return null;
    const text = drawn.tagName === 'CANVAS' ? drawn.toDataURL() : drawn.innerHTML;
    let hash = 0;
    for (let i = 0; i < text.length; i++) hash = (hash * 31 + text.charCodeAt(i)) | 0;
    now = `${drawn.tagName} ${text.length} ${hash}`;
  }
"""
SIGNATURE_JS = "(index) => {" + _FINGERPRINT + "  return now;\n}"
CHANGED_JS = "({before, index}) => {" + _FINGERPRINT + """  if (now === null || now === before) return false;
  window.__paintedAt = performance.now();
  return true;
}"""


def _settle(page, after: int, quiet_ms: int = 300, timeout_ms: int = WAIT_MS) -> float:
    """Wait until a run beyond `after` has finished, every chart is drawn and the page has been quiet
    for `quiet_ms`; returns the performance.now() of the last change (the moment it was rendered)."""
    page.wait_for_function(SETTLED_JS, arg={"after": after, "quietMs": quiet_ms}, timeout=timeout_ms, polling=50)
    return page.evaluate("window.__stLastChange")


def _settled_after_press(page, after: int) -> bool:
    """After a key press: wait for the run it started to finish.  False when no run came: the slider
    was at its end, or (seen now and then in headless Chromium, see tests/browser) the press moved
    the thumb but never reached the server; the measurement counts it as a failure and goes on."""
    try:
        _settle(page, after, timeout_ms=12_000)
        return True
    except Exception:
        return False


def _signatures(page, charts: int) -> list:
    return [page.evaluate(SIGNATURE_JS, index) for index in range(charts)]


def _changing_slider(page, sliders, max_sliders: int, max_charts: int) -> tuple[int, int] | None:
    """(slider, chart): the first slider whose arrow key changes the page's key figure (its first chart,
    Plotly or Vega); else the first that changes any of its first `max_charts` (a page whose key figure
    no slider moves)."""
    charts = min(page.locator(CHARTS).count(), max_charts)
    fallback = None
    for index in range(min(sliders.count(), max_sliders)):
        control = sliders.nth(index).get_by_role("slider").first
        control.scroll_into_view_if_needed()
        for key in ("ArrowRight", "ArrowLeft"):
            before = _signatures(page, charts)
            runs = page.evaluate("window.__stRunsDone")
            control.focus()
            page.keyboard.press(key)
            if not _settled_after_press(page, runs):
                continue  # no finished run came of this press: try another
            after = _signatures(page, charts)
            changed = [i for i, (was, now) in enumerate(zip(before, after, strict=True)) if was != now]
            if 0 in changed:
                return index, 0
            if changed:  # not the first chart: kept in case no slider moves that one
                fallback = fallback or (index, changed[0])
                break
    return fallback


def _control_change(page, reps: int, max_sliders: int = 6, max_charts: int = 4) -> dict:
    sliders = page.locator('[data-testid="stSlider"]')
    if not page.locator(CHARTS).count() or not sliders.count():
        return {"skipped": "no slider or no chart"}
    found = _changing_slider(page, sliders, max_sliders, max_charts)
    if found is None:
        return {"skipped": f"none of the first {max_sliders} sliders changes any of the first {max_charts} charts"}
    chosen, chart = found
    label = sliders.nth(chosen).locator('[data-testid="stWidgetLabel"]').inner_text().strip()
    control = sliders.nth(chosen).get_by_role("slider").first
    times, failures = [], 0
    for i in range(reps):
        before = page.evaluate(SIGNATURE_JS, chart)
        runs = page.evaluate("window.__stRunsDone")
        control.focus()
        page.keyboard.press("ArrowLeft" if i % 2 == 0 else "ArrowRight")
        try:
            page.wait_for_function(CHANGED_JS, arg={"before": before, "index": chart}, timeout=10_000, polling="raf")
            times.append(page.evaluate("window.__paintedAt - window.__keyAt"))
        except Exception:
            failures += 1
        _settled_after_press(page, runs)
        page.wait_for_timeout(300)
    return {"slider": label, "chart": chart, "charts": "Plotly and Vega", "n": len(times), "failures": failures,
            "p50_ms": round(statistics.median(times), 1) if times else None,
            "max_ms": round(max(times), 1) if times else None,
            "all_ms": [round(t, 1) for t in times]}


def run_browser(reps: int = 10) -> dict:
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="attention-explorer-bench-chromium-")
    results: dict = {"pages": {}}
    try:
        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, viewport=VIEWPORT,
                timeout=60_000)
            try:
                context.add_init_script(INIT_JS)
                context.set_default_timeout(WAIT_MS)
                # Cold start: Chromium is already running; the clock starts when the server process does.
                with streamlit_server(name="browser") as server:
                    page = context.new_page()
                    page.goto(server.url + "/", wait_until="domcontentloaded")
                    rendered_at = _settle(page, 0)
                    now = page.evaluate("performance.now()")
                    results["cold_start_to_home_rendered_s"] = round(
                        time.monotonic() - (now - rendered_at) / 1000 - server.started, 2)
                    page.close()
                    for info in PAGES:
                        page = context.new_page()
                        started = time.monotonic()
                        page.goto(f"{server.url}/{info.url_path}", wait_until="domcontentloaded")
                        rendered_at = _settle(page, 0)
                        now = page.evaluate("performance.now()")
                        entry = {"first_open_rendered_s": round(
                            time.monotonic() - (now - rendered_at) / 1000 - started, 2)}
                        entry.update(_control_change(page, reps))
                        exceptions = page.locator('[data-testid="stException"]').count()
                        entry["exception_boxes"] = exceptions
                        results["pages"][page_label(info.url_path)] = entry
                        page.close()
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return results
