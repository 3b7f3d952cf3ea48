"""What a key figure's tick labels cost a lesson switch, in headless Debian Chromium.

    .venv/bin/python -m benchmarks.label_cost [--reps 10]

The switch target of issue 27 compares a lesson's switch with a floor page drawing one unlabelled 32 × 32
heatmap (benchmarks/floor_nav_app.py).  A lesson's key figure labels its rows and columns with tokens;
this phase measures what those labels cost on their own.  One Streamlit app (benchmarks/label_cost_app.py)
has a page per figure, each drawing its title and the figure alone.  Every page is timed in a page load
of its own: Home opened, a warm-up page (the floor again, not timed: Plotly's code loads with a tab's
first chart, as it does once for a student), then the sidebar switch to the page, timed as browser_speed
times a lesson switch (click → the figure drawn).  A page load of its own, because plotly.js keeps the
size of every text it has measured in a page: drawn after another figure with the same labels, a figure
would not measure its own.  The pages go in a rotated order in every repetition, so the machine's load
hits them alike:

* floor: browser_speed's one-heatmap floor, unlabelled;
* floor, labelled: the same heatmap with a token of the attention lesson's input on each of its 32 rows
  and 32 columns, drawn the app's way (explorer.figures.common.token_axis, margins worked out: frozen);
* the attention lesson's key figure at its defaults as sent (every layer × head), with its tick labels,
  and with every tick label blanked;
* the one-layer grid (what presentation mode and larger models show), with and without its labels;
* both grids as they were drawn before each layer's row became one heatmap trace (`per_panel`): a
  heatmap per head, each with its own axes.

Medians, ms, and each ÷ the unlabelled floor.  Phase `label-cost` of benchmarks/run.py.
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import tempfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import plotly.graph_objects as go

from harness.server import streamlit_server

from .browser import CHROMIUM, CHROMIUM_ARGS, INIT_JS, VIEWPORT
from .browser_speed import CLICK_JS, Tab, measure_switch
from .plotly_draw import _floor
from .profiles import _decode_typed_arrays

FLOOR, WARM = "floor", "warm-up"


def _unlabelled(spec: dict) -> dict:
    """The spec with every axis's tick labels blanked (ticks, panels and margins unchanged)."""
    layout = dict(spec["layout"])
    for name, axis in spec["layout"].items():
        if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            layout[name] = {**axis, "showticklabels": False}
    return {**spec, "layout": layout}


def _typed(array: np.ndarray) -> dict:
    array = np.ascontiguousarray(array)
    return {"dtype": array.dtype.str.lstrip("<|="), "bdata": base64.b64encode(array.tobytes()).decode(),
            "shape": ",".join(map(str, array.shape))}


