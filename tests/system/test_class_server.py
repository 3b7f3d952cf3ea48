"""deploy/class-server.sh: two real Streamlit workers under supervisord, behind the real HAProxy.

The workers run tests/support/worker_app.py (it prints its process id and offers a download made
there), on 127.0.0.1.  Checked, in this order, against one running class server:

* the generated HAProxy configuration (leastconn, inserted cookie, health checks, redispatch,
  timeouts, maxconn within the descriptor limit, a per-address stick table), also at ulimit -n 1024;
* new sessions spread over both workers, each pinned by HAProxy's cookie, also its websocket;
* behind an HTTPS front end the cookie is marked for a cross-site frame (a Hugging Face Space);
* a download URL exists only on the worker that made it (why the balancer must be sticky);
* the workers share one cookie secret, and the malloc tuning;
* an idle flood of 2,100 connections from 127.0.0.2 leaves /_stcore/health and a session from
  127.0.0.1 answering, and HAProxy drops the idle connections it accepted within its timeout;
* a frozen worker (SIGSTOP) is taken out of rotation within 10 s, then back in after SIGCONT;
* a killed worker is restarted by supervisord, and its browser reconnects at once;
* SIGTERM stops every process and removes the run directory.

HAProxy and supervisord must be installed (scripts/test.sh installs them): without them these
tests fail, they never skip.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus

from tests.support.apptest import run_async
from tests.support.balancer import get, visit
from tests.support.server import ROOT, SBIN_PATH, class_server_workers, process_tree, stop, streamlit_server

SCRIPT = ROOT / "deploy" / "class-server.sh"
WORKER_APP = "tests/support/worker_app.py"
FLOOD = 2100
FLOOD_SOURCE = "127.0.0.2"
DETECTION_LIMIT_S = 10.0


def require_tools() -> None:
    missing = [tool for tool in ("haproxy", "supervisord") if shutil.which(tool, path=SBIN_PATH) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed: the class server needs them. Install with "
                    "`apt-get install -y haproxy supervisor` (as root), or run `bash scripts/test.sh`, "
                    "which does that for you.", pytrace=False)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    require_tools()
    try:
        with streamlit_server(WORKER_APP, workers=2, name="class-server",
                              log_dir=tmp_path_factory.mktemp("class-server")) as running:
            yield running
    except RuntimeError as problem:
        pytest.fail(f"deploy/class-server.sh did not start: {problem}", pytrace=False)


def log_text(server) -> str:
    return server.log_path.read_text(errors="replace")


def wait_for_log(server, pattern: str, after: int, timeout: float) -> float | None:
    """Seconds until `pattern` appears in the server's log past offset `after`; None if not in `timeout`."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if re.search(pattern, log_text(server)[after:]):
            return time.monotonic() - start
        time.sleep(0.1)
    return None


def run_directory(server) -> Path:
    match = re.search(r"run directory (\S+)\)", log_text(server))
    assert match, log_text(server)[-2000:]
    return Path(match.group(1))


def test_the_generated_haproxy_configuration(server):
    config = (run_directory(server) / "haproxy.cfg").read_text()
    for line in ("balance leastconn", "cookie ae_worker insert indirect nocache httponly",
                 "option httpchk GET /_stcore/health", "http-check expect string ok", "option redispatch",
                 "timeout http-request 10s", "timeout client 60s", "timeout tunnel 1h",
                 "tcp-request connection track-sc0 src", "fall 2", "inter 1s"):
        assert line in config, line
    maxconn = int(re.search(r"^\s+maxconn (\d+)", config, re.M).group(1))
    nofile = int(re.search(r"ulimit -n (\d+)", log_text(server)).group(1))
    assert 2 * maxconn + 40 <= nofile, (maxconn, nofile)
    assert re.search(r"reject if \{ sc0_conn_cur gt \d+ \}", config)

    # At a container's usual 1,024 descriptors (soft and hard), maxconn and the per-address share
    # shrink to fit, and HAProxy accepts the result.
    checked = subprocess.run(["bash", "-c", 'ulimit -Sn 1024 && ulimit -Hn 1024 && exec "$0" --check --workers 2',
                              str(SCRIPT)], capture_output=True, text=True, timeout=30,
                             env=dict(os.environ, PYTHON=sys.executable))
    assert checked.returncode == 0, checked.stderr
    small = int(re.search(r"^\s+maxconn (\d+)", checked.stdout, re.M).group(1))
    per_source = int(re.search(r"sc0_conn_cur gt (\d+)", checked.stdout).group(1))
    assert 2 * small + 40 <= 1024 and per_source <= small // 4, (small, per_source)


