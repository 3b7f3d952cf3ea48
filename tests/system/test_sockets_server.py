"""A real `streamlit run app.py`: the server's end of every session has TCP_NODELAY
(explorer/serve/sockets.py), for the connection open when the server first ran the app and for one
accepted afterwards.  Read from the server's own socket (harness/sockets.py)."""

from __future__ import annotations

import socket

from harness.apptest import run_async
from harness.server import streamlit_server
from harness.sockets import server_side_socket
from harness.wsclient import Session


def test_the_server_sends_each_message_as_it_is_written():
    with streamlit_server(name="test-sockets") as server:
        async def options() -> list[int]:
            first = Session(server.url, "")  # connected before the server's first run of the app
            await first.connect()
            assert (await first.open()).ok
            later = Session(server.url, "lookup")  # accepted after it
            await later.connect()
            assert (await later.rerun()).ok
            found = []
            for session in (first, later):
                with server_side_socket(server.process.pid, session.local_port) as sock:
                    found.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                await session.close()
            return found

        assert run_async(options()) == [1, 1], "the server's sockets keep Nagle's algorithm on"
