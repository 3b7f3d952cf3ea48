"""Interaction latency per page, side by side with the floor app.

For every page of explorer.serve.catalog.PAGES, two settings:

* default: the page as a bare link opens it;
* largest: every slider at its maximum (select sliders at their last option), then each selectbox,
  radio and toggle in turn set to the option that makes the rerun slowest (a bounded coordinate
  search, timed).  The setting found is reported as its link.

For each setting the page's output is recorded as a profile, and the floor app draws that profile
from precomputed data.  Page and floor reruns are then interleaved in the same loop (so machine
load hits both alike): human-paced reruns (a pause before each, as between a user's actions), and
back-to-back ones (as while a slider is dragged), which on Streamlit 1.67 include a TCP stall
(see findings.py).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from explorer.serve.catalog import PAGES
from harness.wsclient import RunResult, Session, settable

from .profiles import profile_summary, record_profile, save_profile
from .stats import summary_ms

SEARCH_OPTIONS_PER_WIDGET = 12
SEARCH_REPS = 2


def page_label(url_path: str) -> str:
    return url_path or "home"


async def _timed(session: Session, reps: int) -> tuple[float, RunResult]:
    times, last = [], None
    for _ in range(reps):
        last = await session.rerun()
        times.append(last.seconds)
    return statistics.median(times), last


async def find_largest(app_url: str, url_path: str, budget_s: float = 90.0) -> dict:
    """The slowest allowed setting found by the bounded search; returns its link and the search log."""
    started = time.monotonic()
    log: list[str] = []
    session = Session(app_url, url_path, use_message_cache=False)
    await session.connect()
    try:
        first = await session.rerun()
        if not first.ok:
            return {"query": "", "log": [f"first run failed: {first.status} {first.exceptions}"]}
        await session.follow_ups()  # the sections under the key figure, and their controls

        async def max_sliders() -> tuple[float, RunResult]:
            for _ in range(4):  # new sliders may appear once others move
                changed = False
                for w in settable(session):
                    if w.kind == "slider" and w.key not in maxed:
                        session.set(w, w.largest())
                        maxed.add(w.key)
                        changed = True
                if not changed:
                    break
                await session.rerun()
            return await _timed(session, SEARCH_REPS)

        maxed: set[str] = set()
        current, _ = await max_sliders()
        log.append(f"all sliders at their largest: {current * 1000:.0f} ms")
        visited: set[str] = set()
        while time.monotonic() - started < budget_s:
            candidates = [w for w in settable(session) if w.kind != "slider" and w.key not in visited]
            if not candidates:
                break
            widget = candidates[0]
            visited.add(widget.key)
            best_value, best_time = None, current
            for option in widget.options()[:SEARCH_OPTIONS_PER_WIDGET]:
                if time.monotonic() - started > budget_s:
                    break
                try:
                    target = session.widget(widget.key)
                except KeyError:
                    break
                session.set(target, option)
                change = await session.rerun()
                if not change.ok:
                    log.append(f"{widget.key}={option!r}: {change.status} {change.exceptions[:1]}")
                    continue
                seconds, _ = await _timed(session, SEARCH_REPS)
                if best_value is None or seconds > best_time:
                    best_value, best_time = option, seconds
            if best_value is not None:
                session.set(session.widget(widget.key), best_value)
                await session.rerun()
                log.append(f"{widget.key} = {best_value!r}: {best_time * 1000:.0f} ms")
            current, _ = await max_sliders()
        final, result = await _timed(session, SEARCH_REPS)
        log.append(f"largest setting: {final * 1000:.0f} ms, {result.bytes} bytes; search took "
                   f"{time.monotonic() - started:.0f} s")
        return {"query": session.query, "log": log}
    finally:
        await session.close()


async def _rerun_pair(page: Session, floor: Session, order: int) -> tuple[RunResult, RunResult]:
    if order % 2 == 0:
        a = await page.rerun()
        b = await floor.rerun()
    else:
        b = await floor.rerun()
        a = await page.rerun()
    return a, b


@dataclass
class CaseSpec:
    url_path: str
    title: str
    setting: str  # "default" or "largest"
    query: str


async def measure_case(app_url: str, floor_url: str, case: CaseSpec, profile_dir: Path, *, reps: int,
                       paced_reps: int, paced_gap_s: float, warmup: int = 3) -> dict:
    name = f"{page_label(case.url_path)}-{case.setting}"
    page = Session(app_url, case.url_path, case.query, use_message_cache=False, keep_elements=True)
    await page.connect()
    floor = None
    try:
        first = await page.rerun()
        if not first.ok:
            return {"page": page_label(case.url_path), "setting": case.setting, "query": case.query,
                    "error": f"{first.status} {first.exceptions}"}
        recorded = await page.rerun()
        items = record_profile(recorded.elements, app_url)
        save_profile(items, profile_dir / f"{name}.pkl")
        page.keep_elements = False
        floor = Session(floor_url, "", f"profile={name}", use_message_cache=False)
        await floor.connect()
        floor_first = await floor.rerun()
        if not floor_first.ok:
            raise RuntimeError(f"floor app failed for {name}: {floor_first.status} {floor_first.exceptions}")
        for i in range(warmup):
            await _rerun_pair(page, floor, i)
        page_runs, floor_runs = [], []
        for i in range(reps):
            a, b = await _rerun_pair(page, floor, i)
            page_runs.append(a)
            floor_runs.append(b)
        paced_page, paced_floor = [], []
        for _ in range(paced_reps):
            await asyncio.sleep(paced_gap_s)
            paced_page.append(await page.rerun())
            await asyncio.sleep(paced_gap_s)
            paced_floor.append(await floor.rerun())
        failures = [r.status for r in page_runs + paced_page if not r.ok]
        p, f = summary_ms([r.seconds for r in page_runs]), summary_ms([r.seconds for r in floor_runs])
        hp, hf = summary_ms([r.seconds for r in paced_page]), summary_ms([r.seconds for r in paced_floor])
        return {
            "page": page_label(case.url_path),
            "title": case.title,
            "setting": case.setting,
            "query": case.query,
            "notes_shown": first.infos,
            "errors_shown": first.errors,
            "first_run_ms": round(first.seconds * 1000, 1),
            "output": profile_summary(items),
            "bytes_per_rerun": round(statistics.mean(r.bytes for r in page_runs)),
            "frames_per_rerun": round(statistics.mean(r.frames for r in page_runs)),
            "largest_message_bytes": max(r.largest_frame for r in page_runs),
            "floor_bytes_per_rerun": round(statistics.mean(r.bytes for r in floor_runs)),
            "back_to_back": {"page": p, "floor": f,
                             "ratio_p50": round(p["p50_ms"] / f["p50_ms"], 2),
                             "ratio_p95": round(p["p95_ms"] / f["p95_ms"], 2)},
            "paced": {"gap_s": paced_gap_s, "page": hp, "floor": hf,
                      "ratio_p50": round(hp["p50_ms"] / hf["p50_ms"], 2) if paced_reps else None,
                      "ratio_p95": round(hp["p95_ms"] / hf["p95_ms"], 2) if paced_reps else None},
            "failures": failures,
        }
    finally:
        await page.close()
        if floor is not None:
            await floor.close()


async def run_latency(app_url: str, floor_url: str, profile_dir: Path, *, reps: int, paced_reps: int,
                      paced_gap_s: float, search_budget_s: float, progress=print) -> dict:
    cases: list[CaseSpec] = []
    searches = {}
    for info in PAGES:
        cases.append(CaseSpec(info.url_path, info.title, "default", ""))
        progress(f"  searching the largest setting of {page_label(info.url_path)} (≤ {search_budget_s:.0f} s)")
        found = await find_largest(app_url, info.url_path, search_budget_s)
        searches[page_label(info.url_path)] = found
        if found["query"]:
            cases.append(CaseSpec(info.url_path, info.title, "largest", found["query"]))
    results = []
    for case in cases:
        progress(f"  measuring {page_label(case.url_path)} at {case.setting} {case.query[:80]}")
        results.append(await measure_case(app_url, floor_url, case, profile_dir, reps=reps, paced_reps=paced_reps,
                                          paced_gap_s=paced_gap_s))
    return {"cases": results, "searches": searches}
