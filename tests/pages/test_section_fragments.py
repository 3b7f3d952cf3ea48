"""AppTest: sections whose controls affect only themselves are fragments, with their controls beside
them (not in the sidebar, which a fragment cannot use).  Moving such a control redraws its section; the
controls stay in the link, and a lesson step that hides the figures does not call them unknown."""

import json

from harness.apptest import assert_no_exception, info_text, run_page


def chart_keys(at) -> list[str]:
    return [el.proto.id.rsplit("-", 1)[-1] for el in at.get("plotly_chart")]


def chart(at, key: str) -> dict:
    return next(json.loads(el.proto.spec) for el in at.get("plotly_chart") if el.proto.id.endswith(key))


def sidebar_keys(at) -> set[str]:
    return {w.key for kind in ("slider", "select_slider", "radio", "selectbox", "toggle")
            for w in getattr(at.sidebar, kind)}


def test_gradients_dependency_controls_sit_beside_their_section_and_redraw_it():
    at = run_page("explorer/lessons/gradients/gradients.py", {"T": "16", "seeds": "1"})
    assert not {"dep_T", "dep_kind"} & sidebar_keys(at)
    assert not at.info
    before = chart(at, "dependency")
    at.select_slider(key="dep_T").set_value(8).run()
    assert_no_exception(at)
    after = chart(at, "dependency")
    assert after != before and len(after["data"][0]["z"]["shape"].split(",")) == 2
    assert {"gradient_strip", "unrolled", "dependency"} <= set(chart_keys(at)), "the rest of the page is still there"


def test_gradients_bad_dependency_link_value_is_still_reported():
    at = run_page("explorer/lessons/gradients/gradients.py", {"T": "16", "seeds": "1", "dep_T": "500"})
    assert "Sequence length for the matrices" in info_text(at)


def test_hidden_step_does_not_call_section_controls_unknown():
    at = run_page("explorer/lessons/gradients/gradients.py", {"step": "1", "dep_T": "16", "dep_kind": "lstm"})
    assert "not a setting" not in info_text(at)


def test_hidden_positions_step_does_not_call_lower_section_controls_unknown():
    at = run_page("explorer/lessons/positions/positions.py",
                  {"step": "1", "scheme": "ALiBi", "alibi_heads": "8", "seed": "2"})
    assert "not a setting" not in info_text(at)


def test_decoder_architecture_controls_sit_beside_their_section_and_redraw_it():
    at = run_page("explorer/lessons/decoder/decoder.py")
    assert not {"arch_d", "arch_layers", "arch_vocab"} & sidebar_keys(at)
    before = chart(at, "architectures")
    at.slider(key="arch_layers").set_value(4).run()
    assert_no_exception(at)
    assert chart(at, "architectures") != before
    assert "step_figure" in chart_keys(at)


def test_real_split_control_sits_beside_the_it_map():
    at = run_page("explorer/lessons/real/real.py")
    assert "split" not in sidebar_keys(at)
    before = chart(at, "referent_map")
    at.radio(key="split").set_value("“it” means the object").run()
    assert_no_exception(at)
    assert chart(at, "referent_map") != before


def test_positions_t5_note_is_beside_its_control():
    at = run_page("explorer/lessons/positions/positions.py",
                  {"scheme": "T5", "t5_buckets": "64", "t5_max_distance": "16"})
    assert "32 is used instead of 16" in info_text(at)
    at.selectbox(key="scheme").set_value("ALiBi").run()
    assert_no_exception(at)
    assert "alibi_bias" in chart_keys(at) and "matrix" in chart_keys(at)
