"""Bytes, exactly: the KV cache a decoder keeps while it generates, and the score matrix attention holds.

    KV cache          2 · layers · kv_heads · head_dim · T · batch · bytes per value
                      (keys and values, one vector per layer, key/value head and position)
    attention scores  T_q · T_k · heads · batch · bytes per value
                      (one score per query, key and head: the T × T matrix of one layer)

Grouped-query attention (GQA) shares each key/value head among several query heads, so the cache
shrinks by heads / kv_heads; multi-query attention (MQA) is kv_heads = 1.  `PUBLISHED_SHAPES` holds
the attention shapes of a few published models to put these numbers at real sizes.

`sliding_window_path_length` is what a sliding-window mask (explorer.model.attention) costs in depth:
each layer lets information move at most window − 1 positions, so reaching far takes layers.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = [
    "PUBLISHED_SHAPES",
    "AttentionShape",
    "TensorMemory",
    "attention_scores_bytes",
    "kv_cache_bytes",
    "measure_tensor_memory",
    "sliding_window_path_length",
]


def _check_positive(**values) -> None:
    """ValueError naming every argument that is not a positive int (bool is not an int here)."""
    bad = [f"{name}={value!r}" for name, value in values.items()
           if isinstance(value, bool) or not isinstance(value, int) or value < 1]
    if bad:
        raise ValueError(f"need positive integers, got {', '.join(bad)}")


def kv_cache_bytes(n_layers: int, n_kv_heads: int, d_head: int, T: int, batch: int = 1,
                   bytes_per_value: int = 2) -> int:
    """Bytes of a decoder's KV cache after T positions: 2·n_layers·n_kv_heads·d_head·T·batch·bytes_per_value.

    The 2 is keys and values.  bytes_per_value 2 is float16 / bfloat16 (how large models are served),
    4 is float32.  All arguments must be positive integers."""
    _check_positive(n_layers=n_layers, n_kv_heads=n_kv_heads, d_head=d_head, T=T, batch=batch,
                    bytes_per_value=bytes_per_value)
    return 2 * n_layers * n_kv_heads * d_head * T * batch * bytes_per_value


def attention_scores_bytes(T_q: int, T_k: int, n_heads: int, batch: int = 1, bytes_per_value: int = 4) -> int:
    """Bytes of one layer's attention scores (or weights) held at once: T_q·T_k·n_heads·batch·bytes_per_value.

    What a plain implementation materialises (and keeps for the backward pass in training); tiled
    attention (explorer.model.tiled) never holds more than T_q·block of them.  bytes_per_value 4 is
    float32.  All arguments must be positive integers."""
    _check_positive(T_q=T_q, T_k=T_k, n_heads=n_heads, batch=batch, bytes_per_value=bytes_per_value)
    return T_q * T_k * n_heads * batch * bytes_per_value


@dataclass(frozen=True)
class AttentionShape:
    """What the memory of a model's attention depends on, as its published configuration states it."""

    name: str
    n_layers: int
    n_heads: int  # query heads
    n_kv_heads: int  # key/value heads: n_heads without GQA, 1 for MQA
    d_head: int
    max_positions: int  # the context length it was released with
    source: str

    def kv_cache_bytes(self, T: int, batch: int = 1, bytes_per_value: int = 2) -> int:
        return kv_cache_bytes(self.n_layers, self.n_kv_heads, self.d_head, T, batch, bytes_per_value)

    def attention_scores_bytes(self, T: int, batch: int = 1, bytes_per_value: int = 4) -> int:
        """One layer's T × T scores over all its query heads."""
        return attention_scores_bytes(T, T, self.n_heads, batch, bytes_per_value)


