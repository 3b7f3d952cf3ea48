"""A section's own control → that section repainted, this checkout against another, side by side.

    .venv/bin/python -m benchmarks.browser_sections /path/to/other/checkout

Both apps run at once (the other checkout's own tests/support/server.py starts it from its root); on
each page a slider (found by its label) is pressed with an arrow key six times, alternately on each
app, and timed from the key event to the first animation frame in which the section's chart (found by
its element key) has new data; websocket messages and kB received for the press are counted.
Gradients' dependency matrices (`dep_T`) and the decoder's architectures (`arch_layers`: its figure is
drawn from shapes, so only the messages are counted there).  Writes benchmarks/browser_sections.json.
"""
# ruff: noqa: E501, E702
import importlib.util
import json
import statistics
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.browser import CHROMIUM, CHROMIUM_ARGS, INIT_JS
from benchmarks.browser_speed import CLICK_JS
from tests.support.server import streamlit_server

SIG = """(key) => { const plot = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  if (!plot || !plot._fullData) return null;
  return JSON.stringify(plot._fullData.map((t) => [t.type, t.z ? t.z.length : null, t.z ? Array.from(t.z[t.z.length-1] || []).slice(0, 40) : null])); }"""
CHG = """([key, before]) => { const plot = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  if (!plot || !plot._fullData) return false;
  const now = JSON.stringify(plot._fullData.map((t) => [t.type, t.z ? t.z.length : null, t.z ? Array.from(t.z[t.z.length-1] || []).slice(0, 40) : null]));
  if (now === before) return false; window.__paintedAt = performance.now(); return true; }"""

def main() -> None:
    spec = importlib.util.spec_from_file_location("before_server", str(Path(sys.argv[1]) / "tests" / "support" / "server.py"))
    bs = importlib.util.module_from_spec(spec); sys.modules["before_server"] = bs; spec.loader.exec_module(bs)
    CASES = [("gradients", "Sequence length for the matrices", "dependency"), ("decoder", "Layers per stack", "architectures")]
    out = {}
    with streamlit_server(name="sec2-after") as after, bs.streamlit_server(name="sec2-before", exclude_ports={after.port}) as before, sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        ctx = b.new_context(viewport={"width":1400,"height":900}); ctx.add_init_script(INIT_JS + CLICK_JS)
        tabs = {"before": (ctx.new_page(), before.url), "after": (ctx.new_page(), after.url)}
        for path, label, chart in CASES:
            for page, url in tabs.values():
                page.bring_to_front(); page.goto(f"{url}/{path}")
                page.wait_for_selector(f".st-key-{chart} .js-plotly-plot .main-svg", timeout=120000); page.wait_for_timeout(3000)
            res = {"before": [], "after": []}
            for i in range(6):
                for name, (page, _) in tabs.items():
                    page.bring_to_front()
                    before_sig = page.evaluate(SIG, chart); n = page.evaluate("window.__ws.length")
                    sl = page.locator('[data-testid="stSlider"]').filter(has_text=label).first.get_by_role("slider").first
                    sl.focus(); page.keyboard.press("ArrowLeft" if i % 2 == 0 else "ArrowRight")
                    try:
                        page.wait_for_function(CHG, arg=[chart, before_sig], timeout=20000, polling="raf")
                        ms = page.evaluate("window.__paintedAt - window.__keyAt")
                    except Exception:
                        ms = None
                    page.wait_for_timeout(1500)
                    msgs = page.evaluate(f"window.__ws.slice({n})")
                    res[name].append((ms, round(sum(m[1] for m in msgs)/1024, 1), len(msgs)))
            out[path] = {k: {"p50_ms": statistics.median([r[0] for r in v if r[0]] or [0]), "ws_kb": statistics.median([r[1] for r in v]), "msgs": statistics.median([r[2] for r in v]), "all": v} for k, v in res.items()}
            print(path, json.dumps(out[path]), flush=True)
    print(Path("/proc/loadavg").read_text())
    (Path(__file__).resolve().parent / "browser_sections.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
