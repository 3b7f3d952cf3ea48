"""The benchmark command:  .venv/bin/python -m benchmarks.run  (from the project root)

Runs, in order, each against real `streamlit run` servers on 127.0.0.1 (ports 8620-8690) that it
starts and stops itself:

1. cold start: process start to home page rendered, first visit to every page (fresh servers);
2. interaction latency of every page at default and largest settings, side by side with the
   floor app; TCP_NODELAY: the server socket's option and client-side on/off timings;
3. classroom load: 30 sessions over the pages, a control change every ~2 s each, 60 s, against one
   `streamlit run` process and then (phase load-serve) against deploy/class-server.sh: one
   Streamlit worker per core behind HAProxy (sticky by cookie), the production server;
   then (phase train-load, against the class server too) 30 sessions press Train on the same
   settings while 12 others keep using the other pages; then (phase burst) a class opening the
   link together: 30 and 60 first visits at the same moment through the class server, one lesson
   and every page mixed (benchmarks/burst.py);
4. garbage collection: runner.postScriptGC × gc.freeze(), latency and memory;
5. browser: cold start and control change to repainted heatmap in headless Chromium;
   browser-speed: every lesson's sidebar switch, full load and control → repaint against the
   one-heatmap and matched floors (benchmarks/browser_speed.py); plotly-draw: every lesson's Plotly
   figures drawn alone, as sent and with Plotly's automargin (benchmarks/plotly_draw.py); label-cost: what
   the attention key figure's tick labels cost a switch, beside a floor heatmap with and without word
   labels (benchmarks/label_cost.py); reveal: presentation mode's
   Reveal → answer and figure, every step of every lesson (benchmarks/reveal_speed.py); first-click:
   a lecturer's first click on each lesson of a fresh server, warm-up on and off
   (benchmarks/first_click.py); train-first: the first press of Train on a fresh server against a
   later press (benchmarks/train_first.py); readme-server: a student's first visit to the server the
   README starts, its file watcher off (as config.toml says) and on (benchmarks/readme_server.py);
   class-first-visit: a first visit through the class server, gzipped by HAProxy or not
   (benchmarks/class_first_visit.py);
6. in one process, one torch thread: heavy, CPU of one uncached rerun of each lesson at its largest
   settings (benchmarks/heavy.py); encoder-search, semantic search on MiniLM
   (benchmarks/encoder_search.py); length-sweep, the length lesson's sweep (benchmarks/length_sweep.py);
   train-default, the live-training lesson's default run (benchmarks/train_search.py).

Writes benchmarks/results.json and benchmarks/RESULTS.md (after every phase, so an interrupted run
keeps what it measured); what each number means is written by benchmarks/report.py beside it.
`--only NAME` runs one phase and keeps the others' earlier results.  `--quick` runs the same phases
with small counts (a smoke test of the harness, numbers not meant for RESULTS.md): it writes
results-quick.json / RESULTS-quick.md to a temporary directory (or `--out DIR`), never into benchmarks/.
Every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import importlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.server import ROOT, streamlit_server

OUT = ROOT / "benchmarks"
QUICK_OUT = Path(tempfile.gettempdir()) / "attention-explorer-benchmarks-quick"  # a smoke test's numbers stay out
PHASES = ["coldstart", "latency", "load", "load-serve", "train-load", "burst", "gc", "browser", "browser-speed",
          "plotly-draw", "label-cost", "reveal", "first-click", "train-first", "readme-server", "class-first-visit",
          "heavy",
          "encoder-search", "length-sweep", "train-default", "soak", "soak-heavy"]
SERVE_WORKERS = 2  # deploy/class-server.sh's default on this 2-core machine (one per core)


def loadavg() -> list[float]:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return []


def machine() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem_kb = int(next(line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                          if line.startswith("MemTotal")))
    except (OSError, StopIteration):
        mem_kb = 0
    import streamlit
    import torch

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                timeout=10).stdout.strip()
        # The results files themselves do not count: a run started after another has changed them.
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--", ".", ":!benchmarks/results*.json",
                                     ":!benchmarks/RESULTS*.md"], cwd=ROOT, capture_output=True, text=True,
                                    timeout=10).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        commit, dirty = "unknown", False
    return {
        "cpu": cpu, "cores": os.cpu_count(), "memory_gb": round(mem_kb / 1024 / 1024, 1),
        "kernel": platform.release(), "python": platform.python_version(),
        "streamlit": streamlit.__version__, "torch": torch.__version__,
        "commit": commit + (" + uncommitted changes" if dirty else ""),
    }


def read_local_config() -> dict:
    import tomllib

    path = ROOT / ".streamlit" / "config.toml"
    return tomllib.loads(path.read_text()) if path.exists() else {}


class Recorder:
    def __init__(self, results_path: Path, report_path: Path, quick: bool, argv: list[str] | None = None):
        self.results_path = results_path
        self.report_path = report_path
        self.started = time.monotonic()
        self.data: dict = {
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "command": " ".join(["python -m benchmarks.run", *(argv if argv is not None else sys.argv[1:])]),
            "quick": quick,
            "machine": machine(),
            "server_config": read_local_config(),
            "load_average": {"start": loadavg()},
            "phases": {},
        }

    def phase(self, name: str, result, seconds: float, load_before: list[float]) -> None:
        self.data["phases"][name] = {"seconds": round(seconds, 1), "load_before": load_before,
                                     "load_after": loadavg(), "result": result,
                                     "finished": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
                                     "commit": self.data["machine"]["commit"]}
        self.save()

    def save(self) -> None:
        from .report import render

        self.data["runtime_s"] = round(time.monotonic() - self.started, 1)
        self.data["load_average"]["end"] = loadavg()
        self.results_path.write_text(json.dumps(self.data, indent=1, default=str) + "\n")
        self.report_path.write_text(render(self.data))


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts: check the harness, not the numbers")
    parser.add_argument("--skip", default="", help="comma-separated phases to skip: " + ",".join(PHASES))
    parser.add_argument("--only", default="", help="comma-separated phases to run, kept with the other phases "
                                                   "of the existing results file (e.g. --only soak)")
    parser.add_argument("--soak-seconds", type=float, default=0.0,
                        help="also run the classroom load this long against the class server (phase 'soak'): does "
                             "memory level off?")
    parser.add_argument("--heavy-soak-seconds", type=float, default=0.0,
                        help="also run 20 sessions this long against the class server, every slider they move in the "
                             "largest quarter of its range (phase 'soak-heavy'): memory per worker at heavy settings")
    parser.add_argument("--load-seconds", type=float, default=0.0,
                        help="length of the classroom phases load and load-serve (default 60, --quick 12)")
    parser.add_argument("--soak-env", action="append", default=[], metavar="NAME=VALUE",
                        help="environment of the soak's server (e.g. MALLOC_ARENA_MAX=2); names the phase "
                             "soak[NAME=VALUE]")
    parser.add_argument("--out", type=Path, default=None,
                        help="directory for the results and report (default benchmarks/; --quick: a temporary one)")
    args = parser.parse_args(argv)
    phases = PHASES
    unknown = {s.strip() for s in (args.skip + "," + args.only).split(",") if s.strip()} - set(phases)
    if unknown:
        parser.error(f"unknown phase(s) {', '.join(sorted(unknown))}; the phases: {', '.join(phases)}")
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    if only:
        skip |= set(phases) - only
    if not args.soak_seconds:
        skip.add("soak")
    if not args.heavy_soak_seconds:
        skip.add("soak-heavy")
    quick = args.quick
    suffix = "-quick" if quick else ""
    out = args.out or (QUICK_OUT if quick else OUT)
    out.mkdir(parents=True, exist_ok=True)
    recorder = Recorder(out / f"results{suffix}.json", out / f"RESULTS{suffix}.md", quick, argv)
    if only and recorder.results_path.exists():  # keep what the earlier full run measured
        earlier = json.loads(recorder.results_path.read_text())
        recorder.data["phases"] = earlier.get("phases", {})
        recorder.data["load_average"]["start"] = earlier.get("load_average", {}).get("start")
        recorder.data["date"] = earlier.get("date", recorder.data["date"]) + f"; {'/'.join(sorted(only))} " \
            f"{recorder.data['date']}"
        recorder.data["command"] = earlier.get("command", "python -m benchmarks.run") + " (+ " + \
            " ".join(a for a in (argv or sys.argv[1:])) + ")"
        recorder.started -= earlier.get("runtime_s", 0)
    log(f"load average {loadavg()}; writing {recorder.results_path.name} and {recorder.report_path.name}")


    from .browser import run_browser
    from .burst import run_bursts
    from .burst import table as burst_table
    from .coldstart import run_cold_start
    from .findings import gc_variants, nodelay_comparison, server_socket_nodelay
    from .latency import run_latency
    from .load import run_load, visit_every_page
    from .train_load import train_load_phase

    def timed(name: str, function):
        if name in skip:
            log(f"{name}: skipped")
            return
        log(f"{name}: start (load {loadavg()})")
        before, start = loadavg(), time.monotonic()
        try:
            result = function()
        except Exception as problem:  # record and go on: the other phases still tell something
            result = {"error": f"{type(problem).__name__}: {problem}"}
            log(f"{name}: FAILED {result['error']}")
        recorder.phase(name, result, time.monotonic() - start, before)
        log(f"{name}: done in {time.monotonic() - start:.0f} s")

    timed("coldstart", lambda: run_cold_start(rounds=1 if quick else 3))

    def latency_phase():
        profile_dir = Path(tempfile.mkdtemp(prefix="attention-explorer-floor-"))
        with streamlit_server(name="app") as app, \
                streamlit_server("benchmarks/floor_app.py", name="floor", env={"FLOOR_PROFILE_DIR": str(profile_dir)},
                                 exclude_ports={app.port}) as floor:
            result = asyncio.run(run_latency(
                app.url, floor.url, profile_dir, reps=8 if quick else 30, paced_reps=4 if quick else 20,
                paced_gap_s=0.3, search_budget_s=15 if quick else 90, progress=log))
            log("  TCP_NODELAY: server socket and client on/off")
            result["tcp_nodelay"] = {
                "server_socket": server_socket_nodelay(app.url, app.process.pid, reps=8 if quick else 40),
                "timings": nodelay_comparison(app.url, reps=6 if quick else 20, paced_reps=3 if quick else 8),
            }
            result["server_rss_mb_end"] = round(app.rss_mb(), 1)
            return result

    timed("latency", latency_phase)

    def load_phase(duration_s: float, env: dict | None = None, workers: int = 0, sessions: int = 30,
                   heavy: bool = False):
        with streamlit_server(name="load", env=env, workers=workers) as app:
            asyncio.run(visit_every_page(app.url, workers))
            result = asyncio.run(run_load(app.url, app.process.pid, sessions=8 if quick else sessions,
                                          duration_s=duration_s, interval_s=2.0, heavy=heavy))
            result["warmed_up"] = "every page visited once before the run" + (" on every worker" if workers else "")
            result["server_env"] = env or {}
            result["server"] = (f"class-server.sh (HAProxy), {workers} Streamlit workers" if workers
                                else "one streamlit run process")
            return result

    load_seconds = args.load_seconds or (12 if quick else 60)
    timed("load", lambda: load_phase(load_seconds))
    timed("load-serve", lambda: load_phase(load_seconds, workers=SERVE_WORKERS))

    timed("train-load", lambda: train_load_phase(quick=quick, workers=SERVE_WORKERS))

    def burst_phase():
        result = run_bursts((8,) if quick else (30, 60), progress=log)
        result["table"] = burst_table(result)
        return result

    timed("burst", burst_phase)
    timed("gc", lambda: gc_variants(reps=5 if quick else 30))
    timed("browser", lambda: run_browser(reps=3 if quick else 12))

    def browser_speed_phase():
        from .browser_speed import run as run_browser_speed
        from .browser_speed import table

        result = run_browser_speed(reps=1 if quick else 3, control_reps=2 if quick else 9, progress=log,
                                   switch_reps=1 if quick else 9)
        result["table"] = table(result)
        return result

    timed("browser-speed", browser_speed_phase)

    # Phases that call one module's run(...) with a quick and a full set of arguments.
    simple = (("plotly-draw", "plotly_draw", "run_plotly_draw", {"reps": 2, "progress": log},
               {"reps": 8, "progress": log}),
              ("label-cost", "label_cost", "run", {"reps": 2, "progress": log}, {"reps": 10, "progress": log}),
              ("reveal", "reveal_speed", "run", {"reps": 1, "pages": ["decoder", "depth"], "progress": log},
               {"reps": 2, "pages": None, "progress": log}),
              ("first-click", "first_click", "run", {"wait_s": 3.0}, {"wait_s": 20.0}),
              ("train-first", "train_first", "run", {"reps": 1}, {"reps": 3}),
              ("readme-server", "readme_server", "run", {"reps": 1, "progress": log}, {"reps": 4, "progress": log}),
              ("class-first-visit", "class_first_visit", "run", {"reps": 1, "progress": log},
               {"reps": 3, "progress": log}),
              ("heavy", "heavy", "run", {"reps": 1}, {"reps": 3}),
              ("encoder-search", "encoder_search", "run", {"reps": 1}, {"reps": 3}),
              ("length-sweep", "length_sweep", "run", {"reps": 1}, {"reps": 3}),
              ("train-default", "train_search", "run_default", {"seeds": (0,)}, {"seeds": (0, 1, 2)}))
    for name, module, function, quick_args, full_args in simple:
        def phase(module=module, function=function, kwargs=quick_args if quick else full_args):
            return getattr(importlib.import_module(f".{module}", __package__), function)(**kwargs)

        timed(name, phase)
    soak_env = dict(item.split("=", 1) for item in args.soak_env)
    soak_name = "soak" + ("[" + ",".join(args.soak_env) + "]" if soak_env else "")
    if "soak" not in skip:  # against the production server
        timed(soak_name, lambda: load_phase(args.soak_seconds, soak_env, workers=SERVE_WORKERS))
    timed("soak-heavy", lambda: load_phase(args.heavy_soak_seconds, workers=SERVE_WORKERS, sessions=20, heavy=True))
    recorder.save()
    log(f"finished in {recorder.data['runtime_s']:.0f} s: {recorder.report_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
