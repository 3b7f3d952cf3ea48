"""AppTest: the 'Attention as a lookup' page, driven through its controls and its URL."""

import numpy as np
import pytest

from explorer.analysis.lookup import EXAMPLE_KEYS
from harness.apptest import heatmap_z, info_text, plotly_array_1d, plotly_figures, run_page

PAGE = "explorer/lessons/lookup/lookup.py"
LECTURE_SCORES = [2.0, 2.4, -10.0, 1.8, -12.5]
LECTURE_WEIGHTS = [0.30, 0.45, 0.00, 0.25, 0.00]


def softmax(x):
    e = np.exp(np.asarray(x) - np.max(x))
    return e / e.sum()


def scores_and_weights(at):
    bars = plotly_figures(at)[:2]
    return plotly_array_1d(bars[0]["data"][0]["x"]), plotly_array_1d(bars[1]["data"][0]["x"])


def test_opens_on_the_lecture_example():
    at = run_page(PAGE)
    scores, weights = scores_and_weights(at)
    np.testing.assert_allclose(scores, LECTURE_SCORES, atol=1e-9)
    np.testing.assert_allclose(np.round(weights, 2), LECTURE_WEIGHTS)
    assert any("[0.55, 0.70, 0.00]" in md.value for md in at.markdown)
    assert not at.info, "a clean URL must not produce a note"


def test_stacked_queries_give_a_row_stochastic_matrix_with_keys_finding_themselves():
    at = run_page(PAGE)
    weights = heatmap_z(at, index=2)
    assert weights.shape == (1 + len(EXAMPLE_KEYS), len(EXAMPLE_KEYS))
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-9)
    np.testing.assert_allclose(weights[0], softmax(LECTURE_SCORES), atol=1e-9)
    assert np.all(np.diag(weights[1:]) > 0.99), "a query equal to a key should retrieve that key"
    assert plotly_figures(at)[2]["data"][0]["colorbar"]["title"]["text"] == "weight"


def test_temperature_flattens_or_sharpens_the_weights():
    at = run_page(PAGE)
    at.slider(key="temperature").set_value(10.0).run()
    _, hot = scores_and_weights(at)
    np.testing.assert_allclose(hot, softmax(np.array(LECTURE_SCORES) / 10.0), atol=1e-9)
    assert hot.max() < 0.3
    at.slider(key="temperature").set_value(0.1).run()
    _, cold = scores_and_weights(at)
    np.testing.assert_allclose(cold, softmax(np.array(LECTURE_SCORES) / 0.1), atol=1e-9)
    assert cold[1] > 0.97  # k2 has the highest score and takes nearly everything


def test_sqrt_d_scaling_halves_the_scores_for_four_dimensions():
    at = run_page(PAGE)
    at.toggle(key="scale").set_value(True).run()
    _, weights = scores_and_weights(at)
    np.testing.assert_allclose(weights, softmax(np.array(LECTURE_SCORES) / 2.0), atol=1e-9)
    assert any("0.5" in c.value for c in at.caption)


def test_copying_a_key_into_the_query_retrieves_its_value():
    at = run_page(PAGE)
    at.button(key="copy_k3").click().run()
    np.testing.assert_allclose([at.slider(key=f"q{i}").value for i in range(1, 5)], EXAMPLE_KEYS[2])
    _, weights = scores_and_weights(at)
    assert weights[2] > 0.99
    assert any("= **[0.00, 0.00, 1.00]**" in md.value for md in at.markdown)
    at.button(key="lecture_query").click().run()
    scores, _ = scores_and_weights(at)
    np.testing.assert_allclose(scores, LECTURE_SCORES, atol=1e-9)


def test_query_sliders_change_the_scores():
    at = run_page(PAGE)
    at.slider(key="q1").set_value(1.0).run()
    scores, _ = scores_and_weights(at)
    np.testing.assert_allclose(scores, EXAMPLE_KEYS @ np.array([1.0, 2.0, -2.0, -2.0]), atol=1e-9)


def test_editing_the_keys_changes_the_dictionary_and_mismatched_values_are_explained():
    at = run_page(PAGE)
    at.text_area(key="keys").input("1, 0, 0, 0\n0, 1, 0, 0\n0, 0, 1, 0").run()
    scores, weights = scores_and_weights(at)
    np.testing.assert_allclose(scores, [-1.0, 2.0, -2.0], atol=1e-9)
    assert len(weights) == 3
    assert "Values" in info_text(at) and "expected 3 rows" in info_text(at)


