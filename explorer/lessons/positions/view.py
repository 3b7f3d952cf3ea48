"""The positional-encodings lesson, declared: its settings (the controls) and views (settings → arrays),
one for the page (sections 1 and 2: the matrix and its geometry) and one per section with settings of
its own (3 and 4: the shipped reversal models; 5: the relative schemes).  The runtime (explorer/serve)
caches them; positions.py (the page) draws them.  The computations are explorer.lessons.positions.encodings and
explorer.lessons.positions.relative."""

from __future__ import annotations

import types
from dataclasses import dataclass

import numpy as np
import torch

from explorer.caching import loaded
from explorer.kit.measured import Measured
from explorer.kit.settings import setting
from explorer.lessons.positions.encodings import (
    LEARNED_MODEL,
    LECTURE_WORDS,
    MATRIX_KINDS,
    MAX_DIMS,
    MAX_POSITIONS,
    MINILM,
    REVERSE_TASK,
    SHIPPED_ENCODINGS,
    DrawPlan,
    MatrixView,
    PretrainedModelError,
    ShuffleResult,
    colour_bound,
    draw_plan,
    float64_encoder,
    learned_table,
    matrix_view,
    reversal_run,
    shuffle_demo,
)
from explorer.lessons.positions.relative import (
    alibi_causal_bias,
    rope_offset_scores,
    rope_rotation_degrees,
    rope_vectors,
    t5_exact_buckets,
    t5_offset_buckets,
)
from explorer.model.building import seeded
from explorer.model.positional import alibi_slopes, t5_relative_buckets
from explorer.training.pretrained import build_model, load_model, model_name
from explorer.training.tasks import get_task

from .boxes import added_not_concatenated, index_on_one_dimension, order_seen, sinusoidal_bounds


def slope_text(slope: float) -> str:
    """An ALiBi slope as 1/n where it is one."""
    inverse = 1.0 / slope
    return f"1/{inverse:.0f}" if abs(inverse - round(inverse)) < 1e-9 else f"{slope:.4g}"

__all__ = ["BASES", "BLOCKS", "INPUTS", "LECTURE", "MEASURES", "SCHEMES", "ModelSettings", "ModelsView",
           "PositionSettings", "PositionView", "RelativeSettings", "RelativeView", "models_view", "position_view",
           "relative_view", "slope_text"]

BASES = (10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000)
MEASURES = {"dot product": "dot", "cosine": "cosine"}
LECTURE = {"kind": "sinusoidal", "n_positions": 4, "d_model": 4, "base": 100}  # "I am a robot"
CLASSIC = {"kind": "sinusoidal", "n_positions": 100, "d_model": 512, "base": 10000}  # the paper's picture


def _sized(settings) -> bool:
    return settings.kind not in ("learned", MINILM)


@dataclass(frozen=True)
class PositionSettings:
    """Sections 1 and 2: which absolute encoding, its size, and how two positions are compared."""

    kind: str = setting("sinusoidal", "Encoding", url="kind", options=MATRIX_KINDS, widget="radio",
                        help=f"learned: the table the shipped model `{LEARNED_MODEL}` learned; MiniLM: the table of a "
                        "real model, all-MiniLM-L6-v2 (512 × 384). Their sizes are fixed.")
    n_positions: int = setting(4, "Positions", url="positions", bounds=(1, MAX_POSITIONS, 1), enabled=_sized,
                               help="Rows of the matrix: positions 0 … n − 1.")
    d_model: int = setting(4, "Dimensions (d_model)", url="d_model", bounds=(1, MAX_DIMS, 1), enabled=_sized,
                           help="Columns of the matrix.")
    base: int = setting(100, "Base", url="base", options=BASES, widget="select_slider",
                        enabled=lambda s: s.kind == "sinusoidal",
                        help="Sinusoidal only: dimension pair i turns at frequency 1 / base^(2i/d). The paper uses "
                        "10000; the lecture's small table uses 100.")
    measure: str = setting("dot product", "Similarity", url="similarity", options=tuple(MEASURES), widget="radio",
                           help="How two positions' vectors are compared in section 2.")


@dataclass(frozen=True)
class PositionView:
    """The matrix and its geometry (`matrix`); `problem`: why the kind asked for could not be shown
    (a damaged model file), the sinusoidal matrix standing in for it."""

    settings: PositionSettings
    matrix: MatrixView
    row_labels: tuple[str, ...] | None  # the lecture's words, when the rows are its four positions
    lecture_table: bool  # exactly the lecture's table: d = 4, base 100, four positions
    bound: float | None  # where the matrix's colours stop (±), None: its own range
    neighbours: types.MappingProxyType  # matrix.neighbours: k -> mean cosine of p and p + k (1, 10), None if undefined
    problem: str | None = None
    boxes: tuple[Measured, ...] = ()  # claims, measured: the sinusoidal range, added not concatenated
    index: types.MappingProxyType | None = None  # the index kind: what the shipped index model does with it
    start: tuple[float, float] | None = None  # learned: the last row against its initial draw (learned_start)