def test_new_sessions_spread_over_both_workers_each_pinned_by_the_cookie(server):
    async def two_at_once():
        first = await visit(server.url, keep_open=True)
        try:
            second = await visit(server.url)  # the first is still connected: leastconn picks the other
        finally:
            await first[3].close()
        return first[:3], second

    first, second = run_async(two_at_once())
    assert {first[0], second[0]} == {"w0", "w1"}, "two new sessions should get one worker each"
    pids = {worker: pid for worker, pid, _ in (first, second)}
    assert pids == {name: pid for name, pid in class_server_workers(server.process.pid).items()}

    for worker, pid in pids.items():
        pinned, again, _ = run_async(visit(server.url, worker))  # a browser with the cookie: same worker
        assert (pinned, again) == (None, pid)
        assert get(server.url + "/", worker)[::2] == (200, None)  # already pinned: no new cookie
    assert get(server.url + "/")[2] in ("w0", "w1")  # a new browser is pinned on its first request
    assert get(server.url + "/", "w7")[2] in ("w0", "w1")  # a cookie naming no worker: pinned anew


def test_behind_an_https_front_end_the_cookie_is_marked_for_a_cross_site_frame(server):
    """A Hugging Face Space shows the app in a frame of another site, over HTTPS: a SameSite=Lax cookie
    would be dropped there, and the browser's websocket and downloads would lose their worker."""
    def set_cookie_header(headers: dict) -> str:
        request = urllib.request.Request(server.url + "/_stcore/health", headers=headers)
        with urllib.request.urlopen(request, timeout=10) as response:
            return next(v for v in response.headers.get_all("Set-Cookie") if v.startswith("ae_worker="))

    assert set_cookie_header({}).endswith("HttpOnly; SameSite=Lax")
    marked = set_cookie_header({"X-Forwarded-Proto": "https"})
    assert marked.endswith("HttpOnly; SameSite=None; Secure; Partitioned"), marked


def test_a_download_is_served_only_by_the_worker_that_made_it(server):
    for worker in ("w0", "w1"):
        _, pid, download = run_async(visit(server.url, worker))
        assert get(server.url + download, worker)[:2] == (200, f"made by {pid}")
        other = "w1" if worker == "w0" else "w0"
        assert get(server.url + download, other)[0] == 404


def test_the_workers_share_one_cookie_secret_and_the_malloc_tuning(server):
    environments = []
    for pid in class_server_workers(server.process.pid).values():
        items = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        environments.append(dict(item.decode().split("=", 1) for item in items if b"=" in item))
    assert len(environments) == 2
    secrets = {env.get("STREAMLIT_SERVER_COOKIE_SECRET") for env in environments}
    assert len(secrets) == 1 and re.fullmatch(r"[0-9a-f]{64}", secrets.pop() or "")
    assert all(env.get("MALLOC_ARENA_MAX") == "2" and "MALLOC_MMAP_THRESHOLD_" not in env for env in environments)


def _open_idle_connections(count: int, source: str, port: int) -> list[socket.socket]:
    sockets = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sockets.append(sock)
        sock.setblocking(False)
        sock.bind((source, 0))
        with contextlib.suppress(BlockingIOError):
            sock.connect(("127.0.0.1", port))
    return sockets


def _still_open(sockets: list[socket.socket]) -> int:
    """How many of `sockets` the server has neither closed, reset nor answered (idle and open, or
    still waiting to be accepted)."""
    poller = select.poll()
    for sock in sockets:
        poller.register(sock, select.POLLIN | select.POLLOUT | select.POLLRDHUP)
    ended = select.POLLIN | select.POLLHUP | select.POLLERR | select.POLLRDHUP
    events = dict(poller.poll(0))
    return sum(1 for sock in sockets if not events.get(sock.fileno(), 0) & ended)


def test_an_idle_flood_from_one_address_leaves_the_others_served(server):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < FLOOD + 512:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, FLOOD + 1024), hard))
    per_source = int(re.search(r"(\d+) per client address", log_text(server)).group(1))
    sockets = []
    try:
        started = time.monotonic()
        sockets = _open_idle_connections(FLOOD, FLOOD_SOURCE, server.port)
        time.sleep(1.0)
        held = _still_open(sockets)
        print(f"idle flood: {held} of {FLOOD} connections held by HAProxy (limit {per_source})")
        assert 0 < held <= per_source, f"{held} of {FLOOD} idle connections held (limit {per_source})"

        # Meanwhile, from 127.0.0.1: the health check and a whole session answer, promptly.
        for _ in range(3):
            asked = time.monotonic()
            assert get(server.url + "/_stcore/health", timeout=5)[:2] == (200, "ok")
            assert time.monotonic() - asked < 2.0
        assert run_async(visit(server.url))[0] in ("w0", "w1")
        assert time.monotonic() - started < 10, "the checks above ran after HAProxy's request timeout"

        # The idle connections HAProxy accepted are closed once its request-head timeout (10 s) ends.
        deadline = time.monotonic() + 15
        while (left := _still_open(sockets)) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert left == 0, f"{left} idle connections still open {time.monotonic() - started:.0f} s after the flood"
        print(f"idle flood: all closed by HAProxy {time.monotonic() - started:.1f} s after it began")
    finally:
        for sock in sockets:
            sock.close()
    assert get(server.url + "/_stcore/health")[:2] == (200, "ok")


