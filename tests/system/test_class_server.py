"""deploy/class-server.sh: two real Streamlit workers under supervisord, behind the real HAProxy.

The workers run harness/worker_app.py (it prints its process id and offers a download made
there), on 127.0.0.1.  Checked, in this order, against one running class server:

* the generated HAProxy configuration (leastconn, inserted cookie, health checks that keep open
  sessions, retries and redispatch, timeouts, maxconn within the descriptor limit, a per-address stick
  table), also at ulimit -n 1024, and the watchdog in supervisord's;
* Streamlit's scripts reach a browser that accepts gzip gzipped, and unpack to the same bytes;
* the workers run the production profile: a failing page shows only the exception's type, a 5 MB
  widget value is refused, and /_stcore/metrics is not served through HAProxy;
* a class opening the real app together (30 sessions at once, on a class server of its own): every
  session loads, none is cut, no worker is marked DOWN;
* new sessions spread over both workers, each pinned by HAProxy's cookie, also its websocket;
* behind an HTTPS front end the cookie is marked for a cross-site frame (a Hugging Face Space);
* a download URL exists only on the worker that made it (why the balancer must be sticky);
* the workers share one cookie secret, and the malloc tuning;
* an idle flood of 2,100 connections from 127.0.0.2 leaves /_stcore/health and a session from
  127.0.0.1 answering, and HAProxy drops the idle connections it accepted within its timeout;
* a frozen worker (SIGSTOP): new visits succeed meanwhile (HAProxy tries the other worker after
  4 s, and sends none to it after 5 s), its open session is kept, and the watchdog restarts it;
* a killed worker: first visits right after it died get no 502; supervisord restarts it, and its
  browser reconnects at once;
* SIGTERM stops every process and removes the run directory.

HAProxy and supervisord must be installed (scripts/test.sh installs them): without them these
tests fail, they never skip.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState

from harness.apptest import run_async
from harness.balancer import assert_scripts_gzipped, get, open_idle_connections, still_open, visit
from harness.burst import burst, haproxy_events
from harness.server import ROOT, SBIN_PATH, class_server_workers, process_tree, stop, streamlit_server
from harness.wsclient import Session

SCRIPT = ROOT / "deploy" / "class-server.sh"
WORKER_APP = "harness/worker_app.py"
FLOOD = 2100
FLOOD_SOURCE = "127.0.0.2"
OUT_OF_ROTATION_S = 7.0  # a frozen worker gets no new visitors after this (expected: 5 s)
VISIT_LIMIT_S = 8.0  # a new visit while a worker is frozen (expected: 4 s, HAProxy's retry, and the visit)
RESTART_LIMIT_S = 45.0  # a frozen worker restarted by the watchdog (expected: 15-20 s)
CLASS = 30


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
                 "option httpchk GET /_stcore/health", "http-check expect string ok", "option redispatch 1",
                 "retry-on conn-failure empty-response response-timeout", "timeout server 4s", "timeout check 4s",
                 "timeout http-request 10s", "timeout client 60s", "timeout tunnel 1h",
                 "tcp-request connection track-sc0 src", "check inter 1s fastinter 1s downinter 1s fall 1 rise 2",
                 "http-request deny if { path,url_dec -m reg -i ^/+_stcore/+metrics }", "option forwardfor",
                 "http-request del-header X-Forwarded-For"):
        assert line in config, line
    assert "shutdown-sessions" not in config, "a slow health check must not cut the sessions of a busy worker"
    supervisor = (run_directory(server) / "supervisord.conf").read_text()
    watchdog = re.search(r"^\[eventlistener:watchdog\]\ncommand=.*deploy/watchdog\.py (.+)\nevents=TICK_5$",
                         supervisor, re.M)
    assert watchdog and len(watchdog.group(1).split()) == 2, supervisor
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


def test_streamlits_scripts_reach_a_browser_gzipped_and_whole(server):
    """Streamlit sends its scripts uncompressed; through HAProxy a browser that accepts gzip gets them
    gzipped, and they unpack to the very bytes a client that does not gets."""
    assert_scripts_gzipped(server.url)


def test_the_workers_see_each_clients_own_address_whatever_header_it_sends(server):
    """HAProxy adds the client's address (option forwardfor): the page's client_address() is that,
    not "this machine" and not a value the client wrote itself (live training's share per client)."""

    async def client_seen(headers: dict | None) -> str:
        session = Session(server.url, keep_elements=True, headers=headers)
        await session.connect()
        try:
            result = await session.rerun(timeout=30)
        finally:
            await session.close()
        texts = [e.markdown.body for _, e in result.elements if e is not None and e.WhichOneof("type") == "markdown"]
        return next(t for t in texts if t.startswith("client "))

    assert run_async(client_seen(None)) == "client 127.0.0.1"
    assert run_async(client_seen({"X-Forwarded-For": "6.6.6.6"})) == "client 127.0.0.1"


def test_the_workers_run_the_production_profile(server):
    for pid in class_server_workers(server.process.pid).values():
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        for pair in (("--server.fileWatcherType", "none"), ("--client.showErrorDetails", "type"),
                     ("--server.maxWidgetStateSize", "1"), ("--server.maxMessageSize", "25")):
            assert pair in itertools.pairwise(argv), (pair, argv)

    async def failing_page_and_a_large_value():
        async with Session(server.url, query="fail=1", keep_elements=True) as session:
            failed = await session.rerun(timeout=30)
        async with Session(server.url) as session:
            assert (await session.rerun(timeout=30)).ok
            session.values["large"] = WidgetState(id="large", string_value="x" * 5_000_000)
            refused = await session.rerun(timeout=30)
            return failed, refused, session._ws.close_code

    failed, refused, close_code = run_async(failing_page_and_a_large_value())
    shown = [e.exception for _, e in failed.elements if e is not None and e.WhichOneof("type") == "exception"]
    assert len(shown) == 1 and shown[0].type == "RuntimeError", failed.exceptions
    assert "secret" not in str(shown[0]) and not shown[0].stack_trace, "a visitor sees the type only"
    assert refused.status.startswith("closed") and close_code == 1009, (refused.status, close_code)

    # Streamlit's metrics are refused at HAProxy, however the path is written; a worker still serves them
    # on its loopback port.
    for path in ("/_stcore/metrics", "/_stcore/%6detrics", "//_stcore/metrics", "/_STCORE/metrics/"):
        assert get(server.url + path)[0] == 403, path
    port = re.search(r"ports (\d+) ", log_text(server)).group(1)
    assert get(f"http://127.0.0.1:{port}/_stcore/metrics")[0] == 200


@pytest.fixture(scope="module")
def class_app(tmp_path_factory):
    """The class server with the real app (two workers), as an operator starts it: no flags."""
    require_tools()
    with streamlit_server(workers=2, name="class-app", as_typed=True,
                          log_dir=tmp_path_factory.mktemp("class-app")) as running:
        yield running


def test_a_class_opening_a_lesson_together_loads_with_no_session_cut(class_app):
    mark = len(log_text(class_app))
    result = run_async(burst(class_app.url, ["attention"], CLASS))
    time.sleep(1.0)  # HAProxy's last log lines
    events, summary = haproxy_events(log_text(class_app)[mark:]), result.summary()
    print(f"{CLASS} first visits at once: slowest {summary['slowest_s']} s, p95 {summary['p95_s']} s")
    assert (summary["loaded"], summary["cut"], summary["errors"]) == (CLASS, 0, 0), summary["problems"]
    assert events["down"] == [] and events["status_5xx"] == 0, events
    assert summary["slowest_s"] < 60, "a generous bound: about 5 s on 2 cores"


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


def test_an_idle_flood_from_one_address_leaves_the_others_served(server):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < FLOOD + 512:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, FLOOD + 1024), hard))
    per_source = int(re.search(r"(\d+) per client address", log_text(server)).group(1))
    sockets = []
    try:
        started = time.monotonic()
        sockets = open_idle_connections(FLOOD, FLOOD_SOURCE, server.port)
        time.sleep(1.0)
        held = still_open(sockets)
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
        while (left := still_open(sockets)) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert left == 0, f"{left} idle connections still open {time.monotonic() - started:.0f} s after the flood"
        print(f"idle flood: all closed by HAProxy {time.monotonic() - started:.1f} s after it began")
    finally:
        for sock in sockets:
            sock.close()
    assert get(server.url + "/_stcore/health")[:2] == (200, "ok")