def position_view(settings: PositionSettings) -> PositionView:
    kind, problem = settings.kind, None
    args = (settings.n_positions, settings.d_model, float(settings.base), MEASURES[settings.measure])
    try:
        matrix = matrix_view(kind, *args)
    except PretrainedModelError as error:  # the learned tables live in shipped models' weights
        kind, problem = "sinusoidal", f"{error}\n\nShowing the sinusoidal matrix instead."
        matrix = matrix_view(kind, *args)
    lecture_rows = kind not in ("learned", MINILM) and matrix.shape[0] == len(LECTURE_WORDS)
    labels = tuple(f"{p} · {w}" for p, w in enumerate(LECTURE_WORDS)) if lecture_rows else None
    lecture = lecture_rows and kind == "sinusoidal" and settings.d_model == 4 and settings.base == 100
    boxes = (sinusoidal_bounds(settings.n_positions, settings.d_model, float(settings.base)),
             added_not_concatenated(settings.d_model))
    letters = index_letters() if kind == "index" else None
    if letters is not None:
        boxes += (index_on_one_dimension(letters, get_task(REVERSE_TASK).max_input_tokens - 1),)
    return PositionView(settings, matrix, labels, lecture, colour_bound(kind), matrix.neighbours,
                        problem, boxes, index_vanishes() if kind == "index" else None,
                        learned_start() if kind == "learned" else None)


@loaded(1)
def learned_start(name: str = LEARNED_MODEL) -> tuple[float, float]:
    """The last row of a shipped learned table (a position no training input reaches) beside the row drawn
    for it at initialisation, the model rebuilt from its card's seed: (their cosine, length ratio)."""
    shipped = load_model(name)
    with seeded(shipped.card["seed"]):
        fresh = build_model(shipped.card["kind"], shipped.task, shipped.card["config"])
    start = fresh.encoder.position.table.detach().to(torch.float64)[-1].numpy()
    last = learned_table(name)[-1]
    lengths = np.linalg.norm(start), np.linalg.norm(last)
    return float(start @ last / (lengths[0] * lengths[1])), float(lengths[1] / lengths[0])


@torch.no_grad()
def index_letters() -> np.ndarray | None:
    """The letters' embeddings of the shipped index model as its encoder adds them to the position (scaled
    by √d), float64, one row per letter A–P; None when the model is missing."""
    try:
        encoder = float64_encoder("index")
    except PretrainedModelError:
        return None
    task = get_task(REVERSE_TASK)
    ids = torch.tensor(task.encode([chr(ord("A") + i) for i in range(16)]))
    scale = np.sqrt(encoder.config.d_model) if encoder.config.scale_embeddings else 1.0
    return encoder.embed(ids).numpy() * scale


@torch.no_grad()
def index_vanishes() -> types.MappingProxyType | None:
    """What the shipped index model (`reverse-index-h4-l2`, pre-norm) makes of its encoding, on section 3's
    first input: `layernorm`, the largest change that adding the index makes to its first LayerNorm's
    output; `largest`, the index added (the last position); `shuffle`, the largest change of an encoder
    output under section 3's first shuffle; the held-out accuracies of the index and none models (their
    cards).  None when a model is missing."""
    tokens = read_letters(INPUTS[0])[0]
    try:
        encoder = float64_encoder("index")
        accuracy = {e: load_model(model_name(REVERSE_TASK, e)).card.get("heldout_accuracy") for e in ("index", "none")}
        shuffled = shuffle_demo("index", tokens, 0).max_abs_difference
    except PretrainedModelError:
        return None
    ids = torch.tensor([get_task(REVERSE_TASK).encode(list(tokens))])
    added = encoder.embed_tokens(ids)
    index = encoder.position(ids.shape[1])
    norm = encoder.layers[0].attn_norm  # the first thing that reads the input (pre-norm)
    change = float((norm(added) - norm(added - index)).abs().max())
    return types.MappingProxyType({
        "norm": encoder.config.norm, "layernorm": change,
        "largest": float(index.max()), "shuffle": shuffled, "d": added.shape[-1],
        "index_accuracy": accuracy["index"], "none_accuracy": accuracy["none"]})


# --- sections 3 and 4: the shipped reversal models ---------------------------------------------------------

INPUTS = ("A B C D E F G", "H E L L O", "J A B B E D C O D E", "B A N A N A")
BLOCKS = {"cross": 2, "encoder": 0, "decoder": 1}
HEADS = ("mean", "1", "2", "3", "4")


