"""Render benchmarks/RESULTS.md from the results dictionary written by benchmarks/run.py.

The one report: every number in it comes from the results, and the text beside a number says what it
means and how it was measured (benchmarks/report_phases.py renders the browser, burst and in-process
phases).  Nothing here is edited by hand after a run.
"""

from __future__ import annotations

from . import report_phases
from .report_server import (
    fmt,
    latency_section,
    load_section,
    phase_result,
    server_memory,
    server_name,
    train_load_section,
)

TARGETS = {
    "default_p95_ms": 100.0,  # issue 15: every page's p95 at defaults ≤ 100 ms and ≤ 1.3× the floor app
    "floor_ratio": 1.3,
    "load_errors": 0,
    "load_p95_ms": 600.0,  # one `streamlit run` process (and the train-load phase)
    "load_serve_p95_ms": 400.0,  # issue 15: the class server, 30 sessions, 2 workers behind HAProxy
    "load_rss_mb": 1024.0,
    "load_growth_mb_per_min": 10.0,
    "cold_start_s": 4.0,
}


def _ok(flag: bool | None) -> str:
    return "n/a" if flag is None else ("**met**" if flag else "**not met**")


def evaluate(data: dict) -> list[tuple[str, str, str, bool | None]]:
    """(target, threshold, measured, met) rows."""
    rows = []
    latency = phase_result(data, "latency")
    if latency and "cases" in latency:
        for case in latency["cases"]:
            if "error" in case:
                rows.append((f"{case['page']} ({case['setting']})", "runs", case["error"], False))
                continue
            paced = case["paced"]
            if case["setting"] == "default":
                p95 = paced["page"]["p95_ms"]
                rows.append((f"p95 at defaults: {case['page']}", f"≤ {TARGETS['default_p95_ms']:.0f} ms",
                             f"{p95:.0f} ms (back to back {case['back_to_back']['page']['p95_ms']:.0f})",
                             p95 <= TARGETS["default_p95_ms"]))
            ratio = paced["ratio_p50"]
            rows.append((f"ratio to floor (p50): {case['page']} {case['setting']}", f"≤ {TARGETS['floor_ratio']}",
                         f"{ratio:.2f}", ratio <= TARGETS["floor_ratio"]))
    for phase in ("load", "load-serve"):
        load = phase_result(data, phase)
        if not load or "latency" not in load:
            continue
        memory = server_memory(load)
        who = server_name(load)
        target = TARGETS["load_serve_p95_ms" if phase == "load-serve" else "load_p95_ms"]
        rows += [
            (f"classroom ({who}): errors", "0", str(load["errors"]), load["errors"] == 0),
            (f"classroom ({who}): p95", f"≤ {target:.0f} ms", f"{load['latency']['p95_ms']:.0f} ms",
             load["latency"]["p95_ms"] <= target),
            (f"classroom ({who}): server memory", "≤ 1 GB", f"{memory['max']:.0f} MB",
             memory["max"] <= TARGETS["load_rss_mb"]),
            (f"classroom ({who}): memory growth, second half", f"≤ {TARGETS['load_growth_mb_per_min']:.0f} MB/min",
             f"{memory['second_half_slope_mb_per_min']:+.1f} MB/min",
             memory["second_half_slope_mb_per_min"] <= TARGETS["load_growth_mb_per_min"]),
        ]
    for name in [n for n in data.get("phases", {}) if n.startswith("soak")]:
        soak = phase_result(data, name)
        if not soak or "latency" not in soak:
            continue
        memory = server_memory(soak)
        env = " ".join(f"{k}={v}" for k, v in soak.get("server_env", {}).items())
        heavy = ", heavy settings" if soak.get("heavy") else ""
        rows.append((f"classroom ({server_name(soak)}{heavy}), {soak['duration_s']:.0f} s run"
                     f"{' with ' + env if env else ''}: memory growth, second half",
                     f"≤ {TARGETS['load_growth_mb_per_min']:.0f} MB/min",
                     f"{memory['second_half_slope_mb_per_min']:+.1f} MB/min (max {memory['max']:.0f} MB)",
                     memory["second_half_slope_mb_per_min"] <= TARGETS["load_growth_mb_per_min"]))
    train = phase_result(data, "train-load")
    if train and "other_pages_during" in train:
        during = train["other_pages_during"]["p95_ms"]
        rows += [
            ("class presses Train: errors", "0", str(train["errors"]), train["errors"] == 0),
            ("class presses Train: every trainer sees the finished run", f"{train['trainers']}",
             str(train["trainers_finished"]), train["trainers_finished"] == train["trainers"]),
            ("class presses Train: other pages' p95 meanwhile", f"≤ {TARGETS['load_p95_ms']:.0f} ms",
             f"{during:.0f} ms (before: {train['other_pages_before']['p95_ms']:.0f} ms)",
             during <= TARGETS["load_p95_ms"]),
        ]
    cold = phase_result(data, "coldstart")
    if cold and "start_to_home_s_max" in cold:
        rows.append(("cold start to home page (worst of rounds)", f"≤ {TARGETS['cold_start_s']:.0f} s",
                     f"{cold['start_to_home_s_max']:.2f} s", cold["start_to_home_s_max"] <= TARGETS["cold_start_s"]))
    browser = phase_result(data, "browser")
    if browser and "cold_start_to_home_rendered_s" in browser:
        value = browser["cold_start_to_home_rendered_s"]
        rows.append(("cold start to home page rendered in Chromium", f"≤ {TARGETS['cold_start_s']:.0f} s",
                     f"{value:.2f} s", value <= TARGETS["cold_start_s"]))
    return rows + report_phases.evaluate(data)


