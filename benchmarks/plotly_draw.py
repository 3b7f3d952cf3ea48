"""What one figure costs the browser to draw, in headless Debian Chromium: every Plotly figure of every
lesson at its defaults, as the app sends it (margins worked out on the server,
explorer/figures/margins.py) and as Plotly's automargin would draw it, beside the one-heatmap floor.

    .venv/bin/python -m benchmarks.plotly_draw [--reps 8]

A blank page with plotly.js (the plotly package's own copy; Streamlit bundles the same major version)
draws each figure into a 1000 px wide div: `Plotly.newPlot` until the next animation frame, after an
animation frame with the div empty.  The three variants of a figure are drawn one after the other in
every repetition, so the machine's load hits them alike; medians, ms.  Phase `plotly-draw` of
benchmarks/run.py.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
from pathlib import Path

import numpy as np
import plotly
import plotly.graph_objects as go

from .browser import CHROMIUM, CHROMIUM_ARGS

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"

DRAW_JS = """
async ([spec]) => {
  const div = document.getElementById('figure');
  Plotly.purge(div);
  div.innerHTML = '';
  await new Promise((done) => requestAnimationFrame(done));
  const started = performance.now();
  await Plotly.newPlot(div, spec.data, spec.layout, {responsive: true});
  await new Promise((done) => requestAnimationFrame(done));
  return performance.now() - started;
}
"""


def _floor() -> dict:
    z = np.add.outer(np.arange(32), np.arange(32)) / 62.0 + 0.5
    return json.loads(go.Figure(go.Heatmap(z=z)).to_json())


def lesson_figures() -> dict[str, dict[str, dict]]:
    """{lesson.figure: {"sent": spec as sent, "automargin": spec as built}} of every lesson's default view."""
    from explorer.figures.common import frozen
    from explorer.lessons import specs
    from explorer.serve import runtime
    LESSONS = specs()

    found = {}
    for lesson in LESSONS:
        figures = runtime.shown(lesson, lesson.settings()).figures
        if not dataclasses.is_dataclass(figures):
            continue
        for field in dataclasses.fields(figures):
            figure = getattr(figures, field.name)
            if isinstance(figure, go.Figure):
                found[f"{lesson.name}.{field.name}"] = {"sent": frozen(figure).to_dict(),
                                                        "automargin": json.loads(figure.to_json())}
    return found


def run_plotly_draw(reps: int = 8, progress=print) -> dict:
    from playwright.sync_api import sync_playwright

    figures = lesson_figures()
    floor = _floor()
    times: dict[str, dict[str, list[float]]] = {name: {"sent": [], "automargin": [], "floor": []} for name in figures}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_content("<html><body><div id='figure' style='width: 1000px'></div></body></html>")
            page.add_script_tag(path=str(PLOTLY_JS))
            for rep in range(reps + 1):  # the first repetition warms up, not counted
                for name, variants in figures.items():
                    for variant, spec in (("sent", variants["sent"]), ("automargin", variants["automargin"]),
                                          ("floor", floor)):
                        ms = page.evaluate(DRAW_JS, [spec])
                        if rep:
                            times[name][variant].append(ms)
                progress(f"  plotly-draw: repetition {rep}/{reps}")
        finally:
            browser.close()
    rows = {}
    for name, measured in times.items():
        medians = {variant: round(statistics.median(values), 1) for variant, values in measured.items()}
        fitted = "fitted_margins" in (figures[name]["sent"]["layout"].get("meta") or {})
        rows[name] = {**medians, "fitted": fitted,
                      "x_automargin": round(medians["automargin"] / medians["sent"], 2),
                      "x_floor": round(medians["sent"] / medians["floor"], 2)}
    return {"reps": reps, "plotly_js": plotly.__version__, "figures": rows}


TITLE = "One figure drawn alone: margins worked out or Plotly's automargin (Chromium)"


def intro(result: dict) -> str:
    """RESULTS.md's words before the table: what was measured, and how."""
    return (f"`benchmarks/plotly_draw.py`, median of {result.get('reps')} repetitions, ms: every Plotly figure of "
            f"every lesson at its defaults, drawn alone into a 1000 px wide div of a blank page (plotly.js "
            f"{result.get('plotly_js')}), from `Plotly.newPlot` to the next animation frame. **As sent**: the "
            "figure as the app sends it: where every labelled axis shows known text, its margins are worked out "
            "on the server and `automargin` is off (explorer/figures/margins.py, *worked out*); otherwise Plotly's "
            "automargin (*automargin*). **Automargin**: the same figure as built, its margins left to Plotly, which "
            "measures the drawn labels and draws the figure again. Beside them, the browser-speed floor's 32 × 32 "
            "heatmap, drawn in the same repetitions.")


def table(result: dict) -> str:
    lines = ["| figure | margins | as sent ms | automargin ms | automargin ÷ sent | one-heatmap floor ms | "
             "sent ÷ floor |", "|---|---|---:|---:|---:|---:|---:|"]
    for name, row in result["figures"].items():
        lines.append(f"| {name} | {'worked out' if row['fitted'] else 'automargin'} | {row['sent']} | "
                     f"{row['automargin']} | {row['x_automargin']} | {row['floor']} | {row['x_floor']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.plotly_draw", description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=8)
    args = parser.parse_args(argv)
    print(table(run_plotly_draw(args.reps)))


if __name__ == "__main__":
    main()