# From the published configurations (the config.json each model was released with on the Hugging Face
# Hub, the same numbers as the papers): layers, query heads, key/value heads, hidden size / heads.
PUBLISHED_SHAPES: tuple[AttentionShape, ...] = (
    AttentionShape("GPT-2 small", n_layers=12, n_heads=12, n_kv_heads=12, d_head=64, max_positions=1024,
                   source="Radford et al. 2019; config.json of openai-community/gpt2: n_layer 12, n_head 12, "
                          "n_embd 768, n_positions 1024"),
    AttentionShape("Llama-2-7B", n_layers=32, n_heads=32, n_kv_heads=32, d_head=128, max_positions=4096,
                   source="Touvron et al. 2023 (Llama 2); config.json of meta-llama/Llama-2-7b-hf: "
                          "num_hidden_layers 32, num_attention_heads 32, num_key_value_heads 32, "
                          "hidden_size 4096, max_position_embeddings 4096"),
    AttentionShape("Mistral-7B (GQA)", n_layers=32, n_heads=32, n_kv_heads=8, d_head=128, max_positions=32768,
                   source="Jiang et al. 2023 (Mistral 7B); config.json of mistralai/Mistral-7B-v0.1: "
                          "num_hidden_layers 32, num_attention_heads 32, num_key_value_heads 8, "
                          "hidden_size 4096, max_position_embeddings 32768, sliding_window 4096"),
    AttentionShape("Llama-3-8B (GQA)", n_layers=32, n_heads=32, n_kv_heads=8, d_head=128, max_positions=8192,
                   source="Meta 2024 (Llama 3); config.json of meta-llama/Meta-Llama-3-8B: num_hidden_layers 32, "
                          "num_attention_heads 32, num_key_value_heads 8, hidden_size 4096, "
                          "max_position_embeddings 8192"),
)


def sliding_window_path_length(T: int, window: int) -> int | None:
    """Layers of sliding-window attention needed before position T − 1 can read position 0.

    With `sliding_window_mask(T, window)` a position sees itself and the window − 1 before it, so one
    layer carries information window − 1 positions forward: ⌈(T − 1) / (window − 1)⌉ layers (0 for
    T = 1; 1 once window ≥ T, as with full causal attention).  window = 1 never connects two
    positions: None for T > 1."""
    _check_positive(T=T, window=window)
    if T == 1:
        return 0
    if window == 1:
        return None
    return -(-(T - 1) // (window - 1))  # the ceiling, in integers


# --- measured: the bytes of tensors a computation holds at once -----------------------------------------


@dataclass(frozen=True)
class TensorMemory:
    """What a computation allocated: the most bytes of its tensors alive at one moment, and its largest one."""

    peak_bytes: int
    largest_bytes: int
    largest_shape: tuple[int, ...]


class _Tally(TorchDispatchMode):
    """Counts each new storage a torch operation returns while it is alive (views of a storage already
    counted, or of one made before, add nothing); tensors that existed before are not counted."""

    def __init__(self):
        super().__init__()
        self.live: dict[int, list] = {}  # storage pointer → [bytes, tensors alive on it]
        self.outside: set[int] = set()  # storages of the arguments: made before, not counted
        self.current = self.peak = self.largest = 0
        self.largest_shape: tuple[int, ...] = ()

    def _release(self, pointer: int) -> None:
        entry = self.live[pointer]
        entry[1] -= 1
        if entry[1] == 0:
            self.current -= entry[0]
            del self.live[pointer]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        for value in torch.utils._pytree.tree_leaves((args, kwargs)):
            if isinstance(value, torch.Tensor):
                pointer = value.untyped_storage().data_ptr()
                if pointer not in self.live:
                    self.outside.add(pointer)
        for value in torch.utils._pytree.tree_leaves(result):
            if not isinstance(value, torch.Tensor) or value.untyped_storage().data_ptr() in self.outside:
                continue
            pointer, size = value.untyped_storage().data_ptr(), value.untyped_storage().nbytes()
            if pointer not in self.live:
                self.live[pointer] = [size, 0]
                self.current += size
                self.peak = max(self.peak, self.current)
                if size > self.largest:
                    self.largest, self.largest_shape = size, tuple(value.shape)
            self.live[pointer][1] += 1
            weakref.finalize(value, self._release, pointer)
        return result


def measure_tensor_memory(fn: Callable, *args, **kwargs) -> tuple[object, TensorMemory]:
    """Run fn(*args, **kwargs) and measure the tensors it makes: (its result, TensorMemory).

    Counted at torch's dispatcher, on any device: every storage an operation returns, from when it is
    made until its last tensor is gone.  Not counted: the arguments, and memory outside tensors
    (the allocator's slack, Python objects), so this is the lower bound any implementation pays."""
    tally = _Tally()
    with tally:
        result = fn(*args, **kwargs)
    return result, TensorMemory(tally.peak, tally.largest, tally.largest_shape)
