"""The runtime's controls (explorer.serve.adapter.make_settings) in a running script: a control whose
default follows another goes back to its new default when that one changes, a control whose range
shrank takes its default, and a control that does not apply holds its default."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def probe_script():
    from dataclasses import dataclass

    import streamlit as st

    from explorer.kit.controls import UrlControls
    from explorer.kit.settings import check, setting
    from explorer.serve.adapter import make_settings

    @dataclass(frozen=True)
    class Probe:
        task: str = setting("sort", "Task", url="task", options=("sort", "reverse"))
        mask: str = setting("none", "Mask", url="mask", options=("none", "causal", "padding"), widget="radio",
                            default_from=lambda s: "causal" if s.task == "reverse" else "none")
        heads: int = setting(2, "Heads", url="heads", options=(1, 2, 4))
        head: int = setting(1, "Head", url="head", options=lambda s: tuple(range(1, s.heads + 1)))
        pad: int = setting(8, "Pad to", url="pad", bounds=(2, 16, 1), when=lambda s: s.mask == "padding")
        scale: bool = setting(False, "Scale", url="scale", flag=True, enabled=lambda s: s.heads > 1)

    controls = UrlControls("probe")
    settings = make_settings(Probe, controls, st.sidebar)
    check(settings)
    controls.report()
    st.session_state["probe"] = settings


def run(at: AppTest):
    at.run(timeout=30)
    assert not at.exception, at.exception
    return at.session_state["probe"]


def test_dependent_controls_follow_the_fields_before_them():
    at = AppTest.from_function(probe_script)
    settings = run(at)
    assert (settings.task, settings.mask, settings.pad) == ("sort", "none", 8)
    assert [r.label for r in at.sidebar.radio] == ["Mask"] and not at.sidebar.slider  # no padding, no slider

    at.sidebar.selectbox(key="task").set_value("reverse")
    assert run(at).mask == "causal"  # the task's own default
    at.sidebar.radio(key="mask").set_value("padding")
    settings = run(at)
    assert settings.mask == "padding" and at.sidebar.slider(key="pad").value == 8
    at.sidebar.selectbox(key="task").set_value("sort")
    assert run(at).mask == "none"  # a new task: back to its default, so `task=…` reopens the same view

    at.sidebar.select_slider(key="heads").set_value(4)
    run(at)
    at.sidebar.select_slider(key="head").set_value(4)
    assert run(at).head == 4
    at.sidebar.select_slider(key="heads").set_value(2)
    settings = run(at)
    assert settings.head == 1 and at.sidebar.select_slider(key="head").options == ["1", "2"]

    at.sidebar.select_slider(key="heads").set_value(1)
    run(at)
    assert at.sidebar.toggle(key="scale").disabled


def test_a_link_opens_the_dependent_values_it_names():
    at = AppTest.from_function(probe_script)
    at.query_params.update(task="reverse", mask="padding", pad="12", heads="4", head="3")
    settings = run(at)
    assert (settings.task, settings.mask, settings.pad, settings.heads, settings.head) == ("reverse", "padding", 12,
                                                                                             4, 3)
    assert not at.info, "every link value was used"


def test_a_control_whose_link_value_was_refused_keeps_the_address_up_to_date():
    """A refused link value leaves the address, and the control, unbound for the rest of the visit,
    writes every later value there itself: the value's text, nothing at the default, untouched by
    runs that other controls cause (explorer.kit.controls.UrlControls._mirror)."""
    at = AppTest.from_function(probe_script)
    at.query_params.update(mask="padding", pad="99", task=["sort", "reverse"])
    settings = run(at)
    assert (settings.task, settings.pad) == ("sort", 8)
    assert "pad" not in at.query_params and "task" not in at.query_params, dict(at.query_params)
    notes = at.info[0].value
    assert "Pad to" in notes and "Task" in notes, notes

    at.sidebar.slider(key="pad").set_value(12)
    assert run(at).pad == 12 and at.query_params["pad"] == "12", dict(at.query_params)
    at.sidebar.select_slider(key="heads").set_value(4)
    assert run(at).heads == 4 and at.query_params["pad"] == "12", dict(at.query_params)
    at.sidebar.slider(key="pad").set_value(8)
    assert run(at).pad == 8 and "pad" not in at.query_params, dict(at.query_params)
    at.sidebar.selectbox(key="task").set_value("reverse")
    assert run(at).task == "reverse" and at.query_params["task"] == "reverse", dict(at.query_params)


def test_a_refused_control_writes_its_value_against_its_default_of_the_moment():
    """A control whose default follows another (the mask follows the task) is written to the address
    whenever it differs from the default of that run, not the default it had when its link value was
    refused: the link then reopens the same view."""
    at = AppTest.from_function(probe_script)
    at.query_params.update(mask="junk")
    assert run(at).mask == "none" and "mask" not in at.query_params
    at.sidebar.selectbox(key="task").set_value("reverse")
    assert run(at).mask == "causal" and "mask" not in at.query_params, dict(at.query_params)  # its new default
    at.sidebar.radio(key="mask").set_value("none")
    assert run(at).mask == "none" and at.query_params.get("mask") == "none", dict(at.query_params)
