"""Another process's end of a TCP connection, read from here: the server's accepted socket whose peer is
one of our client ports (Linux: /proc and pidfd_getfd, which needs the right to trace that process)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket

__all__ = ["server_side_socket"]

SYS_PIDFD_GETFD = 438  # x86-64 and arm64


def _server_socket_for(pid: int, client_port: int) -> int | None:
    """The fd number, in process `pid`, of the TCP socket whose peer is 127.0.0.1:client_port."""
    inodes = {}
    for path in (f"/proc/{pid}/net/tcp", f"/proc/{pid}/net/tcp6"):
        try:
            with open(path) as table:
                lines = table.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if remote_port == client_port:
                inodes[fields[9]] = True
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in inodes:
            return int(fd)
    return None


@contextlib.contextmanager
def server_side_socket(pid: int, client_port: int):
    """A duplicate, in this process, of the server's accepted socket whose peer is our client port.
    Socket options are per socket, not per descriptor: setting one here sets it for the server."""
    fd = _server_socket_for(pid, client_port)
    if fd is None:
        raise RuntimeError("the server's socket was not found in /proc")
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        copy = libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0)
        if copy < 0:
            raise OSError(ctypes.get_errno(), "pidfd_getfd failed")
        sock = socket.socket(fileno=copy)
        try:
            yield sock
        finally:
            sock.detach()
            os.close(copy)
    finally:
        os.close(pidfd)
