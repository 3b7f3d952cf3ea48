"""The attention page's view cache: bounded by count and bytes, read-only, never caching errors."""

import concurrent.futures
import time

import numpy as np
import pytest

from explorer.views.attention import (
    PRESETS,
    VIEW_CACHE,
    AttentionBlock,
    AttentionView,
    ModelChoice,
    PretrainedModelError,
    ViewCache,
    view_for,
)


def fake_view(n_bytes: int) -> AttentionView:
    cells = n_bytes // 8 // 4
    arrays = [np.zeros(cells) for _ in range(4)]
    return AttentionView([AttentionBlock("b", ["a"], ["a"], *arrays)], ["a"], ["a"], "t", 1)


def test_a_hit_returns_the_same_view_without_computing_again():
    cache, calls = ViewCache(), []

    def compute():
        calls.append(1)
        return fake_view(1000), "label"

    first, _ = cache.get(("k",), compute)
    second, label = cache.get(("k",), compute)
    assert first is second and label == "label" and len(calls) == 1
    with pytest.raises(ValueError):
        first.blocks[0].weights[0] = 1.0  # shared between sessions: read-only


def test_sessions_asking_for_a_view_being_computed_wait_for_it():
    cache, calls = ViewCache(), []

    def compute():
        calls.append(1)
        time.sleep(0.2)
        return fake_view(1000), "label"

    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        views = [f.result(10)[0] for f in [pool.submit(cache.get, ("k",), compute) for _ in range(6)]]
    assert len(calls) == 1 and all(v is views[0] for v in views)


def test_the_cache_is_bounded_by_entries_and_by_bytes():
    cache = ViewCache(max_entries=3, max_bytes=40_000)
    for i in range(10):
        cache.get((i,), lambda: (fake_view(8_000), ""))
    assert len(cache) == 3
    cache = ViewCache(max_entries=100, max_bytes=40_000)
    for i in range(10):
        cache.get((i,), lambda: (fake_view(8_000), ""))
    assert cache.bytes <= 40_000 and len(cache) == 5


def test_a_view_bigger_than_a_quarter_of_the_budget_is_not_kept():
    cache = ViewCache(max_entries=10, max_bytes=40_000)
    view, _ = cache.get(("big",), lambda: (fake_view(20_000), ""))
    assert len(cache) == 0 and view.blocks[0].weights.flags.writeable


def test_errors_are_not_cached():
    cache, calls = ViewCache(), []

    def broken():
        calls.append(1)
        raise PretrainedModelError("damaged")

    for _ in range(2):
        with pytest.raises(PretrainedModelError):
            cache.get(("k",), broken)
    assert len(calls) == 2 and len(cache) == 0


def test_view_for_matches_a_fresh_computation():
    from explorer.views.attention import choose_model, compute_view

    choice = ModelChoice("coreference", "sinusoidal", 4, 2, True)
    tokens = tuple(PRESETS["coreference"][2].split())
    cached, label = view_for(choice, tokens, "none", len(tokens))
    model, task, fresh_label = choose_model(choice)
    fresh = compute_view(model, task, list(tokens), "none", len(tokens))
    assert label == fresh_label and cached.output_tokens == fresh.output_tokens
    np.testing.assert_array_equal(cached.blocks[0].weights, fresh.blocks[0].weights)
    assert view_for(choice, tokens, "none", len(tokens))[0] is cached


def test_the_view_cache_can_be_cleared():
    choice = ModelChoice("coreference", "sinusoidal", 4, 2, False)
    tokens = tuple(PRESETS["coreference"][0].split())
    first, _ = view_for(choice, tokens, "none", len(tokens))
    VIEW_CACHE.clear()
    assert view_for(choice, tokens, "none", len(tokens))[0] is not first
