"""A section's own control → that section's chart repainted, on two versions of the app side by side.

    .venv/bin/python -m benchmarks.browser_sections --before /path/to/other/checkout [--reps 5]

For each (page, slider, chart) below, the slider (found by its widget key) is pressed with an arrow key,
alternately right and left, `reps` times on each server in turn; the time runs from the key event to the
first animation frame in which the chart (found by its element key) has new drawn data.  Also counted:
websocket bytes received for the press.  Run against this checkout and another (`--before`), so a
section moved into a fragment is compared with the same section rerunning the whole page.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path

from tests.support.server import ROOT, streamlit_server

from .browser import CHROMIUM, CHROMIUM_ARGS, INIT_JS, VIEWPORT
from .browser_speed import CLICK_JS

CASES = [  # page, slider widget key, chart element key
    ("gradients", "dep_T", "dependency"),
    ("decoder", "arch_layers", "architectures"),
    ("positions", "rope_positions", "rope_angles"),
]

# A fingerprint of the chart's drawn traces (as benchmarks/browser.py): type, sizes, first rows of z / y / x.
SIGNATURE = """
const sig = (key) => {
  const plot = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  if (!plot || !plot._fullData) return null;
  const part = (v) => v == null ? null : Array.from(v.slice(0, 3), (row) =>
      (row != null && typeof row === 'object') ? Array.from(row).slice(0, 40) : row);
  return JSON.stringify(plot._fullData.map((t) => [t.type, t.z ? t.z.length : null, part(t.z),
      t.y ? t.y.length : null, part(t.y), t.x ? t.x.length : null, part(t.x)]));
};
"""

CHANGED_JS = "(key) => {" + SIGNATURE + """
  const now = sig(key);
  if (now === null || now === window.__before) return false;
  window.__paintedAt = performance.now();
  return true;
}"""

MARK_JS = "(key) => {" + SIGNATURE + "window.__before = sig(key); window.__wsMark = window.__ws.length; }"


def press(page, widget: str, chart: str, key: str) -> dict:
    page.evaluate(MARK_JS, chart)
    slider = page.locator(f".st-key-{widget} [role='slider']").first
    try:
        slider.wait_for(state="attached", timeout=30_000)
        slider.focus()
    except Exception:
        return {"ms": None}
    page.keyboard.press(key)
    try:
        page.wait_for_function(CHANGED_JS, arg=chart, timeout=15_000, polling="raf")
    except Exception:
        return {"ms": None}
    ms = page.evaluate("window.__paintedAt - window.__keyAt")
    page.wait_for_timeout(1200)  # the rest of the run's messages
    kb = page.evaluate("window.__ws.slice(window.__wsMark).reduce((a, [, s]) => a + s, 0) / 1024")
    return {"ms": round(ms, 1), "ws_kb": round(kb, 1)}


def run(before_root: Path, reps: int, progress=print) -> dict:
    from playwright.sync_api import sync_playwright

    results: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                     "load_average_start": Path("/proc/loadavg").read_text().split()[:3], "cases": {}}
    # The other checkout's own server helper: it runs `streamlit run app.py` from that checkout's root.
    spec = importlib.util.spec_from_file_location("before_server", before_root / "tests" / "support" / "server.py")
    before_server = importlib.util.module_from_spec(spec)
    sys.modules["before_server"] = before_server  # for its dataclasses
    spec.loader.exec_module(before_server)
    with streamlit_server(name="sections-after") as after, \
            before_server.streamlit_server(name="sections-before", exclude_ports={after.port}) as before, \
            sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport=VIEWPORT)
        context.add_init_script(INIT_JS + CLICK_JS)
        pages = {"before": (context.new_page(), before.url), "after": (context.new_page(), after.url)}
        for page_name, widget, chart in CASES:
            cell: dict = {"before": [], "after": []}
            for name, (page, url) in pages.items():
                page.bring_to_front()
                page.goto(f"{url}/{page_name}")
                page.wait_for_selector(f".st-key-{chart} .js-plotly-plot .main-svg", timeout=60_000)
                page.wait_for_timeout(1500)
            for i in range(reps):
                for name, (page, _) in pages.items():
                    page.bring_to_front()
                    cell[name].append(press(page, widget, chart, "ArrowLeft" if i % 2 == 0 else "ArrowRight"))
            results["cases"][f"{page_name}: {widget} → {chart}"] = {
                name: {"p50_ms": statistics.median([r["ms"] for r in runs if r["ms"] is not None] or [0]),
                       "ws_kb": statistics.median([r.get("ws_kb", 0) for r in runs if r["ms"] is not None] or [0]),
                       "failures": sum(r["ms"] is None for r in runs), "all_ms": [r["ms"] for r in runs]}
                for name, runs in cell.items()}
            progress(f"{page_name}: {results['cases'][f'{page_name}: {widget} → {chart}']}")
        context.close()
        browser.close()
    results["load_average_end"] = Path("/proc/loadavg").read_text().split()[:3]
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.browser_sections", description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="another checkout of the project (its app.py is served)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "browser_sections.json"))
    args = parser.parse_args(argv)
    results = run(Path(args.before).resolve(), args.reps,
                  progress=lambda m: print(f"[{time.strftime('%H:%M:%S')}] {m}", flush=True))
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
