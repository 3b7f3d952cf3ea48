"""Serve Attention Explorer from one Streamlit process per core, behind one port.

    python serve.py [--port 8501] [--address 0.0.0.0] [--workers N] [-- <more streamlit flags>]

Why: a Streamlit server runs every session's script in a thread of one Python process, so however
many cores the machine has, it computes on one (the GIL).  In the classroom benchmark
(benchmarks/RESULTS.md) a single process was saturated at ~8 reruns a second with one core busy
while the other idled.  This starts N `streamlit run app.py` workers on loopback ports and a small
balancer in front of them on the public port.

Sticky, because a Streamlit session lives in the process that holds its websocket, and so do the
URLs of the files that session offers for download.  The balancer pins each browser to a worker
with a cookie (COOKIE) set on the first response of every connection that arrived without one; a
request without the cookie goes to the worker with the fewest open websockets.  A browser opens the
page, gets the cookie, and its websocket and downloads follow it to the same worker.

Standard library only; the balancer reads each connection's first request head, then copies bytes
both ways, so websockets, streaming and keep-alive pass through untouched.  Workers are plain
`streamlit run` processes.  Forking them from a parent that had imported torch & co. was tried: the
idle workers then shared ~230 MB each, but once every page had run on both the two took 807 MB of
PSS against 803 MB as separate processes (reference counting writes to the shared pages, which
copies them), so the simpler design stayed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import logging
import os
import re
import secrets
import signal
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent
COOKIE = "ae_worker"
HEAD_LIMIT = 64 * 1024  # bytes of request head read before routing; a longer head is refused
HEAD_TIMEOUT_S = 30.0  # a client that does not finish its request head in this time is dropped
WORKER_START_TIMEOUT_S = 120.0
CHUNK = 64 * 1024

log = logging.getLogger("serve")

MAX_CONNECTIONS = 2048  # open client connections; more get 503 at once (each holds two sockets)
UPSTREAM_HEAD_TIMEOUT_S = 60.0  # a worker that accepts but does not answer is given up on

_COOKIE_PATTERN = re.compile(rb"(?:^|[;,])\s*" + COOKIE.encode() + rb"=(\d{1,3})\s*(?=;|,|$)")


def worker_from_head(head: bytes, n_workers: int) -> int | None:
    """The worker a request's Cookie header pins it to, or None (no cookie, or one naming no worker)."""
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() != b"cookie":
            continue
        for match in _COOKIE_PATTERN.finditer(value.strip()):
            if int(match.group(1)) < n_workers:
                return int(match.group(1))
    return None


def _header(head: bytes, wanted: bytes) -> bytes | None:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == wanted:
            return value.strip()
    return None


def is_websocket(head: bytes) -> bool:
    return (_header(head, b"upgrade") or b"").lower() == b"websocket"


def one_request_per_connection(head: bytes) -> bytes:
    """The request head asking the worker to close the connection after its response.

    Each request is then routed by its own cookie.  Otherwise a front end that reuses one
    connection for several browsers (keep-alive pools in reverse proxies) would send them all to
    the first browser's worker, where their download URLs do not exist."""
    lines = head[:-4].split(b"\r\n")
    kept = [line for line in lines[1:]
            if line.partition(b":")[0].strip().lower() not in (b"connection", b"keep-alive")]
    return b"\r\n".join([lines[0], *kept, b"Connection: close"]) + b"\r\n\r\n"


def with_cookie(response_head: bytes, worker: int, cross_site: bool = False) -> bytes:
    """The response head with a Set-Cookie line pinning the browser to `worker` (a session cookie).

    cross_site (the app is reached over HTTPS, e.g. inside Hugging Face's page as an iframe):
    SameSite=None; Secure; Partitioned, since browsers drop a Lax cookie in a cross-site frame."""
    status, sep, rest = response_head.partition(b"\r\n")
    scope = "SameSite=None; Secure; Partitioned" if cross_site else "SameSite=Lax"
    cookie = f"Set-Cookie: {COOKIE}={worker}; Path=/; HttpOnly; {scope}".encode()
    return status + b"\r\n" + cookie + (b"\r\n" + rest if sep else b"\r\n\r\n")


