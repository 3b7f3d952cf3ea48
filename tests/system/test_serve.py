"""serve.py: the sticky balancer in front of several Streamlit workers.

The unit tests check the routing rules; the integration test starts serve.py with two real
Streamlit workers (a one-line app that prints its process id and offers a download) and checks what
the design rests on: sessions spread over the workers, each browser is pinned by its cookie, a
download URL only exists on the worker that made it, and a worker that dies is replaced while its
browsers are sent to the other one.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import time
import urllib.error
import urllib.request

import pytest

import serve
from tests.support.apptest import run_async
from tests.support.server import process_tree, streamlit_server
from tests.support.wsclient import Session

WORKER_APP = "tests/support/worker_app.py"


def request_head(*headers: str) -> bytes:
    return ("GET / HTTP/1.1\r\nHost: localhost\r\n" + "".join(h + "\r\n" for h in headers) + "\r\n").encode()


@pytest.mark.parametrize("headers, workers, expected", [
    ((), 2, None),
    (("Cookie: ae_worker=1",), 2, 1),
    (("cookie: theme=dark; ae_worker=0; other=x",), 2, 0),
    (("Cookie: ae_worker=2",), 2, None),  # no such worker (fewer workers since the cookie was set)
    (("Cookie: ae_worker=abc",), 2, None),
    (("Cookie: not_ae_worker=1",), 2, None),
    (("Cookie: ae_worker=1; ae_worker=0",), 2, 1),
    (("Cookie: ae_worker=7; ae_worker=1",), 2, 1),  # a stale cookie beside a valid one
    (("Cookie: ae_worker=1x",), 2, None),
    (("Referer: http://x/?ae_worker=1",), 2, None),
])
def test_the_cookie_names_the_worker(headers, workers, expected):
    assert serve.worker_from_head(request_head(*headers), workers) == expected


def test_websocket_upgrades_are_recognised():
    assert serve.is_websocket(request_head("Connection: Upgrade", "Upgrade: websocket"))
    assert not serve.is_websocket(request_head("Connection: keep-alive"))


def test_the_cookie_is_added_to_the_response_head_and_nothing_else_changes():
    head = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
    pinned = serve.with_cookie(head, 1)
    assert pinned == (b"HTTP/1.1 101 Switching Protocols\r\nSet-Cookie: ae_worker=1; Path=/; HttpOnly; "
                      b"SameSite=Lax\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")


def test_cross_site_cookies_are_marked_for_a_third_party_frame():
    head = b"HTTP/1.1 200 OK\r\n\r\n"
    assert b"SameSite=None; Secure; Partitioned" in serve.with_cookie(head, 0, cross_site=True)
    assert b"SameSite=Lax" in serve.with_cookie(head, 0)


def test_each_plain_request_asks_for_its_own_connection():
    """So that a front end reusing one connection for several browsers cannot carry one browser's
    requests to another browser's worker."""
    head = request_head("Connection: keep-alive", "Keep-Alive: timeout=5", "Cookie: ae_worker=1")
    rewritten = serve.one_request_per_connection(head)
    assert rewritten == request_head("Cookie: ae_worker=1", "Connection: close")


def test_new_browsers_go_to_the_worker_with_fewest_websockets_ties_in_turn():
    balancer = serve.Balancer([("127.0.0.1", 1), ("127.0.0.1", 2), ("127.0.0.1", 3)])
    assert [balancer.choose() for _ in range(6)] == [0, 1, 2, 0, 1, 2]  # a burst: spread evenly
    balancer.open_websockets = [2, 0, 1]
    assert {balancer.choose() for _ in range(5)} == {1}


def test_the_number_of_workers_is_bounded():
    with pytest.raises(SystemExit):
        serve.main(["--workers", "0"])
    with pytest.raises(SystemExit):
        serve.main(["--workers", "99"])


# --- two real workers ----------------------------------------------------------------------------------------


