"""explorer.model.tiled: the online softmax over key blocks against torch's attention, and what it holds."""

import math

import pytest
import torch
import torch.nn.functional as F

from explorer.analysis.memory import measure_tensor_memory
from explorer.model.attention import attention_pipeline, causal_mask, sliding_window_mask
from explorer.model.tiled import tiled_attention


def _qkv(T_q, T_k=None, seed=0, lead=(2, 3)):
    T_k = T_q if T_k is None else T_k
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(*lead, T, d, generator=gen, dtype=torch.float64) for T, d in ((T_q, 8), (T_k, 8), (T_k, 5)))


@pytest.mark.parametrize("T", [1, 2, 5, 8, 13, 31, 64])
@pytest.mark.parametrize("block", [1, 3, 8, 100])
@pytest.mark.parametrize("causal", [False, True])
def test_tiled_attention_equals_torch_sdpa(T, block, causal):
    q, k, v = _qkv(T, seed=T * block)
    out, trace = tiled_attention(q, k, v, block, causal=causal)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert (out - expected).abs().max().item() <= 1e-12
    assert [(b.start, b.stop) for b in trace.blocks] == [(s, min(s + block, T)) for s in range(0, T, block)]


@pytest.mark.parametrize("T_q,T_k,block", [(3, 11, 4), (9, 2, 1), (6, 17, 5)])
def test_queries_and_keys_of_different_lengths_with_a_boolean_mask(T_q, T_k, block):
    q, k, v = _qkv(T_q, T_k, seed=1)
    gen = torch.Generator().manual_seed(2)
    mask = torch.rand(2, 1, T_q, T_k, generator=gen) > 0.4
    mask[..., 0] = True  # every query sees a key, so torch's output is defined
    out, _ = tiled_attention(q, k, v, block, mask=mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert (out - expected).abs().max().item() <= 1e-12


def test_mask_and_causal_together_and_a_sliding_window():
    q, k, v = _qkv(12, seed=3)
    window = sliding_window_mask(12, 4)
    out, _ = tiled_attention(q, k, v, 5, mask=window, causal=True)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=window & causal_mask(12))
    assert (out - expected).abs().max().item() <= 1e-12


def test_a_query_that_sees_no_key_gets_zero_like_the_pipeline():
    q, k, v = _qkv(4, 6, seed=4)
    mask = torch.ones(4, 6, dtype=torch.bool)
    mask[2] = False
    out, _ = tiled_attention(q, k, v, 2, mask=mask)
    expected = attention_pipeline(q, k, v, mask=mask).output
    assert (out - expected).abs().max().item() <= 1e-12
    assert torch.equal(out[..., 2, :], torch.zeros_like(out[..., 2, :]))


def test_the_running_max_and_sum_are_those_of_the_keys_seen_so_far():
    q, k, v = _qkv(7, 10, seed=5)
    _, trace = tiled_attention(q, k, v, 3)
    scores = q @ k.transpose(-2, -1) / math.sqrt(8)
    for block in trace.blocks:
        seen = scores[..., : block.stop]
        m = seen.amax(-1)
        torch.testing.assert_close(block.running_max, m, rtol=0, atol=1e-14)
        torch.testing.assert_close(block.running_sum, torch.exp(seen - m[..., None]).sum(-1), rtol=1e-12, atol=0)


def test_the_score_matrix_is_never_held():
    """Measured at torch's dispatcher: no tensor as large as one head's T × T scores is ever made, and
    the peak of all tensors alive together grows like T·block, while plain attention's grows like T².
    (Without the per-block record, which is blocks × T values: T² / block.)"""
    block, peaks = 16, {}
    for T in (128, 256, 512):
        q, k, v = _qkv(T, seed=T, lead=(1, 2))
        (_, trace), tiled = measure_tensor_memory(tiled_attention, q, k, v, block, causal=True,
                                                    keep_states=False)
        _, plain = measure_tensor_memory(attention_pipeline, q, k, v, mask=causal_mask(T))
        assert tiled.largest_bytes < T * T * 8  # not even one head's scores
        assert plain.largest_bytes >= 2 * T * T * 8  # the pipeline holds both heads' scores
        assert trace.peak_scores_held == 2 * T * block and trace.full_scores == 2 * T * T
        peaks[T] = tiled.peak_bytes
    assert peaks[512] < 5 * peaks[128]  # 4 × the length: about 4 × the bytes (not 16 ×)


@pytest.mark.parametrize("block", [0, -2, 1.5, True])
def test_block_must_be_a_positive_integer(block):
    q, k, v = _qkv(4)
    with pytest.raises(ValueError, match="block"):
        tiled_attention(q, k, v, block)
