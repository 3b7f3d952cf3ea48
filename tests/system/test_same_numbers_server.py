"""Same numbers always, at the server: what a class sees when it arrives at a fresh server is what
one visitor sees alone.

A fresh server with its warm-up on (it loads the shipped models and computes every default view in
the background right after the first page) gets a burst of sessions opening different lessons at
once, among them the random-weight and seeded views; a second fresh server, warm-up off, then opens
each lesson alone, one at a time.  Every chart, table, metric and sentence of every session of the
burst must equal, byte for byte, the same lesson's alone: the same arrays, the same numbers.

The lessons whose figures are wall-clock measurements (cost's stopwatch, the decoder's KV-cache
timing) are left out: their numbers are meant to differ from run to run; so is the one measured
duration on the real model's page (how long MiniLM took to load), blanked before comparing.
"""

from __future__ import annotations

import asyncio
import re

from harness.apptest import run_async
from harness.server import streamlit_server
from harness.wsclient import RunResult, Session

# (page, query): seeded models (gradients, depth, train's step 0, attention's random weights), shipped
# models (positions, attention), MiniLM (real).
VISITS = (
    ("gradients", ""),
    ("gradients", "init=orthogonal&gain=1.1"),
    ("depth", ""),
    ("attention", "weights=random&encoding=learned&heads=2&layers=1"),
    ("attention", ""),
    ("positions", ""),
    ("train", ""),
    ("real", ""),
)
PER_VISIT = 2  # sessions per visit in the burst: 16 at once
WALL_CLOCK = re.compile(rb"in [0-9.]+ s when this server first needed it")  # MiniLM's load time
NUMBER_KINDS = ("vega_lite_chart", "plotly_chart", "dataframe", "table", "metric", "markdown", "alert")


def numbers(result: RunResult) -> list[bytes]:
    """Every chart, table, metric and text of a visit (its opening run and the follow-ups), serialised."""
    return [WALL_CLOCK.sub(b"in (a duration)", element.SerializeToString()) for _, element in result.elements
            if element is not None and element.WhichOneof("type") in NUMBER_KINDS]


async def visit(url: str, page: str, query: str) -> RunResult:
    session = Session(url, page, query, keep_elements=True, use_message_cache=False)
    await session.connect()
    try:
        result = await session.rerun()
        for follow_up in await session.follow_ups():
            result.elements += follow_up.elements
            result.exceptions += follow_up.exceptions
            result.status = result.status if not result.ok else follow_up.status
        return result
    finally:
        await session.close()


async def burst(url: str) -> list[tuple[tuple[str, str], RunResult]]:
    visits = [v for v in VISITS for _ in range(PER_VISIT)]
    results = await asyncio.gather(*(visit(url, page, query) for page, query in visits))
    return list(zip(visits, results, strict=True))


def test_a_class_arriving_at_a_fresh_server_sees_the_numbers_of_a_visit_alone():
    with streamlit_server(name="same-numbers-burst", env={"EXPLORER_WARM": "1"}) as server:
        # The first page starts the warm-up (app.py); the burst arrives while it loads and computes.
        run_async(visit(server.url, "", ""))
        crowd = run_async(burst(server.url))
    with streamlit_server(name="same-numbers-alone", env={"EXPLORER_WARM": "0"}) as server:
        alone = {v: run_async(visit(server.url, *v)) for v in VISITS}

    for v, result in alone.items():
        assert result.ok, (v, result.status, result.exceptions)
        assert len(numbers(result)) >= 2, v  # a lesson shows its figures
    differing = []
    for v, result in crowd:
        assert result.ok, (v, result.status, result.exceptions)
        if numbers(result) != numbers(alone[v]):
            differing.append(v)
    assert not differing, f"{len(differing)} of {len(crowd)} sessions of the burst saw other numbers: {differing}"
