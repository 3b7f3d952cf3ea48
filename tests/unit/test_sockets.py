"""explorer/serve/sockets.py: TCP_NODELAY on every TCP socket of the process, inherited by later connections."""

from __future__ import annotations

import socket

from explorer.serve.sockets import send_without_delay

NODELAY = (socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_every_tcp_socket_sends_without_delay_and_connections_accepted_later_inherit_it():
    listener = socket.create_server(("127.0.0.1", 0))  # as Streamlit binds its own: no protocol named
    client = socket.create_connection(listener.getsockname())
    accepted, _ = listener.accept()
    unix, other_unix = socket.socketpair()  # not TCP: left alone, without an error
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with listener, client, accepted, unix, other_unix, udp:
        assert not accepted.getsockopt(*NODELAY), "a connection accepted as the server leaves it has Nagle on"
        assert send_without_delay() >= 3
        assert listener.getsockopt(*NODELAY) and accepted.getsockopt(*NODELAY) and client.getsockopt(*NODELAY)
        later_client = socket.create_connection(listener.getsockname())
        later, _ = listener.accept()
        with later_client, later:
            assert later.getsockopt(*NODELAY), "a connection accepted afterwards inherits the listener's option"
        assert unix.fileno() >= 0 and udp.fileno() >= 0  # still open: the duplicates were closed, not these
