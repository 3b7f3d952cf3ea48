"""A class opening the link together: many websocket sessions making their first visit at the same
moment, through the class server, and what HAProxy said meanwhile.

Each session connects and opens its page (`Session.open`: the first run and its follow-up runs, as a
browser does) at once; then all of them stay connected for a few seconds, as a class does once the
page is up.  A session is *loaded* when its first view finished without an exception, *cut* when its
connection was closed under it (while loading or while it stayed), an *error* otherwise.  Meanwhile
each worker's `/_stcore/health` may be asked directly (not through HAProxy) every half second, to see
how slowly a busy worker answers.  Every step has a timeout; nothing loops unbounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
import time
import urllib.request
from dataclasses import dataclass, field

from websockets.protocol import State

from harness.wsclient import Session

OPEN_TIMEOUT_S = 90.0  # one session's first view, connection included
HOLD_S = 5.0  # how long every session stays connected once all have loaded (or failed)
PROBE_EVERY_S = 0.5
PROBE_TIMEOUT_S = 30.0


@dataclass
class Outcome:
    page: str
    seconds: float  # from the burst's start to the first view drawn (or to the failure)
    status: str  # "loaded", "cut" or "error"
    detail: str = ""


@dataclass
class Burst:
    outcomes: list[Outcome]
    probes: dict[int, list[float]] = field(default_factory=dict)  # worker port -> health answer times, s

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    def first_views(self) -> list[float]:
        return sorted(o.seconds for o in self.outcomes if o.status == "loaded")

    def summary(self) -> dict:
        views = self.first_views()
        p95 = views[math.ceil(0.95 * len(views)) - 1] if views else None  # nearest rank
        return {
            "sessions": len(self.outcomes), "loaded": self.count("loaded"), "cut": self.count("cut"),
            "errors": self.count("error"),
            "slowest_s": round(views[-1], 2) if views else None,
            "p95_s": round(p95, 2) if p95 is not None else None,
            "p50_s": round(views[len(views) // 2], 2) if views else None,
            "slowest_pages": [(o.page or "home", round(o.seconds, 1)) for o in sorted(
                (o for o in self.outcomes if o.status == "loaded"), key=lambda o: -o.seconds)[:3]],
            "problems": [f"{o.page}: {o.status} after {o.seconds:.1f} s: {o.detail}"
                         for o in self.outcomes if o.status != "loaded"][:10],
            "health_direct_max_s": {port: round(max(times), 2) for port, times in self.probes.items() if times},
        }


def _closed(session: Session) -> bool:
    ws = session._ws
    return ws is None or ws.state is not State.OPEN


class _Gate:
    """Opens once every visit has loaded or failed: then the loaded ones stay `hold_s` on the page."""

    def __init__(self, sessions: int):
        self.left = sessions
        self.everyone = asyncio.Event()
        self.hold = asyncio.Event()

    def arrived(self) -> None:
        self.left -= 1
        if self.left <= 0:
            self.everyone.set()


async def _visit(url: str, page: str, query: str, start: float, gate: _Gate, timeout: float) -> Outcome:
    session = Session(url, page, query)
    try:
        try:
            await session.connect()
            result = await session.open(timeout)
        except Exception as problem:  # refused, a 5xx answer to the handshake, a broken connection
            return Outcome(page, time.monotonic() - start, "error", f"{type(problem).__name__}: {problem}")
        seconds = time.monotonic() - start
        if result.status.startswith("closed") or (not result.ok and _closed(session)):
            return Outcome(page, seconds, "cut", result.status)
        if not result.ok:
            return Outcome(page, seconds, "error", f"{result.status} {result.exceptions[:1]}")
        gate.arrived()
        await gate.hold.wait()  # everyone stays on the page for a while: is the connection still there?
        if _closed(session):
            return Outcome(page, seconds, "cut", "closed while on the page")
        return Outcome(page, seconds, "loaded")
    finally:
        gate.arrived()  # (a second call for a loaded visit changes nothing: the gate is open by then)
        await session.close()


def _ask_health(port: int) -> float:
    asked = time.monotonic()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=PROBE_TIMEOUT_S) as answer:
            answer.read()
    except OSError:
        return PROBE_TIMEOUT_S
    return time.monotonic() - asked


async def _probe(port: int, stop: asyncio.Event, times: list[float]) -> None:
    while not stop.is_set():
        times.append(await asyncio.to_thread(_ask_health, port))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), PROBE_EVERY_S)


async def burst(url: str, pages: list[str], sessions: int, *, query: str = "", probe_ports: list[int] = (),
                timeout: float = OPEN_TIMEOUT_S, hold_s: float = HOLD_S) -> Burst:
    """`sessions` first visits at once, page `pages[i % len(pages)]` for session i ("" is the home page)."""
    start = time.monotonic()
    gate, stop = _Gate(sessions), asyncio.Event()
    probes = {port: [] for port in probe_ports}
    probers = [asyncio.create_task(_probe(port, stop, times)) for port, times in probes.items()]
    visits = [asyncio.create_task(_visit(url, pages[i % len(pages)], query, start, gate, timeout))
              for i in range(sessions)]
    try:
        # Every visit loads or fails within `timeout` (each has its own); then the class stays a while.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(gate.everyone.wait(), timeout + 30)
        await asyncio.sleep(hold_s)
        gate.hold.set()
        outcomes = await asyncio.wait_for(asyncio.gather(*visits), 30)
    finally:
        gate.hold.set()
        stop.set()
        for task in visits:
            task.cancel()
        await asyncio.gather(*probers, *visits, return_exceptions=True)
    return Burst(outcomes, probes)


def haproxy_events(log: str) -> dict:
    """What HAProxy's log lines say about the workers: DOWN and UP transitions, the sessions those DOWN
    transitions found on the worker, 5xx answers.  (Each transition is also printed as a [WARNING] on
    HAProxy's stderr; only the log line, which starts with its timestamp, is counted.)"""
    down = re.findall(r"^\S+ (Server \S+ is DOWN[^\n]*)", log, re.M)
    return {
        "down": down,
        "up": len(re.findall(r"^\S+ Server \S+ is UP", log, re.M)),
        "sessions_on_down_workers": sum(int(n) for line in down for n in re.findall(r"(\d+) sessions active", line)),
        "status_5xx": len(re.findall(r" -?\d+/-?\d+/-?\d+/-?\d+/-?\d+ 5\d\d ", log)),
    }
