"""No lesson types a number into its text that its view should give (issue 28): in every lesson's step
answers and prose sections (explorer/lessons/<page>/lesson.toml and .md), every number is a {field} filled
from the view, or is listed here with the reason it may be typed — a definition (rows sum to 1), a
constant of the formula it stands in, a section's name, an option the question offered, or a
setting of the code, which the test then reads from the code.  A number typed anywhere else fails."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from explorer.kit.claims import typed_numbers
from explorer.kit.prose import lesson_sections
from explorer.kit.settings import controls_of
from explorer.kit.steps import load_steps
from explorer.lessons.depth.view import DepthSettings
from explorer.training.live import HELD_OUT, LiveSettings, live_task
from explorer.training.minilm import load_minilm
from tests.unit.test_lib_decoding import TOLERANCE

LESSONS = sorted(path.parent.name for path in Path("explorer/lessons").glob("*/lesson.toml"))

DEFINITION = ("a definition: softmax rows sum to 1, a masked weight is 0, −ln p is 0 at p = 1, the overlap of "
              "equal word sets is 1")
SECTIONS = "names sections of the page"
CITATION = "a citation: the year or section of the paper cited"
# (lesson, where) -> {typed number: why it may be typed}; where is "step <n>" (an answer) or a prose section
ALLOWED: dict[tuple[str, str], dict[str, str]] = {
    ("attention", "reading"): {"1": DEFINITION},
    ("attention", "pipeline"): {"1": DEFINITION, "0": DEFINITION},
    ("block", "step 7"): {"0": "exactly 0 after a ReLU: what ReLU gives below zero, a definition"},
    ("block", "stage: weights"): {"1": DEFINITION},
    ("block", "stage: ffn_hidden"): {"0": "exactly 0 after a ReLU: a definition"},
    ("block", "claim: degradation"): {"2016": CITATION},
    ("block", "claim: unscored"): {"1": "temperature 1: the softmax of the scores as they are, a definition"},
    ("decoder", "forcing: intro"): {"1989": CITATION, "2017": CITATION, "3.1": CITATION},
    ("decoder", "forcing: not the notes' reason"): {"2015": CITATION, "2016": CITATION},
    ("decoder", "forcing: loss"): {"0": DEFINITION},
    ("decoder", "architectures: half"): {
        "3": "3/7 = 12/28: the layers' share the leading terms give (12·d² a decoder-only layer, 12·d² + 16·d² an "
             "encoder and a decoder layer)", "2": "2/3: one embedding table against two; table 2 of the paper cited",
        "2020": CITATION, "3.2": CITATION},
    ("depth", "step 1"): {"10": "an option the question offered (about 10×); the claim two_layers decides it"},
    ("depth", "wiring"): {"24": "the layer slider's maximum (read below)"},
    ("depth", "addnorm"): {"0": "mean 0: what LayerNorm computes, a definition", "2016": CITATION},
    ("depth", "degradation"): {"2016": CITATION, "1": CITATION, "4.1": CITATION,
                               "56": "the depths the cited figure compares (He et al., 2016, Fig. 1)",
                               "20": "the depths the cited figure compares (He et al., 2016, Fig. 1)"},
    ("encoders", "vectors"): {"1": "unit length, a definition", "3": SECTIONS, "4": SECTIONS},
    ("encoders", "similarity same words"): {"1": DEFINITION},
    ("encoders", "similarity"): {"1": DEFINITION},
    ("encoders", "sinks"): {"2": "layers 2 to the last: MiniLM's layers (read below)",
                            "6": "MiniLM's last layer (read below)", "1": DEFINITION},
    ("encoders", "birnn"): {"1": "|t − s| + 1 steps: the formula of the path through a loop"},
    ("gradients", "step 1"): {"10,000": "an option the question offered; the claim loop_fades decides it"},
    ("length", "step 3"): {"2": "keys and values: the factor 2 of the KV-cache formula"},
    ("length", "limits"): {"0": "positions 0–n: positions count from 0"},
    ("length", "attention"): {"1": "n − 1 − i: the index of the letter written, a formula"},
    ("length", "memory"): {"2": "keys and values: the factor 2 of the formula", "4": "bytes of a float32",
                           "32": "32-bit, float32"},
    ("length", "measured"): {"4": "bytes of a float32, in the formula"},
    ("length", "tiled"): {"64": "64-bit: the tiled view computes in float64"},
    ("positions", "matrix: sinusoidal formula"): {"1": "column 2i+1: a formula"},
    ("positions", "matrix: why sines and cosines"): {"−1": "the range of sin and cos", "1": "the range of sin and cos"},
    ("positions", "matrix: lecture table"): {"2": "the exponent 2/d of the formula"},
    ("positions", "matrix: learned"): {"2": "the name GPT-2"},
    ("positions", "matrix: MiniLM"): {"99": "the 99th percentile the view computes "
                                                      "(explorer/lessons/positions/encodings.py)"},
    ("positions", "matrix: none"): {"3": SECTIONS, "4": SECTIONS},
    ("positions", "geometry: MiniLM"): {"1": "p + 1: the next position"},
    ("positions", "geometry: index"): {"1": "a cosine of 1: vectors on one line, a definition"},
    ("positions", "attention by encoding"): {"1": DEFINITION},
    ("positions", "RoPE"): {"2": "2 Σ cos: the closed form the figure plots", "0": "offset 0, where cos = 1"},
    ("positions", "ALiBi"): {"0": "a slope near 0: the limit named", "8": "the slopes of 8 heads the sentence lists"},
    ("real", "step 5"): {"12.50": "the text typed into the model, quoted"},
    ("real", "reading the grid"): {"1": DEFINITION},
    ("real", "referent"): {"50": "chance with two nouns to choose from", "2019": CITATION, "2020": CITATION},
    ("real", "positions"): {"2": "the name GPT-2", "1": "p + 1: the next position", "2017": CITATION},
    ("train", "step 1"): {"0": "near 0 or 1: the range of a weight", "1": "near 0 or 1, and 1/{keys}: an even spread"},
    ("train", "step 3"): {"0": "near 0: an accuracy that stays at the bottom of its range",
                          "1": "1/{keys}: an even spread, the keys read from the view"},
    ("train", "lead"): {"32": "the live model's width (read below)"},
    ("train", "untrained"): {"0": "step 0: before training"},
    ("train", "untrained race"): {"0": "step 0: before training"},
    ("train", "start loss: above"): {"0": "step 0: before training"},
    ("train", "start loss: below"): {"0": "step 0: before training"},
    ("train", "start loss: at"): {"0": "step 0: before training", "0.005": "the tolerance the claim 'at' uses"},
    ("train", "what"): {"64": "the batch size (read below)", "200": "the held-out examples (read below)"},
    ("train", "sharpness"): {"1": "one letter per row: the largest a row's weight can be"},
}


def texts(lesson: str) -> dict[str, str]:
    """Where → text: every step's answer and every prose section of a lesson."""
    found = {f"step {n}": step.reveal for n, step in enumerate(load_steps(lesson), start=1)}
    with contextlib.suppress(FileNotFoundError):  # a lesson without prose
        found |= lesson_sections(lesson)
    return found


