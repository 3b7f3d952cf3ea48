"""Pins every Streamlit internal explorer/kit/internals.py uses, by name: a Streamlit upgrade that
moves or changes one fails here, with the name of what moved.  What they do together is tested
end to end elsewhere: the yield point in test_ui_heavy_work.py, the fragment timer and fragment
runs against a real server in tests/system/test_below_the_fold.py, the Arrow bytes in test_ui_vega.py."""

from __future__ import annotations

import dataclasses
import inspect
import io

import pandas as pd
import pyarrow as pa
import streamlit as st

from explorer.kit import internals


def test_the_script_run_context_has_what_the_internals_read():
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

    assert "suppress_warning" in inspect.signature(get_script_run_ctx).parameters
    fields = {f.name for f in dataclasses.fields(ScriptRunContext)}
    assert {"fragment_ids_this_run", "script_requests", "session_id"} <= fields
    assert callable(ScriptRunContext.enqueue)
    assert get_script_run_ctx(suppress_warning=True) is None  # outside a run
    assert internals.in_fragment_run() is False


def test_the_thread_state_names_the_running_fragment():
    from streamlit.runtime.scriptrunner_utils.script_run_context import FragmentThreadState, ThreadState

    assert callable(ThreadState.get)
    assert "fragment_id" in {f.name for f in dataclasses.fields(FragmentThreadState)}
    internals.stop_fragment_timer()  # outside a run: nothing to stop, no error


def test_the_message_that_stops_a_fragment_timer_still_exists():
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    message = ForwardMsg()
    message.stop_auto_rerun.fragment_ids.append("abc")
    assert message.WhichOneof("type") == "stop_auto_rerun"
    assert list(ForwardMsg.FromString(message.SerializeToString()).stop_auto_rerun.fragment_ids) == ["abc"]


def test_script_requests_and_their_exceptions():
    from streamlit.runtime.scriptrunner_utils.exceptions import RerunException, StopException
    from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType

    assert {"RERUN", "STOP"} <= set(ScriptRequestType.__members__)
    assert RerunException("data").rerun_data == "data"
    assert issubclass(StopException, BaseException)
    from explorer.kit.internals import interrupted

    assert interrupted(RerunException("data")) and interrupted(StopException())
    assert not interrupted(ValueError("a fault")) and not interrupted(KeyboardInterrupt())


def test_arrow_bytes_round_trip():
    rows = pd.DataFrame({"layer": [0, 1, 2], "log10 norm": [-1.5, -0.25, 0.0]})
    table = pa.ipc.open_stream(io.BytesIO(internals.arrow_bytes(rows))).read_all()
    assert table.to_pandas()[["layer", "log10 norm"]].equals(rows)


def test_the_errors_are_streamlits_own():
    assert issubclass(internals.StreamlitAPIException, Exception)
    assert internals.StreamlitPageNotFoundError.__module__.startswith("streamlit")
    assert st.query_params is not None  # the public API the controls use beside them
