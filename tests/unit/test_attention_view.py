"""The attention lesson's view through the lesson runtime's one cache (it replaced the page's own
ViewCache): a hit is the same read-only view, sessions asking at once share one computation, the
cache is bounded and can be cleared, failures are not kept, and the cached view is the model's."""

import concurrent.futures
import dataclasses

import numpy as np
import pytest

from explorer.lessons.attention import view as attention_lesson
from explorer.lessons.attention.models import PRESETS, ModelChoice, choose_model, compute_view
from explorer.lessons.attention.spec import ATTENTION, ATTENTION_COMPARE
from explorer.lessons.attention.view import AttentionSettings, CompareSettings
from explorer.serve import runtime

CORE = AttentionSettings(task="coreference", mask="none", input_coreference=PRESETS["coreference"][2],
                         text_coreference=PRESETS["coreference"][0], pad_coreference=12, layer=2)


def arrays(view) -> list[np.ndarray]:
    block = view.attention
    return [block.weights, block.raw_scores, block.scaled_scores, block.masked_scores]


def test_a_hit_returns_the_same_view_without_computing_again():
    runtime._shown.cache_clear()
    first = runtime.shown(ATTENTION, CORE)
    misses = runtime._shown.cache_info().misses
    second = runtime.shown(ATTENTION, dataclasses.replace(CORE))
    assert second is first and runtime._shown.cache_info().misses == misses
    for array in arrays(first.view):
        with pytest.raises(ValueError):
            array[0] = 1.0  # shared between sessions: read-only


def test_sessions_asking_for_a_view_being_computed_wait_for_it():
    runtime._shown.cache_clear()
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        shown = [f.result(60) for f in [pool.submit(runtime.shown, ATTENTION, CORE) for _ in range(6)]]
    assert all(s is shown[0] for s in shown), "one computation, shared"


def test_the_cache_is_bounded_and_can_be_cleared():
    info = runtime._shown.cache_info()
    assert info.maxsize <= 256 and info.max_bytes <= 64_000_000  # every default and step view, and visitors'
    first = runtime.shown(ATTENTION, CORE)
    runtime._shown.cache_clear()
    assert runtime.shown(ATTENTION, CORE) is not first


def test_failures_are_not_kept(monkeypatch):
    calls = []

    def broken(settings):
        calls.append(1)
        raise RuntimeError("damaged")

    runtime._shown.cache_clear()
    spec = dataclasses.replace(ATTENTION, view=broken)
    for _ in range(2):
        with pytest.raises(RuntimeError):
            runtime.shown(spec, CORE)
    assert len(calls) == 2


def test_the_view_matches_a_fresh_computation():
    view = runtime.shown(ATTENTION, CORE).view
    tokens = PRESETS["coreference"][2].split()
    model, task, label = choose_model(ModelChoice("coreference", "sinusoidal", 4, 2, True))
    fresh = compute_view(model, task, tokens, "none", len(tokens))
    assert view.run.label == label and view.run.attention.output_tokens == fresh.output_tokens
    np.testing.assert_array_equal(view.attention.weights, fresh.blocks[0].weights)


def test_the_comparison_is_the_same_head_at_the_other_setting():
    compare = CompareSettings(**{f.name: getattr(CORE, f.name) for f in dataclasses.fields(CORE)},
                              compare="mask: causal")
    view = runtime.shown(ATTENTION_COMPARE, compare).view
    tokens = PRESETS["coreference"][2].split()
    model, task, _ = choose_model(ModelChoice("coreference", "sinusoidal", 4, 2, True))
    causal = compute_view(model, task, tokens, "causal", task.max_len)
    np.testing.assert_array_equal(view.this, runtime.shown(ATTENTION, CORE).view.attention.weights[1, 0])
    np.testing.assert_array_equal(view.other, causal.blocks[0].weights[1, 0])
    assert compare.main == CORE and runtime.shown(ATTENTION_COMPARE, CompareSettings()).view.other is None


def test_a_broken_shipped_model_falls_back_to_labelled_random_weights(monkeypatch):
    def broken(name, *args, **kwargs):
        raise attention_lesson.PretrainedModelError(f"{name} is damaged")

    monkeypatch.setattr("explorer.lessons.attention.models.load_model", broken)
    view = attention_lesson.attention_lesson_view(CORE)
    assert view.run.failure == "coreference-sinusoidal-h4-l2 is damaged" and not view.run.trained
    assert "could not be loaded" in view.run.label and view.watch is None
    assert [name for name, _ in view.notices] == ["mask: none", "random"]