def test_every_lesson_is_checked():
    assert len(LESSONS) == 12, LESSONS


def typed_but_not_listed(lesson: str, found: dict[str, str]) -> list[str]:
    wrong = []
    for where, text in found.items():
        typed = set(typed_numbers(text)) - set(ALLOWED.get((lesson, where), {}))
        if typed:
            wrong.append(f"{lesson} {where}: {sorted(typed)}")
    return wrong


@pytest.mark.parametrize("lesson", LESSONS)
def test_no_number_is_typed_but_those_listed(lesson):
    assert typed_but_not_listed(lesson, texts(lesson)) == []


def test_a_planted_number_is_caught():
    found = texts("attention")
    found["step 1"] = found["step 1"].replace("({weight:.2f})", "(1.00)")
    found["reading"] += " About 3 of them."
    assert typed_but_not_listed("attention", found) == ["attention step 1: ['1.00']", "attention reading: ['3']"]


def test_every_allowance_is_still_used():
    """An allowance no text needs any more is removed, so the list stays the list of what is typed."""
    unused = [(lesson, where, number) for (lesson, where), numbers in ALLOWED.items() for number in numbers
              if number not in typed_numbers(texts(lesson).get(where, ""))]
    assert unused == []


def test_the_settings_the_prose_names_are_the_code_s():
    assert TOLERANCE == 10.0 ** -5  # test_lib_decoding's; the decoder's "forcing: parallel" reads its own
    assert dict(controls_of(DepthSettings))["n_layers"].bounds[1] == 24  # depth, "wiring": raise the layers to 24
    assert load_minilm().config.n_layers == 6  # encoders, "sinks": layers 2 to 6
    settings = LiveSettings()
    assert (settings.d_model, settings.batch_size, HELD_OUT) == (32, 64, 200)  # train, "lead" and "what"
    assert live_task("reverse").vocab_size == 19  # train, step 1: ln 19, its 19 output tokens
