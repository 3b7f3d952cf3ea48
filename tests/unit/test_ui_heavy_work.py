"""explorer.serve.page (through explorer.kit.internals.yield_point): a page run waiting for the work pool
stops as Streamlit would at an st.* call
when its session has asked for a newer run (a superseded rerun stops computing)."""

from __future__ import annotations

import contextvars
import threading
from types import SimpleNamespace

import pytest
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException, StopException
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequest, ScriptRequestType

from explorer.kit import internals
from explorer.pieces import piece
from explorer.serve import page
from explorer.serve.pool import WorkPool


def context(request):
    return SimpleNamespace(session_id="s1", script_requests=SimpleNamespace(on_scriptrunner_yield=lambda: request))


@pytest.mark.parametrize("request_, raised", [
    (ScriptRequest(ScriptRequestType.RERUN, "rerun data"), RerunException),
    (ScriptRequest(ScriptRequestType.STOP), StopException),
])
def test_a_run_waiting_for_the_pool_stops_when_its_session_asks_for_another(monkeypatch, request_, raised):
    requests = iter([None, request_])  # nothing pending when the piece is queued; then a newer rerun
    monkeypatch.setattr(internals, "get_script_run_ctx", lambda **_: context(next(requests)))
    monkeypatch.setattr(page, "session_key", lambda: "s1")
    pool, ran = WorkPool(), []
    monkeypatch.setattr(page, "POOL", pool)
    started, release = threading.Event(), threading.Event()

    def busy():
        started.set()
        release.wait(10)

    pool.submit("other session", busy)  # the pool is busy: our piece waits in the queue
    assert started.wait(10)
    def page_run():  # in a context of its own, as a script run's thread
        page.serve_heavy_work()
        piece(ran.append, "stale piece")

    try:
        with pytest.raises(raised):
            contextvars.Context().run(page_run)
        assert len(pool) == 0
    finally:
        release.set()
    assert len(pool) == 0 and ran == []  # withdrawn, never run


def test_outside_a_streamlit_run_the_yield_point_does_nothing(monkeypatch):
    monkeypatch.setattr(internals, "get_script_run_ctx", lambda **_: None)
    assert internals.yield_point() is None
