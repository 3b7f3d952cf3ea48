"""The length-and-memory lesson's views against independent computations, and every number its lesson
steps (explorer/lessons/length/lesson.toml) state, read back from the views at the step's settings."""

import dataclasses
import math
import re
import types

import numpy as np
import pytest
import torch

from explorer.analysis.length import REVERSAL_MODELS, accuracy_by_length
from explorer.analysis.memory import PUBLISHED_SHAPES
from explorer.kit.claims import say, typed_numbers
from explorer.kit.prose import lesson_sections
from explorer.kit.settings import check, controls_of, samples
from explorer.kit.steps import load_steps
from explorer.lessons.length.figures import human_bytes
from explorer.lessons.length.parts import (
    GqaSettings,
    TiledSettings,
    WindowSettings,
    gqa_view,
    n_blocks,
    tiled_view,
    window_view,
)
from explorer.lessons.length.spec import LENGTH, LENGTH_GQA, LENGTH_MEMORY, LENGTH_TILED, LENGTH_WINDOW
from explorer.lessons.length.view import (
    LENGTH_CLAIMS,
    LENGTHS,
    LengthSettings,
    MemorySettings,
    length_view,
    memory_view,
    runners,
)
from explorer.serve import runtime
from explorer.training.pretrained import load_model
from harness.claims import answer


@pytest.fixture(scope="module")
def default_length():
    return length_view(LengthSettings())


def test_accuracy_is_the_librarys_and_the_learned_table_refuses_past_its_rows(default_length):
    view = default_length
    assert list(view.lengths) == [n for n in LENGTHS if n <= 30] and view.trained == (2, 10)
    for encoding, name in REVERSAL_MODELS.items():
        values = view.accuracy[encoding]
        reachable = [int(n) for n in view.lengths if not np.isnan(values[list(view.lengths).index(n)])]
        expected = accuracy_by_length(name, reachable)
        np.testing.assert_array_equal([values[list(view.lengths).index(n)] for n in reachable],
                                      [expected[n] for n in reachable])
        assert view.card[encoding] == load_model(name).card["heldout_accuracy"]
    learned = view.accuracy["learned"]
    assert np.isnan(learned[view.lengths > 10]).all() and not np.isnan(learned[view.lengths <= 10]).any()
    assert "position 11" in view.refused["learned"] and "11 rows" in view.refused["learned"]
    assert view.learned_rows == 11
    assert all(not reason for encoding, reason in view.refused.items() if encoding != "learned")
    with pytest.raises(ValueError, match="position 11"):
        accuracy_by_length(REVERSAL_MODELS["learned"], [11])


@pytest.mark.parametrize("encoding", list(REVERSAL_MODELS))
def test_attention_rows_are_distributions_and_the_target_share_is_the_antidiagonal(encoding):
    view = length_view(LengthSettings(longest=16, encoding=encoding, unseen=12))
    for at in (view.seen, view.unseen):
        if encoding == "learned" and at.length > 10:
            assert at.weights is None and "position 12" in at.refused
            continue
        n = at.length
        assert at.weights.shape == (n + 1, n) and len(at.letters) == n
        np.testing.assert_allclose(at.weights.sum(axis=1), 1, atol=1e-6)
        assert at.on_target == pytest.approx(np.mean(np.fliplr(at.weights[:n]).diagonal()))


def test_memory_bytes_are_the_closed_forms_for_every_shape():
    view = memory_view(MemorySettings(T=8192, bytes_per_value=4))
    names = [s.name for s in view.shapes]
    assert names[-len(PUBLISHED_SHAPES):] == [s.name for s in PUBLISHED_SHAPES] and not view.missing
    minilm = view.shapes[names.index("all-MiniLM-L6-v2 (encoder)")]
    assert (minilm.n_layers, minilm.n_heads, minilm.d_head, minilm.max_positions) == (6, 12, 32, 512)
    shipped = view.shapes[0]
    assert (shipped.n_layers, shipped.n_heads, shipped.d_head) == (2, 4, 16)
    for i, s in enumerate(view.shapes):
        np.testing.assert_array_equal(view.kv[i], 2 * s.n_layers * s.n_kv_heads * s.d_head * view.Ts * 4)
        np.testing.assert_array_equal(view.scores[i], view.Ts.astype(float) ** 2 * s.n_heads * 4)
        assert view.kv_at[i] == 2 * s.n_layers * s.n_kv_heads * s.d_head * 8192 * 4
    # The layer's largest tensor is one T × T score matrix over its heads, as the formula says.
    np.testing.assert_array_equal(view.measured_largest, view.formula)
    np.testing.assert_array_equal(view.formula, view.measured_T ** 2 * 4 * 4)
    assert (view.measured_peak >= view.formula).all()


