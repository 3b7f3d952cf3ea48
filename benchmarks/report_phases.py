"""RESULTS.md's sections for the browser phases (browser-speed, plotly-draw, reveal, first-click,
train-first), the class arriving together (burst) and the in-process phases (heavy, encoder-search,
length-sweep); report.py renders the rest and calls these.  A phase whose module words its own report
(TITLE, `intro`, `table`: reveal, plotly-draw, label-cost, readme-server, class-first-visit, burst) is
rendered by `_module_section`.  Every number comes from the results dictionary; the prose beside it says
what it means and how it was measured, never a figure of its own.
"""

from __future__ import annotations

import statistics

SWITCH_FLOOR_RATIO = 1.5  # issue 27: every lesson's sidebar switch → key figure ≤ 1.5× the one-heatmap floor
CONTROL_P50_MS = 250.0  # issue 27: control → repaint p50
REVEAL_MS = 500.0  # issue 27: Reveal → answer and figure
HEAVY_CPU_S = 0.25  # issue 15: what one rerun holds a thread for at the largest settings
QUERY_S = 0.3  # issue 30: one semantic-search query → its results
SWEEP_S = 2.0  # issue 31: the length sweep, every model at every length
ROW_MAX = 0.7  # issue 29: the live-training default's sharpest head, mean row maximum at the end of the run
TRAIN_90_S = 20.0  # issue 29: held-out accuracy ≥ 90 % within this many seconds of training on one core

# Hand-written reports and raw files this report replaced; `git log -p -- benchmarks/<file>` shows them.
EARLIER = {
    "analysis.md": "a commentary written for the runs of 23–24 Nov 2026",
    "browser_speed.md": "issue 18's browser measurements, before/after tables and a Chromium trace of a switch",
    "burst.md": "why the class server checks health as it does: bursts before and after, frozen and killed workers",
    "encoder_search.md": "issue 30's search timings, quiet and under load",
    "heavy.md": "issue 15's work pool, before/after, and session 7's CPU per rerun (postScriptGC, Arrow bytes)",
    "train_load.md": "issue 14's train-load phase and what one poll cost, two checkouts side by side",
    "train_search.md, train_search.json": "issue 29's search of the live-training settings (38 runs) that chose "
    "the lesson's default; `python -m benchmarks.train_search` runs it again",
    "RESULTS-quick.md": "a smoke test's report (--quick now writes to a temporary directory)",
    "browser_speed_before.json, browser_speed_after.json, browser_speed_key_first.json, browser_trace.json, "
    "browser_sections.json, burst.json, results-quick.json": "the raw numbers of those reports",
    "paired.py, poll_cost.py, browser_sections.py, browser_trace.py": "tools that compared two checkouts "
    "or traced one switch, for those reports",
}


def _result(data: dict, phase: str) -> dict | None:
    entry = data.get("phases", {}).get(phase)
    result = entry["result"] if entry else None
    return result if isinstance(result, dict) else None


def loadavg(values) -> str:
    return " / ".join(str(v) for v in values) if isinstance(values, list | tuple) else str(values)


def _failed(title: str, result: dict) -> list[str] | None:
    return [f"## {title}", "", f"Failed: {result['error']}", ""] if "error" in result else None


def _module_section(data: dict, phase: str, module) -> list[str]:
    """The section of a phase whose module words its own report: its TITLE, `intro(result)` and
    `table(result)`."""
    result = _result(data, phase)
    if not result:
        return []
    if failed := _failed(module.TITLE, result):
        return failed
    return [f"## {module.TITLE}", "", module.intro(result), "", module.table(result), ""]


def _switch_ratios(speed: dict, of: str = "app") -> dict[str, tuple[float, float, float]]:
    """lesson → (`of`'s switch ms, one-heatmap floor ms, ratio), medians (`of`: the app, or a floor)."""
    out = {}
    for lesson, cell in speed.get("switch", {}).items():
        app = [e["ms"] for e in cell.get(of, []) if e.get("ms") is not None]
        floor = [e["ms"] for e in cell.get("heatmap", []) if e.get("ms") is not None]
        if app and floor:
            a, f = statistics.median(app), statistics.median(floor)
            out[lesson] = (a, f, a / f)
    return out


