"""The length-and-memory lesson's sections on how attention is made cheaper (explorer/lessons/length/view.py
has the rest): grouped-query attention, tiled attention and sliding-window masks.  Each is a
settings dataclass (its controls) and a view (settings → arrays).  No Streamlit."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from explorer.analysis.memory import PUBLISHED_SHAPES, kv_cache_bytes, measure_tensor_memory, sliding_window_path_length
from explorer.kit.settings import setting
from explorer.model.attention import MultiHeadAttention, causal_mask, sliding_window_mask
from explorer.model.building import seeded
from explorer.model.tiled import tiled_attention

__all__ = ["GQA_MODEL", "GqaSettings", "TiledSettings", "WindowSettings", "gqa_view", "n_blocks", "tiled_view",
           "window_view"]

SEED = 31
GQA_D_MODEL, GQA_T = 64, 8
TILED_D = 16
MEASURED_BLOCK = 32
MEASURED_T = (128, 256, 512, 1024)
GQA_MODEL = next(s for s in PUBLISHED_SHAPES if s.name == "Llama-2-7B")  # the full-size shape the bytes use


def _readonly(array) -> np.ndarray:
    array = np.array(array)
    array.setflags(write=False)  # cached and shared between sessions
    return array


def _divisors(settings) -> tuple[int, ...]:
    return tuple(g for g in range(1, settings.heads + 1) if settings.heads % g == 0)


@dataclass(frozen=True)
class GqaSettings:
    heads: int = setting(8, "Query heads h", url="gqa_h", options=(4, 8))
    kv_heads: int = setting(2, "Key/value heads g", url="gqa_g", options=_divisors, widget="select_slider",
                            help="g = h: ordinary multi-head attention; 1 < g < h: grouped-query (GQA); "
                                 "g = 1: multi-query (MQA).")


@dataclass(frozen=True)
class GqaView:
    heads: int
    kv_heads: int
    d_head: int
    weights: np.ndarray  # (heads, T, T): query head i reads key/value head i // (heads / kv_heads)
    group: np.ndarray  # (heads,): the key/value head each query head reads
    kv_counts: tuple[int, ...]  # h, g, 1
    cache_here: np.ndarray  # bytes of this layer's cache at GQA_T positions (float32) for each count
    cache_tensors: int  # bytes of the keys and values this layer made for g, counted from the tensors
    cache_full: np.ndarray  # bytes of GQA_MODEL's cache at its context length: its heads, heads · g / h, 1
    full_kv_heads: tuple[int, ...]
    full_T: int


def gqa_view(settings: GqaSettings) -> GqaView:
    h, g = settings.heads, settings.kv_heads
    with seeded(SEED + 10 * h + g):
        layer = MultiHeadAttention(GQA_D_MODEL, h, n_kv_heads=g).eval()
        x = torch.randn(1, GQA_T, GQA_D_MODEL)
    with torch.no_grad():
        _, trace = layer(x, mask=causal_mask(GQA_T))
        keys, values = layer.k_proj(x), layer.v_proj(x)  # (1, T, g · d_head): what a KV cache keeps
    d_head = GQA_D_MODEL // h
    counts = tuple(dict.fromkeys((h, g, 1)))
    full = tuple(1 if c == 1 else GQA_MODEL.n_heads * c // h for c in counts)  # the same ratio h / g; MQA: 1
    return GqaView(
        h, g, d_head, _readonly(trace.weights[0].double().numpy()), _readonly(np.arange(h) // (h // g)), counts,
        _readonly([kv_cache_bytes(1, c, d_head, GQA_T, bytes_per_value=4) for c in counts]),
        keys.numel() * keys.element_size() + values.numel() * values.element_size(),
        _readonly([kv_cache_bytes(GQA_MODEL.n_layers, c, GQA_MODEL.d_head, GQA_MODEL.max_positions) for c in full]),
        full, GQA_MODEL.max_positions)


# --- tiled attention ------------------------------------------------------------------------------


def n_blocks(settings) -> int:
    return -(-settings.T // settings.block)


@dataclass(frozen=True)
class TiledSettings:
    T: int = setting(12, "Sequence length T", url="tile_T", options=(6, 8, 12, 16, 24, 32))
    block: int = setting(4, "Keys per block", url="block", bounds=lambda s: (1, s.T, 1))
    causal: bool = setting(False, "Causal mask", url="tile_causal", flag=True)
    shown: int = setting(1, "Key blocks read so far", url="tile_step", bounds=lambda s: (1, n_blocks(s), 1),
                         help="Step through the key blocks: each one updates every query's running max and sum.")


@dataclass(frozen=True)
class TiledView:
    T: int
    block: int
    n_blocks: int
    shown: int  # key blocks read so far
    scores: np.ndarray  # (T, T) the scores, NaN where masked: drawn to show the tiles, never held by the method
    running_max: np.ndarray  # (n_blocks, T) per query after each block (−inf: no key seen yet)
    running_sum: np.ndarray  # (n_blocks, T)
    weights_so_far: np.ndarray  # (T, T) exp(score − running max) / running sum over the keys read so far, NaN after
    max_error: float  # |tiled − plain attention| after the last block, float64
    held: int  # score values held at most (one tile)
    full: int  # values of the whole score matrix
    measured_block: int
    measured_T: np.ndarray  # peak bytes of tensors, measured (MEASURED_BLOCK keys per block), float64, one head
    measured_tiled: np.ndarray
    measured_plain: np.ndarray
    Ts: np.ndarray  # closed-form bytes of scores held at once against T, float64, one head
    bytes_tiled: np.ndarray
    bytes_plain: np.ndarray


def _plain(q, k, v, causal: bool):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def _measured(T: int, causal: bool) -> tuple[int, int]:
    """Peak bytes of the tensors made by tiled attention (MEASURED_BLOCK keys per block) and by plain
    attention over T random float64 vectors, one head."""
    generator = torch.Generator().manual_seed(SEED + T)
    q, k, v = (torch.randn(1, T, TILED_D, generator=generator, dtype=torch.float64) for _ in range(3))
    _, tiled = measure_tensor_memory(lambda: tiled_attention(q, k, v, MEASURED_BLOCK, causal=causal, keep_states=False))
    _, plain = measure_tensor_memory(lambda: torch.softmax(
        (q @ k.transpose(-2, -1) / math.sqrt(TILED_D)).masked_fill(~causal_mask(T), float("-inf")) if causal
        else q @ k.transpose(-2, -1) / math.sqrt(TILED_D), dim=-1) @ v)
    return tiled.peak_bytes, plain.peak_bytes


def tiled_view(settings: TiledSettings) -> TiledView:
    T, block, causal = settings.T, settings.block, settings.causal
    generator = torch.Generator().manual_seed(SEED + T)
    q, k, v = (torch.randn(1, T, TILED_D, generator=generator, dtype=torch.float64) for _ in range(3))
    out, trace = tiled_attention(q, k, v, block, causal=causal)
    scores = (q @ k.transpose(-2, -1))[0] / math.sqrt(TILED_D)
    if causal:
        scores = scores.masked_fill(~causal_mask(T), float("nan"))
    last = trace.blocks[settings.shown - 1]
    seen = scores[:, :last.stop]
    so_far = torch.exp(seen - last.running_max[0][:, None]) / last.running_sum[0][:, None]
    weights = torch.full((T, T), float("nan"), dtype=torch.float64)
    weights[:, :last.stop] = so_far
    measured = [_measured(n, causal) for n in MEASURED_T]
    Ts = 2 ** np.arange(4, 18)
    return TiledView(
        T, block, len(trace.blocks), settings.shown, _readonly(scores.numpy()),
        _readonly(torch.stack([b.running_max[0] for b in trace.blocks]).numpy()),
        _readonly(torch.stack([b.running_sum[0] for b in trace.blocks]).numpy()),
        _readonly(weights.numpy()), float((out - _plain(q, k, v, causal)).abs().max()),
        trace.peak_scores_held, trace.full_scores, MEASURED_BLOCK, _readonly(MEASURED_T),
        _readonly([m[0] for m in measured]), _readonly([m[1] for m in measured]),
        _readonly(Ts), _readonly(Ts * np.minimum(block, Ts) * 8.0), _readonly(Ts * Ts * 8.0))


# --- sliding-window masks -------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowSettings:
    T: int = setting(16, "Sequence length T", url="win_T", options=(8, 12, 16, 24, 32))
    window: int = setting(4, "Window (positions each one sees, itself included)", url="window",
                          bounds=lambda s: (1, s.T, 1))
    layers: int = setting(2, "Layers stacked", url="win_layers", bounds=(1, 8, 1))


@dataclass(frozen=True)
class WindowView:
    T: int
    window: int
    layers: int
    causal: np.ndarray  # (T, T) booleans
    sliding: np.ndarray  # (T, T)
    reach: np.ndarray  # (T, T): after `layers` layers of the sliding mask, can t read s?
    path: int | None  # layers before position T − 1 reads position 0 (None: never)
    causal_path: int
    windows: np.ndarray  # every window 1 … T
    paths: np.ndarray  # the path length for each (NaN: never)
    reach_back: int  # how far back position T − 1 reads after `layers` layers


def window_view(settings: WindowSettings) -> WindowView:
    T, window, layers = settings.T, settings.window, settings.layers
    sliding = sliding_window_mask(T, window)
    step = sliding.to(torch.int64)
    reach = step.clone()
    for _ in range(layers - 1):
        reach = ((reach @ step) > 0).to(torch.int64)  # t reads s through some u one layer below
    paths = [sliding_window_path_length(T, w) for w in range(1, T + 1)]
    back = int(reach[T - 1].nonzero().min())
    return WindowView(
        T, window, layers, _readonly(causal_mask(T).numpy()), _readonly(sliding.numpy()),
        _readonly(reach.bool().numpy()), sliding_window_path_length(T, window), sliding_window_path_length(T, T),
        _readonly(np.arange(1, T + 1)), _readonly([np.nan if p is None else p for p in paths]), T - 1 - back)
