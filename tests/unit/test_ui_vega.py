"""explorer.ui.altair_chart: a chart drawn from its cached spec, whose data is already Arrow bytes, is
the element Streamlit itself makes from the chart (the same spec and the same Arrow dataset)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

SCRIPT = """
import numpy as np
import pandas as pd
import streamlit as st

from explorer.figures.gradients import gradient_chart, gradient_frame
from explorer.ui import altair_chart
from explorer.ui.controls import _vega_lite_spec
from explorer.views.gradients import gradient_curves, path_lengths

curves = gradient_curves(16, 8, "default", 1.0, 4, 2)
paths = {kind: path_lengths(16, kind) for kind in curves.log10_norms}
frame = gradient_frame(curves, {"rnn": "tanh RNN", "transformer": "causal attention"}, paths)
altair_chart(gradient_chart, frame)  # ours: the spec cached, its dataset already Arrow
altair_chart(gradient_chart, frame)  # the same, from the cache
st.vega_lite_chart(gradient_chart(frame).to_dict(validate=False), width="stretch")  # Streamlit's own conversion
st.session_state["cached"] = _vega_lite_spec("explorer.figures.gradients", "gradient_chart", (frame,), {})
"""


def test_a_cached_chart_is_the_chart_streamlit_would_send():
    at = AppTest.from_string(SCRIPT, default_timeout=60).run()
    assert not at.exception, at.exception
    ours, again, theirs = (element.proto for element in at.get("vega_lite_chart"))
    for proto in (ours, again):
        assert proto.spec == theirs.spec
        assert [(d.name, d.data.data) for d in proto.datasets] == [(d.name, d.data.data) for d in theirs.datasets]
    assert len(theirs.datasets) == 1 and len(theirs.datasets[0].data.data) > 1000
    cached = at.session_state["cached"]
    assert all(isinstance(rows, bytes) for rows in cached["datasets"].values()), "converted once, when cached"