@pytest.mark.parametrize(("h", "g"), [(4, 4), (4, 2), (4, 1), (8, 8), (8, 2), (8, 1)])
def test_gqa_view_groups_heads_and_counts_the_cache(h, g):
    view = gqa_view(GqaSettings(heads=h, kv_heads=g))
    assert view.weights.shape == (h, 8, 8)
    np.testing.assert_allclose(view.weights.sum(-1), 1, atol=1e-6)
    assert np.triu(view.weights, 1).max() == 0  # causal
    assert list(view.group) == [i // (h // g) for i in range(h)]
    counts = dict(zip(view.kv_counts, view.cache_here, strict=True))
    assert view.cache_tensors == counts[g] == 2 * g * (64 // h) * 8 * 4
    assert view.kv_counts[0] == h and view.kv_counts[-1] == 1
    full = dict(zip(view.full_kv_heads, view.cache_full, strict=True))
    assert full[32] == 2 * 32 * 32 * 128 * 4096 * 2 and full[1] == full[32] // 32


@pytest.mark.parametrize("T", [6, 12, 16, 32])
@pytest.mark.parametrize("block", [1, 3, 5, 32])
@pytest.mark.parametrize("causal", [False, True])
def test_tiled_view_equals_plain_attention_and_holds_one_tile(T, block, causal):
    block = min(block, T)
    settings = TiledSettings(T=T, block=block, causal=causal, shown=n_blocks(TiledSettings(T=T, block=block)))
    view = tiled_view(settings)
    assert view.max_error <= 1e-12
    assert view.held == T * block and view.full == T * T and view.n_blocks == math.ceil(T / block)
    # After the last block, the weights so far are the softmax of the scores.
    scores = torch.tensor(view.scores).nan_to_num(nan=float("-inf"))
    expected = torch.softmax(scores, -1).numpy()
    np.testing.assert_allclose(np.nan_to_num(view.weights_so_far), expected, atol=1e-12)
    assert (np.isnan(view.weights_so_far) == np.isnan(view.scores)).all()  # masked cells are blank
    np.testing.assert_allclose(view.running_max[-1], scores.max(-1).values.numpy())
    assert (np.diff(view.running_max, axis=0) >= 0).all()  # a running max never falls
    np.testing.assert_array_equal(view.bytes_plain, view.Ts.astype(float) ** 2 * 8)
    assert (view.measured_tiled[1:] / view.measured_tiled[:-1] < 2.5).all()  # linear in T
    assert (view.measured_plain[1:] / view.measured_plain[:-1] > 3.5).all()  # quadratic in T


def test_tiled_weights_so_far_cover_only_the_keys_read():
    view = tiled_view(TiledSettings(T=12, block=4, shown=2))
    assert np.isnan(view.weights_so_far[:, 8:]).all() and not np.isnan(view.weights_so_far[:, :8]).any()


def _layers_by_search(mask: np.ndarray) -> int | None:
    T = len(mask)
    reach, layers = mask.copy(), 1
    while not reach[T - 1, 0]:
        grown = (reach.astype(int) @ mask.astype(int)) > 0
        if (grown == reach).all():
            return None
        reach, layers = grown, layers + 1
    return layers


@pytest.mark.parametrize("T", [8, 16, 32])
@pytest.mark.parametrize("window", [1, 2, 4, 7, 8])
@pytest.mark.parametrize("layers", [1, 3])
def test_window_view_path_length_and_reach(T, window, layers):
    view = window_view(WindowSettings(T=T, window=window, layers=layers))
    assert view.path == _layers_by_search(view.sliding) and view.causal_path == 1
    assert view.reach_back == min(T - 1, layers * (window - 1))
    assert (view.sliding <= view.causal).all()


def test_settings_are_bounded_and_defaults_are_allowed():
    for spec in (LENGTH, LENGTH_MEMORY, LENGTH_GQA, LENGTH_TILED, LENGTH_WINDOW):
        check(spec.settings())
        assert controls_of(spec.settings)
    with pytest.raises(ValueError):
        check(GqaSettings(heads=8, kv_heads=3))
    with pytest.raises(ValueError):
        check(TiledSettings(T=8, block=4, shown=3))
    with pytest.raises(ValueError):
        check(LengthSettings(unseen=31))


def _settings(spec, values: dict):
    names = {control.url: name for name, control in controls_of(spec.settings)}
    return spec.settings(**{names[k]: v for k, v in values.items() if k in names})


def _at_step(number: int):
    step = load_steps("length")[number - 1]
    return {spec.name: runtime.shown(spec, _settings(spec, step.settings)).view
            for spec in (LENGTH, LENGTH_MEMORY, LENGTH_GQA, LENGTH_TILED, LENGTH_WINDOW)}, answer("length", step)


def test_step_numbers_are_the_views():
    views, reveal = _at_step(1)
    acc, n = views["length"].accuracy, list(views["length"].lengths)
    assert acc["sinusoidal"][n.index(10)] == 1 and (acc["sinusoidal"][n.index(11):] == 0).all()
    assert f"{acc['rope'][n.index(11)]:.0%}" == "21%" and (acc["rope"][n.index(12):] == 0).all()
    t5 = [f"{acc['t5'][n.index(k)]:.0%}" for k in (11, 12, 13)]
    assert t5 == ["31%", "50%", "4%"]
    assert "T5 keeps 31% at 11" in reveal and "The learned table stops at 10: it has no row for position 11." in reveal
    assert (acc["t5"][n.index(16):] == 0).all() and acc["t5"][n.index(14)] > 0 and "0% from 16" in reveal
    assert "position 11" in views["length"].refused["learned"]

    views, reveal = _at_step(2)
    seen, unseen = views["length"].seen, views["length"].unseen
    assert f"{seen.on_target:.0%}" == "44%" and f"{unseen.on_target:.0%}" == "9%" and f"{1 / 15:.0%}" == "7%"
    assert seen.reversed_right and not unseen.reversed_right

    views, reveal = _at_step(3)
    memory = views["length/memory"]
    at = {s.name: (kv, sc) for s, kv, sc in zip(memory.shapes, memory.kv_at, memory.scores_at, strict=True)}
    assert human_bytes(at["Llama-2-7B"][0]) == "2.15 GB" == human_bytes(at["Llama-2-7B"][1])
    assert human_bytes(at["Mistral-7B (GQA)"][0]) == "537 MB"

    views, reveal = _at_step(4)
    gqa = views["length/gqa"]
    here = dict(zip(gqa.kv_counts, gqa.cache_here, strict=True))
    full = dict(zip(gqa.full_kv_heads, gqa.cache_full, strict=True))
    assert (human_bytes(here[8]), human_bytes(here[1])) == ("4.1 kB", "512 B")
    assert (human_bytes(full[32]), human_bytes(full[1])) == ("2.15 GB", "67.1 MB")
    assert not np.allclose(gqa.weights[0], gqa.weights[1])  # heads sharing K/V still differ

    views, reveal = _at_step(5)
    tiled = views["length/tiled"]
    assert (tiled.held, tiled.full, tiled.shown) == (48, 144, 2) and tiled.max_error <= 1e-12
    assert "1e" not in reveal and re.search(r"to within 10⁻[¹²³⁴⁵⁶⁷⁸⁹⁰]+\.", reveal), reveal  # not Python's 1e-15

    views, reveal = _at_step(6)
    window = views["length/window"]
    assert (window.path, window.reach_back, window.causal_path) == (5, 6, 1)


def test_views_are_read_only():
    view = tiled_view(TiledSettings())
    for field in dataclasses.fields(view):
        value = getattr(view, field.name)
        if isinstance(value, np.ndarray):
            assert not value.flags.writeable, field.name


def test_the_sentences_under_the_key_figure_hold_where_they_are_shown():
    """The claims of the length prose (LENGTH_CLAIMS): over sampled settings each evaluates, and where it
    holds its sentence fills with no number typed by hand; at the default settings all three hold, with
    the runners and the T5 bucket counts read from the view."""
    sections = lesson_sections("length")
    texts = {name: sections[f"claim: {name}"] for name in LENGTH_CLAIMS}
    for name, text in texts.items():
        assert not typed_numbers(text), (name, typed_numbers(text))
    for settings in samples(LengthSettings, 6):
        shown = runtime.shown(LENGTH, settings)
        for name in LENGTH_CLAIMS:
            said = say(LENGTH_CLAIMS, name, texts[name], shown)
            assert said is None or "{" not in said
    shown = runtime.shown(LENGTH, LengthSettings())
    view = shown.view
    assert runners(view) == ["sinusoidal", "rope", "t5"]  # learned is refused past 10; the others fail inside
    said = say(LENGTH_CLAIMS, "falls_past_band", texts["falls_past_band"], shown)
    assert "T5 buckets reverses 93% at 10 letters, 31% at 11, 50% at 12, 4% at 13 and 0% at 30" in said
    met = view.t5_buckets
    said = say(LENGTH_CLAIMS, "t5_buckets", texts["t5_buckets"], shown)
    assert (len(met["encoder"].untrained), len(met["decoder"].untrained)) == (6, 10)
    assert "at 30 letters its encoder needs 6 buckets and its decoder 10" in said
    assert say(LENGTH_CLAIMS, "fail_inside", texts["fail_inside"], shown) is not None
    # A claim that does not hold is not said: a view where the T5 model is left out has no bucket sentence.
    without = types.SimpleNamespace(settings=shown.settings, view=dataclasses.replace(view, t5_buckets=None))
    assert say(LENGTH_CLAIMS, "t5_buckets", texts["t5_buckets"], without) is None
