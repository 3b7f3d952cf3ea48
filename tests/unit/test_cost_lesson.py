"""The cost lesson on the runtime: the facts its steps name against closed forms over many sizes;
every step's words hold for the view at its settings; the page fills each reveal from its view;
the stopwatch is measured once per width and attempt, and "Measure again" measures anew."""

from __future__ import annotations

import random

import numpy as np
import pytest

from explorer.analysis.timing import Timing
from explorer.kit.steps import load_steps
from explorer.lessons.cost import view as cost_lesson
from explorer.lessons.cost.view import CostSettings, cost_facts, cost_view
from explorer.serve import runtime
from harness.apptest import page_test, run_page, vega_data

PAGE = "explorer/lessons/cost/cost.py"


def sampled_settings(count: int = 36) -> list[CostSettings]:
    rng = random.Random(3)
    fixed = [CostSettings(), CostSettings(T=2, d=8, k=2, n_layers=1), CostSettings(T=4096, d=1024, k=9, n_layers=24)]
    return fixed + [CostSettings(T=rng.randint(2, 4096), d=rng.choice((8, 16, 32, 64, 128, 256, 512, 1024)),
                                 k=rng.randint(2, 9), n_layers=rng.randint(1, 24)) for _ in range(count - len(fixed))]


@pytest.mark.parametrize("s", sampled_settings(), ids=lambda s: f"T{s.T}-d{s.d}-k{s.k}-N{s.n_layers}")
def test_the_facts_equal_closed_forms(s):
    T, d, N = s.T, s.d, s.n_layers
    facts = cost_facts(cost_view(s))
    assert facts["rnn_mult"] == N * 2 * T * d * d  # input and state, each d × d per position
    assert facts["att_mult"] == N * (4 * T * d * d + 2 * T * T * d)  # four projections; QKᵀ and weights × V
    assert facts["rnn_params"] == N * 2 * (d * d + d) and facts["att_params"] == N * 4 * (d * d + d)
    assert (facts["rnn_steps"], facts["att_steps"]) == (T + N - 1, N)
    assert (facts["rnn_path"], facts["att_path"]) == (T - 1 + N, N)
    assert facts["ratio"] == pytest.approx(facts["att_mult"] / facts["rnn_mult"])
    assert facts["projection_share"] == pytest.approx(4 * T * d * d / (4 * T * d * d + 2 * T * T * d))
    assert facts["term_ratio"] == pytest.approx(d / T)


STEPS = load_steps("cost")


def step_settings(step) -> CostSettings:
    values = dict(step.settings)
    return CostSettings(T=values["T"], d=values["d"], k=values["k"], n_layers=values["layers"])


STEP_WORDS = {  # what each step's words say, as a predicate on the facts at its settings
    "Who multiplies more?": lambda f: f["att_mult"] > f["rnn_mult"],
    "T = d: where the terms cross": lambda f: f["Td2"] == f["T2d"] and f["att_mult"] > f["rnn_mult"],
    "A short sentence, a wide model": lambda f: f["term_ratio"] > 1 and f["projection_share"] > 0.9,
    "A long context": lambda f: f["T2d"] > 10 * f["Td2"],
    "Parameters do not grow with T": lambda f: f["att_params"]
    == cost_facts(cost_view(CostSettings(T=512)))["att_params"],
    "Steps that must wait": lambda f: f["n"] == 1,
    "A stack of six": lambda f: f["n"] == 6 and f["extra"] == 5,
}


@pytest.mark.parametrize("number", range(1, len(STEPS) + 1))
def test_every_step_says_what_its_view_shows(number):
    step = STEPS[number - 1]
    assert STEP_WORDS[step.title](cost_facts(cost_view(step_settings(step)))), step.title


def test_the_page_fills_each_reveal_from_its_view():
    for number, step in enumerate(STEPS, start=1):
        at = page_test(PAGE, {"step": str(number)}).run()
        at.button(key="lesson_next").click().run()
        expected = step.reveal.format_map(cost_facts(cost_view(step_settings(step))))
        assert sum(expected in box.value for box in at.success) == 1, step.title


