"""Helpers for tests of a sticky balancer in front of harness/worker_app.py workers (the class
server's HAProxy, the compose file's): plain HTTP with the balancer's cookie, and a websocket visit
that reports which worker the page ran on."""

from __future__ import annotations

import contextlib
import gzip
import re
import select
import socket
import urllib.error
import urllib.request

from harness.wsclient import Session

COOKIE = "ae_worker"


def set_cookie(values: list[str]) -> str | None:
    """The value of the balancer's cookie among Set-Cookie header values, if it set one."""
    found = [v.split(";")[0].split("=", 1)[1] for v in values if v.startswith(COOKIE + "=")]
    return found[0] if found else None


def get(url: str, cookie: str | None = None, timeout: float = 10) -> tuple[int, str, str | None]:
    """(status, body, the value of the balancer's cookie set in the answer, if it set one)."""
    headers = {"Cookie": f"{COOKIE}={cookie}"} if cookie else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as response:
            status, body, answer = response.status, response.read().decode(errors="replace"), response.headers
    except urllib.error.HTTPError as error:
        status, body, answer = error.code, "", error.headers
    return status, body, set_cookie(answer.get_all("Set-Cookie") or [])


async def visit(url: str, cookie: str | None = None, *, keep_open: bool = False):
    """One websocket session of worker_app.py (with the balancer's cookie, if given): (the worker the
    handshake's answer pinned it to, or None; the pid the page printed; the download URL it
    offered[; the open session, with keep_open])."""
    session = Session(url, keep_elements=True, headers={"Cookie": f"{COOKIE}={cookie}"} if cookie else None)
    await session.connect()
    try:
        result = await session.rerun(timeout=30)
        assert result.ok, result.status
    finally:
        if not keep_open:
            await session.close()
    pinned = set_cookie(session.handshake_headers.get_all("Set-Cookie"))
    texts = [e.markdown.body for _, e in result.elements if e is not None and e.WhichOneof("type") == "markdown"]
    urls = [e.download_button.url for _, e in result.elements
            if e is not None and e.WhichOneof("type") == "download_button"]
    return (pinned, int(texts[0].split()[-1]), urls[0]) + ((session,) if keep_open else ())


def open_idle_connections(count: int, source: str, port: int) -> list[socket.socket]:
    """`count` connections from `source` to 127.0.0.1:`port` that never send anything."""
    sockets = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sockets.append(sock)
        sock.setblocking(False)
        sock.bind((source, 0))
        with contextlib.suppress(BlockingIOError):
            sock.connect(("127.0.0.1", port))
    return sockets


def still_open(sockets: list[socket.socket]) -> int:
    """How many of `sockets` the server has neither closed, reset nor answered (idle and open, or
    still waiting to be accepted)."""
    poller = select.poll()
    for sock in sockets:
        poller.register(sock, select.POLLIN | select.POLLOUT | select.POLLRDHUP)
    ended = select.POLLIN | select.POLLHUP | select.POLLERR | select.POLLRDHUP
    events = dict(poller.poll(0))
    return sum(1 for sock in sockets if not events.get(sock.fileno(), 0) & ended)


def _fetch(url: str, encoding: str | None) -> tuple[bytes, dict]:
    request = urllib.request.Request(url, headers={"Accept-Encoding": encoding} if encoding else {})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read(), {k.lower(): v for k, v in response.headers.items()}


def assert_scripts_gzipped(url: str) -> None:
    """Through the balancer at `url`, Streamlit's first script reaches a client that accepts gzip gzipped,
    under half its size, and unpacks to the very bytes a client that does not gets."""
    page, _ = _fetch(url + "/", "gzip, deflate, br")
    page = gzip.decompress(page) if page[:2] == b"\x1f\x8b" else page
    scripts = re.findall(rb'src="\./(static/js/[^"]+\.js)"', page)
    assert scripts, "the page names Streamlit's scripts"
    script = f"{url}/{scripts[0].decode()}"
    plain, plain_headers = _fetch(script, None)
    packed, headers = _fetch(script, "gzip, deflate, br")
    assert plain_headers.get("content-encoding") is None and len(plain) > 100_000
    assert headers.get("content-encoding") == "gzip", headers
    assert gzip.decompress(packed) == plain
    assert len(packed) < 0.5 * len(plain), (len(packed), len(plain))
