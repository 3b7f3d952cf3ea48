"""explorer.ui.client: the visitor's address, from the websocket peer or from the proxy's header."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from explorer.ui import client


@pytest.mark.parametrize(("ip", "headers", "expected"), [
    ("203.0.113.7", {"X-Forwarded-For": "198.51.100.1"}, "203.0.113.7"),  # a direct peer: its address
    (None, {"X-Forwarded-For": "198.51.100.1"}, "198.51.100.1"),  # behind HAProxy on this machine
    (None, {"X-Forwarded-For": "6.6.6.6, 198.51.100.1"}, "198.51.100.1"),  # the entry the proxy added, last
    (None, {"X-Forwarded-For": " "}, client.LOCAL),
    (None, {}, client.LOCAL),  # a browser on this machine
    (None, {"X-Forwarded-For": "x" * 10_000}, "x" * 64),  # bounded
])
def test_the_client_address(monkeypatch, ip, headers, expected):
    monkeypatch.setattr(client, "st", SimpleNamespace(context=SimpleNamespace(ip_address=ip, headers=headers)))
    assert client.client_address() == expected
