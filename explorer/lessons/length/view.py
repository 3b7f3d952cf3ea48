"""The length-and-memory lesson, declared: its settings (the controls) and its views (settings →
arrays), one for the page and one per section with settings of its own.  No Streamlit; the runtime
(explorer/serve) caches them and explorer/lessons/length/length.py draws them.

    LengthSettings / length_view     accuracy against input length per encoding; one model's
                                     cross-attention at a trained length and at a longer one
    MemorySettings / memory_view     bytes against T (KV cache, T × T scores) for the shipped models,
                                     MiniLM and published shapes; measured peak of an attention layer

and explorer/lessons/length/parts.py the sections on making attention cheaper (GQA, tiled attention,
sliding windows).
"""

from __future__ import annotations

import json
import types
from dataclasses import dataclass

import numpy as np
import torch

from explorer.analysis.claims import PUBLISHED_LENGTHS
from explorer.analysis.length import (
    REVERSAL_MODELS,
    BucketsMet,
    accuracy_by_length,
    difference_without_positions,
    longest_length,
    mirror_difference,
    sequences_right,
    stretched_model,
    t5_buckets_met,
    trained_lengths,
)
from explorer.analysis.memory import PUBLISHED_SHAPES, attention_scores_bytes, kv_cache_bytes, measure_tensor_memory
from explorer.kit.claims import Claim
from explorer.kit.settings import setting
from explorer.training.minilm import MiniLMError, minilm_dir
from explorer.training.pretrained import PretrainedModelError, load_model

__all__ = ["ENCODING_LABELS", "LENGTHS", "LENGTH_CLAIMS", "LengthSettings", "LengthView", "MemorySettings",
           "MemoryView", "length_view", "measured_attention", "memory_view", "runners"]

ENCODING_LABELS = {"sinusoidal": "sinusoidal", "learned": "learned table", "index": "raw index",
                   "none": "no encoding", "rope": "RoPE", "alibi": "ALiBi", "t5": "T5 buckets"}
SHIPPED = "reverse-sinusoidal-h4-l2"  # whose attention layer is measured (d_model 64, 4 heads)
# The lengths tested: every other length inside the trained band (2–10), each length just past it, then
# wider steps (what a cold view costs is mostly decoding inside the band, where every answer is long).
LENGTHS = (2, 4, 6, 8, 10, 11, 12, 13, 14, 16, 18, 20, 25, 30, 35, 40)
SEED = 31  # the lesson's own inputs: drawn from generators seeded here, never torch's global one


def _readonly(array) -> np.ndarray:
    array = np.array(array)
    array.setflags(write=False)  # cached and shared between sessions
    return array


# --- 1 · past the trained length ------------------------------------------------------------------


@dataclass(frozen=True)
class LengthSettings:
    longest: int = setting(30, "Longest input tested (letters)", url="longest", options=(16, 20, 30, 40),
                           help="Selected lengths from 2 up to this, 100 inputs each, for every shipped model "
                           "(the learned table's stops at its last row).")
    encoding: str = setting("sinusoidal", "Model whose attention is drawn", url="encoding",
                            options=tuple(REVERSAL_MODELS), format=lambda e: ENCODING_LABELS.get(e, e))
    unseen: int = setting(15, "Its input length (letters)", url="n", bounds=(11, 30, 1),
                          help="Longer than any input it was trained on (2–10 letters).")


@dataclass(frozen=True)
class AttentionAt:
    """One model's cross-attention (last decoder layer, mean over heads) reading one input, teacher-forced:
    row i writes output letter i, which is input letter n − 1 − i.  `refused` instead of a grid for a
    length the model cannot read."""

    length: int
    letters: tuple[str, ...] = ()
    weights: np.ndarray | None = None  # (n + 1, n): the last row writes </s>
    on_target: float = float("nan")  # mean weight of rows 0 … n − 1 on the letter they write
    reversed_right: bool = False  # greedy decoding writes the whole reverse
    refused: str = ""


