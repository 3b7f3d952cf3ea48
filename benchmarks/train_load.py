"""Classroom phase "train-load": a class presses Train on the same settings while other students keep
using the other pages.

`others` sessions spread over the other lessons change a control every ~2 s for the whole phase
(as in benchmarks/load.py).  After `baseline_s` seconds, `trainers` sessions open the train page
with the same settings, arriving over a few seconds, press Train and then poll as the browser does:
the page's fragment announces its rerun interval and each trainer sends those automatic reruns until
the page turns into the finished run (the scrubber).  Reported: the other pages' latency before and
while the class trains (same phase, same machine), the trainers' poll latency, the time from Train
to the finished run for each trainer (one shared run: about one run's time for everyone), and the
server's memory and CPU (its process tree: the training child included).
"""

from __future__ import annotations

import asyncio
import random
import time

from explorer.serve.catalog import PAGES
from harness.server import free_port, tree_memory_mb
from harness.wsclient import Session

from .load import HARD_LIMIT_EXTRA_S, RERUN_TIMEOUT_S, _sample_memory, _student, visit_every_page
from .stats import summary_ms

TRAIN_PAGE = "train"
TRAIN_QUERY = "seed=3"  # the settings the whole class trains (the default 800 steps)
SCRUBBER = "Replay the run: step"


def _train_button(session: Session):
    return next((w for w in session.widgets.values() if w.kind == "button" and w.proto.label in ("Train", "Race")),
                None)


def _finished(session: Session) -> bool:
    return any(w.kind == "slider" and w.proto.label == SCRUBBER for w in session.widgets.values())


async def _trainer(index: int, url: str, arrival_s: float, stop_at: float, polls: list, done: list,
                   failures: list, poll_bytes: list | None = None, page_runs: list | None = None) -> None:
    await asyncio.sleep(arrival_s)
    session = Session(url, TRAIN_PAGE, TRAIN_QUERY)
    try:
        await session.connect()
        first = await session.rerun(timeout=RERUN_TIMEOUT_S)
        button = _train_button(session)
        if not first.ok or button is None:
            failures.append(f"trainer {index}: first visit {first.status} {first.exceptions[:1]}, button {button}")
            return
        session.set(button, True)
        pressed = time.monotonic()
        result = await session.rerun(timeout=RERUN_TIMEOUT_S)
        polls.append(result.seconds)
        while time.monotonic() < stop_at and result.ok:
            if _finished(session):
                done.append(time.monotonic() - pressed)
                return
            if not session.auto_reruns:
                failures.append(f"trainer {index}: no fragment to poll and no finished run")
                return
            fragment, interval = next(iter(session.auto_reruns.items()))
            await asyncio.sleep(interval)
            result = await session.rerun(timeout=RERUN_TIMEOUT_S, fragment_id=fragment)
            polls.append(result.seconds)
            if result.status == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY":
                if poll_bytes is not None:
                    poll_bytes.append(result.bytes)
            elif page_runs is not None:  # the fragment asked for a whole-page run
                page_runs.append(index)
        if not result.ok:
            failures.append(f"trainer {index}: poll {result.status} {result.exceptions[:1]}")
    except Exception as problem:  # connection refused / broken: an error of the run, never a crash
        failures.append(f"trainer {index}: {type(problem).__name__}: {problem}")
    finally:
        await session.close()