def controlled(results) -> str:
    """The chart a control's press is timed on, as the run that measured it chose it (benchmarks/browser.py
    `_control_change`: its results say "charts" since it counts Vega's as well as Plotly's)."""
    if any(isinstance(result, dict) and result.get("charts") for result in results):
        return "key figure (the page's first chart, Plotly or Vega)"
    return "first Plotly chart"


def _control_p50(speed: dict) -> dict[str, float]:
    return {lesson: cell["app"]["p50_ms"] for lesson, cell in speed.get("control", {}).items()
            if isinstance(cell.get("app"), dict) and cell["app"].get("p50_ms") is not None}


def _worst(values: dict[str, float], bound: float, unit: str, digits: int = 0) -> tuple[str, bool]:
    within = sum(v <= bound for v in values.values())
    name = max(values, key=values.get)
    return (f"{within} of {len(values)} within; worst {name} {values[name]:.{digits}f}{unit}",
            within == len(values))


def evaluate(data: dict) -> list[tuple[str, str, str, bool | None]]:
    """(target, threshold, measured, met) rows for these phases."""
    rows = []
    speed = _result(data, "browser-speed")
    if speed and "error" not in speed:
        ratios = {lesson: r for lesson, (_, _, r) in _switch_ratios(speed).items()}
        if ratios:
            text, met = _worst(ratios, SWITCH_FLOOR_RATIO, "×", 1)
            alone = {lesson: r for lesson, (_, _, r) in _switch_ratios(speed, "alone").items()}
            if alone:  # what the key figure by itself is from the floor
                text += f" (title + key figure alone: {sum(r <= SWITCH_FLOOR_RATIO for r in alone.values())} of " \
                        f"{len(alone)} within, {min(alone.values()):.1f}–{max(alone.values()):.1f}×)"
            rows.append(("lesson switch → key figure, ÷ one-heatmap floor (Chromium)", f"≤ {SWITCH_FLOOR_RATIO}×",
                         text, met))
        control = _control_p50(speed)
        if control:
            text, met = _worst(control, CONTROL_P50_MS, " ms")
            rows.append(("control → repaint p50 (Chromium)", f"≤ {CONTROL_P50_MS:.0f} ms", text, met))
    reveal = _result(data, "reveal")
    if reveal and "error" not in reveal:
        from .reveal_speed import summary

        p50 = {lesson: statistics.median(row["shown"]) for lesson, row in summary(reveal).items() if row["shown"]}
        failures = sum(row["failures"] for row in summary(reveal).values())
        if p50:
            text, met = _worst(p50, REVEAL_MS, " ms")
            rows.append(("Reveal → answer and figure, p50 per lesson (Chromium, 1280×720)", f"≤ {REVEAL_MS:.0f} ms",
                         text + (f"; {failures} steps failed" if failures else ""), met and not failures))
    burst = _result(data, "burst")
    if burst and "cases" in burst:
        runs = [(case, run) for case in burst["cases"] for run in case["runs"]]
        lost = sum(run["sessions"] - run["loaded"] + run["errors"] for _, run in runs)
        rows.append(("a class arriving together: every session loaded, none cut or failed",
                     "0 lost", f"{lost} lost over {len(runs)} bursts", lost == 0))
    heavy = _result(data, "heavy")
    if heavy and "median" in heavy:
        held = {page: max(row["piece"], row["script"]) for page, row in heavy["median"].items()}
        text, met = _worst(held, HEAVY_CPU_S, " s", 3)
        errors = sum(row.get("errors", 0) for row in heavy["median"].values())
        rows.append(("heavy: CPU one uncached rerun holds a thread (script or pool piece), largest settings",
                     f"≤ {HEAVY_CPU_S} s", text + (f"; {errors:.0f} page errors" if errors else ""),
                     met and not errors))
    search = _result(data, "encoder-search")
    if search and "median_s" in search:
        query = search["median_s"]["query"]
        rows.append(("semantic search: one query → 5 results (median)", f"≤ {QUERY_S} s",
                     f"{query:.4f} s (worst {search['median_s']['query worst']:.4f} s)", query <= QUERY_S))
    sweep = _result(data, "length-sweep")
    if sweep and "median_s" in sweep:
        value = sweep["median_s"]["sweep"]
        rows.append(("length sweep: every reversal model at every length", f"≤ {SWEEP_S:.0f} s", f"{value:.2f} s",
                     value <= SWEEP_S))
    train = _result(data, "train-default")
    if train and "runs" in train:
        runs = train["runs"]
        sharp = [max(max(layer) for layer in r["row_max"]) for r in runs]
        rows.append(("live training, lesson default: sharpest head's row max at the end", f"≥ {ROW_MAX}",
                     f"{min(sharp):.2f}–{max(sharp):.2f} over {len(runs)} seeds", min(sharp) >= ROW_MAX))
        times = [r["training_seconds_90"] for r in runs]
        reached = [t for t in times if t is not None]
        rows.append(("live training, lesson default: 90 % held-out, seconds of training (one core)",
                     f"≤ {TRAIN_90_S:.0f} s", f"{len(reached)} of {len(runs)} seeds reach it"
                     + (f", {min(reached):.1f}–{max(reached):.1f} s" if reached else ""),
                     len(reached) == len(runs) and max(reached, default=0) <= TRAIN_90_S))
    return rows


