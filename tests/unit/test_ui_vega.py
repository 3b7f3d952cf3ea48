"""explorer.kit.controls.altair_chart: a chart drawn from its spec as the lesson runtime makes it once per setting
(`vega_lite_spec`: its data already Arrow bytes) is the element Streamlit itself makes from the chart
(the same spec, its words in ink, and the same Arrow dataset)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

SCRIPT = """
import streamlit as st

from explorer.lessons.depth.figures import depth_chart, depth_frame
from explorer.figures.ink import vega_inked
from explorer.kit.controls import altair_chart, vega_lite_spec
from explorer.lessons.depth.view import depth_curves

frame = depth_frame(depth_curves(4, 16, 4, 2))
spec = vega_lite_spec(depth_chart(frame))
altair_chart(spec)  # ours: the spec made once, its dataset already Arrow
altair_chart(spec)  # the same spec again (a later run)
st.vega_lite_chart(vega_inked(depth_chart(frame).to_dict(validate=False)), width="stretch")  # Streamlit's own
st.session_state["spec"] = spec
"""


def test_a_chart_drawn_from_its_prepared_spec_is_the_chart_streamlit_would_send():
    at = AppTest.from_string(SCRIPT, default_timeout=60).run()
    assert not at.exception, at.exception
    ours, again, theirs = (element.proto for element in at.get("vega_lite_chart"))
    for proto in (ours, again):
        assert proto.spec == theirs.spec
        assert [(d.name, d.data.data) for d in proto.datasets] == [(d.name, d.data.data) for d in theirs.datasets]
    assert len(theirs.datasets) == 1 and len(theirs.datasets[0].data.data) > 1000
    spec = at.session_state["spec"]
    assert all(isinstance(rows, bytes) for rows in spec["datasets"].values()), "converted once, when made"