@dataclass(frozen=True)
class ModelSettings:
    """Sections 3 and 4: the letters, the encoder shuffled, the permutation; which attention to compare."""

    letters: str = setting(INPUTS[0], "Input letters (A–P)", url="shuffle_input", max_chars=100,
                           presets={text: text for text in INPUTS}, text_url="shuffle_text", text_label="Your letters",
                           help="2 to 10 letters from A to P, e.g. 'DECADE' or 'D E C A D E'.")
    encoding: str = setting("none", "Encoder of the model with", url="shuffle_encoding", options=SHIPPED_ENCODINGS,
                            widget="selectbox",
                            help="The encoder of the shipped reversal model with this encoding, run in float64.")
    seed: int = setting(0, "Shuffle seed", url="seed", bounds=(0, 9999, 1), advance="Shuffle",
                        help="Which permutation; the button moves to the next one.")
    block: str = setting("cross", "Attention", url="att_block", options=tuple(BLOCKS), widget="radio",
                         help="cross: decoder queries, encoder keys · encoder: self-attention over the input · "
                         "decoder: masked self-attention over the answer so far")
    layer: int = setting(2, "Layer", url="att_layer", options=(1, 2), widget="select_slider")
    head: str = setting("mean", "Head", url="att_head", options=HEADS, widget="radio",
                        help="mean: the average of the four heads (heads of different models do different jobs, "
                        "so head k of one model has no counterpart in another).")


@dataclass(frozen=True)
class ModelsView:
    settings: ModelSettings
    tokens: tuple[str, ...]
    problems: tuple[str, ...]  # what could not be read of the letters (plain text)
    shuffle: ShuffleResult | None
    runs: types.MappingProxyType  # encoding -> ReversalRun, the models that loaded
    failed: tuple[str, ...]  # the models that did not, and why
    differences: types.MappingProxyType  # encoding -> largest change of an encoder output under the shuffle
    panels: tuple[np.ndarray, ...]  # the chosen attention of each model, in the order of `runs`
    box: Measured | None = None  # claims, measured: which layers see the order of their input