def train_default(data: dict) -> list[str]:
    result = _result(data, "train-default")
    if not result:
        return []
    title = "Train it live: the lesson's default run (one torch thread)"
    if failed := _failed(title, result):
        return failed
    from .train_search import table

    return [f"## {title}", "",
            "`benchmarks/train_search.py` (`run_default`): the run the page's Train button starts at its defaults "
            f"(`{result['settings']}`), one seed at a time, in this process. **row max**: the mean over query "
            "rows of a head's largest attention weight, per layer (heads separated by /), at the end of the run: "
            "high when each answer letter looks at one input letter. **anti-diagonal**: the mean weight on the "
            "reversal's cells — a high row max alone can be every row resting on the same letter. Seconds to 90 % "
            "held-out accuracy: of the run's computing (training and held-out measurements) / of training alone; "
            "they move with the machine's load, the step counts do not.", "",
            table(result["runs"]), ""]


def browser_speed(data: dict) -> list[str]:
    speed = _result(data, "browser-speed")
    if not speed:
        return []
    title = "What the user waits for in the browser: switch, load, control (Chromium)"
    if failed := _failed(title, speed):
        return failed
    from .browser_speed import alone_table, table

    alone = alone_table(speed)
    return [
        f"## {title}", "",
        f"`benchmarks/browser_speed.py`, measured {speed.get('date', '')}, load average (1, 5, 15 min) "
        f"{loadavg(speed.get('load_average_start'))} → {loadavg(speed.get('load_average_end'))}; medians of "
        f"{speed.get('switch_reps') or speed.get('reps')} switches and {speed.get('reps')} loads "
        "(control: its own repetitions), ms.",
        "Headless Chromium at 1400 × 900; several servers at once and every gesture made on each in turn: the "
        "**app**; the **one-heatmap floor** (`benchmarks/floor_nav_app.py FLOOR_MODE=heatmap`: the same Streamlit, "
        "the app's page names and URLs, one 32 × 32 Plotly heatmap per lesson); the **matched floor** "
        "(`FLOOR_MODE=profile`: each lesson draws what one run of the real lesson sent — the same figures, arrays, "
        "tables, text and widgets — with no model); for the switch, the **key figure alone** (`FLOOR_MODE=alone`: "
        "the lesson's title and the first chart of its main area, as that run sent them, and nothing else).",
        "",
        "- **switch**: from the lesson before it (the first lesson: from Home, which on the app and on every floor "
        "loads the charts' code while it is read: explorer/serve/chart_code.py), a click on the lesson in the sidebar "
        "until its key figure (the first chart of the page) is drawn; Train, with no chart before a run, until its "
        "run is done. **load**: the lesson's URL opened until the key figure is drawn, from navigation start. "
        f"**control**: one arrow key on a slider that changes the "
        f"{controlled(cell.get('app') for cell in speed.get('control', {}).values())} (else the next chart that one "
        "does: its number is given), key event to the chart redrawn, "
        "with the measured tab alone in the browser (the other servers' tabs blank: open, they slowed its "
        "repaint) and no debugger reading the websocket.",
        "- **×**: the app's median ÷ the floor's, measured in the same minutes: read these, not the absolute "
        "times, which move with the machine's load. Against the matched floor the ratio says what the app costs "
        "beyond what its own output costs Streamlit and the browser; against the one-heatmap floor, what the "
        "lesson's output costs at all.",
        "- Profile columns (the app, median of the switches): script runs the switch caused, websocket kB "
        "received, DOM nodes (Chromium's `Nodes`, detached ones included), script and layout time during the "
        "switch (Chromium's Performance metrics).",
        "",
        table(speed), "",
        *(["**The key figure alone.** How far from the one-heatmap floor a lesson's switch can come while it "
           "still draws its own key figure: the floor's one heatmap against the title and that figure with "
           "nothing else (no lead, controls, steps or text), and what the rest of the lesson's first run adds "
           "(app ÷ alone), ms.", "", alone, ""] if alone else []),
    ]


