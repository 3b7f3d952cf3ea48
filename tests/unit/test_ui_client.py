"""explorer.serve.client: the visitor's address, from the websocket peer or from the proxy's header."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from streamlit.runtime.context import StreamlitHeaders

from explorer.serve import client

FORWARDED = "X-Forwarded-For"


@pytest.mark.parametrize(("ip", "lines", "expected"), [
    ("203.0.113.7", ["198.51.100.1"], "203.0.113.7"),  # a direct peer: its address
    (None, ["198.51.100.1"], "198.51.100.1"),  # behind HAProxy on this machine
    (None, ["6.6.6.6", "198.51.100.1"], "198.51.100.1"),  # the client's own line first, the proxy's last
    (None, ["6.6.6.6, 198.51.100.1"], "198.51.100.1"),  # one line: its last entry
    (None, [" "], client.LOCAL),
    (None, [], client.LOCAL),  # a browser on this machine
    (None, ["x" * 10_000], "x" * 64),  # bounded
])
def test_the_client_address(monkeypatch, ip, lines, expected):
    headers = StreamlitHeaders([(FORWARDED, line) for line in lines])  # Streamlit's own headers object
    monkeypatch.setattr(client, "st", SimpleNamespace(context=SimpleNamespace(ip_address=ip, headers=headers)))
    assert client.client_address() == expected
