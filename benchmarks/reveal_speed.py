"""Reveal → figure: what a lecturer waits for after clicking Reveal, in headless Debian Chromium.

    .venv/bin/python -m benchmarks.reveal_speed [--reps 2] [--pages decoder,real]  (phase `reveal` of run.py)

For every step of every lesson, presentation mode at a projector's 1280×720 (`/<lesson>?present=1&step=N`,
opened and settled first): from the pointerdown on Reveal (a capture-phase listener's performance.now())
to the first animation frame in which

* **answer + figure**: the step's answer (its first words, as tests/browser/test_present_browser.py
  finds them) is drawn and a figure — a Plotly chart with drawn data, a Vega chart's canvas, or a table —
  starts on the first screen (top < 720 px);
* **run done**: the script run the click started has finished (Streamlit's script state), whatever
  sections the runtime draws after the step's own.

Medians per lesson over its steps and repetitions; the issue's target is answer + figure ≤ 500 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from explorer.kit.steps import load_steps
from explorer.lessons import LESSONS
from harness.claims import answer
from harness.server import ROOT, streamlit_server

from .browser import CHROMIUM, CHROMIUM_ARGS, INIT_JS, SETTLED_JS
from .report_phases import loadavg

OUT = ROOT / "test-artifacts" / "reveal_speed.json"  # run on its own; as a phase of run.py: results.json
PROJECTOR = {"width": 1280, "height": 720}

CLICK_JS = "document.addEventListener('pointerdown', () => { window.__clickAt = performance.now(); }, true);"

# The answer drawn and a figure on the first screen; records the time once.
SHOWN_JS = """
({start, height}) => {
  if (window.__shownAt) return true;
  const alerts = [...document.querySelectorAll('[data-testid="stAlert"]')];
  const said = alerts.some(a => a.textContent.replace(/[*`]/g, '').includes(start)
                              && a.getBoundingClientRect().height > 0);
  if (!said) return false;
  const figures = [...document.querySelectorAll(
    '[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"], '
    + '[data-testid="stDataFrame"], [data-testid="stTable"]')];
  const drawn = figures.some(f => {
    const top = f.getBoundingClientRect().top;
    if (top >= height) return false;
    if (f.getAttribute('data-testid') === 'stPlotlyChart') {
      const plot = f.querySelector('.js-plotly-plot');
      return plot && plot._fullData && plot.querySelector('.main-svg');
    }
    if (f.getAttribute('data-testid') === 'stVegaLiteChart') {
      const c = f.querySelector('canvas, svg.marks');
      return c && c.getBoundingClientRect().width > 0;
    }
    return f.getBoundingClientRect().height > 0;
  });
  if (!drawn) return false;
  window.__shownAt = performance.now();
  return true;
}
"""

DONE_JS = """
(before) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning' || window.__stRunsDone <= before)
    return false;
  window.__doneAt = window.__doneAt || performance.now();
  return true;
}
"""


def _reveal_once(page, url: str, start: str) -> dict:
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_function(SETTLED_JS, arg={"after": 0, "quietMs": 400}, timeout=60_000, polling=100)
    page.evaluate("window.__shownAt = 0; window.__doneAt = 0; window.__clickAt = 0;")
    before = page.evaluate("window.__stRunsDone")
    page.get_by_role("button", name="Reveal").first.click()
    page.wait_for_function(SHOWN_JS, arg={"start": start, "height": PROJECTOR["height"]}, timeout=30_000,
                           polling="raf")
    page.wait_for_function(DONE_JS, arg=before, timeout=30_000, polling="raf")
    t = page.evaluate("({click: window.__clickAt, shown: window.__shownAt, done: window.__doneAt})")
    return {"shown_ms": round(t["shown"] - t["click"], 1), "done_ms": round(max(t["done"], t["shown"]) - t["click"], 1)}


def run(reps: int = 2, pages: list[str] | None = None, progress=print) -> dict:
    from playwright.sync_api import sync_playwright

    lessons = [p for p in LESSONS if not pages or p.url_path in pages]
    results: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "reps": reps,
                     "load_average_start": Path("/proc/loadavg").read_text().split()[:3], "steps": {}}
    with streamlit_server(name="reveal") as server, sync_playwright() as play:
        browser = play.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport=PROJECTOR)
        context.add_init_script(INIT_JS)
        context.add_init_script(CLICK_JS)
        page = context.new_page()
        page.goto(server.url, wait_until="domcontentloaded")  # the server's first visit, not measured
        page.wait_for_function(SETTLED_JS, arg={"after": 0, "quietMs": 400}, timeout=60_000, polling=100)
        for info in lessons:
            steps = load_steps(info.url_path)
            for number, step in enumerate(steps, start=1):
                start = answer(info.url_path, step).replace("*", "").replace("`", "")[:30]
                url = f"{server.url}/{info.url_path}?present=1&step={number}"
                cell = results["steps"].setdefault(f"{info.url_path}-{number}", [])
                for _ in range(reps):
                    try:
                        cell.append(_reveal_once(page, url, start))
                    except Exception as problem:  # a step that fails is reported, the run goes on
                        cell.append({"failed": str(problem).splitlines()[0][:200]})
            progress(f"reveal {info.url_path} done ({len(steps)} steps)")
        context.close()
        browser.close()
    results["load_average_end"] = Path("/proc/loadavg").read_text().split()[:3]
    return results


def summary(results: dict) -> dict:
    """Per lesson: steps, medians and the slowest step of answer + figure and of run done, failures."""
    out: dict = {}
    for key, cells in results["steps"].items():
        lesson = key.rsplit("-", 1)[0]
        row = out.setdefault(lesson, {"steps": 0, "shown": [], "done": [], "failures": 0, "slowest": None})
        row["steps"] += 1
        for cell in cells:
            if "failed" in cell:
                row["failures"] += 1
                continue
            row["shown"].append(cell["shown_ms"])
            row["done"].append(cell["done_ms"])
            if row["slowest"] is None or cell["shown_ms"] > row["slowest"][1]:
                row["slowest"] = (key, cell["shown_ms"])
    return out


TITLE = "Reveal → answer and figure (presentation mode, Chromium)"


def intro(result: dict) -> str:
    """RESULTS.md's words before the table: what was measured, and how."""
    return (f"`benchmarks/reveal_speed.py`, measured {result.get('date', '')} (load average "
            f"{loadavg(result.get('load_average_start'))} → {loadavg(result.get('load_average_end'))}), "
            f"{result.get('reps')} repetitions of "
            "every step of every lesson at a projector's 1280 × 720 (`?present=1&step=N`, opened and settled "
            "first). From the pointerdown on Reveal to the first animation frame in which the step's answer is "
            "drawn and a figure starts on the first screen (**answer + figure**), and to the end of the script "
            "run the click started, the sections drawn after the step's own included (**run done**). ms.")


def table(results: dict) -> str:
    rows = ["| lesson | steps | answer + figure p50 ms | max | run done p50 ms | max | slowest step | failures |",
            "|---|---:|---:|---:|---:|---:|---|---:|"]
    for lesson, row in summary(results).items():
        shown, done = row["shown"], row["done"]

        def med(v):
            return f"{statistics.median(v):.0f}" if v else "–"

        rows.append(f"| {lesson} | {row['steps']} | {med(shown)} | {max(shown, default=0):.0f} | {med(done)} | "
                    f"{max(done, default=0):.0f} | {row['slowest'][0] if row['slowest'] else '–'} | "
                    f"{row['failures']} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.reveal_speed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--pages", default="", help="comma-separated lesson url paths (default: every lesson)")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    results = run(args.reps, [p for p in args.pages.split(",") if p] or None,
                  progress=lambda m: print(f"[{time.strftime('%H:%M:%S')}] {m}", flush=True))
    results["table"] = table(results)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    print(f"load average {results['load_average_start']} → {results['load_average_end']}")
    print(results["table"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
