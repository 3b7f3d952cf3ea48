"""explorer.analysis.memory: bytes against the tensors themselves, path lengths against a search over the mask."""

import itertools

import pytest
import torch

from explorer.analysis.memory import (
    PUBLISHED_SHAPES,
    attention_scores_bytes,
    kv_cache_bytes,
    measure_tensor_memory,
    sliding_window_path_length,
)
from explorer.model.attention import KVCache, MultiHeadAttention, attention_pipeline, causal_mask, sliding_window_mask

DTYPE_BYTES = {torch.float16: 2, torch.bfloat16: 2, torch.float32: 4, torch.float64: 8}


@pytest.mark.parametrize("layers,kv_heads,d_head,T,batch", [(1, 1, 1, 1, 1), (2, 4, 16, 7, 3), (3, 2, 8, 33, 2)])
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
def test_kv_cache_bytes_are_the_bytes_of_the_caches_a_generation_fills(layers, kv_heads, d_head, T, batch, dtype):
    """Fill one KVCache per layer, a position at a time, through grouped-query attention modules."""
    n_heads = kv_heads * 2
    modules = [MultiHeadAttention(n_heads * d_head, n_heads, n_kv_heads=kv_heads).to(dtype) for _ in range(layers)]
    caches = [KVCache() for _ in modules]
    x = torch.randn(batch, T, n_heads * d_head, generator=torch.Generator().manual_seed(T)).to(dtype)
    with torch.no_grad():
        for t in range(T):
            for module, cache in zip(modules, caches, strict=True):
                module(x[:, t:t + 1], cache=cache)
    held = sum(t.numel() * t.element_size() for c in caches for t in (c.keys, c.values))
    assert kv_cache_bytes(layers, kv_heads, d_head, T, batch, DTYPE_BYTES[dtype]) == held


@pytest.mark.parametrize("T_q,T_k,heads,batch", [(1, 1, 1, 1), (5, 9, 3, 2), (16, 16, 4, 1), (7, 3, 2, 5)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_attention_scores_bytes_are_the_bytes_of_the_pipelines_weights(T_q, T_k, heads, batch, dtype):
    gen = torch.Generator().manual_seed(T_q)
    q = torch.randn(batch, heads, T_q, 4, generator=gen).to(dtype)
    k = torch.randn(batch, heads, T_k, 4, generator=gen).to(dtype)
    weights = attention_pipeline(q, k, k).weights
    held = weights.numel() * weights.element_size()
    assert attention_scores_bytes(T_q, T_k, heads, batch, DTYPE_BYTES[dtype]) == held


def test_defaults_are_half_precision_cache_and_float32_scores():
    assert kv_cache_bytes(2, 3, 4, 5) == 2 * 2 * 3 * 4 * 5 * 2
    assert attention_scores_bytes(3, 4, 5) == 3 * 4 * 5 * 4


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", None, True])
def test_arguments_must_be_positive_integers(bad):
    with pytest.raises(ValueError, match="positive integers"):
        kv_cache_bytes(2, 2, 2, bad)
    with pytest.raises(ValueError, match=r"n_heads=.*"):
        attention_scores_bytes(2, 2, bad)
    with pytest.raises(ValueError, match="positive integers"):
        sliding_window_path_length(4, bad)


def test_published_shapes_and_what_gqa_saves():
    shapes = {s.name: s for s in PUBLISHED_SHAPES}
    gpt2, llama2, mistral = shapes["GPT-2 small"], shapes["Llama-2-7B"], shapes["Mistral-7B (GQA)"]
    assert gpt2.n_heads * gpt2.d_head == 768 and llama2.n_heads * llama2.d_head == 4096
    assert all(s.source and s.n_heads % s.n_kv_heads == 0 for s in PUBLISHED_SHAPES)
    # Llama-2-7B at its 4096 positions in float16: 2 GiB of cache per sequence; 8 kv heads: a quarter.
    assert llama2.kv_cache_bytes(4096) == 2 * 1024**3
    assert mistral.kv_cache_bytes(4096) * 4 == llama2.kv_cache_bytes(4096)
    assert gpt2.attention_scores_bytes(1024) == 1024 * 1024 * 12 * 4


def _bfs_layers(mask: torch.Tensor) -> int | None:
    """Layers until position T−1 depends on position 0: each layer, t reads every s with mask[t, s]."""
    T = mask.shape[0]
    reached = torch.zeros(T, dtype=torch.bool)
    reached[0] = True
    for layers in range(T + 1):
        if reached[T - 1]:
            return layers
        reached = (mask & reached[None, :]).any(dim=1)
    return None


@pytest.mark.parametrize("T,window", list(itertools.product([1, 2, 3, 7, 16, 33], [1, 2, 3, 4, 8, 40])))
def test_sliding_window_path_length_matches_a_search_over_the_mask(T, window):
    assert sliding_window_path_length(T, window) == _bfs_layers(sliding_window_mask(T, window))


@pytest.mark.parametrize("T,window", [(1, 1), (5, 1), (5, 2), (6, 3), (4, 4), (4, 9)])
def test_sliding_window_mask_against_its_definition(T, window):
    mask = sliding_window_mask(T, window)
    expected = torch.tensor([[0 <= t - s < window for s in range(T)] for t in range(T)])
    assert mask.dtype == torch.bool and torch.equal(mask, expected)
    assert torch.equal(mask & causal_mask(T), mask)
    if window >= T:
        assert torch.equal(mask, causal_mask(T))


def test_sliding_window_mask_refuses_a_window_below_one():
    with pytest.raises(ValueError, match="window"):
        sliding_window_mask(4, 0)


def test_measured_memory_counts_tensors_alive_together():
    def work():
        a = torch.ones(1000, dtype=torch.float64)  # 8000 bytes
        b = torch.ones(500, dtype=torch.float32)  # 2000 bytes
        del a
        c = b.view(20, 25) * 2  # the view adds nothing; the product 2000 bytes
        return c

    result, measured = measure_tensor_memory(work)
    assert result.shape == (20, 25)
    assert measured.peak_bytes == 10000 and measured.largest_bytes == 8000 and measured.largest_shape == (1000,)
    inputs = torch.ones(4096)
    _, of_a_view = measure_tensor_memory(lambda t: t[:10].sum(), inputs)  # the argument is not counted
    assert of_a_view.peak_bytes == of_a_view.largest_bytes == 4
