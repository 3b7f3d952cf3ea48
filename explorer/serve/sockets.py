"""Every message of a run leaves the server as soon as it is written: TCP_NODELAY on the server's sockets.

Streamlit's server (uvicorn, on a socket Streamlit binds itself) leaves Nagle's algorithm on: asyncio sets
TCP_NODELAY only on sockets made with the protocol named, and Streamlit's listening socket is not.  With
Nagle on, a small message written while an earlier one is not yet acknowledged waits for that
acknowledgement, which the client's kernel may hold back on purpose (a delayed acknowledgement).  A
lesson switch writes the page's `new_session` first and its elements a moment later: the elements waited
for that acknowledgement, and so did the messages of a rerun asked for soon after the previous one
(benchmarks/RESULTS.md: "TCP_NODELAY").

`send_without_delay()` sets TCP_NODELAY on this process's TCP sockets: the listening ones, whose option
every connection accepted later inherits (Linux), and the connections already open.  It touches no
Streamlit API, only the process's own sockets; outside a server (AppTest) it finds none.
"""

from __future__ import annotations

import contextlib
import os
import socket

__all__ = ["send_without_delay"]

_TCP = (socket.AF_INET, socket.AF_INET6)


def _tcp_sockets() -> list[socket.socket]:
    """This process's TCP sockets, each as a duplicate of its descriptor (close them after use)."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError, ValueError):
            if not os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                continue
            duplicate = os.dup(int(name))
            try:
                copy = socket.socket(fileno=duplicate)  # family and type read from the descriptor
            except OSError:
                os.close(duplicate)  # a socket Python cannot wrap: not one of ours to set
                continue
            if copy.family in _TCP and copy.type == socket.SOCK_STREAM:
                found.append(copy)
            else:
                copy.close()
    return found


def send_without_delay() -> int:
    """Set TCP_NODELAY on every TCP socket of this process (see the module); how many were set."""
    count = 0
    for sock in _tcp_sockets():
        with sock, contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            count += 1
    return count
