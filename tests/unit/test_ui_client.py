"""explorer.serve.client: the visitor's address, from the websocket peer, or from the header of a proxy the
deployment names (EXPLORER_TRUSTED_PROXIES) and only then."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from streamlit.runtime.context import StreamlitHeaders

from explorer.serve import client

FORWARDED = "X-Forwarded-For"


def seen(monkeypatch, ip, lines, trusted: str | None) -> str:
    headers = StreamlitHeaders([(FORWARDED, line) for line in lines])  # Streamlit's own headers object
    monkeypatch.setattr(client, "st", SimpleNamespace(context=SimpleNamespace(ip_address=ip, headers=headers)))
    if trusted is None:
        monkeypatch.delenv(client.TRUSTED_PROXIES, raising=False)
    else:
        monkeypatch.setenv(client.TRUSTED_PROXIES, trusted)
    return client.client_address()


@pytest.mark.parametrize(("ip", "lines", "expected"), [
    ("203.0.113.7", ["198.51.100.1"], "203.0.113.7"),  # a direct peer: its address
    (None, ["198.51.100.1"], "198.51.100.1"),  # behind HAProxy on this machine
    (None, ["6.6.6.6", "198.51.100.1"], "198.51.100.1"),  # the client's own line first, the proxy's last
    (None, ["6.6.6.6, 198.51.100.1"], "198.51.100.1"),  # one line: its last entry
    (None, [" "], client.LOCAL),
    (None, [], client.LOCAL),  # a browser on this machine
    (None, ["x" * 10_000], "x" * 64),  # bounded
])
def test_behind_a_proxy_on_this_machine_its_entry_is_the_address(monkeypatch, ip, lines, expected):
    assert seen(monkeypatch, ip, lines, "127.0.0.1") == expected


@pytest.mark.parametrize("trusted", [None, "", "10.0.0.9", " , "])
def test_without_a_named_proxy_the_header_is_never_read(monkeypatch, trusted):
    """The README's server: a loopback peer that writes X-Forwarded-For is still this machine (60 forged
    addresses had taken 49 training runs), a remote peer is its own address."""
    assert seen(monkeypatch, None, ["6.6.6.6"], trusted) == client.LOCAL
    assert seen(monkeypatch, "203.0.113.7", ["6.6.6.6"], trusted) == "203.0.113.7"


def test_a_named_remote_proxy_and_any_peer(monkeypatch):
    assert seen(monkeypatch, "10.0.0.9", ["6.6.6.6, 198.51.100.1"], "10.0.0.8, 10.0.0.9") == "198.51.100.1"
    assert seen(monkeypatch, "10.0.0.7", ["198.51.100.1"], "10.0.0.8, 10.0.0.9") == "10.0.0.7"  # not named
    assert seen(monkeypatch, "172.18.0.4", ["198.51.100.1"], "*") == "198.51.100.1"  # compose, k8s: any peer
    assert seen(monkeypatch, None, ["198.51.100.1"], "::1") == "198.51.100.1"