def reveal(data: dict) -> list[str]:
    from . import reveal_speed

    return _module_section(data, "reveal", reveal_speed)


def plotly_draw(data: dict) -> list[str]:
    from . import plotly_draw

    return _module_section(data, "plotly-draw", plotly_draw)


def label_cost(data: dict) -> list[str]:
    from . import label_cost

    return _module_section(data, "label-cost", label_cost)


def readme_server(data: dict) -> list[str]:
    from . import readme_server

    return _module_section(data, "readme-server", readme_server)


def class_first_visit(data: dict) -> list[str]:
    from . import class_first_visit

    return _module_section(data, "class-first-visit", class_first_visit)


def first_click(data: dict) -> list[str]:
    result = _result(data, "first-click")
    if not result:
        return []
    title = "A lecturer's first click on each lesson of a fresh server (Chromium)"
    if failed := _failed(title, result):
        return failed
    rows = [f"| {lesson} | {row['warm_s']:.2f} | {row['cold_s']:.2f} |" for lesson, row in result["lessons"].items()]
    return [f"## {title}", "",
            "`benchmarks/first_click.py`: a new `streamlit run app.py` with the warm-up on, then another with it "
            f"off (`EXPLORER_WARM=0`); Chromium opens Home, waits {result['wait_s']:.0f} s (the lecturer introducing "
            "the lesson), then clicks each lesson in the sidebar in turn: seconds from the click until that page's "
            "script has finished and a chart is drawn. The first lesson also pays for the browser loading the "
            "charts' code.", "",
            "| lesson | warm-up on, s | warm-up off, s |", "|---|---:|---:|", *rows, ""]


def train_first(data: dict) -> list[str]:
    result = _result(data, "train-first")
    if not result:
        return []
    title = "A lecturer's first press of Train on a fresh server (Chromium)"
    if failed := _failed(title, result):
        return failed
    return [f"## {title}", "",
            f"`benchmarks/train_first.py`: {result['reps']} times, a new `streamlit run app.py`; Chromium opens the "
            f"Train lesson, waits {result['wait_s']:g} s, presses Train: seconds from the click until the attention "
            "grid first changes (the run's first snapshot drawn). Then Stop, and the same with another seed (a "
            "later press, not cached).", "",
            f"- first press: median **{result['first_median_s']:.2f} s** ({', '.join(map(str, result['first_s']))})",
            f"- later press: median {result['later_median_s']:.2f} s ({', '.join(map(str, result['later_s']))})",
            f"- first ÷ later: **{result['ratio']:.2f}**", ""]


def burst(data: dict) -> list[str]:
    from . import burst

    return _module_section(data, "burst", burst)