def render(data: dict) -> str:
    m = data["machine"]
    out = [
        "# Benchmark results",
        "",
        f"Generated by `{data['command']}` (see `benchmarks/run.py`; raw numbers in "
        f"`{'results-quick.json beside this file' if data.get('quick') else 'benchmarks/results.json'}`). "
        "Generated, not edited: what each number means is written beside it by `benchmarks/report.py`.",
        "",
        f"- **Date:** {data['date']}; time spent in these runs, all together: {data.get('runtime_s', 0):.0f} s",
        f"- **Machine:** {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB RAM, Linux {m['kernel']}",
        f"- **Software:** Python {m['python']}, Streamlit {m['streamlit']}, torch {m['torch']}; commit {m['commit']}",
        f"- **Load average** (1, 5, 15 min) at start {data['load_average'].get('start')}, "
        f"at end {data['load_average'].get('end')}; per phase below.",
        f"- **Server:** `streamlit run app.py` on 127.0.0.1 with the local `.streamlit/config.toml` "
        f"({_config_text(data.get('server_config', {}))}), file watcher off, headless; the `load-serve` and "
        + ("`soak` phases run `serve.py` (its Streamlit workers with the same flags, behind its balancer)."
           if server_name(phase_result(data, "load-serve") or {}) == "serve.py" else
           "`soak` phases run `deploy/class-server.sh` (its Streamlit workers with the same flags, behind HAProxy)."),
        "",
    ]
    if data.get("quick"):
        out += ["> **Quick run** (`--quick`): small counts to check the harness. These numbers are not the results.",
                ""]
    rows = evaluate(data)
    if rows:
        out += ["## Targets", "", "| target | threshold | measured | |", "|---|---|---|---|"]
        out += [f"| {a} | {b} | {c} | {_ok(d)} |" for a, b, c, d in rows]
        out.append("")
    out += _phase_loads(data)
    out += latency_section(data)
    out += load_section(data)
    out += load_section(data, "load-serve",
                 f"Classroom load, production server ({server_name(phase_result(data, 'load-serve') or {})})")
    out += train_load_section(data)
    for name in data.get("phases", {}):
        if name.startswith("soak"):
            env = phase_result(data, name).get("server_env") if isinstance(phase_result(data, name), dict) else None
            out += load_section(data, name, "Classroom load, longer (does memory level off?)"
                         + (f" — server environment {env}" if env else ""))
    out += _cold(data)
    out += _browser(data)
    out += _gc(data)
    out += _nodelay(data)
    out += report_phases.sections(data)
    out += _method()
    out += report_phases.earlier_reports()
    return "\n".join(out) + "\n"