@dataclass(frozen=True)
class LengthView:
    lengths: np.ndarray
    trained: tuple[int, int]
    models: types.MappingProxyType  # encoding -> model name
    accuracy: types.MappingProxyType  # encoding -> accuracy per length, NaN where refused
    refused: types.MappingProxyType  # encoding -> the reason it stops ("" if it does not)
    card: types.MappingProxyType  # encoding -> the card's held-out accuracy
    learned_rows: int | None  # rows of the learned model's position table (None: no learned model shipped)
    seen: AttentionAt
    unseen: AttentionAt
    damaged: types.MappingProxyType  # encoding -> why its model could not load (the page names it)
    t5_buckets: types.MappingProxyType | None = None  # stack -> BucketsMet at the longest length tested
    # the raw-index model's largest logit difference from its own weights run with no encoding (None: not shipped)
    index_unseen: float | None = None
    # the ALiBi model's largest logit difference between an input and the same input backwards (None: not shipped)
    alibi_mirror: float | None = None


def _attention_at(name: str, n: int) -> AttentionAt:
    if n > longest_length(name):
        try:
            accuracy_by_length(name, [n], samples=1)  # the learned table refuses, naming the position
        except ValueError as problem:
            return AttentionAt(n, refused=str(problem))
    loaded, model = load_model(name), stretched_model(name)
    task = loaded.task
    first = task.index[task.symbols[0]]
    generator = torch.Generator().manual_seed(SEED + n)
    source = torch.randint(first, first + len(task.symbols), (1, n), generator=generator)
    target = torch.cat([torch.tensor([[task.index["<s>"]]]), source.flip(1)], dim=1)  # (1, n + 1)
    with torch.no_grad():
        _, trace = model(source, target)
    weights = trace.decoder_layers[-1].cross_attention.weights[0].double().mean(0).numpy()  # (n + 1, n)
    on_target = float(np.mean([weights[i, n - 1 - i] for i in range(n)]))
    right = bool(sequences_right(model, task, source)[0])
    letters = tuple(task.vocab[int(t)] for t in source[0])
    return AttentionAt(n, letters, _readonly(weights), on_target, right)


def length_view(settings: LengthSettings) -> LengthView:
    lengths = np.array([n for n in LENGTHS if n <= settings.longest])
    accuracy, refused, card, damaged = {}, {}, {}, {}
    for encoding, name in REVERSAL_MODELS.items():
        refused[encoding] = ""
        try:
            reachable = [int(n) for n in lengths if n <= longest_length(name)]
            got = accuracy_by_length(name, reachable)
            card[encoding] = float(load_model(name).card["heldout_accuracy"])
        except PretrainedModelError as problem:  # a damaged file: the page names it and how to regenerate it
            damaged[encoding] = str(problem)
            accuracy[encoding], card[encoding] = _readonly(np.full(len(lengths), np.nan)), float("nan")
            continue
        accuracy[encoding] = _readonly([got.get(int(n), np.nan) for n in lengths])
        if len(reachable) < len(lengths):
            try:
                accuracy_by_length(name, [longest_length(name) + 1], samples=1)  # names the position
            except ValueError as problem:
                refused[encoding] = str(problem)
    learned = REVERSAL_MODELS.get("learned")
    rows = None if not learned or "learned" in damaged else load_model(learned).model.config.max_len
    name = REVERSAL_MODELS[settings.encoding]
    loaded = [n for e, n in REVERSAL_MODELS.items() if e not in damaged]
    trained = trained_lengths(name if settings.encoding not in damaged else loaded[0]) if loaded else (2, 10)
    if settings.encoding in damaged:
        seen = AttentionAt(trained[1], refused=damaged[settings.encoding])
        unseen = AttentionAt(settings.unseen, refused=damaged[settings.encoding])
    else:
        seen, unseen = _attention_at(name, trained[1]), _attention_at(name, settings.unseen)
    t5 = REVERSAL_MODELS.get("t5")
    buckets: dict[str, BucketsMet] | None = None
    if t5 and "t5" not in damaged:
        buckets = t5_buckets_met(t5, int(lengths[-1]))
    index = REVERSAL_MODELS.get("index")
    index_unseen = difference_without_positions(index) if index and "index" not in damaged else None
    alibi = REVERSAL_MODELS.get("alibi")
    alibi_mirror = mirror_difference(alibi) if alibi and "alibi" not in damaged else None
    return LengthView(_readonly(lengths), trained, types.MappingProxyType(dict(REVERSAL_MODELS)),
                      types.MappingProxyType(accuracy), types.MappingProxyType(refused), types.MappingProxyType(card),
                      rows, seen, unseen, types.MappingProxyType(damaged),
                      None if buckets is None else types.MappingProxyType(buckets), index_unseen, alibi_mirror)


# --- what the prose under the key figure says about it (explorer/kit/claims.py) -------------------


