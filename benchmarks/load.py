"""Classroom load: many concurrent sessions on loopback, each changing a control every ~2 s.

Sessions are spread round-robin over explorer.serve.catalog.PAGES and arrive over the first seconds.
Each one opens its page (the first visit is reported on its own), then until the end of the run
sleeps a random 0.75-1.25 × the interval, sets one random URL-bound control (slider, select,
radio or toggle) to a random allowed value and waits for the rerun to finish.  A rerun's latency
runs to the end of the script; beside it, `first_chart` is the time to the main area's first chart
(the key figure), which a page's run sends before the sections under it (explorer/serve/later.py).
Sessions use the message cache like a browser.  The server's resident memory is sampled every half second.

Bounded: every rerun has a timeout, the run ends at `duration_s` and the whole thing is cancelled
at `duration_s + 60 s`.  Errors are reruns that time out, lose their connection, do not finish
successfully, or show an exception box.

The server may be one `streamlit run` process or the class server (deploy/class-server.sh: HAProxy,
supervisord and the Streamlit workers): memory and CPU are summed over the whole process tree.
Memory is reported as the sum of PSS (shared pages counted once in all) and, beside it, the sum of
RSS (shared pages counted once per process); at the end of the run, PSS by kind of process.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time

from explorer.serve.catalog import PAGES
from harness.server import tree_cpu_seconds, tree_memory_by_process, tree_memory_mb
from harness.wsclient import Session, settable

from .latency import page_label
from .stats import percentile, slope_per_minute, summary_ms

RERUN_TIMEOUT_S = 30.0
HARD_LIMIT_EXTRA_S = 60.0


async def _student(index: int, url: str, url_path: str, start: float, duration_s: float, interval_s: float,
                   arrival_s: float, seed: int, record: list, first_visits: list, failures: list,
                   heavy: bool = False) -> None:
    rng = random.Random(seed * 1000 + index)
    await asyncio.sleep(arrival_s)
    session = Session(url, url_path)
    try:
        await session.connect()
        first = await session.open(RERUN_TIMEOUT_S)  # with the sections under the key figure, as a browser
        first_visits.append((page_label(url_path), first.seconds, first.ok))
        if not first.ok:
            failures.append(f"session {index} ({page_label(url_path)}) first visit: {first.status} {first.exceptions}")
        while True:
            await asyncio.sleep(rng.uniform(0.75, 1.25) * interval_s)
            if time.monotonic() - start >= duration_s:
                break
            controls = settable(session)
            change = "rerun"
            if controls:
                widget = rng.choice(controls)
                options = widget.options()
                if options:
                    if heavy and widget.kind == "slider":  # the largest quarter of every slider's range
                        options = options[-max(1, len(options) // 4):]
                    value = rng.choice(options)
                    session.set(widget, value)
                    change = f"{widget.key}={value!r}"
            result = await session.rerun(timeout=RERUN_TIMEOUT_S)
            record.append({"t": time.monotonic() - start, "page": page_label(url_path), "seconds": result.seconds,
                           "first_chart": result.first_chart_seconds,
                           "bytes": result.bytes, "ok": result.ok, "errors_shown": len(result.errors)})
            if not result.ok:
                failures.append(f"session {index} ({page_label(url_path)}) after {change}: {result.status} "
                                f"{result.exceptions[:1]}")
                if result.status.startswith("closed"):
                    break
    except Exception as problem:  # connection refused / broken: an error of the run, never a crash of the test
        failures.append(f"session {index} ({page_label(url_path)}): {type(problem).__name__}: {problem}")
    finally:
        await session.close()


async def visit_every_page(url: str, workers: int = 0) -> None:
    """The teacher opens every page before class, on every worker: the sessions of a page are opened
    together, so HAProxy (leastconn) gives each its own worker."""
    for info in PAGES:
        sessions = [Session(url, info.url_path) for _ in range(max(1, workers))]
        for session in sessions:
            await session.connect()
        for session in sessions:
            await session.rerun()
            await session.follow_ups()  # the sections under the key figure, as a browser asks for them
        for session in sessions:
            await session.close()


async def _sample_memory(pid: int, start: float, stop: asyncio.Event, samples: list) -> None:
    while not stop.is_set():
        memory = tree_memory_mb(pid)
        samples.append((time.monotonic() - start, memory["pss"], tree_cpu_seconds(pid), memory["rss"],
                        time.process_time()))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)


async def run_load(url: str, server_pid: int, *, sessions: int = 30, duration_s: float = 60.0,
                   interval_s: float = 2.0, arrival_window_s: float = 3.0, seed: int = 1, heavy: bool = False) -> dict:
    """`heavy`: every slider a session moves goes to the largest quarter of its range (the heavy soak)."""
    start = time.monotonic()
    record: list[dict] = []
    first_visits: list = []
    failures: list[str] = []
    samples: list = []
    stop = asyncio.Event()
    sampler = asyncio.create_task(_sample_memory(server_pid, start, stop, samples))
    memory_before = tree_memory_mb(server_pid)
    tasks = [
        asyncio.create_task(_student(i, url, PAGES[i % len(PAGES)].url_path, start, duration_s, interval_s,
                                     arrival_window_s * i / max(1, sessions), seed, record, first_visits, failures,
                                     heavy))
        for i in range(sessions)
    ]
    try:
        await asyncio.wait_for(asyncio.gather(*tasks), duration_s + HARD_LIMIT_EXTRA_S)
    except TimeoutError:
        failures.append(f"the run did not end within {duration_s + HARD_LIMIT_EXTRA_S:.0f} s; cancelled")
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        stop.set()
        await sampler
    memory_by_process = tree_memory_by_process(server_pid)
    elapsed = time.monotonic() - start
    per_page = {}
    for info in PAGES:
        mine = [r["seconds"] for r in record if r["page"] == page_label(info.url_path)]
        per_page[page_label(info.url_path)] = summary_ms(mine)
    latencies = [r["seconds"] for r in record]
    span = max(1e-9, samples[-1][0] - samples[0][0]) if samples else float("nan")
    return {
        "sessions": sessions,
        "heavy": heavy,
        "duration_s": duration_s,
        "interval_s": interval_s,
        "elapsed_s": round(elapsed, 1),
        "reruns": len(record),
        "reruns_per_s": round(len(record) / duration_s, 2),
        "errors": len(failures),
        "error_examples": failures[:10],
        "error_boxes_shown": sum(r["errors_shown"] for r in record),
        "latency": summary_ms(latencies),
        "latency_p99_ms": round(percentile([s * 1000 for s in latencies], 99), 1),
        # request → the main area's first chart read: the key figure a student waits for (reruns that send one)
        "first_chart": summary_ms([r["first_chart"] for r in record if r["first_chart"] is not None]),
        "per_page": per_page,
        "first_visits": summary_ms([s for _, s, _ in first_visits]),
        "bytes_per_rerun": round(sum(r["bytes"] for r in record) / max(1, len(record))),
        "server_processes": memory_before["processes"],
        "server_memory_mb": _memory_summary([(t, pss) for t, pss, *_ in samples], duration_s,
                                            memory_before["pss"]),
        "server_rss_mb": _memory_summary([(t, rss) for t, _, _, rss, _ in samples], duration_s,
                                         memory_before["rss"]),
        "server_memory_by_process_mb_end": memory_by_process,
        "server_cpu_share": round((samples[-1][2] - samples[0][2]) / span, 2) if samples else None,
        "client_cpu_share": round((samples[-1][4] - samples[0][4]) / span, 2) if samples else None,
        "memory_samples": [(round(t, 1), round(m, 1)) for t, m, *_ in samples[::4]],
    }


def _memory_summary(series: list[tuple[float, float]], duration_s: float, before: float) -> dict:
    half = duration_s / 2
    first_half = [m for t, m in series if t < half]
    second_half = [(t, m) for t, m in series if half <= t <= duration_s]
    return {
        "before": round(before, 1),
        "max": round(max((m for _, m in series), default=float("nan")), 1),
        "first_half_max": round(max(first_half, default=float("nan")), 1),
        "second_half_max": round(max((m for _, m in second_half), default=float("nan")), 1),
        "second_half_slope_mb_per_min": round(slope_per_minute(second_half), 1),
        "end": round(series[-1][1], 1) if series else float("nan"),
    }
