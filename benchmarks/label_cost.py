"""What a key figure's tick labels cost a lesson switch, in headless Debian Chromium.

    .venv/bin/python -m benchmarks.label_cost [--reps 10]

The switch target of issue 27 compares a lesson's switch with a floor page drawing one unlabelled 32 × 32
heatmap (benchmarks/floor_nav_app.py).  A lesson's key figure labels its rows and columns with tokens;
this phase measures what those labels cost on their own.  One Streamlit app (benchmarks/label_cost_app.py)
has a page per figure, each drawing its title and the figure alone.  Every repetition opens Home, then a
warm-up page (the floor again, not timed: Plotly's code loads with a tab's first chart, as it does once
for a student), then every page in turn: the sidebar switch from the page before is timed as
browser_speed times a lesson switch (click → the figure drawn), the pages in a rotated order in every
repetition so the machine's load hits them alike:

* floor: browser_speed's one-heatmap floor, unlabelled;
* floor, labelled: the same heatmap with a token of the attention lesson's input on each of its 32 rows
  and 32 columns, drawn the app's way (explorer.figures.common.token_axis, margins worked out: frozen);
* the attention lesson's key figure at its defaults as sent (every layer × head), with its tick labels,
  and with every tick label blanked;
* the one-layer grid (what presentation mode and larger models show), with and without its labels.

Medians, ms, and each ÷ the unlabelled floor.  Phase `label-cost` of benchmarks/run.py.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from types import SimpleNamespace

import plotly.graph_objects as go

from tests.support.server import streamlit_server

from .browser import CHROMIUM, CHROMIUM_ARGS, INIT_JS, VIEWPORT
from .browser_speed import CLICK_JS, Tab, measure_switch
from .plotly_draw import _floor

FLOOR, WARM = "floor", "warm-up"


def _unlabelled(spec: dict) -> dict:
    """The spec with every axis's tick labels blanked (ticks, panels and margins unchanged)."""
    layout = dict(spec["layout"])
    for name, axis in spec["layout"].items():
        if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            layout[name] = {**axis, "showticklabels": False}
    return {**spec, "layout": layout}


def figures() -> dict[str, tuple[str, dict]]:
    """name → (page title, Plotly spec as sent)."""
    from explorer.figures.common import FONT_SIZE, frozen, token_axis
    from explorer.serve import runtime
    from explorer.serve.lessons import ATTENTION

    floor = _floor()  # plotly_draw's: browser_speed's floor heatmap, as JSON
    shown = runtime.shown(ATTENTION, ATTENTION.settings())
    tokens = list(shown.view.attention.key_tokens)
    labels = [tokens[i % len(tokens)] for i in range(32)]
    labelled = go.Figure(floor, _validate=False).update_layout(
        xaxis=token_axis(labels, domain=(0, 1), anchor="y", size=FONT_SIZE - 2),
        yaxis=token_axis(labels, domain=(0, 1), anchor="x", size=FONT_SIZE - 2, reverse=True),
        font={"size": FONT_SIZE}, margin={"l": 10, "r": 10, "t": 40, "b": 30})
    grid = frozen(shown.figures.grid).to_dict()
    layer = frozen(shown.figures.layer_grid).to_dict()
    return {FLOOR: ("Floor: one heatmap", floor),
            "floor-labelled": ("Floor with 32 + 32 token labels", frozen(labelled).to_dict()),
            "grid": ("Attention key figure, every layer", grid),
            "grid-unlabelled": ("Attention key figure, labels blanked", _unlabelled(grid)),
            "layer-grid": ("Attention one-layer grid", layer),
            "layer-grid-unlabelled": ("Attention one-layer grid, labels blanked", _unlabelled(layer))}


def _labels(spec: dict) -> int:
    return sum(len(axis.get("ticktext") or []) for name, axis in spec["layout"].items()
               if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict) and axis.get("showticklabels", True))


def run(reps: int = 10, progress=print) -> dict:
    from playwright.sync_api import sync_playwright

    found = figures()
    folder = Path(tempfile.mkdtemp(prefix="attention-explorer-label-cost-"))
    for name, (_, spec) in found.items():
        (folder / f"{name}.json").write_text(json.dumps(spec))
    (folder / f"{WARM}.json").write_text(json.dumps(found[FLOOR][1]))
    titles = {WARM: "Warm-up", **{name: title for name, (title, _) in found.items()}}
    (folder / "index.json").write_text(json.dumps(titles))
    names = list(found)
    times: dict[str, list[float]] = {name: [] for name in names}
    with streamlit_server("benchmarks/label_cost_app.py", name="label-cost",
                          env={"LABEL_COST_DIR": str(folder)}) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport=VIEWPORT)
            context.add_init_script(INIT_JS + CLICK_JS)
            context.set_default_timeout(30_000)
            tab = Tab(context, "label-cost", server.url)
            for rep in range(reps + 1):  # the first repetition warms up (Plotly's code loads), not counted
                order = names[rep % len(names):] + names[:rep % len(names)]
                tab.page.goto(server.url + "/")
                tab.settle()
                measure_switch(tab, SimpleNamespace(url_path=WARM, title="Warm-up"), profile=False)
                tab.settle()
                for name in order:
                    entry = measure_switch(tab, SimpleNamespace(url_path=name, title=found[name][0]), profile=False)
                    if rep and entry.get("ms") is not None:
                        times[name].append(entry["ms"])
                    tab.settle()
                progress(f"  label-cost: repetition {rep}/{reps}")
        finally:
            browser.close()
    floor = statistics.median(times[FLOOR])
    rows = {name: {"title": found[name][0], "labels": _labels(found[name][1]), "traces": len(found[name][1]["data"]),
                   "ms": round(statistics.median(values), 1), "x_floor": round(statistics.median(values) / floor, 2),
                   "n": len(values)}
            for name, values in times.items() if values}
    return {"reps": reps, "figures": rows}


def table(result: dict) -> str:
    lines = ["| page | tick labels | traces | switch → drawn ms | ÷ unlabelled floor |", "|---|---:|---:|---:|---:|"]
    for row in result["figures"].values():
        lines.append(f"| {row['title']} | {row['labels']} | {row['traces']} | {row['ms']} | {row['x_floor']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.label_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args(argv)
    print(table(run(args.reps)))


if __name__ == "__main__":
    main()
