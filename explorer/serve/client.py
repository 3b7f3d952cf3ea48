"""Who is asking: the visitor's source address, for per-client shares (live training)."""

from __future__ import annotations

import streamlit as st

__all__ = ["client_address"]

LOCAL = "this machine"


def client_address() -> str:
    """The visitor's address: the websocket peer's (st.context.ip_address), or, when that peer is on
    this machine — the class server's HAProxy, which adds the client's address as an X-Forwarded-For
    line of its own (`option forwardfor`), or a browser on this machine — that header's last entry,
    the one the proxy added (earlier lines and entries are whatever the client sent).  LOCAL when
    there is neither."""
    address = st.context.ip_address
    if isinstance(address, str) and address:  # (AppTest hands a stand-in object, not a string)
        return address
    # HAProxy adds a header line of its own after any the client sent: the last entry of the last line.
    lines = st.context.headers.get_all("X-Forwarded-For")
    last = lines[-1].rsplit(",", 1)[-1].strip()[:64] if lines and isinstance(lines[-1], str) else ""
    return last or LOCAL