def per_panel(spec: dict, n_heads: int, n_keys: int) -> dict:
    """The grid as it was drawn before each layer's row became one heatmap: a heatmap (and a grey mask
    heatmap) per panel, each panel with its own pair of axes, its own key-token ticks and the row's
    query-token ticks on the first panel only.  The same cells, colours, labels and selected frame."""
    from explorer.lessons.attention.figures import head_gap

    stride = n_keys + head_gap(n_heads, n_keys)
    width = n_heads * stride - (stride - n_keys)
    old = spec["layout"]
    layout = {k: v for k, v in old.items() if not k.startswith(("xaxis", "yaxis"))}
    traces = []
    for trace in spec["data"]:
        if trace["type"] != "heatmap":
            traces.append(trace)
            continue
        row = 1 if trace["xaxis"] == "x" else int(trace["xaxis"][1:])
        z, custom = _decode_typed_arrays(trace["z"]), trace.get("customdata")
        for head in range(n_heads):
            n = (row - 1) * n_heads + head + 1
            suffix = "" if n == 1 else str(n)
            columns = slice(head * stride, head * stride + n_keys)
            part = {**trace, "z": _typed(z[:, columns]), "xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}
            if isinstance(custom, list):
                part["customdata"] = [line[columns] for line in custom]
            elif isinstance(custom, dict):
                part["customdata"] = _typed(_decode_typed_arrays(custom)[:, columns])
            traces.append(part)
            if f"xaxis{suffix}" in layout:  # the row's mask trace: its panels' axes are made
                continue
            x_axis, y_axis = dict(old["xaxis" if row == 1 else f"xaxis{row}"]), dict(old["yaxis" if row == 1 else
                                                                                         f"yaxis{row}"])
            keep = [i for i, v in enumerate(x_axis["tickvals"]) if columns.start <= v < columns.stop]
            x_axis.update(domain=[columns.start / width, columns.stop / width], anchor=f"y{suffix}",
                          tickvals=[x_axis["tickvals"][i] - columns.start for i in keep],
                          ticktext=[x_axis["ticktext"][i] for i in keep])
            if "range" in x_axis:
                x_axis["range"] = [-0.5, n_keys - 0.5]
            y_axis["anchor"] = f"x{suffix}"
            if head:
                y_axis.update(ticktext=[""] * len(y_axis["ticktext"]), title=None)
            layout[f"xaxis{suffix}"], layout[f"yaxis{suffix}"] = x_axis, y_axis
    shapes = []
    for shape in old.get("shapes", []):
        row = 1 if shape["xref"] == "x" else int(shape["xref"][1:])
        head = int((shape["x0"] + shape["x1"]) / 2 // stride)
        n = (row - 1) * n_heads + head + 1
        suffix = "" if n == 1 else str(n)
        shapes.append({**shape, "xref": f"x{suffix} domain", "yref": f"y{suffix} domain", "x0": -0.03, "x1": 1.03})
    layout["shapes"] = shapes
    return {"data": traces, "layout": layout}


def figures() -> dict[str, tuple[str, dict]]:
    """name → (page title, Plotly spec as sent)."""
    from explorer.figures.common import FONT_SIZE, frozen, token_axis
    from explorer.lessons.attention.spec import ATTENTION
    from explorer.serve import runtime

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
    dims = (shown.view.attention.weights.shape[1], len(tokens))
    return {FLOOR: ("Floor: one heatmap", floor),
            "floor-labelled": ("Floor with 32 + 32 token labels", frozen(labelled).to_dict()),
            "grid": ("Attention key figure, every layer", grid),
            "grid-unlabelled": ("Attention key figure, labels blanked", _unlabelled(grid)),
            "grid-per-panel": ("Attention key figure, a heatmap per panel (as before)", per_panel(grid, *dims)),
            "layer-grid": ("Attention one-layer grid", layer),
            "layer-grid-per-panel": ("Attention one-layer grid, a heatmap per panel (as before)",
                                     per_panel(layer, *dims)),
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
            for rep in range(reps + 1):  # the first repetition warms up (the server, the browser), not counted
                order = names[rep % len(names):] + names[:rep % len(names)]
                for name in order:  # each in a page load of its own (see the module)
                    tab.page.goto(server.url + "/")
                    tab.settle()
                    measure_switch(tab, SimpleNamespace(url_path=WARM, title="Warm-up"), profile=False)
                    tab.settle()
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


TITLE = "What a key figure's tick labels cost a switch (Chromium)"


def intro(result: dict) -> str:
    """RESULTS.md's words before the table: what was measured, and how."""
    return (f"`benchmarks/label_cost.py`, median of {result.get('reps')} repetitions, ms: one Streamlit app with a "
            "page per figure, each drawing its title and the figure alone; each page in a page load of its own "
            "(plotly.js keeps the size of every text it has measured in a page, so a figure drawn after another "
            "with the same labels would not measure its own): Home, an untimed warm-up page (a tab's first chart "
            "loads Plotly's code), then the sidebar switch to the page until the figure is drawn, timed as "
            "browser-speed times a lesson switch; the pages in a rotated order. The **unlabelled floor** is "
            "browser-speed's one-heatmap floor; the **labelled** one "
            "is the same heatmap with a token of the attention lesson's input on each row and column, drawn the "
            "app's way (token axes, margins worked out). The attention lesson's key figure at its defaults as "
            "sent, then with every tick label blanked (its panels, ticks and margins unchanged), then as it was "
            "drawn before each layer became one heatmap: a heatmap (and a grey mask heatmap) per panel, each "
            "panel with its own axes (`per_panel`: the same cells, labels and frame).")


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
