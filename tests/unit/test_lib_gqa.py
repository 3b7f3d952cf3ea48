"""Grouped-query and multi-query attention in MultiHeadAttention against torch's own GQA (enable_gqa)."""

import pytest
import torch
import torch.nn.functional as F

from explorer.model.attention import KVCache, MultiHeadAttention, attention_mask, causal_mask

D_MODEL, HEADS = 24, 6


def _module(n_kv_heads, seed=0):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return MultiHeadAttention(D_MODEL, HEADS, n_kv_heads=n_kv_heads).double().eval()


def _torch_gqa(mha, query, key_value, causal):
    """The same projections, attention by torch.nn.functional.scaled_dot_product_attention(enable_gqa=True)."""
    B, T_q, _ = query.shape
    T_k = key_value.shape[1]
    d = mha.d_model // HEADS
    q = mha.q_proj(query).view(B, T_q, HEADS, d).transpose(1, 2)
    k = mha.k_proj(key_value).view(B, T_k, -1, d).transpose(1, 2)
    v = mha.v_proj(key_value).view(B, T_k, -1, d).transpose(1, 2)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    return mha.out_proj(out.transpose(1, 2).reshape(B, T_q, mha.d_model))


@pytest.mark.parametrize("g", [6, 3, 2, 1])
@pytest.mark.parametrize("causal", [False, True])
def test_grouped_query_attention_equals_torch_enable_gqa(g, causal):
    mha = _module(g)
    gen = torch.Generator().manual_seed(g)
    x = torch.randn(2, 7, D_MODEL, generator=gen, dtype=torch.float64)
    with torch.no_grad():
        ours, trace = mha(x, mask=causal_mask(7) if causal else None)
        expected = _torch_gqa(mha, x, x, causal)
    torch.testing.assert_close(ours, expected, rtol=0, atol=1e-12)
    assert trace.weights.shape == (2, HEADS, 7, 7)


@pytest.mark.parametrize("g", [6, 2, 1])
def test_cross_attention_with_groups_equals_torch(g):
    mha = _module(g, seed=1)
    gen = torch.Generator().manual_seed(5)
    x, memory = (torch.randn(3, T, D_MODEL, generator=gen, dtype=torch.float64) for T in (4, 9))
    with torch.no_grad():
        ours, _ = mha(x, memory)
        torch.testing.assert_close(ours, _torch_gqa(mha, x, memory, False), rtol=0, atol=1e-12)
        cached, _ = mha(x, cache=mha.cache(memory))
    torch.testing.assert_close(cached, ours, rtol=0, atol=1e-12)


@pytest.mark.parametrize("g,heads_kept", [(6, 6), (3, 3), (1, 1)])
def test_projections_and_the_kv_cache_hold_only_the_key_value_heads(g, heads_kept):
    mha = _module(g)
    head_dim = D_MODEL // HEADS
    assert mha.k_proj.weight.shape == mha.v_proj.weight.shape == (g * head_dim, D_MODEL)
    assert mha.q_proj.weight.shape == mha.out_proj.weight.shape == (D_MODEL, D_MODEL)
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(1, 5, D_MODEL, generator=gen, dtype=torch.float64)
    cache, rows = KVCache(), []
    with torch.no_grad():
        whole, _ = mha(x, mask=causal_mask(5))
        for t in range(5):  # one position at a time: its row of the causal mask is all True
            out, _ = mha(x[:, t:t + 1], cache=cache)
            rows.append(out)
    assert cache.keys.shape == cache.values.shape == (1, heads_kept, 5, head_dim)
    torch.testing.assert_close(torch.cat(rows, 1), whole, rtol=0, atol=1e-12)


def test_groups_share_key_value_heads_as_torch_does():
    """Query heads 0–2 read key/value head 0 and 3–5 head 1: with two kv heads, zeroing the value
    projection of kv head 1 silences exactly query heads 3–5."""
    mha = _module(2)
    with torch.no_grad():
        mha.v_proj.weight[D_MODEL // HEADS:] = 0
        mha.v_proj.bias[D_MODEL // HEADS:] = 0
        x = torch.randn(1, 4, D_MODEL, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
        _, trace = mha(x)
    per_head = trace.output.abs().amax(dim=(0, 2, 3))
    assert (per_head[:3] > 0).all() and (per_head[3:] == 0).all()


def test_the_default_is_plain_multi_head_attention_bit_for_bit():
    """n_kv_heads = n_heads (the default) computes exactly what per-head attention by hand does, in float32."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(4)
        mha = MultiHeadAttention(D_MODEL, HEADS).eval()
    assert mha.n_kv_heads == HEADS and set(mha.state_dict()) == {
        f"{p}_proj.{w}" for p in "qkv" for w in ("weight", "bias")} | {"out_proj.weight", "out_proj.bias"}
    x = torch.randn(2, 6, D_MODEL, generator=torch.Generator().manual_seed(4))
    mask = attention_mask(6, causal=True, valid=None)
    with torch.no_grad():
        ours, _ = mha(x, mask=mask)
        split = [p(x).view(2, 6, HEADS, -1).transpose(1, 2) for p in (mha.q_proj, mha.k_proj, mha.v_proj)]
        scores = (split[0] @ split[1].transpose(-2, -1)) * (1.0 / (D_MODEL // HEADS) ** 0.5)
        weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), -1)
        expected = mha.out_proj((weights @ split[2]).transpose(1, 2).reshape(2, 6, D_MODEL))
    assert torch.equal(ours, expected)


@pytest.mark.parametrize("g", [0, 4, 7, -1])
def test_kv_heads_must_divide_the_query_heads(g):
    with pytest.raises(ValueError, match="n_kv_heads"):
        MultiHeadAttention(D_MODEL, HEADS, n_kv_heads=g)