def _status(response_head: bytes) -> int:
    try:
        return int(response_head.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return 0


@dataclass
class Balancer:
    """Routes requests to `backends` (host, port), sticky by cookie, else to the least busy."""

    backends: list[tuple[str, int]]
    open_websockets: list[int] = field(default_factory=list)
    open_connections: int = 0
    _turn: itertools.count = field(default_factory=itertools.count)

    def __post_init__(self) -> None:
        self.open_websockets = [0] * len(self.backends)

    def choose(self) -> int:
        """The worker with the fewest open websockets; ties go round in turn, so a burst of new
        browsers (none of them connected yet) is spread evenly."""
        n = len(self.backends)
        start = next(self._turn) % n
        order = [(start + i) % n for i in range(n)]
        return min(order, key=lambda i: self.open_websockets[i])

    async def handle(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        upstream_writer = None
        counted = None
        self.open_connections += 1
        try:
            if self.open_connections > MAX_CONNECTIONS:
                await _refuse(client_reader, client_writer, b"503 Service Unavailable", b"Too many connections.")
                return
            try:
                head = await asyncio.wait_for(client_reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
            except asyncio.LimitOverrunError:
                await _refuse(client_reader, client_writer, b"431 Request Header Fields Too Large", b"")
                return
            except (asyncio.IncompleteReadError, TimeoutError, OSError):
                return
            pinned = worker_from_head(head, len(self.backends))
            worker = self.choose() if pinned is None else pinned
            upstream = await self._connect(worker)
            if upstream is None:
                await _refuse(client_reader, client_writer, b"503 Service Unavailable",
                              b"The app is restarting; try again.")
                return
            (worker_used, upstream_reader, upstream_writer) = upstream
            if is_websocket(head):
                counted = worker_used
                self.open_websockets[worker_used] += 1
            else:
                head = one_request_per_connection(head)
            upstream_writer.write(head)
            forward = asyncio.create_task(_copy(client_reader, upstream_writer))
            if worker_used != pinned:
                # A new browser (or one whose worker went away): pin it on the response.
                cross_site = (_header(head, b"x-forwarded-proto") or b"").lower() == b"https"
                try:
                    while True:
                        response_head = await asyncio.wait_for(upstream_reader.readuntil(b"\r\n\r\n"),
                                                               UPSTREAM_HEAD_TIMEOUT_S)
                        if 100 <= _status(response_head) < 200 and _status(response_head) != 101:
                            client_writer.write(response_head)  # interim (100 Continue): the next one
                            continue
                        break
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError):
                    forward.cancel()
                    await asyncio.gather(forward, return_exceptions=True)
                    return
                client_writer.write(with_cookie(response_head, worker_used, cross_site))
            backward = asyncio.create_task(_copy(upstream_reader, client_writer))
            done, _ = await asyncio.wait({forward, backward}, return_when=asyncio.FIRST_COMPLETED)
            if forward in done and backward not in done:
                # The client finished sending (or half-closed): its answer may still be coming.
                await asyncio.wait({backward}, timeout=UPSTREAM_HEAD_TIMEOUT_S)
            for task in (forward, backward):
                task.cancel()
            await asyncio.gather(forward, backward, return_exceptions=True)
            await _drain_quietly(client_writer)
        except asyncio.CancelledError:
            raise
        except Exception as problem:  # never let one connection take the balancer down
            log.warning("connection failed: %s: %s", type(problem).__name__, problem)
        finally:
            self.open_connections -= 1
            if counted is not None:
                self.open_websockets[counted] -= 1
            for writer in (upstream_writer, client_writer):
                if writer is not None:
                    with contextlib.suppress(Exception):
                        writer.close()

    async def _connect(self, worker: int):
        """Open a connection to `worker`, or to the next one that answers if it is down."""
        n = len(self.backends)
        for candidate in [worker] + [(worker + i) % n for i in range(1, n)]:
            host, port = self.backends[candidate]
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, limit=HEAD_LIMIT), 5)
            except (OSError, TimeoutError):
                log.warning("worker %d (port %d) does not answer", candidate, port)
                continue
            return candidate, reader, writer
        return None


async def _refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, status: bytes, text: bytes) -> None:
    """Answer with an error and close; what the client is still sending is read and dropped first, so
    that closing with unread data (a TCP reset) does not destroy the answer on its way."""
    writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Type: text/plain\r\nContent-Length: "
                 + str(len(text)).encode() + b"\r\nConnection: close\r\n\r\n" + text)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(writer.drain(), 5)
        if writer.can_write_eof():
            writer.write_eof()

        async def discard() -> None:
            received = 0
            while received < 1024 * 1024 and (data := await reader.read(CHUNK)):
                received += len(data)

        await asyncio.wait_for(discard(), 2)


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until end of stream, then pass the end on (a half-close) so the other side can answer."""
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()


async def _drain_quietly(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(writer.drain(), 10)


@dataclass
class Worker:
    index: int
    port: int
    command: list[str]
    env: dict
    log_path: Path | None
    process: asyncio.subprocess.Process | None = None
    restarts: int = 0

    async def start(self) -> None:
        with contextlib.ExitStack() as stack:
            output = stack.enter_context(open(self.log_path, "ab")) if self.log_path else asyncio.subprocess.DEVNULL
            self.process = await asyncio.create_subprocess_exec(
                *self.command, cwd=ROOT, env=self.env, stdin=asyncio.subprocess.DEVNULL, stdout=output,
                stderr=asyncio.subprocess.STDOUT, start_new_session=True)

    def stop(self) -> None:
        if self.process and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)


def worker_command(script: str, port: int, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port),
            "--server.address", "127.0.0.1", "--server.headless", "true", *extra]


def free_loopback_ports(count: int, avoid: int) -> list[int]:
    """`count` ports the kernel reports free on 127.0.0.1 (other than `avoid`)."""
    import socket

    ports: list[int] = []
    holders = []
    try:
        while len(ports) < count:
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            holders.append(sock)
            if sock.getsockname()[1] != avoid:
                ports.append(sock.getsockname()[1])
    finally:
        for sock in holders:
            sock.close()
    return ports


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
            return response.read().strip() == b"ok"
    except OSError:
        return False


async def wait_healthy(worker: Worker, timeout: float = WORKER_START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if worker.process.returncode is not None:
            raise RuntimeError(f"worker {worker.index} exited with code {worker.process.returncode}")
        if await asyncio.to_thread(_healthy, worker.port):
            return
        await asyncio.sleep(0.2)
    raise RuntimeError(f"worker {worker.index} did not answer on port {worker.port} within {timeout:.0f} s")


async def supervise(worker: Worker, stopping: asyncio.Event) -> None:
    """Restart a worker that exits (after a pause that grows with quick successive failures), until
    the server stops.  The balancer sends the worker's browsers elsewhere while it is down."""
    while not stopping.is_set():
        started = time.monotonic()
        code = await worker.process.wait()
        if stopping.is_set():
            return
        worker.restarts = 1 if time.monotonic() - started > 60 else worker.restarts + 1
        log.warning("worker %d exited with code %s; restarting (failure %d in a row)", worker.index, code,
                    worker.restarts)
        while not stopping.is_set():
            await asyncio.sleep(min(10.0, 1.0 * worker.restarts))
            try:
                await worker.start()
                break
            except OSError as problem:  # e.g. out of file descriptors: try again after a longer pause
                worker.restarts += 1
                log.warning("worker %d could not be started: %s", worker.index, problem)


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