def test_a_frozen_worker_is_passed_over_at_once_and_restarted_by_the_watchdog(server):
    pid = class_server_workers(server.process.pid)["w1"]
    w0 = class_server_workers(server.process.pid)["w0"]

    async def frozen_under_a_session():
        pinned, shown, _, session = await visit(server.url, "w1", keep_open=True)
        assert (pinned, shown) == (None, pid)
        # Two browsers on w0, so that HAProxy (leastconn) offers the frozen w1 to the next newcomers.
        others = [(await visit(server.url, "w0", keep_open=True))[3] for _ in range(2)]
        mark = len(log_text(server))
        os.kill(pid, signal.SIGSTOP)
        frozen = time.monotonic()
        try:
            out = asyncio.create_task(asyncio.to_thread(wait_for_log, server, r"Server workers/w1 is DOWN", mark,
                                                        OUT_OF_ROTATION_S + 5))
            visits = []  # new visitors from the moment it froze: (asked at, seconds taken, served by)
            while time.monotonic() - frozen < OUT_OF_ROTATION_S + 2:
                asked = time.monotonic()
                served_by = (await asyncio.wait_for(visit(server.url), VISIT_LIMIT_S + 5))[1]
                visits.append((asked - frozen, time.monotonic() - asked, served_by))
                await asyncio.sleep(0.25)
            # Its open session is not cut (a busy worker's must not be); the browser pinned to it, coming
            # back, is sent to w0 and pinned there (redispatch).
            assert session._ws.close_code is None, "the frozen worker's websocket was closed by HAProxy"
            repinned = await visit(server.url, "w1")
            # The watchdog finds it hung and has supervisord restart it; that closes its websocket (the
            # browser reconnects), and HAProxy takes the new process back.
            restart = await asyncio.to_thread(wait_for_log, server, rf"watchdog: workers:worker-1 \(pid {pid}\) "
                                              "has not answered", mark, RESTART_LIMIT_S)
            restart = restart and time.monotonic() - frozen
            back = await asyncio.to_thread(wait_for_log, server, r"Server workers/w1 is UP", mark, 30)
            await asyncio.wait_for(session._ws.wait_closed(), 5)
            return await out, visits, repinned, restart, back
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
            for browser in (session, *others):
                await browser.close()

    out, visits, (repinned, served_by, _), restart, back = run_async(frozen_under_a_session())
    print(f"frozen worker: out of rotation after {out:.1f} s, restarted after {restart:.1f} s; new visits "
          "(asked at: took) " + ", ".join(f"{asked:.1f} s: {took:.1f} s" for asked, took, _ in visits))
    assert out is not None and out <= OUT_OF_ROTATION_S, f"w1 out of rotation after {out} s"
    assert all(by == w0 and took <= VISIT_LIMIT_S for _, took, by in visits), visits
    assert all(took < 2.0 for asked, took, _ in visits if asked > OUT_OF_ROTATION_S), visits
    assert (repinned, served_by) == ("w0", w0)
    assert restart is not None and back is not None, log_text(server)[-3000:]
    restarted = class_server_workers(server.process.pid)["w1"]
    assert restarted != pid and run_async(visit(server.url, "w1"))[:2] == (None, restarted)


