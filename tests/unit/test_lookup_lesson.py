"""The lookup lesson on the runtime: its view and the facts its sentences name, against a direct
numpy computation over many settings; every step's words hold for the view at its settings; the
page shows each reveal with the view's numbers; the preset buttons and the notes about typed text."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from explorer.analysis.lookup import EXAMPLE_KEYS, EXAMPLE_VALUES
from explorer.kit.settings import controls_of
from explorer.kit.steps import load_steps
from explorer.lessons.lookup.view import LookupSettings, lookup_facts, lookup_view, read_dictionary
from harness.apptest import info_text, page_test, run_page

PAGE = "explorer/lessons/lookup/lookup.py"


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / e.sum()


def sampled_settings(count: int = 40) -> list[LookupSettings]:
    """The defaults, the extremes of every slider, √d on and off, and random settings between."""
    rng = random.Random(5)
    fixed = [LookupSettings(), LookupSettings(q1=-10.0, q2=10.0, q3=-10.0, q4=10.0, temperature=0.1),
             LookupSettings(q1=10.0, q2=10.0, q3=10.0, q4=10.0, temperature=10.0, scale=True),
             LookupSettings(q1=0.0, q2=0.0, q3=0.0, q4=0.0), LookupSettings(keys="1 0 0 0; 0 1 0 0", values="5; 7")]
    return fixed + [LookupSettings(*(round(rng.uniform(-10, 10), 1) for _ in range(4)), scale=rng.random() < 0.5,
                                   temperature=round(rng.choice([0.1, 10.0, rng.uniform(0.1, 10)]), 1))
                    for _ in range(count - len(fixed))]


@pytest.mark.parametrize("settings", sampled_settings(), ids=lambda s: f"{s.query}-{s.scale}-{s.temperature}")
def test_the_view_and_its_facts_equal_a_direct_computation(settings):
    keys, values = read_dictionary(settings).keys, read_dictionary(settings).values
    factor = (0.5 if settings.scale else 1.0) / settings.temperature  # √4 = 2
    scores = keys @ settings.query
    weights = softmax(scores * factor)
    view, facts = lookup_view(settings), lookup_facts(lookup_view(settings))
    np.testing.assert_allclose(view.result.weights, weights, atol=1e-12)
    np.testing.assert_allclose(view.halved.weights, softmax(scores / 2 * factor), atol=1e-12)
    for j, w in enumerate(weights):
        assert facts[f"w{j + 1}"] == pytest.approx(w, abs=1e-12)
    assert facts["output"] == "[" + ", ".join(f"{x:.2f}" for x in weights @ values) + "]"
    best = int(np.argmax(scores))
    assert facts["best"] == f"k{best + 1}" and facts["best_weight"] == pytest.approx(weights[best])
    second = sorted(scores)[-2] if len(scores) > 1 else scores[best]
    assert facts["lead"] == pytest.approx(scores[best] - second)
    assert facts["scaled_lead"] == pytest.approx((scores[best] - second) * factor)
    assert not view.result.weights.flags.writeable, "shared between sessions: read-only"


STEP_WORDS = {  # what each step's words say, as a predicate on the facts at its settings
    "The lecture's lookup": lambda f: f["best"] == "k2" and f["w2"] < 0.5 and max(f["w3"], f["w5"]) < 0.005
    and f["mix"].count("·v") == 3,
    "A hot softmax": lambda f: min(f["w3"], f["w5"]) >= 0.005 and max(f["w1"], f["w2"], f["w4"]) < 0.3,
    "A cold softmax": lambda f: f["best"] == "k2" and f["runner"] == "k1" and f["w2"] > 0.95,
    "A longer query": lambda f: f["w2"] > f["w2_half"] and f["scores"] == "4.0, 4.8, −20.0, 3.6 and −25.0",
    "Ask with a key: the dictionary is back": lambda f: f["best"] == "k3" and f["best_weight"] > 0.99
    and f["output"] == "[0.00, 0.00, 1.00]" and f["runner"] == "k1",
    "Dividing by √d": lambda f: f["best"] == "k3" and f["runner"] == "k1" and f["scaled_lead"] == f["lead"] / 2,
    "A query that matches nothing": lambda f: all(f[f"s{j}"] == "0.0" for j in range(1, 6)) and f["n"] == 5,
}
STEPS = load_steps("lookup")


def step_settings(step) -> LookupSettings:
    return LookupSettings(**step.settings)


@pytest.mark.parametrize("number", range(1, len(STEPS) + 1))
def test_every_step_says_what_its_view_shows(number):
    step = STEPS[number - 1]
    facts = lookup_facts(lookup_view(step_settings(step)))
    assert STEP_WORDS[step.title](facts), step.title
    if number == 1:  # the question names the scores it starts from
        assert "2.0, 2.4, −10, 1.8 and −12.5" in step.predict and facts["scores"] == "2.0, 2.4, −10.0, 1.8 and −12.5"
    if number == 2:
        assert "k3 and k5, the two keys that scored −10 and −12.5" in step.predict
        assert (facts["s3"], facts["s5"]) == ("−10.0", "−12.5")
    if number == 3:
        assert "leads k1 by only 0.4" in step.predict and facts["lead"] == pytest.approx(0.4)


def test_a_longer_query_is_explained_by_the_scores_not_by_the_square_root_of_d():
    """#28 item 4: doubling the query is a temperature of 0.5; √d offsets growth with the dimension d (said by
    the √d step's question: the longer query's answer fits two lines presenting, #61)."""
    step = next(s for s in STEPS if s.title == "A longer query")
    settings = step_settings(step)
    doubled = lookup_view(settings).result.weights
    as_temperature = lookup_view(dataclasses.replace(settings, q1=-1.0, q2=2.0, q3=-2.0, q4=-2.0, temperature=0.5))
    np.testing.assert_allclose(doubled, as_temperature.result.weights, atol=1e-12)
    sqrt_d = next(s for s in STEPS if s.claim == "sqrt_d_softens")
    assert "dimension" in sqrt_d.predict and "unit variance" in sqrt_d.predict
    assert "√d" not in step.reveal and "Longer vectors give larger dot products" not in step.reveal


