"""What the user waits for, in headless Debian Chromium (Playwright), side by side with two floors.

    .venv/bin/python -m benchmarks.browser_speed [--reps 3] [--pages lookup,attention] [--profile]

Four servers run at once: the app, the one-heatmap floor (benchmarks/floor_nav_app.py,
FLOOR_MODE=heatmap: one 32×32 Plotly heatmap per page), the matched floor (FLOOR_MODE=profile:
each page draws what one run of the lesson sent — the same figures, arrays, tables and widgets —
recorded at the start of the run) and, for the switch only, the key figure alone (FLOOR_MODE=alone:
the page's title and the first chart that run sent, nothing else).  The floors have the app's pages
and URL paths in st.navigation, so every measurement is the same gesture on each, taken in turn
(interleaved) in one run, and the machine's load hits them alike.

For every lesson page (explorer.serve.catalog.LESSONS):

* switch: click the lesson in the sidebar navigation (coming from the lesson before it) until the
  page's key figure — its first chart in page order — is drawn: a Plotly chart whose drawn data
  (`_fullData`) is new, or a Vega chart whose canvas/svg is new.  Every lesson draws one before any
  action (Train: its untrained model's grid, step 0).
* load: page.goto(the lesson's URL) until the key figure is drawn, from navigation start.
* control: a slider that changes the key figure (the first chart, Plotly or Vega), or else one of
  the next three charts (found as benchmarks/browser.py does),
  pressed with an arrow key; key event to the chart redrawn.

Times are from a capture-phase listener's performance.now() to the first animation frame that sees the
figure drawn.  Medians per cell; ratios to each floor.  With --profile, each switch also records, through
CDP: websocket frames and bytes received, script runs the switch caused (a page writing its own
query parameters reruns itself), DOM elements, and Chromium's Performance metrics (script, layout,
style time).  Phase `browser-speed` of benchmarks/run.py; on its own it writes test-artifacts/browser_speed.json
and prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import tempfile
import time
from pathlib import Path

from explorer.lessons import LESSONS
from harness.server import ROOT, streamlit_server
from harness.wsclient import Session

from .browser import CHROMIUM, CHROMIUM_ARGS, INIT_JS, VIEWPORT, _control_change
from .profiles import record_profile, save_profile

OUT = ROOT / "test-artifacts" / "browser_speed.json"  # run on its own; as a phase of run.py: results.json
APPS = ("app", "heatmap", "matched", "alone")
TIMED_APPS = APPS[:3]  # load and control: the key figure alone is measured on the switch only

MARK_JS = """
() => {
  window.__old = new WeakSet();
  for (const p of document.querySelectorAll('.js-plotly-plot')) if (p._fullData) window.__old.add(p._fullData);
  const vega = '[data-testid="stVegaLiteChart"]';
  for (const c of document.querySelectorAll(`${vega} canvas, ${vega} svg`))
    window.__old.add(c);
  window.__runsBefore = window.__stRunsDone;
  window.__oldCharts = new WeakSet(
    document.querySelectorAll('[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"]'));
  window.__chartAt = 0;
}
"""

# The key figure (first chart of the main area) drawn, and new since MARK_JS.
DRAWN_JS = """
({title}) => {
  const main = document.querySelector('[data-testid="stMain"]');
  if (!main) return false;
  const app = document.querySelector('[data-testid="stApp"]');
  const chart = main.querySelector('[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"]');
  if (!chart) return false;
  const old = window.__old || new WeakSet();
  if (chart.getAttribute('data-testid') === 'stPlotlyChart') {
    const plot = chart.querySelector('.js-plotly-plot');
    if (!plot || !plot._fullData || old.has(plot._fullData) || !plot.querySelector('.main-svg')) return false;
  } else {
    const drawn = chart.querySelector('canvas, svg.marks');
    if (!drawn || !drawn.getBoundingClientRect().width) return false;
    if (old.has(drawn)) {  // a reused canvas (the chart updated in place): the new page's run must be done
      const h1 = main.querySelector('h1');
      if (!h1 || !h1.textContent.includes(title) || !app || app.getAttribute('data-test-script-state') !== 'notRunning'
          || window.__stRunsDone <= window.__runsBefore) return false;
    }
  }
  window.__drawnAt = performance.now();
  return true;
}
"""

CLICK_JS = """
document.addEventListener('pointerdown', () => { window.__clickAt = performance.now(); }, true);
window.__ws = [];
(() => {
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => {
        const d = e.data;
        const size = d && (d.byteLength !== undefined ? d.byteLength : (d.size || d.length || 0));
        window.__ws.push([performance.now(), size]);
      });
    }
  };
})();
const __chartObserver = new MutationObserver(() => {
  if (window.__chartAt) return;
  const main = document.querySelector('[data-testid="stMain"]');
  const chart = main && main.querySelector('[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"]');
  if (chart && !(window.__oldCharts && window.__oldCharts.has(chart))) window.__chartAt = performance.now();
});
const __startChartObserver = () => __chartObserver.observe(document.documentElement, {subtree: true, childList: true});
if (document.documentElement) __startChartObserver();
else document.addEventListener('DOMContentLoaded', __startChartObserver);
"""

# When each part of a switch happened, from the click: first and last websocket message, the key chart's
# element mounted, and drawn.
PHASES_JS = """
() => {
  const t0 = window.__clickAt, drawn = window.__drawnAt;
  const msgs = window.__ws.filter(([t]) => t >= t0);
  return {first_msg: msgs.length ? msgs[0][0] - t0 : null,
          last_msg: msgs.length ? msgs[msgs.length - 1][0] - t0 : null,
          msgs_before_drawn: msgs.filter(([t]) => t <= drawn).length,
          kb_before_drawn: msgs.filter(([t]) => t <= drawn).reduce((a, [, s]) => a + s, 0) / 1024,
          chart_mounted: window.__chartAt ? window.__chartAt - t0 : null};
}
"""


def _median(values):
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 1) if values else None


async def _record_profiles(app_url: str, profile_dir: Path) -> None:
    for info in LESSONS:
        session = Session(app_url, info.url_path, use_message_cache=False, keep_elements=True)
        await session.connect()
        try:
            await session.rerun()
            recorded = await session.rerun()
            save_profile(record_profile(recorded.elements, app_url), profile_dir / f"{info.url_path}.pkl")
        finally:
            await session.close()


class Tab:
    """One Chromium tab on one server, with a CDP session for websocket and performance counters."""

    def __init__(self, context, name: str, url: str):
        self.name, self.url = name, url
        self.page = context.new_page()
        self.cdp = context.new_cdp_session(self.page)
        self.cdp.send("Network.enable")
        self.cdp.send("Performance.enable")
        self.frames = [0, 0]
        self.cdp.on("Network.webSocketFrameReceived", self._frame)

    def _frame(self, event) -> None:
        self.frames[0] += 1
        self.frames[1] += len(event.get("response", {}).get("payloadData", ""))

    def metrics(self) -> dict:
        return {m["name"]: m["value"] for m in self.cdp.send("Performance.getMetrics")["metrics"]}

    def counters(self) -> dict:
        return {"frames": self.frames[0], "bytes": self.frames[1], "runs": self.page.evaluate("window.__stRunsDone"),
                "metrics": self.metrics()}

    def wait_drawn(self, info, timeout_ms: int = 30_000) -> float:
        self.page.wait_for_function(DRAWN_JS, arg={"title": info.title},
                                    timeout=timeout_ms, polling="raf")
        return self.page.evaluate("window.__drawnAt")

    def settle(self, quiet_ms: int = 400) -> None:
        """Wait until no run is going and the page has been quiet for quiet_ms."""
        self.page.wait_for_function(
            """(q) => { const a = document.querySelector('[data-testid="stApp"]');
                 return a && a.getAttribute('data-test-script-state') === 'notRunning'
                   && performance.now() - window.__stLastChange >= q; }""", arg=quiet_ms, timeout=30_000,
            polling=100)


def _delta(before: dict, after: dict) -> dict:
    keys = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")
    out = {"ws_frames": after["frames"] - before["frames"],
           "ws_kb": round((after["bytes"] - before["bytes"]) / 1024, 1),
           "runs": after["runs"] - before["runs"], "layouts": after["metrics"].get("LayoutCount", 0) -
           before["metrics"].get("LayoutCount", 0)}
    for key in keys:
        out[key.replace("Duration", "_ms").lower()] = round(
            1000 * (after["metrics"].get(key, 0) - before["metrics"].get(key, 0)), 1)
    out["dom_nodes"] = int(after["metrics"].get("Nodes", 0))
    return out


def measure_switch(tab: Tab, info, profile: bool) -> dict:
    tab.page.bring_to_front()
    tab.page.evaluate(MARK_JS)
    link = tab.page.locator(f'[data-testid="stSidebarNav"] a[href$="/{info.url_path}"]').first
    before = tab.counters() if profile else None
    link.click()
    try:
        drawn = tab.wait_drawn(info, timeout_ms=20_000)
    except Exception as problem:  # recorded, and the run goes on
        return {"ms": None, "error": f"{type(problem).__name__}: no key figure drawn within 20 s"}
    ms = drawn - tab.page.evaluate("window.__clickAt")
    entry = {"ms": round(ms, 1)}
    if profile:
        tab.settle()
        entry.update(_delta(before, tab.counters()))
        entry.update({k: (round(v, 1) if isinstance(v, float) else v)
                      for k, v in tab.page.evaluate(PHASES_JS).items()})
    return entry


def measure_load(tab: Tab, info) -> float:
    tab.page.bring_to_front()
    tab.page.goto(f"{tab.url}/{info.url_path}", wait_until="commit")
    tab.page.evaluate(MARK_JS)
    try:
        return round(tab.wait_drawn(info, timeout_ms=20_000), 1)
    except Exception:
        return None


def run(reps: int = 3, pages: list[str] | None = None, profile: bool = True, control_reps: int = 9,
        progress=print, switch_only: bool = False, switch_reps: int | None = None) -> dict:
    """`reps` rounds of loads, `switch_reps` (default: `reps`) rounds of switches: the median of 3 switches
    put a lesson on either side of the target from one run to the next, so the phase takes more."""
    from playwright.sync_api import sync_playwright

    switch_reps = switch_reps or reps
    lessons = [p for p in LESSONS if not pages or p.url_path in pages]
    profile_dir = Path(tempfile.mkdtemp(prefix="attention-explorer-browser-speed-"))
    results: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                     "load_average_start": Path("/proc/loadavg").read_text().split()[:3], "reps": reps,
                     "switch_reps": switch_reps,
                     "switch": {}, "load": {}, "control": {}, "profile": {}}
    with streamlit_server(name="speed-app") as app:
        asyncio.run(_record_profiles(app.url, profile_dir))
        with streamlit_server("benchmarks/floor_nav_app.py", name="speed-heat", env={"FLOOR_MODE": "heatmap"},
                              exclude_ports={app.port}) as heat, \
                streamlit_server("benchmarks/floor_nav_app.py", name="speed-matched",
                                 env={"FLOOR_MODE": "profile", "FLOOR_PROFILE_DIR": str(profile_dir)},
                                 exclude_ports={app.port, heat.port}) as matched, \
                streamlit_server("benchmarks/floor_nav_app.py", name="speed-alone",
                                 env={"FLOOR_MODE": "alone", "FLOOR_PROFILE_DIR": str(profile_dir)},
                                 exclude_ports={app.port, heat.port, matched.port}) as alone, \
                sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport=VIEWPORT)
            context.add_init_script(INIT_JS + CLICK_JS)
            context.set_default_timeout(30_000)
            tabs = {name: Tab(context, name, server.url) for name, server in
                    zip(APPS, (app, heat, matched, alone), strict=True)}
            for tab in tabs.values():  # warm: every page opened once (the app computes its default views)
                for info in (None, *lessons):
                    tab.page.goto(f"{tab.url}/{info.url_path if info else ''}")
                    tab.settle()
            progress(f"warm; load {Path('/proc/loadavg').read_text().split()[:3]}")
            for rep in range(switch_reps):
                for tab in tabs.values():
                    tab.page.goto(tab.url + "/")
                    tab.settle()
                for info in lessons:
                    for name, tab in tabs.items():
                        entry = measure_switch(tab, info, profile)
                        if entry.get("error"):
                            progress(f"  {name} {info.url_path}: {entry['error']}")
                        results["switch"].setdefault(info.url_path, {}).setdefault(name, []).append(entry)
                        try:
                            tab.settle()
                        except Exception:
                            progress(f"  {name} {info.url_path}: not settled")
                progress(f"switch rep {rep + 1}/{switch_reps} done")
            for _ in range(reps if not switch_only else 0):
                for info in lessons:
                    for name in TIMED_APPS:
                        tab = tabs[name]
                        results["load"].setdefault(info.url_path, {}).setdefault(name, []).append(
                            measure_load(tab, info))
                        with contextlib.suppress(Exception):
                            tab.settle()
            progress("load done")
            # Each tab measured alone, as a visitor's browser has it: the other servers' pages, open meanwhile,
            # slowed its repaint (every tab is blank but the one measured), and no debugger reads its websocket.
            for tab in tabs.values() if not switch_only else ():
                tab.cdp.send("Network.disable")
                tab.page.goto("about:blank")
            for info in lessons if not switch_only else ():
                if info.url_path == "train":
                    continue
                for name in TIMED_APPS:
                    tab = tabs[name]
                    tab.page.bring_to_front()
                    tab.page.goto(f"{tab.url}/{info.url_path}")
                    with contextlib.suppress(Exception):  # Plotly loads lazily: wait for a chart first
                        tab.page.wait_for_selector(".js-plotly-plot .main-svg", timeout=15_000)
                    try:
                        tab.settle()
                        results["control"].setdefault(info.url_path, {})[name] = _control_change(tab.page,
                                                                                                 control_reps)
                    except Exception as problem:
                        results["control"].setdefault(info.url_path, {})[name] = {"skipped": str(problem)[:200]}
                    tab.page.goto("about:blank")
                progress(f"control {info.url_path} done")
            context.close()
            browser.close()
    results["load_average_end"] = Path("/proc/loadavg").read_text().split()[:3]
    return results


def _ratio(a, b) -> str:
    return f"{a / b:.1f}" if a and b else "–"


def table(results: dict) -> str:
    rows = ["| lesson | switch app | heatmap floor | × | matched floor | × | load app | heatmap | × | matched | × "
            "| control app p50 | heatmap | matched | × matched | runs/switch | ws kB | DOM nodes | script ms "
            "| layout ms |",
            "|---|" + "---:|" * 19]
    for page, cell in results["switch"].items():
        s = {n: _median([e["ms"] for e in cell.get(n, [])]) for n in TIMED_APPS}
        load = {n: _median(results["load"].get(page, {}).get(n, [])) for n in TIMED_APPS}
        ctrl = {n: results["control"].get(page, {}).get(n, {}).get("p50_ms") for n in TIMED_APPS}
        chart = results["control"].get(page, {}).get("app", {}).get("chart", 0)
        shown_ctrl = f"{ctrl['app']} (chart {chart + 1})" if ctrl["app"] and chart else ctrl["app"]  # not the first
        app_entries = cell.get("app", [])

        def med(key):
            return _median([e.get(key) for e in app_entries]) or "–"  # noqa: B023 (called in this iteration)

        rows.append(f"| {page} | {s['app']} | {s['heatmap']} | {_ratio(s['app'], s['heatmap'])} | {s['matched']} | "
                    f"{_ratio(s['app'], s['matched'])} | {load['app']} | {load['heatmap']} | "
                    f"{_ratio(load['app'], load['heatmap'])} | {load['matched']} | "
                    f"{_ratio(load['app'], load['matched'])} | "
                    f"{shown_ctrl or '–'} | {ctrl['heatmap'] or '–'} | {ctrl['matched'] or '–'} | "
                    f"{_ratio(ctrl['app'], ctrl['matched'])} | {med('runs')} | {med('ws_kb')} | {med('dom_nodes')} | "
                    f"{med('script_ms')} | {med('layout_ms')} |")
    return "\n".join(rows)


def alone_table(results: dict) -> str:
    """The switch against the page's title and key figure alone (FLOOR_MODE=alone): how far the key
    figure by itself is from the one-heatmap floor, and what the rest of the lesson's first run adds."""
    rows = ["| lesson | switch app | heatmap floor | app ÷ heatmap | title + key figure alone | alone ÷ heatmap "
            "| app ÷ alone |", "|---|" + "---:|" * 6]
    for page, cell in results["switch"].items():
        s = {n: _median([e["ms"] for e in cell.get(n, [])]) for n in APPS}
        if not s.get("alone"):
            continue
        rows.append(f"| {page} | {s['app']} | {s['heatmap']} | {_ratio(s['app'], s['heatmap'])} | {s['alone']} | "
                    f"{_ratio(s['alone'], s['heatmap'])} | {_ratio(s['app'], s['alone'])} |")
    return "\n".join(rows) if len(rows) > 2 else ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.browser_speed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--switch-reps", type=int, default=None, help="rounds of switches (default: --reps)")
    parser.add_argument("--control-reps", type=int, default=9)
    parser.add_argument("--pages", default="", help="comma-separated lesson url paths (default: every lesson)")
    parser.add_argument("--no-profile", action="store_true", help="skip the CDP counters")
    parser.add_argument("--switch-only", action="store_true", help="measure the switch alone (no load, control)")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    pages = [p for p in args.pages.split(",") if p]
    results = run(args.reps, pages or None, not args.no_profile, args.control_reps,
                  progress=lambda m: print(f"[{time.strftime('%H:%M:%S')}] {m}", flush=True),
                  switch_only=args.switch_only, switch_reps=args.switch_reps)
    results["table"] = table(results)
    results["alone_table"] = alone_table(results)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    print(f"load average {results['load_average_start']} → {results['load_average_end']}")
    print(results["table"])
    print(results["alone_table"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
