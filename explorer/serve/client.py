"""Who is asking: the visitor's source address, for per-client shares (live training).

The websocket peer's address is the visitor's unless the peer is a proxy the deployment names in
EXPLORER_TRUSTED_PROXIES (comma-separated addresses; "127.0.0.1" or "::1" for one on this machine,
"*" for any peer, where the app can be reached only through its proxy).  Only then is the proxy's
X-Forwarded-For entry read: the last entry of the last line, the one the proxy added (HAProxy's
`option forwardfor`, an ingress's appended address); earlier lines and entries are whatever the
client sent.  Unset (the README's `streamlit run`), a header is never read: a script on this machine
could otherwise claim any address per session and take a training run for each (issue #64)."""

from __future__ import annotations

import os

import streamlit as st

__all__ = ["LOCAL", "TRUSTED_PROXIES", "client_address", "trusted_proxies"]

LOCAL = "this machine"
TRUSTED_PROXIES = "EXPLORER_TRUSTED_PROXIES"
_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def trusted_proxies() -> frozenset[str]:
    """The proxies named by the deployment (EXPLORER_TRUSTED_PROXIES), read at each call."""
    return frozenset(p.strip() for p in os.environ.get(TRUSTED_PROXIES, "").split(",") if p.strip())


def client_address() -> str:
    """The visitor's address (see the module); LOCAL for a browser on this machine with no trusted proxy."""
    address = st.context.ip_address  # None when the peer is on this machine (Streamlit hides loopback)
    peer = address if isinstance(address, str) and address else None  # (AppTest hands a stand-in object)
    trusted = trusted_proxies()
    if "*" in trusted or (peer is None and trusted & _LOOPBACK) or (peer is not None and peer in trusted):
        lines = st.context.headers.get_all("X-Forwarded-For")
        last = lines[-1].rsplit(",", 1)[-1].strip()[:64] if lines and isinstance(lines[-1], str) else ""
        if last:
            return last
    return peer or LOCAL
