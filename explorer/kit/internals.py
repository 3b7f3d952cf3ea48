"""Every use of Streamlit's non-public modules, in this one file (tests/unit/test_streamlit_internals.py
pins each of them, so a Streamlit upgrade that moves one fails there first, by name).

Each is here because Streamlit has no public API for it:

    yield_point()          stop this run if its session asked for a newer one (what every st.* call
                           does), raised while a run waits for the work pool
    in_fragment_run()      is this run a fragment's own rerun?
    stop_fragment_timer()  stop the browser's timer of the fragment running now (a one-off follow-up)
    interrupted(error)     is this exception Streamlit stopping the run for a newer one (not a fault)?
    arrow_bytes(rows)      Streamlit's own conversion of chart data to Arrow, done once per setting
    StreamlitAPIException, StreamlitPageNotFoundError   the errors Streamlit raises, to catch them
"""

from __future__ import annotations

from streamlit.dataframe_util import convert_anything_to_arrow_bytes
from streamlit.errors import StreamlitAPIException, StreamlitPageNotFoundError
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException, StopException
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

__all__ = ["StreamlitAPIException", "StreamlitPageNotFoundError", "arrow_bytes", "in_fragment_run",
           "interrupted", "stop_fragment_timer", "yield_point"]


def yield_point() -> None:
    """Stop this run if its session asked for a newer one: raise Streamlit's own rerun or stop
    exception, as its yield point at every st.* call does (no-op outside a script run)."""
    ctx = get_script_run_ctx(suppress_warning=True)
    request = ctx.script_requests.on_scriptrunner_yield() if ctx is not None else None
    if request is None:
        return
    if request.type == ScriptRequestType.RERUN:
        raise RerunException(request.rerun_data)
    raise StopException()


def interrupted(error: BaseException) -> bool:
    return isinstance(error, (RerunException, StopException))


def in_fragment_run() -> bool:
    ctx = get_script_run_ctx(suppress_warning=True)
    return bool(ctx is not None and ctx.fragment_ids_this_run)


def stop_fragment_timer() -> None:
    """Tell the browser to stop the running fragment's `run_every` timer."""
    ctx = get_script_run_ctx(suppress_warning=True)
    fragment_id = ThreadState.get().fragment_id if ctx is not None else None  # set up by a run only
    if fragment_id:
        message = ForwardMsg()
        message.stop_auto_rerun.fragment_ids.append(fragment_id)
        ctx.enqueue(message)


def arrow_bytes(rows) -> bytes:
    """Chart data as the Arrow bytes Streamlit itself would send."""
    return convert_anything_to_arrow_bytes(rows)