def _at(view, encoding: str, n: int) -> float:
    return float(view.accuracy[encoding][list(view.lengths).index(n)])


def _inside(view, encoding: str) -> float:
    low, high = view.trained
    return float(np.mean(view.accuracy[encoding][(view.lengths >= low) & (view.lengths <= high)]))


def runners(view) -> list[str]:
    """The encodings whose model reverses well (90 % or more) at the longest trained length and takes
    longer inputs: the ones whose curve goes on past the band."""
    high = view.trained[1]
    return [e for e in view.accuracy if e not in view.damaged and not view.refused[e] and _at(view, e, high) >= 0.9]


def _falls(s) -> bool:
    view = s.view
    return bool(runners(view)) and all(_at(view, e, int(view.lengths[-1])) <= 0.1 for e in runners(view))


def _fall_values(s) -> dict:
    view = s.view
    high, last = view.trained[1], int(view.lengths[-1])
    lengths = [n for n in (high, high + 1, high + 2, high + 3) if n in view.lengths and n < last] + [last]
    falls = [f"{ENCODING_LABELS[e]} reverses {_at(view, e, lengths[0]):.0%} at {lengths[0]} letters, "
             + ", ".join(f"{_at(view, e, n):.0%} at {n}" for n in lengths[1:-1]) + f" and {_at(view, e, last):.0%}"
             f" at {last}" for e in runners(view)]
    return {"runners": ", ".join(ENCODING_LABELS[e] for e in runners(view)), "fall": "; ".join(falls)}


INDEX_UNSEEN = 1e-3  # logits this close: the raw index changes nothing the model computes


def _fail_inside(s) -> bool:
    """Both fail inside the band, and the raw-index model computes what its weights compute with no
    encoding: its index never reaches attention (the sentence says why)."""
    view = s.view
    return (all(e in view.accuracy and e not in view.damaged and _inside(view, e) < 0.5 for e in ("index", "none"))
            and view.index_unseen is not None and view.index_unseen < INDEX_UNSEEN)


def _alibi_mirror(s) -> bool:
    """ALiBi's model fails inside the band, and its outputs for an input and for the input backwards are the same."""
    view = s.view
    return ("alibi" in view.accuracy and "alibi" not in view.damaged and _inside(view, "alibi") < 0.5
            and view.alibi_mirror is not None and view.alibi_mirror < INDEX_UNSEEN)


def _t5_values(s) -> dict:
    met = s.view.t5_buckets
    low, high = s.view.trained
    return {"low": low, "high": high, "n": met["encoder"].length, "encoder": len(met["encoder"].untrained),
            "decoder": len(met["decoder"].untrained)}


LENGTH_CLAIMS = {
    # Every model that reverses well inside the band and takes longer inputs is (nearly) never right at
    # the longest length tested.
    "falls_past_band": Claim(_falls, _fall_values),
    # The raw index and no encoding reverse fewer than half of the inputs inside the band, and the raw-index
    # model's logits are its own weights' with no encoding (to float rounding).
    "fail_inside": Claim(_fail_inside, lambda s: {"difference": s.view.index_unseen}),
    # ALiBi's model reverses fewer than half inside the band, and cannot tell an input from its mirror image.
    "alibi_mirror": Claim(_alibi_mirror, lambda s: {"difference": s.view.alibi_mirror,
                                                    "inside": _inside(s.view, "alibi")}),
    # T5's model, at the longest length tested, looks up buckets no input of the trained lengths reached.
    "t5_buckets": Claim(lambda s: s.view.t5_buckets is not None
                        and any(m.untrained for m in s.view.t5_buckets.values()), _t5_values),
}


# --- 2 · bytes against T --------------------------------------------------------------------------


@dataclass(frozen=True)
class MemorySettings:
    T: int = setting(4096, "Context length T in the table", url="mem_T",
                     options=(512, 1024, 2048, 4096, 8192, 32768, 131072), widget="select_slider")
    bytes_per_value: int = setting(2, "Cache values stored as", url="cache_bytes", options=(2, 4), widget="radio",
                                   format=lambda b: {2: "16-bit (2 bytes)", 4: "32-bit (4 bytes)"}[b],
                                   help="Large models are served in 16-bit floats; the scores are counted in "
                                        "32-bit floats, as softmax is usually computed.")


@dataclass(frozen=True)
class Shape:
    """A model's attention shape, as the memory formulas need it, and where it comes from."""

    name: str
    kind: str  # "shipped", "MiniLM" or "published"
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    max_positions: int | None  # None: no table, no maximum built in
    source: str


