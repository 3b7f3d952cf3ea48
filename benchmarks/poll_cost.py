"""What one poll of the train page costs the server:  .venv/bin/python -m benchmarks.poll_cost

Starts one `streamlit run` process (from `--root`, default this checkout: point it at an export of
an older commit to compare), then `--trainers` sessions press Train on the same settings and poll
their fragment as the browser does until they see the finished run ("live"); then as many new
sessions press Train on the same settings again and replay the cached run ("replay").  For each
part: polls (fragment reruns), page reruns, the server process's CPU seconds (the Streamlit process
alone: the training child is not counted) per poll, the bytes and elements a poll sends, and the
time from Train to the finished run.  CPU seconds, not wall time: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.support.server import BASE_FLAGS, ROOT, cpu_seconds, free_port, stop, wait_healthy
from tests.support.wsclient import Session

from .train_load import SCRUBBER, TRAIN_PAGE, _train_button

TIMEOUT_S = 30.0


def _finished(session: Session) -> bool:
    return any(w.kind == "slider" and w.proto.label == SCRUBBER for w in session.widgets.values())


async def _watch(url: str, query: str, arrival: float, out: dict) -> None:
    await asyncio.sleep(arrival)
    session = Session(url, TRAIN_PAGE, query)
    try:
        await session.connect()
        await session.rerun(timeout=TIMEOUT_S)
        session.set(_train_button(session), True)
        pressed = time.monotonic()
        result = await session.rerun(timeout=TIMEOUT_S)
        out["page_runs"] += 1
        while result.ok and not _finished(session) and time.monotonic() - pressed < 120:
            if not session.auto_reruns:
                out["errors"].append("no fragment and no finished run")
                return
            fragment, interval = next(iter(session.auto_reruns.items()))
            await asyncio.sleep(interval)
            result = await session.rerun(timeout=TIMEOUT_S, fragment_id=fragment)
            if result.status == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY":
                out["polls"] += 1
                out["poll_bytes"].append(result.bytes)
                out["poll_frames"].append(result.frames)
                out["intervals"].append(interval)
            else:  # the fragment asked for a page rerun: the client sees a whole-page run
                out["page_runs"] += 1
        if not result.ok:
            out["errors"].append(f"{result.status} {result.exceptions[:1]}")
        out["done"].append(time.monotonic() - pressed)
    finally:
        await session.close()


async def _part(url: str, pid: int, query: str, trainers: int) -> dict:
    out = {"polls": 0, "page_runs": 0, "poll_bytes": [], "poll_frames": [], "intervals": [], "errors": [], "done": []}
    cpu0 = cpu_seconds(pid)
    await asyncio.gather(*[_watch(url, query, 3.0 * i / trainers, out) for i in range(trainers)])
    cpu = cpu_seconds(pid) - cpu0
    polls = max(1, out["polls"])
    return {
        "trainers": trainers, "polls": out["polls"], "page_runs": out["page_runs"], "errors": out["errors"][:5],
        "server_cpu_s": round(cpu, 2), "cpu_ms_per_request": round(1000 * cpu / max(1, polls + out["page_runs"]), 1),
        "bytes_per_poll": round(sum(out["poll_bytes"]) / polls),
        "frames_per_poll": round(sum(out["poll_frames"]) / polls, 1),
        "mean_interval_s": round(sum(out["intervals"]) / polls, 2),
        "train_to_finished_s": round(max(out["done"], default=float("nan")), 1),
    }


def measure(root: Path, trainers: int, query: str) -> dict:
    port = free_port(highest_first=True)  # others on this machine take ports from the bottom of the range
    flags = {**BASE_FLAGS, "server.port": str(port)}
    command = [sys.executable, "-m", "streamlit", "run", "app.py"] + [f"--{k}={v}" for k, v in flags.items()]
    log_path = ROOT / "test-artifacts" / f"poll-cost-{port}.log"
    log_path.parent.mkdir(exist_ok=True)
    env = dict(os.environ, EXPLORER_WARM="0")  # no background warm-up: its CPU is not the polls'
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, cwd=root, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=env, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, process, 90, log_path)

        async def run() -> dict:
            async with Session(url, TRAIN_PAGE, query) as warm:  # the page's imports and step 0, once
                await warm.rerun(timeout=60)
            live = await _part(url, process.pid, query, trainers)
            replay = await _part(url, process.pid, query, trainers)
            return {"live": live, "replay": replay}

        return asyncio.run(run())
    finally:
        stop(process)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.poll_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, action="append", help="checkout(s) to measure, alternately")
    parser.add_argument("--trainers", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--query", default="seed=3")
    args = parser.parse_args()
    roots = args.root or [ROOT]
    for round_ in range(args.rounds):
        for root in roots:
            load = Path("/proc/loadavg").read_text().split()[:3]
            result = measure(root.resolve(), args.trainers, args.query)
            print(json.dumps({"round": round_, "root": str(root), "load": load, **result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