def test_a_frozen_worker_stops_receiving_new_visitors_within_10_s(server):
    pid = class_server_workers(server.process.pid)["w1"]
    w0 = class_server_workers(server.process.pid)["w0"]

    async def frozen_under_a_session():
        pinned, shown, _, session = await visit(server.url, "w1", keep_open=True)
        assert (pinned, shown) == (None, pid)
        mark = len(log_text(server))
        os.kill(pid, signal.SIGSTOP)
        try:
            detected = await asyncio.to_thread(wait_for_log, server, r"Server workers/w1 is DOWN", mark,
                                               DETECTION_LIMIT_S + 5)
            assert detected is not None and detected <= DETECTION_LIMIT_S, f"w1 taken out after {detected} s"
            for _ in range(6):  # new visitors: all to w0, at once
                asked = time.monotonic()
                answer = await asyncio.to_thread(get, server.url + "/_stcore/health", None, 5)
                assert answer == (200, "ok", "w0") and time.monotonic() - asked < 2.0
            # The websocket the frozen worker held is closed (the browser would reconnect) ...
            await asyncio.wait_for(session._ws.wait_closed(), 5)
            # ... and the browser, still pinned to w1, is sent to w0 and pinned there (redispatch).
            return detected, await visit(server.url, "w1"), mark
        finally:
            os.kill(pid, signal.SIGCONT)
            await session.close()

    detected, (repinned, served_by, _), mark = run_async(frozen_under_a_session())
    assert (repinned, served_by) == ("w0", w0)
    print(f"frozen worker taken out after {detected:.1f} s")
    assert wait_for_log(server, r"Server workers/w1 is UP", mark, timeout=15) is not None
    assert get(server.url + "/_stcore/health", "w1") == (200, "ok", None)


def test_a_killed_worker_is_restarted_and_its_browser_reconnects(server):
    pid = class_server_workers(server.process.pid)["w0"]
    mark = len(log_text(server))

    async def killed_under_a_session():
        pinned, shown, _, session = await visit(server.url, "w0", keep_open=True)
        assert (pinned, shown) == (None, pid)
        os.kill(pid, signal.SIGKILL)
        try:
            lost = await session.rerun(timeout=10)
        finally:
            await session.close()
        # The browser reconnects with its cookie (Streamlit's front end retries): HAProxy sends it to
        # a live worker, the other one or w0 restarted, and the page runs again.
        deadline = time.monotonic() + 15
        while True:
            try:
                return lost, await visit(server.url, "w0")
            except (OSError, AssertionError, TimeoutError, InvalidStatus) as problem:  # e.g. a 502 meanwhile
                if time.monotonic() > deadline:
                    raise AssertionError(f"no reconnection within 15 s: {problem}") from problem
                await asyncio.sleep(0.5)

    lost, (repinned, served_by, _) = run_async(killed_under_a_session())
    assert not lost.ok
    assert served_by != pid and repinned in (None, "w1")

    assert wait_for_log(server, r"exited: worker-0 \(terminated by SIGKILL; not expected\)", mark, 10) is not None
    deadline = time.monotonic() + 45
    while time.monotonic() < deadline:  # supervisord starts it again; HAProxy takes it back (rise 2)
        restarted = class_server_workers(server.process.pid).get("w0")
        if restarted not in (None, pid) and get(server.url + "/_stcore/health", "w0")[::2] == (200, None):
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"worker 0 was not restarted and back in HAProxy within 45 s:\n{log_text(server)[-3000:]}")
    async def visit_restarted():  # HAProxy may still answer 502 for a moment while it takes w0 back
        for attempt in range(20):
            try:
                return await visit(server.url, "w0")
            except InvalidStatus:
                if attempt == 19:
                    raise
                await asyncio.sleep(0.5)

    assert run_async(visit_restarted())[:2] == (None, restarted)


def test_sigterm_stops_every_process_and_removes_the_run_directory(server):
    tree = process_tree(server.process.pid)
    run = run_directory(server)
    assert len(tree) >= 5, "the script, supervisord, HAProxy and two workers"
    started = time.monotonic()
    os.kill(server.process.pid, signal.SIGTERM)  # the script only, as `docker stop` does to PID 1
    server.process.wait(timeout=15)
    assert time.monotonic() - started < 10
    time.sleep(0.5)
    alive = [p for p in tree if Path(f"/proc/{p}").exists()
             and Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"]
    assert alive == [] and not run.exists()
    stop(server.process)


def test_without_haproxy_it_says_how_to_install_it(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("dirname", "nproc"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    result = subprocess.run(["/bin/bash", str(SCRIPT), "--workers", "1"], capture_output=True, text=True,
                            timeout=30, env={"PATH": str(bin_dir), "CLASS_SERVER_EXTRA_PATH": ""})
    assert result.returncode == 127
    assert "apt-get install -y haproxy supervisor" in result.stderr