def _config_text(config: dict) -> str:
    parts = [f"{section}.{key} = {value!r}" for section, values in config.items() if isinstance(values, dict)
             for key, value in values.items()]
    return ", ".join(parts) or "defaults"


def _phase_loads(data: dict) -> list[str]:
    phases = data.get("phases", {})
    if not phases:
        return []
    out = ["## Phases", "", "Results of different runs are kept together (`--only`): each phase's own run below "
           "(finish time and commit, where recorded).", "",
           "| phase | duration | load average before | after | finished | commit |", "|---|---|---|---|---|---|"]
    for name, entry in phases.items():
        out.append(f"| {name} | {entry['seconds']:.0f} s | {entry['load_before']} | {entry['load_after']} | "
                   f"{entry.get('finished', '–')} | {entry.get('commit', '–')} |")
    return [*out, ""]


def _cold(data: dict) -> list[str]:
    cold = phase_result(data, "coldstart")
    if not cold:
        return []
    if "error" in cold:
        return ["## Cold start", "", f"Failed: {cold['error']}", ""]
    out = ["## Cold start", "",
           "Process start (`Popen`) → home page's `script_finished` over the websocket, fresh server each round; then "
           "the first visit to each page on that server (imports, model loading, first figures).", "",
           f"- start → home page: median **{cold['start_to_home_s_median']:.2f} s**, worst "
           f"{cold['start_to_home_s_max']:.2f} s; rounds: "
           + ", ".join(f"{r['start_to_home_s']:.2f} s (health after {r['health_s']:.2f} s)" for r in cold["rounds"]),
           "", "| page | first visit, median ms |", "|---|---|"]
    out += [f"| {page} | {ms:.0f} |" for page, ms in cold["first_visit_ms_median"].items()]
    return [*out, ""]


def _browser(data: dict) -> list[str]:
    browser = phase_result(data, "browser")
    if not browser:
        return []
    if "error" in browser:
        return ["## Browser (headless Chromium)", "", f"Failed: {browser['error']}", ""]
    out = ["## Browser (headless Chromium)", "",
           f"- cold start, server process start → home page rendered (Chromium already running): "
           f"**{browser.get('cold_start_to_home_rendered_s', float('nan')):.2f} s**",
           "- control change → repainted chart: one arrow key on a slider that changes the "
           + report_phases.controlled(browser["pages"].values()) + "; from "
           "the keydown event to the animation frame in which the chart's drawn data differs. Includes the slider's "
           "own debounce in the frontend, the round trip, the script run and the chart's redraw.", "",
           "| page | first open, rendered | slider | control → repaint p50 | max | n |", "|---|---|---|---|---|---|"]
    for page, entry in browser["pages"].items():
        if "skipped" in entry:
            out.append(f"| {page} | {entry['first_open_rendered_s']:.2f} s | – | {entry['skipped']} | | |")
        else:
            out.append(f"| {page} | {entry['first_open_rendered_s']:.2f} s | {entry['slider']} | "
                       f"**{fmt(entry['p50_ms'])} ms** | {fmt(entry['max_ms'])} ms | {entry['n']} |")
    return [*out, ""]


def _gc(data: dict) -> list[str]:
    gc = phase_result(data, "gc")
    if not gc:
        return []
    if not isinstance(gc, dict) or "variants" not in gc:
        return ["## Garbage collection", "", f"Failed or older format: {str(gc)[:200]}", ""]
    variants = gc["variants"]
    pages = list(variants[0]["pages"])
    out = ["## Garbage collection after every run", "",
           f"Four servers at once; every page at its defaults, {gc['reps']} reruns back to back on each, interleaved "
           "over the servers (p50 / p95 ms). Memory: resident memory after those reruns, and after the same fixed "
           "sequence of visits on each server (every control of every page through up to 6 of its values).", "",
           "| runner.postScriptGC | gc.freeze() after a page's first run | " + " | ".join(pages)
           + " | RSS after reruns | RSS after the fixed workload |",
           "|---|---|" + "---|" * len(pages) + "---|---|"]
    for v in variants:
        cells = " | ".join(f"{v['pages'][p]['p50_ms']:.0f} / {v['pages'][p]['p95_ms']:.0f}" for p in pages)
        out.append(f"| {'on' if v['postScriptGC'] else 'off'} | {'yes' if v['gc_freeze'] else 'no'} | {cells} | "
                   f"{v['rss_mb_after_reruns']:.0f} MB | {v['rss_mb_after_workload']:.0f} MB "
                   f"({v['workload_reruns']} reruns) |")
    return [*out, ""]


