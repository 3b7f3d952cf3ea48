"""explorer.model.attention against torch's own attention implementations."""

import math

import pytest
import torch
import torch.nn.functional as F

from explorer.model.attention import (
    MultiHeadAttention,
    attention_pipeline,
    causal_mask,
    combine_masks,
    key_padding_mask,
    scaled_dot_product_attention,
)

B, H, T, D = 2, 3, 5, 8


def _qkv(T_q=T, T_k=T, d=D, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(B, H, T_q, d, generator=gen, dtype=torch.float64)
    k = torch.randn(B, H, T_k, d, generator=gen, dtype=torch.float64)
    v = torch.randn(B, H, T_k, d + 1, generator=gen, dtype=torch.float64)
    return q, k, v


def _torch_weights(q, k, mask=None):
    """Attention weights computed by hand: softmax(QKᵀ/√d) with -inf at forbidden keys."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(-1)


# (T_k padding) no query row is fully masked in these, so torch's output is well defined.
_VALID = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)


@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "causal+padding"])
def test_sdpa_matches_torch(mask_kind):
    q, k, v = _qkv()
    mask = {
        "none": None,
        "causal": causal_mask(T),
        "padding": key_padding_mask(_VALID),
        "causal+padding": combine_masks(causal_mask(T), key_padding_mask(_VALID)),
    }[mask_kind]
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(weights, _torch_weights(q, k, mask))
    torch.testing.assert_close(weights.sum(-1), torch.ones(B, H, T, dtype=torch.float64))


@pytest.mark.parametrize("T_q,T_k", [(3, 7), (7, 2), (1, 4)])
def test_sdpa_cross_attention_shapes_match_torch(T_q, T_k):
    q, k, v = _qkv(T_q, T_k)
    valid = torch.ones(B, T_k, dtype=torch.bool)
    valid[1, -1] = False
    mask = key_padding_mask(valid)
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    assert out.shape == (B, H, T_q, D + 1)
    assert weights.shape == (B, H, T_q, T_k)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
    assert torch.all(weights[1, ..., -1] == 0)


def test_causal_weights_exactly_zero_above_diagonal():
    q, k, v = _qkv()
    _, weights = scaled_dot_product_attention(q, k, v, mask=causal_mask(T))
    upper = torch.ones(T, T, dtype=torch.bool).triu(1)
    assert torch.all(weights[..., upper] == 0)
    assert torch.all(weights[..., ~upper] > 0)


def test_causal_mask_is_lower_triangle_of_ones():
    for n in (1, 2, 6):
        mask = causal_mask(n)
        assert mask.dtype == torch.bool
        assert torch.equal(mask, torch.tril(torch.ones(n, n)).bool())


def test_key_padding_mask_broadcast_shape():
    mask = key_padding_mask(torch.tensor([[1, 0, 1]]))
    assert mask.shape == (1, 1, 1, 3)
    assert mask.dtype == torch.bool
    assert mask.flatten().tolist() == [True, False, True]


def test_combine_masks_is_logical_and_and_ignores_none():
    a = torch.tensor([[True, True], [False, True]])
    b = torch.tensor([[True, False], [True, True]])
    assert torch.equal(combine_masks(a, None, b), torch.tensor([[True, False], [False, True]]))
    assert combine_masks(None, None) is None
    assert combine_masks(None, a) is a


def test_pipeline_stages():
    q, k, v = _qkv()
    mask = combine_masks(causal_mask(T), key_padding_mask(_VALID))
    trace = attention_pipeline(q, k, v, mask=mask)
    raw = torch.einsum("bhqd,bhkd->bhqk", q, k)
    torch.testing.assert_close(trace.raw_scores, raw)
    torch.testing.assert_close(trace.scaled_scores, raw / math.sqrt(D))
    full_mask = mask.expand_as(raw)
    assert torch.equal(torch.isneginf(trace.masked_scores), ~full_mask)
    torch.testing.assert_close(trace.masked_scores[full_mask], trace.scaled_scores[full_mask])
    torch.testing.assert_close(trace.output, trace.weights @ v)


def test_pipeline_bias_and_custom_scale():
    q, k, v = _qkv()
    bias = torch.randn(T, T, dtype=torch.float64)
    trace = attention_pipeline(q, k, v, bias=bias, scale=0.5)
    expected = (q @ k.transpose(-2, -1)) * 0.5 + bias
    torch.testing.assert_close(trace.scaled_scores, expected)
    torch.testing.assert_close(trace.weights, expected.softmax(-1))


def test_fully_masked_row_gives_zero_weights_not_nan():
    q, k, v = _qkv()
    mask = torch.ones(T, T, dtype=torch.bool)
    mask[2] = False
    trace = attention_pipeline(q, k, v, mask=mask)
    assert not torch.isnan(trace.weights).any()
    assert not torch.isnan(trace.output).any()
    assert torch.all(trace.weights[..., 2, :] == 0)
    assert torch.all(trace.output[..., 2, :] == 0)
    torch.testing.assert_close(trace.weights[..., 3, :].sum(-1), torch.ones(B, H, dtype=torch.float64))


# --- MultiHeadAttention vs torch.nn.MultiheadAttention ------------------------------------------

D_MODEL, HEADS = 12, 3


def _pair(load_torch_mha, seed=0):
    torch.manual_seed(seed)
    ours = MultiHeadAttention(D_MODEL, HEADS).double()
    theirs = torch.nn.MultiheadAttention(D_MODEL, HEADS, batch_first=True).double()
    return ours, load_torch_mha(theirs, ours)


@pytest.mark.parametrize("T_q,T_k", [(5, 5), (4, 6), (6, 3)])
@pytest.mark.parametrize("use_padding", [False, True])
def test_multihead_matches_torch(load_torch_mha, T_q, T_k, use_padding):
    ours, theirs = _pair(load_torch_mha)
    gen = torch.Generator().manual_seed(1)
    query = torch.randn(B, T_q, D_MODEL, generator=gen, dtype=torch.float64)
    key_value = query if T_q == T_k else torch.randn(B, T_k, D_MODEL, generator=gen, dtype=torch.float64)
    valid = torch.ones(B, T_k, dtype=torch.bool)
    if use_padding:
        valid[1, -2:] = False
    out, trace = ours(query, key_value, mask=key_padding_mask(valid) if use_padding else None)
    expected, expected_w = theirs(
        query, key_value, key_value,
        key_padding_mask=~valid if use_padding else None,
        need_weights=True, average_attn_weights=False,
    )
    assert trace.weights.shape == (B, HEADS, T_q, T_k)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(trace.weights, expected_w)


def test_multihead_causal_and_padding_match_torch(load_torch_mha):
    ours, theirs = _pair(load_torch_mha, seed=3)
    x = torch.randn(B, T, D_MODEL, dtype=torch.float64)
    valid = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    mask = combine_masks(causal_mask(T), key_padding_mask(valid))
    out, trace = ours(x, x, mask=mask)
    expected, expected_w = theirs(
        x, x, x, attn_mask=~causal_mask(T), key_padding_mask=~valid,
        need_weights=True, average_attn_weights=False,
    )
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(trace.weights, expected_w)
    assert torch.all(trace.weights[..., causal_mask(T).logical_not()] == 0)


def test_multihead_trace_output_is_per_head_mix():
    torch.manual_seed(0)
    mha = MultiHeadAttention(D_MODEL, HEADS).double()
    x = torch.randn(B, T, D_MODEL, dtype=torch.float64)
    out, trace = mha(x, x)
    assert trace.output.shape == (B, HEADS, T, D_MODEL // HEADS)
    merged = trace.output.transpose(1, 2).reshape(B, T, D_MODEL)
    torch.testing.assert_close(out, merged @ mha.out_proj.weight.T + mha.out_proj.bias)


def test_multihead_rejects_indivisible_width():
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(10, 3)