@dataclass(frozen=True)
class MemoryView:
    shapes: tuple[Shape, ...]
    missing: tuple[str, ...]  # shapes that could not be read, and why
    Ts: np.ndarray
    kv: np.ndarray  # (shapes, Ts) bytes of the KV cache at each T
    scores: np.ndarray  # (shapes, Ts) bytes of one layer's T × T scores (float32)
    kv_at: np.ndarray  # (shapes,) at settings.T
    scores_at: np.ndarray
    measured_T: np.ndarray  # an attention layer of the shipped models, measured here
    measured_peak: np.ndarray
    measured_largest: np.ndarray
    formula: np.ndarray  # attention_scores_bytes at measured_T
    lengths: tuple  # the lecture's maximum lengths, with sources (analysis.claims.PUBLISHED_LENGTHS)


def _shapes() -> tuple[list[Shape], list[str]]:
    shapes, missing = [], []
    for name in (SHIPPED,):
        try:
            config = load_model(name).model.config
        except PretrainedModelError as problem:
            missing.append(f"{name}: {problem}")
            continue
        maximum = config.max_len - 1 if config.encoding == "learned" else None
        shapes.append(Shape("shipped reversal models", "shipped", config.n_layers, config.n_heads, config.n_heads,
                            config.d_model // config.n_heads, maximum,
                            f"pretrained/{name}.json (decoder: {config.n_layers} layers, {config.n_heads} heads, "
                            f"d_model {config.d_model})"))
    try:
        hf = json.loads((minilm_dir() / "config.json").read_text())
        shapes.append(Shape("all-MiniLM-L6-v2 (encoder)", "MiniLM", hf["num_hidden_layers"], hf["num_attention_heads"],
                            hf["num_attention_heads"], hf["hidden_size"] // hf["num_attention_heads"],
                            hf["max_position_embeddings"],
                            f"pretrained/all-MiniLM-L6-v2/config.json: {hf['num_hidden_layers']} layers, "
                            f"{hf['num_attention_heads']} heads, hidden size {hf['hidden_size']}, "
                            f"{hf['max_position_embeddings']} positions"))
    except (MiniLMError, OSError, ValueError, KeyError) as problem:
        missing.append(f"all-MiniLM-L6-v2: {problem}")
    shapes += [Shape(s.name, "published", s.n_layers, s.n_heads, s.n_kv_heads, s.d_head, s.max_positions, s.source)
               for s in PUBLISHED_SHAPES]
    return shapes, missing


def measured_attention(T: int) -> tuple[int, int]:
    """(peak bytes, largest tensor's bytes) of one forward pass of the shipped model's first encoder
    attention layer over T random vectors (float32, no gradient), counted by measure_tensor_memory."""
    layer = load_model(SHIPPED).model.encoder.layers[0].self_attn
    generator = torch.Generator().manual_seed(SEED + T)
    x = torch.randn(1, T, layer.d_model, generator=generator)
    with torch.no_grad():
        _, memory = measure_tensor_memory(layer, x)
    return memory.peak_bytes, memory.largest_bytes


def memory_view(settings: MemorySettings) -> MemoryView:
    shapes, missing = _shapes()
    Ts = 2 ** np.arange(4, 18)  # 16 … 131072

    def kv(s, T):
        return kv_cache_bytes(s.n_layers, s.n_kv_heads, s.d_head, int(T), bytes_per_value=settings.bytes_per_value)

    def scores(s, T):
        return attention_scores_bytes(int(T), int(T), s.n_heads)

    measured_T = np.array([64, 128, 256, 512, 1024])
    heads = load_model(SHIPPED).model.config.n_heads
    measured = [measured_attention(int(T)) for T in measured_T]
    return MemoryView(
        tuple(shapes), tuple(missing), _readonly(Ts),
        _readonly(np.array([[kv(s, T) for T in Ts] for s in shapes], dtype=np.float64)),
        _readonly(np.array([[scores(s, T) for T in Ts] for s in shapes], dtype=np.float64)),
        _readonly([kv(s, settings.T) for s in shapes]), _readonly([scores(s, settings.T) for s in shapes]),
        _readonly(measured_T), _readonly([m[0] for m in measured]), _readonly([m[1] for m in measured]),
        _readonly([attention_scores_bytes(int(T), int(T), heads) for T in measured_T]), PUBLISHED_LENGTHS)