def _p50_p95(summary: dict) -> str:
    return f"{summary['p50_ms']:.0f} / {summary['p95_ms']:.0f}"


def _nodelay(data: dict) -> list[str]:
    latency = phase_result(data, "latency")
    if not latency or "tcp_nodelay" not in latency:
        return []
    nd = latency["tcp_nodelay"]
    sock = nd["server_socket"]
    t = nd["timings"]
    out = ["## TCP_NODELAY", ""]
    if sock.get("verified"):
        out.append(f"- Read from the server's accepted socket (pidfd_getfd): TCP_NODELAY is "
                   f"**{'set' if sock['server_accepted_socket_tcp_nodelay'] else 'not set'}**.")
        arms = (("as the app serves it", "as_served"),
                ("TCP_NODELAY cleared (as Streamlit alone leaves it)", "nodelay_cleared"))
        if all(key in sock for _, key in arms):
            out += ["- Same session, home page (smallest output), p50 / p95 ms, first as the server runs (the app "
                    "sets the option on its sockets: explorer/serve/sockets.py), then with TCP_NODELAY cleared on "
                    "it from outside:", "", "| server socket | back to back | paced |", "|---|---|---|"]
            out += [f"| {name} | {_p50_p95(sock[key]['back_to_back'])} | {_p50_p95(sock[key]['paced'])} |"
                    for name, key in arms]
            out.append("")
    else:
        out.append(f"- Server socket option could not be read: {sock.get('why')}")
    out += ["", f"Client socket (the benchmark's) with and without TCP_NODELAY; back to back ({t['reps']} reruns) "
            "and paced "
            f"({t['paced_reps']} reruns, {t['paced_gap_s']} s apart). p50 / p95 ms.", "",
            "| page | back to back, NODELAY | back to back, no NODELAY | paced, NODELAY | paced, no NODELAY |",
            "|---|---|---|---|---|"]
    for page, row in t["pages"].items():
        cells = [row[k] for k in ("back_to_back_nodelay", "back_to_back_no_nodelay", "paced_nodelay",
                                  "paced_no_nodelay")]
        out.append(f"| {page} | " + " | ".join(_p50_p95(c) for c in cells) + " |")
    return [*out, ""]


def _method() -> list[str]:
    return [
        "## Method and caveats",
        "",
        "- Latency is measured by `harness/wsclient.py`, a client of Streamlit's websocket protocol "
        "(BackMsg `rerun_script` up, ForwardMsg frames down until `script_finished`), so it includes the script "
        "run, serialisation and sending, and the loopback transfer; not the browser's rendering (see *Browser*).",
        "- The floor app (`benchmarks/floor_app.py`) draws a recording of the page's own output from precomputed "
        "data through the same Streamlit calls (same Plotly specs and arrays, Vega-Lite specs and data, "
        "dataframes, text and widgets); layout blocks are replayed as empty containers.  The ratio is page ÷ floor.",
        "- The *largest* settings are found by a timed search on the machine at hand; on a loaded machine it may "
        "pick a different option than on a quiet one.  Its links are listed so the case can be rerun by hand.",
        "- All servers, clients and Chromium share the same cores: the load test's client (one Python process, 30 "
        "sessions) and the server compete for the 2 cores, as a classroom's browsers would not.",
        "",
    ]


def main(argv: list[str] | None = None) -> int:
    """Render RESULTS.md again from results.json (after a change to this file; never edit either by hand)."""
    import argparse
    import json
    from pathlib import Path

    here = Path(__file__).parent
    parser = argparse.ArgumentParser(prog="python -m benchmarks.report", description=main.__doc__)
    parser.add_argument("results", nargs="?", type=Path, default=here / "results.json")
    parser.add_argument("--out", type=Path, default=here / "RESULTS.md")
    args = parser.parse_args(argv)
    args.out.write_text(render(json.loads(args.results.read_text())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