async def run_train_load(url: str, server_pid: int, *, trainers: int = 30, others: int = 12,
                         baseline_s: float = 20.0, train_window_s: float = 120.0, interval_s: float = 2.0,
                         seed: int = 1) -> dict:
    """See the module docstring.  The phase ends when every trainer has seen the finished run, or
    `train_window_s` after the class arrived."""
    start = time.monotonic()
    pages = [p.url_path for p in PAGES if p.url_path and p.url_path != TRAIN_PAGE]
    record, first_visits, failures, polls, done, samples = [], [], [], [], [], []
    poll_bytes, page_runs = [], []
    stop = asyncio.Event()
    memory_before = tree_memory_mb(server_pid)
    sampler = asyncio.create_task(_sample_memory(server_pid, start, stop, samples))
    deadline = baseline_s + train_window_s
    rng = random.Random(seed)
    students = [asyncio.create_task(_student(i, url, pages[i % len(pages)], start, deadline, interval_s,
                                             2.0 * i / max(1, others), seed, record, first_visits, failures))
                for i in range(others)]
    class_arrives = start + baseline_s
    stop_at = start + deadline
    class_tasks = [asyncio.create_task(_trainer(i, url, baseline_s + rng.uniform(0, 3), stop_at, polls, done,
                                                failures, poll_bytes, page_runs)) for i in range(trainers)]
    try:
        await asyncio.wait_for(asyncio.gather(*class_tasks), deadline + HARD_LIMIT_EXTRA_S)
        trained_until = time.monotonic() - start
        for task in students:  # the class is done: the other students stop too
            task.cancel()
        await asyncio.gather(*students, return_exceptions=True)
    except TimeoutError:
        failures.append("the phase did not end in time; cancelled")
        trained_until = time.monotonic() - start
        for task in [*students, *class_tasks]:
            task.cancel()
        await asyncio.gather(*students, *class_tasks, return_exceptions=True)
    finally:
        stop.set()
        await sampler
    arrived = class_arrives - start + 3.0  # every trainer has pressed Train by then
    before = [r for r in record if r["t"] < baseline_s]
    during = [r for r in record if arrived <= r["t"] <= trained_until]
    per_page = {page: {"before": summary_ms([r["seconds"] for r in before if r["page"] == page]),
                       "during": summary_ms([r["seconds"] for r in during if r["page"] == page])} for page in pages}
    peak = max((pss for _, pss, *_ in samples), default=float("nan"))

    def cpu_share(low: float, high: float) -> float | None:  # cores busy in the server's process tree
        inside = [(t, cpu) for t, _, cpu, *_ in samples if low <= t <= high]
        if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
            return None
        return round((inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0]), 2)

    return {
        "trainers": trainers, "others": others, "baseline_s": baseline_s, "train_query": TRAIN_QUERY,
        "trainers_finished": len(done), "errors": len(failures), "error_examples": failures[:10],
        "train_to_finished": summary_ms(done),
        "polls": summary_ms(polls),
        "fragment_polls": len(poll_bytes), "bytes_per_poll": round(sum(poll_bytes) / max(1, len(poll_bytes))),
        "page_runs_asked_by_fragments": len(page_runs),
        "other_pages_before": summary_ms([r["seconds"] for r in before]),
        "other_pages_during": summary_ms([r["seconds"] for r in during]),
        "per_page": per_page,
        "server_memory_mb": {"before": round(memory_before["pss"], 1), "max": round(peak, 1)},
        "server_cpu_share": {"before": cpu_share(0, baseline_s), "during": cpu_share(arrived, trained_until)},
        "client_cpu_share": round((samples[-1][4] - samples[0][4]) / max(1e-9, samples[-1][0] - samples[0][0]), 2)
        if len(samples) > 1 else None,
        "elapsed_s": round(time.monotonic() - start, 1),
    }


def train_load_phase(*, quick: bool = False, workers: int = 0, root=None, port: int | None = None) -> dict:
    """The phase against a fresh server: the class server with `workers` Streamlit workers behind
    HAProxy (deploy/class-server.sh, as in class), or one `streamlit run` process (workers=0);
    every page visited once before class (on every worker)."""
    from harness.server import ROOT, streamlit_server

    with streamlit_server(name="train-load", workers=workers, root=root or ROOT, port=port) as app:
        asyncio.run(visit_every_page(app.url, workers))
        result = asyncio.run(run_train_load(app.url, app.process.pid, trainers=6 if quick else 30,
                                            others=4 if quick else 12, baseline_s=8 if quick else 20))
        result["server"] = (f"class-server.sh (HAProxy), {workers} Streamlit workers" if workers
                            else "one streamlit run process")
        return result


def main() -> int:
    """python -m benchmarks.train_load --root A --root B --rounds 1: the phase against each checkout
    in turn (an export of an older commit beside this one), one JSON line each with the load average."""
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m benchmarks.train_load")
    parser.add_argument("--root", type=Path, action="append")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--port", type=int, help="default: the highest free port of PORT_RANGE (benchmarks run by "
                                                 "others on this machine start from the lowest)")
    args = parser.parse_args()
    for round_ in range(args.rounds):
        for root in args.root or [None]:
            load = Path("/proc/loadavg").read_text().split()[:3]
            port = args.port or free_port(highest_first=True)
            result = train_load_phase(quick=args.quick, workers=args.workers, root=root and root.resolve(), port=port)
            print(json.dumps({"round": round_, "root": str(root), "load_before": load,
                              "load_after": Path("/proc/loadavg").read_text().split()[:3], **result}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