def heavy(data: dict) -> list[str]:
    result = _result(data, "heavy")
    if not result:
        return []
    title = "CPU of one uncached rerun at the largest settings"
    if failed := _failed(title, result):
        return failed
    rows = [f"| {page} | `{'&'.join(f'{k}={v}' for k, v in result['links'].get(page, {}).items())}` | "
            f"{row['total']:.3f} | {row['piece']:.3f} | {row['script']:.3f} | {row['pieces']:.0f} |"
            + (f" {row['errors']:.0f} errors" if row.get("errors") else "")
            for page, row in result["median"].items()]
    return [f"## {title}", "",
            f"`benchmarks/heavy.py`: each lesson through AppTest at its largest settings in a fresh process (one "
            "torch thread), once to load imports and models, then again with the view caches cleared (loaded "
            f"models kept): that rerun is measured; median of {result['reps']} processes, CPU seconds. **total**: "
            "the process's CPU for the rerun, every thread; **piece**: the largest piece of work it ran on the "
            "work pool (`explorer/serve/pool.py`), the longest it held the pool's thread at once; **script**: total "
            "minus the pieces, what the page's own script thread used. Short pieces are what let a class share "
            "the pool in turn and a superseded rerun stop after the piece in progress. *gradients, setting* keeps "
            "the recall models' evaluation, done once per process by the warm-up.", "",
            "| page | link | total | largest piece | script | pieces |", "|---|---|---:|---:|---:|---:|", *rows, ""]


def encoder_search(data: dict) -> list[str]:
    result = _result(data, "encoder-search")
    if not result:
        return []
    title = "Semantic search on MiniLM (one torch thread)"
    if failed := _failed(title, result):
        return failed
    m = result["median_s"]
    what = {"load": "load all-MiniLM-L6-v2 (read, SHA-256, build)",
            "corpus": f"embed the {result['corpus_sentences']}-sentence corpus once, as the first search does",
            "query": f"one query → 5 results, the corpus kept (median of {result['queries']} queries)",
            "page": "the lesson's search section for a new query (`search_view`)",
            "report": "pooling report and attention sinks over the corpus (the lesson's cold measurements)"}
    rows = [f"| {text} | {m[key]:.4f} | {m.get(key + ' CPU', float('nan')):.4f} |" for key, text in what.items()
            if key in m]
    return [f"## {title}", "",
            f"`benchmarks/encoder_search.py`: each of {result['reps']} repetitions from empty caches (the model's "
            "load cache, the kept corpus vectors, the lesson's analysis caches); wall-clock and process CPU seconds "
            "(CPU is what a shared machine's load does not inflate), medians. The worst query: "
            f"{m.get('query worst', float('nan')):.4f} s.", "",
            "| what | wall s | CPU s |", "|---|---:|---:|", *rows, ""]


def length_sweep(data: dict) -> list[str]:
    result = _result(data, "length-sweep")
    if not result:
        return []
    title = "The length lesson's sweep (one torch thread)"
    if failed := _failed(title, result):
        return failed
    m = result["median_s"]
    lengths = [str(n) for n in result["lengths"]]
    rows = [f"| {name} | " + " | ".join(f"{acc[n]:.2f}" if n in acc else "–" for n in lengths) + " |"
            for name, acc in result["accuracy"].items()]
    return [f"## {title}", "",
            f"`benchmarks/length_sweep.py`: every shipped reversal model (one per positional encoding) at every "
            f"length, {result['samples']} inputs each, from empty caches, median of {result['reps']}: loading and "
            f"checking the models {m['load']:.2f} s (CPU {m['load CPU']:.2f} s), the sweep **{m['sweep']:.2f} s** "
            f"(CPU {m['sweep CPU']:.2f} s), the same sweep again from the caches {m['cached']:.3f} s. The models "
            "were trained on lengths 2–10; a learned table stops at its last row (–). Accuracy:", "",
            "| model | " + " | ".join(lengths) + " |", "|---|" + "---:|" * len(lengths), *rows, ""]


def sections(data: dict) -> list[str]:
    out = []
    for render in (browser_speed, plotly_draw, label_cost, reveal, readme_server, class_first_visit, first_click,
                   train_first, burst, heavy, encoder_search, length_sweep, train_default):
        out += render(data)
    return out


def earlier_reports() -> list[str]:
    return ["## Earlier reports", "",
            "This file is the only report, generated from `results.json`; a phase not yet run on the current "
            "code has no section. Findings written by hand before were folded into the text above or left to "
            "git's history, with the code they measured; read one with `git log -p -- benchmarks/<file>`:", "",
            *[f"- `{files}`: {what}" for files, what in EARLIER.items()], ""]
