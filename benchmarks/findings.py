"""The two server-level findings: garbage collection after every run, and TCP_NODELAY.

GC: four servers at once, runner.postScriptGC on/off × the startup's gc.freeze() (explorer/serve/startup.py) on/off
(EXPLORER_GC_FREEZE).  Latency: every page at its default setting, reruns interleaved over the four
servers so that machine load hits them alike.  Memory: the same fixed sequence of visits on each
(every control of every page through its values), then each server's resident memory.

TCP_NODELAY: reads the option straight from the server's accepted socket (pidfd_getfd, Linux ≥
5.6, needs ptrace rights over the server: we started it), then times reruns with the client's
socket with and without TCP_NODELAY, back to back and human-paced.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time

from explorer.serve.catalog import PAGES
from harness.server import streamlit_server
from harness.sockets import server_side_socket
from harness.wsclient import Session

from .latency import page_label
from .stats import summary_ms


async def _reruns(url: str, url_path: str, reps: int, *, nodelay: bool = True, gap_s: float = 0.0,
                  warmup: int = 3) -> list[float]:
    session = Session(url, url_path, nodelay=nodelay, use_message_cache=False)
    await session.connect()
    try:
        for _ in range(warmup + 1):
            await session.rerun()
        times = []
        for _ in range(reps):
            if gap_s:
                await asyncio.sleep(gap_s)
            times.append((await session.rerun()).seconds)
        return times
    finally:
        await session.close()


VARIANTS = [(True, True), (True, False), (False, True), (False, False)]  # (postScriptGC, gc.freeze)


async def _interleaved_reruns(urls: list[str], url_path: str, reps: int, warmup: int = 3) -> list[list[float]]:
    """The same page on every server, reruns interleaved (rotating order) so that machine load hits
    every variant alike; back to back on each server."""
    sessions = [Session(url, url_path, use_message_cache=False) for url in urls]
    for session in sessions:
        await session.connect()
    try:
        for _ in range(warmup + 1):
            for session in sessions:
                await session.rerun()
        times: list[list[float]] = [[] for _ in urls]
        for i in range(reps):
            for k in range(len(urls)):
                j = (i + k) % len(urls)
                times[j].append((await sessions[j].rerun()).seconds)
        return times
    finally:
        for session in sessions:
            await session.close()


async def _memory_workload(url: str, max_options: int = 6) -> int:
    """A fixed sequence of visits, the same on every server: every page, every URL-bound control
    set in turn to each of (at most `max_options` of) its values.  Returns the number of reruns."""
    from harness.wsclient import settable

    count = 0
    for info in PAGES:
        session = Session(url, info.url_path)
        await session.connect()
        try:
            await session.rerun()
            await session.follow_ups()  # the sections under the key figure, and their controls
            keys = [w.key for w in settable(session)]
            for key in keys:
                try:
                    widget = session.widget(key)
                except KeyError:
                    continue
                for value in widget.options()[:max_options]:
                    try:
                        session.set(session.widget(key), value)
                    except KeyError:
                        break
                    await session.rerun()
                    count += 1
        finally:
            await session.close()
    return count


def gc_variants(reps: int = 20) -> dict:
    """Latency (interleaved over four servers) and memory (a fixed workload) for postScriptGC × freeze."""
    with contextlib.ExitStack() as stack:
        servers = []
        for post_gc, freeze in VARIANTS:
            taken = {s.port for s in servers}
            servers.append(stack.enter_context(streamlit_server(
                options={"runner.postScriptGC": "true" if post_gc else "false"},
                env={"EXPLORER_GC_FREEZE": "1" if freeze else "0"},
                name=f"gc-{post_gc}-{freeze}", exclude_ports=taken)))
        urls = [s.url for s in servers]
        pages: list[dict] = [{} for _ in servers]
        for info in PAGES:
            times = asyncio.run(_interleaved_reruns(urls, info.url_path, reps))
            for k, series in enumerate(times):
                pages[k][page_label(info.url_path)] = summary_ms(series)
        rss_after_reruns = [s.rss_mb() for s in servers]
        workload = []
        for server in servers:
            started = time.monotonic()
            count = asyncio.run(_memory_workload(server.url))
            workload.append((count, time.monotonic() - started, server.rss_mb()))
        return {"reps": reps, "variants": [
            {"postScriptGC": post_gc, "gc_freeze": freeze, "pages": pages[k],
             "rss_mb_after_reruns": round(rss_after_reruns[k], 1),
             "workload_reruns": workload[k][0], "workload_s": round(workload[k][1], 1),
             "rss_mb_after_workload": round(workload[k][2], 1)}
            for k, (post_gc, freeze) in enumerate(VARIANTS)]}


def server_socket_nodelay(url: str, pid: int, reps: int = 30, gap_s: float = 0.5) -> dict:
    """Read TCP_NODELAY from the server's end of a session (the app sets it: explorer/serve/sockets.py);
    then, on the same session, time reruns of the home page (the smallest output) as the server runs,
    and with TCP_NODELAY cleared on that socket from outside, as Streamlit alone leaves it (back to back
    and paced).  The option is set again at the end."""

    async def probe():
        session = Session(url, "", use_message_cache=False)
        await session.connect()
        try:
            for _ in range(3):
                await session.rerun()
            client_sock = session._ws.transport.get_extra_info("socket")
            result = {"client_socket_tcp_nodelay": bool(client_sock.getsockopt(socket.IPPROTO_TCP,
                                                                                socket.TCP_NODELAY))}
            with server_side_socket(pid, session.local_port) as server_sock:
                result["verified"] = True
                served = server_sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
                result["server_accepted_socket_tcp_nodelay"] = bool(served)
                try:
                    for state, option in (("as_served", served), ("nodelay_cleared", 0)):
                        server_sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, option)
                        back = [(await session.rerun()).seconds for _ in range(reps)]
                        paced = []
                        for _ in range(max(3, reps // 3)):
                            await asyncio.sleep(gap_s)
                            paced.append((await session.rerun()).seconds)
                        result[state] = {"back_to_back": summary_ms(back), "paced": summary_ms(paced)}
                finally:
                    server_sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, served)
            return result
        finally:
            await session.close()

    try:
        return asyncio.run(probe())
    except Exception as problem:
        return {"verified": False, "why": f"{type(problem).__name__}: {problem}"}


def nodelay_comparison(url: str, reps: int = 20, paced_reps: int = 8, gap_s: float = 0.5) -> dict:
    pages = {}
    for info in PAGES:
        row = {}
        for nodelay in (True, False):
            tag = "nodelay" if nodelay else "no_nodelay"
            row[f"back_to_back_{tag}"] = summary_ms(asyncio.run(_reruns(url, info.url_path, reps, nodelay=nodelay)))
            row[f"paced_{tag}"] = summary_ms(asyncio.run(_reruns(url, info.url_path, paced_reps, nodelay=nodelay,
                                                                 gap_s=gap_s)))
        pages[page_label(info.url_path)] = row
    return {"reps": reps, "paced_reps": paced_reps, "paced_gap_s": gap_s, "pages": pages}
