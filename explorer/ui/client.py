"""Who is asking: the visitor's source address, for per-client shares (live training)."""

from __future__ import annotations

import streamlit as st

__all__ = ["client_address"]

LOCAL = "this machine"


def client_address() -> str:
    """The visitor's address: the websocket peer's (st.context.ip_address), or, when that peer is on
    this machine — the class server's HAProxy, which appends the client's address to X-Forwarded-For
    (`option forwardfor`), or a browser on this machine — the header's last entry, the one the
    proxy added (earlier entries are whatever the client sent).  LOCAL when there is neither."""
    address = st.context.ip_address
    if isinstance(address, str) and address:  # (AppTest hands a stand-in object, not a string)
        return address
    forwarded = st.context.headers.get("X-Forwarded-For", "")
    last = forwarded.rsplit(",", 1)[-1].strip()[:64] if isinstance(forwarded, str) else ""
    return last or LOCAL
