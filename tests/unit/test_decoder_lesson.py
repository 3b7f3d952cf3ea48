"""explorer.lessons.decoder.view: the decoder lesson's declaration — its settings keep the page's link
names, its input parsing says what it changed, and its sentences are chosen by the view they describe
(the stopwatch's by a measured crossover, injected here both ways; the mistake's by the run)."""

import dataclasses

import numpy as np
import pytest

from explorer.analysis.kv_timing import CacheSweep
from explorer.kit.controls import OWN_TEXT as UI_OWN_TEXT
from explorer.kit.settings import check, controls_of
from explorer.lessons.decoder.view import (
    OWN_TEXT,
    ArchitectureSettings,
    DecoderSettings,
    decoder_view,
    mistake_claim,
    mistake_effect,
    timing_claim,
    tokens_of,
    wider_claim,
)

LENGTHS = np.array([2, 4, 8, 16, 32])


def sweep(uncached_ms, cached_ms, lengths=LENGTHS) -> CacheSweep:
    """A measurement, made up: seconds per token at each length."""
    return CacheSweep(64, 2, 4, np.asarray(lengths), np.asarray(uncached_ms) / 1000, np.asarray(cached_ms) / 1000, 5)


def test_the_settings_keep_the_page_link_names():
    urls = {control.url for settings in (DecoderSettings, ArchitectureSettings) for _, control in controls_of(settings)}
    assert urls == {"task", "input_reverse", "text_reverse", "input_sort", "text_sort", "input_induction",
                    "text_induction", "layer", "head", "mistake", "t", "arch_d", "arch_layers", "arch_vocab"}
    assert OWN_TEXT == UI_OWN_TEXT, "the preset pickers' own-text option is the one explorer.serve offers"
    check(DecoderSettings(task="induction", head="2", t=4, mistake="4"))
    for wrong in (DecoderSettings(head="5"), DecoderSettings(task="induction", head="3"), DecoderSettings(t=7),
                  DecoderSettings(mistake="7"), DecoderSettings(input_reverse="Z Z")):
        with pytest.raises(ValueError, match="outside their controls"):
            check(wrong)


def test_typed_input_says_what_it_dropped_cut_or_replaced():
    own = {"input_sort": OWN_TEXT}
    assert tokens_of(DecoderSettings(task="sort", **own, text_sort="B A D G E")) == (tuple("BADGE"), ())
    tokens, problems = tokens_of(DecoderSettings(task="sort", **own, text_sort="B A Z"))
    assert tokens == ("B", "A") and len(problems) == 1 and "Z" in problems[0]
    tokens, problems = tokens_of(DecoderSettings(task="sort", **own, text_sort="B"))
    assert tokens == tuple("PEACH") and "fewer than two" in problems[-1]
    prompt = " ".join(f"t{i}" for i in range(20))
    tokens, problems = tokens_of(DecoderSettings(task="induction", input_induction=OWN_TEXT, text_induction=prompt))
    assert len(tokens) == 16 and "cut to its first 16" in problems[-1]


@pytest.mark.parametrize("length, uncached, cached, name, measured, crossover", [
    (8, [1, 1, 1, 2, 4], [2, 2, 0.5, 0.5, 0.5], "timing: pays", 8, 8),
    (12, [1, 1, 1, 2, 4], [2, 2, 0.5, 0.5, 0.5], "timing: pays", 8, 8),  # between lengths: the one below
    (6, [1, 1, 1, 2, 4], [2, 2, 0.5, 0.5, 0.5], "timing: not yet", 4, 8),
    (3, [1, 1, 1, 2, 4], [0.5, 2, 2, 0.5, 0.5], "timing: mixed", 2, 16),  # a lucky early win, lost again
    (40, [1, 1, 1, 2, 4], [2, 2, 2, 1, 5], "timing: never", 32, None),
    (1, [1, 1, 1, 2, 4], [2, 2, 0.5, 0.5, 0.5], "timing: not yet", 2, 8),  # below the shortest: the shortest
])
def test_the_stopwatch_sentence_follows_the_measured_crossover(length, uncached, cached, name, measured, crossover):
    chosen, values = timing_claim(sweep(uncached, cached), length)
    assert chosen == name
    i = LENGTHS.tolist().index(measured)
    assert values["measured"] == measured and values["crossover"] == crossover and values["length"] == length
    assert values["uncached_ms"] == pytest.approx(uncached[i]) and values["cached_ms"] == pytest.approx(cached[i])
    # What the sentence says holds for the numbers it quotes.
    if name in ("timing: pays", "timing: mixed"):
        assert values["cached_ms"] < values["uncached_ms"]
    if name == "timing: not yet":
        assert values["cached_ms"] >= values["uncached_ms"]


def test_the_wider_model_sentence_follows_its_crossover():
    assert "from T = 8 on" in wider_claim(sweep([1, 1, 1, 2, 4], [2, 2, 0.5, 0.5, 0.5]))
    assert "not faster with the cache even at T = 32" in wider_claim(sweep([1, 1, 1, 2, 4], [2, 2, 2, 1, 5]))


def test_the_step_line_says_the_token_the_view_shows_at_a_put_in_mistake():
    """Step 4 of the lesson: the sort model is made to write B instead of C at step 2."""
    view = decoder_view(DecoderSettings(task="sort", t=2, mistake="2"))
    claim = mistake_claim(view)
    assert claim["written"] == view.run.written[1] == "B" and claim["own"] == view.run.greedy[1] == "C"
    assert claim["own_p"] == pytest.approx(float(view.run.probs[1].max()))
    assert mistake_claim(dataclasses.replace(view, settings=DecoderSettings(task="sort", t=3, mistake="2"))) is None
    assert mistake_claim(decoder_view(DecoderSettings(task="sort", t=2))) is None
    effect = mistake_effect(view)
    assert (effect["free_wrong"], effect["later"], effect["forced_wrong"]) == (4, 4, 0)
    assert effect["free_loss"] == pytest.approx(float(np.sum(view.run.losses[2:])))