@pytest.mark.parametrize(
    "params, expected_in_note",
    [
        ({"q1": "abc"}, "q1"),
        ({"temperature": "50"}, "Temperature"),
        ({"scale": "maybe"}, "Divide scores"),
        ({"keys": "1, 2; x"}, "Keys"),
        ({"keys": "1," * 2000}, "Keys"),
        ({"values": "1e999"}, "Values"),
        ({"unknown": "1"}, "unknown"),
    ],
)
def test_bad_url_values_fall_back_to_defaults_with_a_note(params, expected_in_note):
    at = run_page(PAGE, params)
    assert expected_in_note in info_text(at)
    scores, _ = scores_and_weights(at)
    np.testing.assert_allclose(scores, LECTURE_SCORES, atol=1e-9)


def test_valid_url_values_reopen_the_view():
    at = run_page(PAGE, {"q1": "1.0", "temperature": "2.5", "scale": "true"})
    assert not at.info
    assert at.slider(key="q1").value == 1.0 and at.slider(key="temperature").value == 2.5
    scores, weights = scores_and_weights(at)
    np.testing.assert_allclose(weights, softmax(scores / 2.0 / 2.5), atol=1e-9)


def _said(at) -> str:
    return " ".join(" ".join(m.value.split()) for m in at.markdown)


def test_the_lead_ties_almost_all_of_the_weight_to_a_wide_lead_in_score_not_to_a_close_match():
    # The closest match there is, the query equal to k3, gets about half the weight at temperature 10.
    at = run_page(PAGE, {"temperature": "10"})
    at.button(key="copy_k3").click().run()
    _, weights = scores_and_weights(at)
    assert weights[2] == weights.max() < 0.6
    said = _said(at)
    assert "A close match takes almost all of the weight" not in said
    assert "A key whose score beats every other by a wide margin takes almost all of the weight" in said


def test_the_weight_matrix_says_when_a_key_finds_itself_not_that_distinct_keys_do():
    # Four distinct keys; k1 as the query scores k2 (3) above itself (1).
    at = run_page(PAGE, {"keys": "1, 0, 0, 0; 3, 1, 0, 0; 0, 0, 1, 0; 0, 0, 0, 1", "values": "1; 2; 3; 4"})
    weights = heatmap_z(at, index=2)
    assert weights[1].argmax() == 1, "k1 as the query picks k2"
    said = _said(at)
    assert "When the keys are distinct enough, those rows light up on the diagonal" not in said
    assert "not always otherwise, however distinct the keys. With these keys, 3 of the 4 keys find themselves" in said


@pytest.mark.parametrize("params", [{}, {"present": "1"}], ids=["desk", "presenting"])
def test_the_query_and_the_buttons_the_steps_use_stand_on_the_page_above_the_bars(params):
    """Presenting, the sidebar is folded: q, the sharpness and the k buttons (step 5 presses k3) are drawn
    in the page, above the bars, and the buttons still move the sidebar's sliders."""
    at = run_page(PAGE, params)
    keys = {"lecture_query", *(f"copy_k{j}" for j in range(1, 6))}
    assert keys <= {b.key for b in at.main.button}
    assert not keys & {b.key for b in at.sidebar.button}, "each button once, on the page"
    said = [md.value for md in at.main.markdown]
    assert any("**q** = [−1.0, 2.0, −2.0, −2.0] · temperature 1" in text for text in said), said
    at.button(key="copy_k3").click().run()
    assert any("**q** = [3.0, 1.0, 2.5, 2.0]" in md.value for md in at.main.markdown)
    np.testing.assert_allclose([at.slider(key=f"q{i}").value for i in range(1, 5)], EXAMPLE_KEYS[2])
    at.toggle(key="scale").set_value(True).run()
    assert any("scores ÷ √d" in md.value for md in at.main.markdown)


def test_the_bars_take_a_phones_width():
    """On a phone the scores and weights fit the screen (at 600 px the scores' bars scrolled out of sight,
    under an answer quoting k1, k2 and k4); the weight matrix keeps a wide chart's 600 px."""
    styles = [element.proto.body for element in run_page(PAGE).get("html")]
    for key in ("scores", "weights"):
        assert any(f".st-key-{key} " in style and "min-width: 0px" in style for style in styles), key
    assert not any(".st-key-stacked_weights " in style for style in styles)
