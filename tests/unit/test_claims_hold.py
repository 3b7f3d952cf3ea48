"""Claims are code: every sentence a lesson on the runtime states about its figure holds for the view
it stands beside, over every step and 30 settings per lesson (harness/claims.py), and a false
claim planted in a lesson is caught."""

from __future__ import annotations

import dataclasses
import re

import pytest

from explorer.kit.claims import Claim, fill, power_of_ten, typed_numbers
from explorer.kit.steps import load_steps
from explorer.lessons.attention.spec import ATTENTION
from explorer.lessons.cost.spec import COST
from explorer.lessons.decoder.spec import DECODER, DECODER_ARCHITECTURES, DECODER_CACHE
from explorer.lessons.depth.spec import DEPTH
from explorer.lessons.encoders.spec import ENCODER_BIRNN, ENCODER_SEARCH, ENCODER_SIMILARITY, ENCODER_SINKS, ENCODERS
from explorer.lessons.gradients.spec import GRADIENT_DEPENDENCY, GRADIENTS
from explorer.lessons.length.spec import LENGTH, LENGTH_GQA, LENGTH_MEMORY, LENGTH_TILED, LENGTH_WINDOW
from explorer.lessons.lookup.spec import LOOKUP
from explorer.lessons.positions.spec import POSITION_MODELS, POSITION_RELATIVE, POSITIONS
from explorer.lessons.real.spec import REAL, REAL_REFERENT, REAL_TABLES
from harness.claims import problems

CLAIMED = {  # lesson -> its sections with settings of their own
    DEPTH: {},
    GRADIENTS: {"dependency": GRADIENT_DEPENDENCY},
    LOOKUP: {},
    COST: {},
    POSITIONS: {"models": POSITION_MODELS, "relative": POSITION_RELATIVE},
    REAL: {"referent": REAL_REFERENT, "positions": REAL_TABLES},
    ATTENTION: {},
    DECODER: {"cache": DECODER_CACHE, "architectures": DECODER_ARCHITECTURES},
    ENCODERS: {"similarity": ENCODER_SIMILARITY, "search": ENCODER_SEARCH, "sinks": ENCODER_SINKS,
               "birnn": ENCODER_BIRNN},
    LENGTH: {"memory": LENGTH_MEMORY, "gqa": LENGTH_GQA, "tiled": LENGTH_TILED, "window": LENGTH_WINDOW},
}


# lessons whose steps' claims are also checked around each step (every control at its extremes), where
# the random samples seldom meet a shipped trained model
AROUND = {ATTENTION, DECODER, ENCODERS, LENGTH}


@pytest.mark.parametrize("lesson", list(CLAIMED), ids=lambda lesson: lesson.page)
def test_every_claim_holds_where_it_is_shown(lesson):
    assert problems(lesson, CLAIMED[lesson], near=lesson in AROUND) == []


def test_a_planted_false_claim_is_caught():
    steps = load_steps("depth")
    # The bare stack at two layers does not lose ten orders of magnitude: a claim that says so fails.
    false = dataclasses.replace(DEPTH, claims={**DEPTH.claims, "two_layers": Claim(
        lambda s: DEPTH.claims["bare_collapses"].holds(s), DEPTH.claims["two_layers"].values)})
    found = problems(false, {}, n=2, steps=steps[:1])
    assert found == ["depth step 1 (Two layers: does the wiring matter yet?): claim 'two_layers' does not hold "
                     "at the step's settings"]
    # A number typed into an answer instead of read from the view is caught too.
    typed = dataclasses.replace(steps[1], reveal=steps[1].reveal.replace("{bare:.1f}", "14"))
    assert any("typed numbers in the answer: ['14']" in p for p in problems(DEPTH, {}, n=2, steps=[typed]))
    # So is an answer with no claim, and a claim that names a number its view does not give.
    assert any("no claim" in p for p in problems(DEPTH, {}, n=2, steps=[dataclasses.replace(steps[0], claim="")]))
    broken = dataclasses.replace(steps[0], reveal=steps[0].reveal + " {nothing}")
    assert any("does not fill" in p for p in problems(DEPTH, {}, n=2, steps=[broken]))


def test_typed_numbers_are_the_digits_outside_fields():
    assert typed_numbers("loses {bare:.1f} orders, about 14 in all; x₁₅ at T = {T}") == ["14"]
    assert typed_numbers("More than 10,000×, −0.5 and 3.2") == ["10,000", "−0.5", "3.2"]
    assert typed_numbers("layer_2 d_model x1 O(T²) $b^{2i/d}$ layer 0, head 3, t = 48") == []


def test_fill_and_power_of_ten():
    assert fill("{a:.1f} and {b}", {"a": 1.25, "b": "x"}) == "1.2 and x"
    with pytest.raises(KeyError, match=re.escape("no value for {c}")):
        fill("{c}", {})
    assert power_of_ten(1e-10) == "10⁻¹⁰" and power_of_ten(2e8) == "10⁸" and power_of_ten(1.0) == "1"
    assert power_of_ten(12.0) == "10"  # as the log axes print them (figures.logscale.power_label)