def test_a_killed_worker_gives_no_502_is_restarted_and_its_browser_reconnects(server):
    pid = class_server_workers(server.process.pid)["w0"]
    mark = len(log_text(server))

    async def killed_under_a_session():
        pinned, shown, _, session = await visit(server.url, "w0", keep_open=True)
        assert (pinned, shown) == (None, pid)
        other = (await visit(server.url, "w1", keep_open=True))[3]  # so that leastconn offers w0 to newcomers
        os.kill(pid, signal.SIGKILL)
        try:
            # First visits right after it died (some sent to w0 first): every one served, none a 502.
            firsts = []
            for _ in range(20):
                firsts.append((await asyncio.wait_for(visit(server.url), 15))[1])
                await asyncio.sleep(0.1)
            await asyncio.wait_for(session._ws.wait_closed(), 10)  # its own browser lost the connection
        finally:
            await session.close()
            await other.close()
        # The browser reconnects with its cookie (Streamlit's front end retries): HAProxy sends it to
        # a live worker, the other one or w0 restarted, and the page runs again.
        return firsts, await visit(server.url, "w0")

    firsts, (repinned, served_by, _) = run_async(killed_under_a_session())
    assert pid not in firsts
    assert served_by != pid and repinned in (None, "w1")
    assert haproxy_events(log_text(server)[mark:])["status_5xx"] == 0, log_text(server)[mark:]

    assert wait_for_log(server, r"exited: worker-0 \(terminated by SIGKILL; not expected\)", mark, 10) is not None
    deadline = time.monotonic() + 45
    while time.monotonic() < deadline:  # supervisord starts it again; HAProxy takes it back (rise 2)
        restarted = class_server_workers(server.process.pid).get("w0")
        if restarted not in (None, pid) and get(server.url + "/_stcore/health", "w0")[::2] == (200, None):
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"worker 0 was not restarted and back in HAProxy within 45 s:\n{log_text(server)[-3000:]}")
    assert run_async(visit(server.url, "w0"))[:2] == (None, restarted)


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