async def serve(address: str, port: int, n_workers: int, script: str, extra: list[str],
                log_dir: Path | None = None) -> None:
    env = dict(os.environ)
    # One secret for all workers, so cookies Streamlit signs (XSRF) are valid on any of them.
    env.setdefault("STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32))
    # glibc malloc, tuned for long-running workers that allocate large temporary arrays from many
    # threads: fewer arenas, and every block of 128 KB or more mapped on its own, so that it goes
    # back to the system when freed.  Without the fixed threshold glibc raises it after the first
    # large free and keeps later blocks in its heap: the same warm-up left 340-550 MB per worker
    # (three runs) instead of 336-341 MB (benchmarks/RESULTS.md).
    env.setdefault("MALLOC_ARENA_MAX", "2")
    env.setdefault("MALLOC_MMAP_THRESHOLD_", "131072")
    env.setdefault("PYTHONUNBUFFERED", "1")
    ports = free_loopback_ports(n_workers, avoid=port)
    workers = [Worker(i, p, worker_command(script, p, extra), env,
                      (log_dir / f"worker-{i}.log") if log_dir else None) for i, p in enumerate(ports)]
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    supervisors: list[asyncio.Task] = []
    server = None
    try:
        await asyncio.gather(*(w.start() for w in workers))
        starting = asyncio.ensure_future(asyncio.gather(*(wait_healthy(w) for w in workers)))
        stop_waiter = asyncio.ensure_future(stopping.wait())
        await asyncio.wait({starting, stop_waiter}, return_when=asyncio.FIRST_COMPLETED)
        if not starting.done():  # stopped while the workers were starting
            starting.cancel()
            await asyncio.gather(starting, return_exceptions=True)
            return
        stop_waiter.cancel()
        starting.result()  # a worker that failed to start
        balancer = Balancer([("127.0.0.1", w.port) for w in workers])
        server = await asyncio.start_server(balancer.handle, address, port, limit=HEAD_LIMIT, backlog=512)
        log.warning("Attention Explorer: http://%s:%d (%d workers on ports %s)", address, port, n_workers,
                    ", ".join(str(w.port) for w in workers))
        supervisors = [asyncio.create_task(supervise(w, stopping)) for w in workers]
        await stopping.wait()
    finally:
        stopping.set()
        for task in supervisors:
            task.cancel()
        await asyncio.gather(*supervisors, return_exceptions=True)
        if server is not None:
            server.close()  # no new connections; open ones end when their worker stops
        for w in workers:
            w.stop()
        # Together, within a container runtime's usual 10 s grace period.
        running = [w.process for w in workers if w.process is not None]
        if running:
            await asyncio.wait([asyncio.ensure_future(p.wait()) for p in running], timeout=8)
        for process in running:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="Flags after -- go to every `streamlit run`.")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", 8501)))
    parser.add_argument("--address", default="0.0.0.0")
    parser.add_argument("--workers", type=int, default=int(os.environ.get("EXPLORER_WORKERS", 0)) or default_workers(),
                        help="Streamlit processes (default: one per core available)")
    parser.add_argument("--script", default="app.py")
    parser.add_argument("--log-dir", type=Path, default=None, help="write each worker's output to a file here")
    args, extra = parser.parse_known_args(argv)
    extra = [a for a in extra if a != "--"]
    if not 1 <= args.workers <= 32:
        parser.error("--workers must be between 1 and 32")
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s serve: %(message)s")
    if args.log_dir:
        args.log_dir.mkdir(parents=True, exist_ok=True)
    asyncio.run(serve(args.address, args.port, args.workers, args.script, extra, args.log_dir))


if __name__ == "__main__":
    main()