def test_measure_again_measures_anew_for_this_visitor_only():
    at = run_page(PAGE, {"time_T": "256"})
    first = vega_data(at, 1)["milliseconds"].to_numpy()
    at.button(key="measure_again").click().run()
    again = vega_data(at, 1)["milliseconds"].to_numpy()
    assert len(again) == len(first) and not np.array_equal(first, again, equal_nan=True)
    other = run_page(PAGE, {"time_T": "256"})
    np.testing.assert_array_equal(vega_data(other, 1)["milliseconds"].to_numpy(), first)


def fake_timings(attention_ms: dict[int, float], loop: bool = True):
    """Timings with torch's RNN at 0.01 ms per position, the Python loop at ten times that (or out of
    the budget at every T), and attention as given (None: out of the budget)."""
    rows = []
    for T in (16, 32, 64, 128, 256):
        looped = 0.1 * T if loop else None
        for layer, ms in (("rnn", 0.01 * T), ("rnn-loop", looped), ("attention", attention_ms.get(T))):
            rows.append(Timing(layer, T, 64, None if ms is None else ms / 1000, 0 if ms is None else 5))
    return tuple(rows), 1


@pytest.mark.parametrize(("attention_ms", "expected"), [
    ({16: 0.01, 32: 0.02, 64: 1.0, 128: 5.0, 256: 20.0}, "From T = 64 on, the attention layer is the slower one"),
    ({16: 0.01, 32: 0.02, 64: 0.04, 128: 0.08, 256: None}, "In this range the attention layer is never the slower"),
])
def test_the_stopwatch_sentence_follows_the_measurement(monkeypatch, attention_ms, expected):
    monkeypatch.setattr(cost_lesson, "_measured", lambda d, attempt: fake_timings(attention_ms))
    runtime._shown.cache_clear()
    try:
        at = run_page(PAGE, {"time_T": "256"})
    finally:
        runtime._shown.cache_clear()  # no fake timings left for other tests
    text = " ".join(m.value for m in at.markdown)
    assert expected in text
    assert "At T = 256 torch's RNN needs 10.0 µs per step" in text and "needs 10 times as long" in text


def test_the_stopwatch_says_only_what_was_measured(monkeypatch):
    """A busy server may time the Python loop at no length at all: its sentence is left out."""
    monkeypatch.setattr(cost_lesson, "_measured", lambda d, attempt: fake_timings({16: 0.01}, loop=False))
    runtime._shown.cache_clear()
    try:
        at = run_page(PAGE, {"time_T": "256"})
    finally:
        runtime._shown.cache_clear()
    text = " ".join(m.value for m in at.markdown)
    assert "At T = 256 torch's RNN needs 10.0 µs per step, one step after another." in text
    assert "Python loop needs" not in text and "never the slower" in text


# the numbers an answer may take from the sizes in the figure's heading (T, d, k, N) and arithmetic on them
HEADING_FACTS = ("T", "d", "n", "extra", "T_over_d", "term_ratio")


@pytest.mark.parametrize("number", range(1, len(STEPS) + 1))
def test_every_number_an_answer_quotes_is_printed_in_the_key_figure(number):
    """Read from the back of the room: each count or ratio in a revealed answer stands, as written, on a
    bar of the key figure or in a panel's title ("attention 10× RNN"), or is a size in its heading."""
    import re

    from explorer.lessons.cost.figures import cost_figures

    step = STEPS[number - 1]
    view = cost_view(step_settings(step))
    facts = cost_facts(view)
    answer = step.reveal.format_map(facts)
    figure = cost_figures(view).bars.to_dict()
    printed = {t["text"][0] for t in figure["data"]}
    titles = " ".join(a["text"] for a in figure["layout"]["annotations"])
    heading = {f"{facts[name]:g}" for name in HEADING_FACTS}
    quoted = re.findall(r"\d[\d,.]*(?:\u00a0[kMBT])?", answer)
    assert quoted, answer
    for text in quoted:
        text = text.rstrip(".,")
        ratio = re.search(rf"{re.escape(text)} times", answer) is not None
        assert text in printed or text in heading or (ratio and f"attention {text}× RNN" in titles), (text, answer)