async def _visit(url: str) -> tuple[int, str, str]:
    """One websocket session without cookies: (worker index from the cookie it was given, the pid the
    page printed, the URL of the download the page offered)."""
    async with Session(url, keep_elements=True) as session:
        cookie = session._ws.response.headers.get("Set-Cookie", "")
        result = await session.rerun()
        assert result.ok, result.status
    match = re.match(r"ae_worker=(\d+);", cookie)
    assert match, f"the handshake did not pin the session: {cookie!r}"
    texts = [e.markdown.body for _, e in result.elements if e is not None and e.WhichOneof("type") == "markdown"]
    urls = [e.download_button.url for _, e in result.elements
            if e is not None and e.WhichOneof("type") == "download_button"]
    return int(match.group(1)), texts[0].split()[-1], urls[0]


def _get(url: str, cookie: str | None = None) -> tuple[int, str, str | None]:
    """(status, body, the ae_worker cookie the balancer set, if it set one)."""
    headers = {"Cookie": cookie} if cookie else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as response:
            status, body, response_headers = response.status, response.read().decode(errors="replace"), response.headers
    except urllib.error.HTTPError as error:
        status, body, response_headers = error.code, "", error.headers
    pinned = [c.split(";")[0] for c in response_headers.get_all("Set-Cookie") or [] if c.startswith("ae_worker=")]
    return status, body, pinned[0] if pinned else None


def _raw_response(port: int, payload: bytes, *, half_close: bool = False) -> bytes:
    """Send `payload` on a fresh connection (then, with half_close, shut the sending side) and read
    until the balancer closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(payload)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


def test_two_workers_sticky_sessions_downloads_and_a_worker_restart(tmp_path):
    with streamlit_server(WORKER_APP, workers=2, name="serve", log_dir=tmp_path) as server:
        url = server.url
        assert len(process_tree(server.process.pid)) >= 3  # the balancer and its two workers

        visits = [run_async(_visit(url)) for _ in range(2)]  # (a thread: the browser tests hold a loop)
        assert {worker for worker, _, _ in visits} == {0, 1}, "two new sessions should get one worker each"
        pids = {worker: pid for worker, pid, _ in visits}
        assert pids[0] != pids[1]

        for worker, pid, download in visits:
            status, body, _ = _get(url + download, f"ae_worker={worker}")
            assert (status, body) == (200, f"made by {pid}")
            # The same URL on the other worker does not exist: why the balancer must be sticky.
            assert _get(url + download, f"ae_worker={1 - worker}")[0] == 404

        assert _get(url + "/", "ae_worker=1")[::2] == (200, None)  # already pinned: no new cookie
        assert _get(url + "/")[2] in ("ae_worker=0", "ae_worker=1")  # a new browser is pinned
        too_long = _raw_response(server.port, b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 70_000 + b"\r\n\r\n")
        assert too_long.startswith(b"HTTP/1.1 431 Request Header Fields Too Large")
        # A keep-alive request is answered and the connection closed (each request routed on its own);
        # a client that half-closes after its request still gets the whole answer.
        health = b"GET /_stcore/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n"
        for half_close in (False, True):
            answer = _raw_response(server.port, health, half_close=half_close)
            assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"ok"), answer[-200:]

        # Worker 1 dies: its browsers are re-pinned to worker 0 at once, and it is started again.
        os.kill(int(pids[1]), signal.SIGKILL)
        time.sleep(0.5)
        assert _get(url + "/_stcore/health", "ae_worker=1") == (200, "ok", "ae_worker=0")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if _get(url + "/_stcore/health", "ae_worker=1") == (200, "ok", None):
                break
            time.sleep(0.5)
        else:
            pytest.fail("worker 1 was not restarted within 60 s")
        worker_logs = "".join(p.read_text() for p in tmp_path.glob("*.log"))
        assert "worker 1 exited" in worker_logs and "restarting" in worker_logs
