"""Two servers, one classroom walk, side by side: what a change costs per rerun, robust to the machine.

    .venv/bin/python -m benchmarks.paired --b . --a /tmp/before [--steps 300] [--a-option runner.postScriptGC=true]
                                          [--pages lookup,cost]   (only these pages' url paths)

Starts `streamlit run app.py` from two checkouts (or one checkout with two sets of options), opens
every page on both, then walks: each step picks a page and a random control change (sliders,
selects, radios, toggles, as the classroom load does), applies it on A and on B (which goes first
alternates) and reads each server's CPU seconds around that rerun.  The same changes in the same
order on both, interleaved rerun by rerun, so the virtual machine's speed, which moves by a third from
minute to minute here, hits both alike; the ratio B/A of CPU per rerun is the finding, per page and
overall.  One client, nothing concurrent: this measures cost, not queueing (the classroom load does
that).  Bounded: `--steps` reruns per server, each with a timeout.

A checkout of another commit for A:
    git worktree add --detach /tmp/before <commit> && ln -s "$PWD/.venv" /tmp/before/.venv
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import time
from pathlib import Path

from explorer.ui.catalog import PAGES
from tests.support.server import cpu_seconds, streamlit_server
from tests.support.wsclient import Session, settable

from .latency import page_label

RERUN_TIMEOUT_S = 60.0
SETTLE_S = 0.05  # after a rerun's last message, for the server's own after-run work to be counted with it
WARM_UP_S = 20.0  # both servers' start-up warm-up (app.py's background thread) finishes before the walk


async def walk(urls: list[str], pids: list[int], steps: int, seed: int, pages: tuple[str, ...] = ()) -> dict:
    sessions = []
    for info in [p for p in PAGES if not pages or p.url_path in pages]:
        pair = []
        for url in urls:
            session = Session(url, info.url_path)
            await session.connect()
            await session.open(RERUN_TIMEOUT_S)
            pair.append(session)
        sessions.append((page_label(info.url_path), pair))
    rng = random.Random(seed)
    cpu: dict[str, list[list[float]]] = {}
    try:
        for step in range(steps):
            label, pair = rng.choice(sessions)
            widgets = settable(pair[0])
            widget = rng.choice(widgets) if widgets else None
            options = widget.options() if widget else []
            value = rng.choice(options) if options else None
            for k in ((0, 1) if step % 2 == 0 else (1, 0)):
                session = pair[k]
                if value is not None:
                    session.set(session.widget(widget.key), value)
                before = cpu_seconds(pids[k])
                result = await session.rerun(timeout=RERUN_TIMEOUT_S)
                if not result.ok:
                    raise RuntimeError(f"{label} on server {'AB'[k]}: {result.status} {result.exceptions[:1]}")
                await asyncio.sleep(SETTLE_S)
                cpu.setdefault(label, [[], []])[k].append(cpu_seconds(pids[k]) - before)
    finally:
        for _, pair in sessions:
            for session in pair:
                await session.close()
    return cpu


def report(cpu: dict[str, list[list[float]]]) -> str:
    lines = ["| page | reruns | A ms CPU | B ms CPU | B/A |", "|---|---:|---:|---:|---:|"]
    totals = [0.0, 0.0]
    for label, (a, b) in sorted(cpu.items()):
        totals[0] += sum(a)
        totals[1] += sum(b)
        lines.append(f"| {label} | {len(a)} | {1000 * sum(a) / len(a):.1f} | {1000 * sum(b) / len(b):.1f} | "
                     f"{sum(b) / max(1e-9, sum(a)):.2f} |")
    n = sum(len(a) for a, _ in cpu.values())
    lines.append(f"| **all** | {n} | {1000 * totals[0] / n:.1f} | {1000 * totals[1] / n:.1f} | "
                 f"**{totals[1] / max(1e-9, totals[0]):.3f}** |")
    return "\n".join(lines)


def options(pairs: list[str]) -> dict[str, str]:
    return dict(pair.split("=", 1) for pair in pairs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.paired", description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", type=Path, required=True, help="checkout served as A (the baseline)")
    parser.add_argument("--b", type=Path, default=Path("."), help="checkout served as B (default: this one)")
    parser.add_argument("--a-option", action="append", default=[], metavar="NAME=VALUE", help="a Streamlit flag for A")
    parser.add_argument("--b-option", action="append", default=[], metavar="NAME=VALUE", help="a Streamlit flag for B")
    parser.add_argument("--steps", type=int, default=300, help="reruns per server (default 300)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--pages", default="", help="comma-separated url paths to walk (default: every page)")
    args = parser.parse_args(argv)
    if not 1 <= args.steps <= 5000:
        parser.error("--steps must be 1-5000")
    roots = [args.a.resolve(), args.b.resolve()]
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(streamlit_server(name=f"paired-{'ab'[k]}", root=roots[k],
                                                        options=options([args.a_option, args.b_option][k])))
                   for k in (0, 1)]
        time.sleep(WARM_UP_S)
        pages = tuple(p for p in args.pages.split(",") if p)
        cpu = asyncio.run(walk([s.url for s in servers], [s.process.pid for s in servers], args.steps, args.seed,
                               pages))
    print(f"A: {roots[0]} {' '.join(args.a_option)}\nB: {roots[1]} {' '.join(args.b_option)}\n")
    print(report(cpu))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