def read_letters(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The letters of `text` as the reversal task reads them, and what could not be read; fewer than
    two letters fall back to the first example."""
    task = get_task(REVERSE_TASK)
    parsed = task.parse(text)
    problems, tokens = list(parsed.problems), tuple(parsed.tokens)
    if len(tokens) < 2:
        problems.append("fewer than two letters from A to P, so the first example is shown instead")
        tokens = tuple(task.parse(INPUTS[0]).tokens)
    return tokens, tuple(problems)


def models_view(settings: ModelSettings) -> ModelsView:
    tokens, problems = read_letters(settings.letters)
    runs, failed, differences = {}, [], {}
    for encoding in SHIPPED_ENCODINGS:
        try:
            runs[encoding] = reversal_run(encoding, tokens)
            differences[encoding] = shuffle_demo(encoding, tokens, settings.seed).max_abs_difference
        except PretrainedModelError as problem:
            failed.append(f"{encoding}: {problem}")
    shuffle = shuffle_demo(settings.encoding, tokens, settings.seed) if settings.encoding in runs else None
    panels = []
    for run in runs.values():
        weights = run.view.blocks[BLOCKS[settings.block]].weights[settings.layer - 1]
        panel = weights.mean(axis=0) if settings.head == "mean" else weights[int(settings.head) - 1].copy()
        panel.setflags(write=False)
        panels.append(panel)
    return ModelsView(settings, tokens, problems, shuffle, types.MappingProxyType(runs), tuple(failed),
                      types.MappingProxyType(differences), tuple(panels), order_seen(len(tokens)))


# --- section 5: the relative schemes -------------------------------------------------------------------------

SCHEMES = {"RoPE": "rotate q and k by their positions", "ALiBi": "a distance penalty per head",
           "T5": "a learned bias per distance bucket"}
ROPE_VECTORS = {"all ones": "ones", "random": "random"}
T5_DISTANCES = (8, 16, 32, 64, 128, 256)


def _scheme(name: str):
    return lambda settings: settings.scheme == name


@dataclass(frozen=True)
class RelativeSettings:
    scheme: str = setting("RoPE", "Relative scheme", url="scheme", options=tuple(SCHEMES), widget="selectbox",
                          help=" · ".join(f"{name}: {what}" for name, what in SCHEMES.items()))
    rope_dim: int = setting(16, "Head dimension", url="rope_dim", options=(2, 4, 8, 16, 32, 64, 128),
                            widget="select_slider", when=_scheme("RoPE"),
                            help="The shipped models have 64 / 4 heads = 16.")
    rope_positions: int = setting(64, "Positions", url="rope_positions", bounds=(2, MAX_POSITIONS, 1),
                                  when=_scheme("RoPE"))
    rope_base: int = setting(10000, "Base", url="rope_base", options=BASES, widget="select_slider",
                             when=_scheme("RoPE"))
    rope_vectors: str = setting("all ones", "q and k", url="rope_vectors", options=tuple(ROPE_VECTORS),
                                widget="selectbox",
                                when=_scheme("RoPE"), help="random: fixed normal vectors (seed 0)")
    alibi_heads: int = setting(4, "Heads", url="alibi_heads", bounds=(1, 16, 1), when=_scheme("ALiBi"),
                               help="The shipped ALiBi model has 4 heads.")
    alibi_length: int = setting(8, "Sequence length", url="alibi_length", bounds=(2, 32, 1), when=_scheme("ALiBi"))
    t5_length: int = setting(48, "Sequence length", url="t5_length", bounds=(2, 256, 1), when=_scheme("T5"))
    t5_buckets: int = setting(32, "Buckets", url="t5_buckets", options=(8, 16, 32, 64), widget="select_slider",
                              when=_scheme("T5"))
    t5_max_distance: int = setting(128, "Max distance", url="t5_max_distance", options=T5_DISTANCES,
                                   widget="select_slider", when=_scheme("T5"),
                                   help="Offsets at least this far share the last bucket.")
    t5_bidirectional: bool = setting(True, "Both directions", url="t5_bidirectional", flag=True, when=_scheme("T5"),
                                     help="Encoders look both ways (half the buckets for keys after the query); "
                                     "a causal decoder only back.")


@dataclass(frozen=True)
class RelativeView:
    """The chosen scheme's arrays (the others' are None)."""

    settings: RelativeSettings
    rope_plan: DrawPlan | None = None
    rope_degrees: np.ndarray | None = None  # the drawn rows and columns of the rotation angles
    rope_queries: tuple[int, int] | None = None
    rope_offsets: np.ndarray | None = None
    rope_scores: np.ndarray | None = None  # (2, offsets): one row per query position
    rope_accuracy: float | None = None  # the shipped RoPE model's held-out accuracy (its card)
    alibi_bias: np.ndarray | None = None  # (heads, T, T), NaN above the diagonal
    alibi_slopes: np.ndarray | None = None
    alibi_labels: tuple[str, ...] | None = None  # the slopes as written: 1/4, 1/16, …
    t5_buckets: np.ndarray | None = None  # (T, T)
    t5_offsets: np.ndarray | None = None
    t5_steps: np.ndarray | None = None  # the bucket of each offset
    t5_exact: int | None = None  # offsets with a bucket each (per direction)
    t5_max_distance: int | None = None  # used: the setting, or the first one beyond the exact buckets


def relative_view(settings: RelativeSettings) -> RelativeView:
    s = settings
    if s.scheme == "RoPE":
        degrees = rope_rotation_degrees(s.rope_positions, s.rope_dim, float(s.rope_base))
        plan = draw_plan(*degrees.shape)
        offsets = np.arange(-(s.rope_positions - 1), s.rope_positions)
        queries = (s.rope_positions - 1, 2 * (s.rope_positions - 1))
        scores = rope_offset_scores(*rope_vectors(s.rope_dim, ROPE_VECTORS[s.rope_vectors]), queries, offsets,
                                    float(s.rope_base))
        try:
            accuracy = load_model(model_name(REVERSE_TASK, "rope")).card.get("heldout_accuracy")
        except PretrainedModelError:
            accuracy = None
        return RelativeView(s, rope_plan=plan, rope_degrees=degrees[np.ix_(plan.rows, plan.cols)],
                            rope_queries=queries, rope_offsets=offsets, rope_scores=scores,
                            rope_accuracy=None if accuracy is None else float(accuracy))
    if s.scheme == "ALiBi":
        slopes = np.asarray(alibi_slopes(s.alibi_heads), dtype=np.float64)
        return RelativeView(s, alibi_bias=alibi_causal_bias(s.alibi_heads, s.alibi_length), alibi_slopes=slopes,
                            alibi_labels=tuple(slope_text(slope) for slope in slopes))
    exact = t5_exact_buckets(s.t5_buckets, s.t5_bidirectional)
    distance = s.t5_max_distance if s.t5_max_distance > exact else next(d for d in T5_DISTANCES if d > exact)
    offsets, steps = t5_offset_buckets(s.t5_length - 1, s.t5_bidirectional, s.t5_buckets, distance)
    buckets = t5_relative_buckets(s.t5_length, None, s.t5_bidirectional, s.t5_buckets, distance)
    return RelativeView(s, t5_buckets=np.asarray(buckets), t5_offsets=offsets, t5_steps=np.asarray(steps),
                        t5_exact=exact, t5_max_distance=distance)
