"""A class opening the link together:  .venv/bin/python -m benchmarks.burst  (from the project root)

30 and 60 websocket sessions make their first visit at the same moment through the class server
(deploy/class-server.sh, two Streamlit workers behind HAProxy, the real app on 127.0.0.1), all on one
lesson or on every page mixed.  Each case starts a fresh class server and sends two bursts: the first
on cold caches, the second (once the first class has left) on warm ones.  Reported per burst: the
sessions loaded, cut (their connection closed under them) and failed, the slowest and the 95th
percentile first view (from the burst's start to the page drawn, follow-up runs included), the
slowest answer of each worker's /_stcore/health asked directly meanwhile, and what HAProxy's log says
(workers marked DOWN, the sessions that cut, 5xx answers).  harness/burst.py does the visits.

`--root DIR` serves another checkout (e.g. an export of an earlier commit, to compare).  On its own it
writes test-artifacts/burst.json; as phase `burst` of benchmarks/run.py, results.json.  Every step is
bounded in time (see harness/burst.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from explorer.serve.catalog import PAGES
from harness.burst import burst, haproxy_events
from harness.server import ROOT, streamlit_server

OUT = ROOT / "test-artifacts" / "burst.json"  # run on its own; as a phase of run.py: results.json
LESSON = "attention"  # "Self-attention, masks and heads": the lesson a class is sent to first
SETTLE_S = 5.0  # between the two bursts: the first class's sessions are closed


def worker_ports(log_path: Path) -> list[int]:
    match = re.search(r"on 127\.0\.0\.1 ports ([\d ]+) \(", log_path.read_text(errors="replace"))
    return [int(p) for p in match.group(1).split()] if match else []


@contextlib.contextmanager
def other_work(processes: int):
    """`processes` CPU-bound processes beside the server (other work on a shared machine), for as
    long as the block lasts; each also ends by itself after an hour."""
    hogs = [subprocess.Popen([sys.executable, "-c", "import time\nend = time.monotonic() + 3600\n"
                              "while time.monotonic() < end: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait(timeout=10)


def one_case(sessions: int, pages: list[str], label: str, root: Path, log_dir: Path,
             progress=print, contend: int = 0) -> dict:
    runs = []
    with streamlit_server(name=f"burst-{sessions}-{label}", workers=2, root=root, log_dir=log_dir,
                          as_typed=True) as server:
        ports = worker_ports(server.log_path)
        for name in ("cold", "warm"):
            mark = len(server.log_path.read_text(errors="replace"))
            started = time.monotonic()
            with other_work(contend):
                result = asyncio.run(burst(server.url, pages, sessions, probe_ports=ports))
            time.sleep(1.0)  # HAProxy's last log lines
            summary = {"burst": name, **result.summary(), "seconds": round(time.monotonic() - started, 1),
                       "haproxy": haproxy_events(server.log_path.read_text(errors="replace")[mark:])}
            runs.append(summary)
            progress(f"  {sessions} sessions, {label}, {name}: {summary['loaded']} loaded, {summary['cut']} cut, "
                     f"{summary['errors']} errors, {len(summary['haproxy']['down'])} DOWN; slowest "
                     f"{summary['slowest_s']} s, p95 {summary['p95_s']} s; health direct "
                     f"{summary['health_direct_max_s']}")
            time.sleep(SETTLE_S)
    return {"sessions": sessions, "pages": label, "other_work": contend, "runs": runs}


def run_bursts(counts=(30, 60), root: Path = ROOT, progress=print, contend: int = 0) -> dict:
    log_dir = ROOT / "test-artifacts" / "burst-logs"
    cases = []
    for sessions in counts:
        cases.append(one_case(sessions, [LESSON], f"one lesson ({LESSON})", root, log_dir, progress, contend))
        cases.append(one_case(sessions, [p.url_path for p in PAGES], "every page mixed", root, log_dir, progress,
                              contend))
    return {"root": str(root), "other_work": contend, "cases": cases}


TITLE = "A class arriving together (class server)"


def intro(result: dict) -> str:
    """RESULTS.md's words before the table: what was measured, and how."""
    return (f"`benchmarks/burst.py`: {' and '.join(sorted({str(c['sessions']) for c in result['cases']}, key=int))} "
            "websocket sessions make a browser's first visit (the page's run and "
            "the runs it asks for next) at the same moment through `deploy/class-server.sh` started as typed (two "
            "workers behind HAProxy), all on one lesson or on every page in turn; a fresh server each case, first "
            "on cold caches, then once that class has left (warm). **loaded**: the first view arrived without an "
            "exception; **cut**: the connection was closed under it; **DOWN**: workers HAProxy's log marked down; "
            "slowest and p95 first view from the burst's start; **health**: each worker's slowest answer to "
            "`/_stcore/health` asked directly meanwhile. A worker that answers health late is marked down and its "
            "sessions cut: the reason for the class server's health checks, retries and watchdog "
            "(`docs/DEPLOY.md`, *Serving a class*).")


def table(result: dict) -> str:
    rows = ["| sessions | pages | burst | loaded | cut | errors | DOWN | slowest | p95 | health (direct), slowest |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for case in result["cases"]:
        for run in case["runs"]:
            health = ", ".join(f"{s} s" for s in run["health_direct_max_s"].values())
            rows.append(f"| {case['sessions']} | {case['pages']} | {run['burst']} | {run['loaded']} | {run['cut']} "
                        f"| {run['errors']} | {len(run['haproxy']['down'])} | {run['slowest_s']} s | {run['p95_s']} s "
                        f"| {health} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.burst", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", default="30,60", help="comma-separated burst sizes (default 30,60)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to serve (default this one)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--other-work", type=int, default=0, metavar="N",
                        help="N CPU-bound processes beside the server during each burst (a shared machine)")
    args = parser.parse_args(argv)
    result = run_bursts(tuple(int(n) for n in args.sessions.split(",")), args.root.resolve(),
                        contend=args.other_work)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