def test_the_page_fills_each_reveal_from_its_view():
    for number, step in enumerate(STEPS, start=1):
        at = page_test(PAGE, {"step": str(number)}).run()
        at.button(key="lesson_next").click().run()
        settings = step_settings(step)
        expected = step.reveal.format_map({**lookup_facts(lookup_view(settings)),
                                           "as_temperature": settings.temperature / 2})
        assert sum(expected in box.value for box in at.success) == 1, step.title


def test_presets_move_the_query_to_the_nearest_slider_value():
    at = run_page(PAGE, {"keys": "50, -1.234, 0.06, 3\n1, 2, 3, 4", "values": "1; 2"})
    at.button(key="copy_k1").click().run()
    assert [at.slider(key=f"q{i}").value for i in range(1, 5)] == [10.0, -1.2, 0.1, 3.0]
    assert "copy_k3" not in [b.key for b in at.button], "one button per key"
    assert not at.info


def test_text_that_cannot_be_read_is_noted_and_the_lecture_shown():
    at = run_page(PAGE, {"keys": "1, 2, 3, **x**"})
    assert "Keys" in info_text(at) and "**x**" not in info_text(at), "the typed text is escaped"
    np.testing.assert_array_equal(read_dictionary(LookupSettings(keys="1, 2, 3, **x**")).keys, EXAMPLE_KEYS)
    assert read_dictionary(LookupSettings(keys="1 0 0 0; 0 1 0 0")).values.shape == (2, 2)  # one-hot
    assert read_dictionary(LookupSettings()).notes == ()
    np.testing.assert_array_equal(read_dictionary(LookupSettings()).values, EXAMPLE_VALUES)


def test_control_headings_start_their_groups_in_the_sidebar():
    at = run_page(PAGE)
    assert [h.value for h in at.sidebar.header] == ["Query", "Dictionary", "Sharpness"]


def test_nearest_keeps_a_preset_within_its_control():
    control = dict(controls_of(LookupSettings))["q1"]
    assert [control.nearest(x) for x in (50, -50, 1.26, -2.94, 0.0)] == [10.0, -10.0, 1.3, -2.9, 0.0]
    assert all(control.allows(control.nearest(x)) for x in np.linspace(-20, 20, 97))
    flag = dict(controls_of(LookupSettings))["scale"]
    assert flag.nearest(True) is True


def test_a_revealed_step_whose_facts_the_view_no_longer_has_says_so():
    """Step 1 names k5's weight; with three keys typed after the reveal there is none to name."""
    at = page_test(PAGE, {"step": "1"}).run()
    at.button(key="lesson_next").click().run()
    at.text_area(key="keys").input("1, 0, 0, 0\n0, 1, 0, 0\n0, 0, 1, 0").run()
    assert not at.exception
    assert any("moved away from this step's settings" in box.value for box in at.info) and not at.success
