"""Everything the positional-encodings page shows, computed in one place (no Streamlit).

* the encoding matrix (positions × dimensions) of each absolute scheme, and the rows and columns of
  it that a figure can afford to draw;
* its geometry: the similarity PE·PEᵀ (or cosine), how much of it the offset between positions
  explains (all of it for sinusoidal encodings), and the wavelength of each dimension pair;
* why attention needs position: an encoder without positional information is permutation
  equivariant (shuffle the input and each output row moves with its token, unchanged), checked in
  float64 on private copies of the shipped encoders; and the shipped reversal models, one per
  encoding, run on the same input.

The relative schemes (RoPE, ALiBi, T5), which act on the attention scores instead of the input,
are in `explorer.lessons.positions.relative`.

The shipped models are shared by every session, so nothing here modifies them: the float64 copies
are deep copies, cached per process.
"""

from __future__ import annotations

import copy
import math
import types
from dataclasses import dataclass

import numpy as np
import torch

from explorer.analysis.attention_maps import AttentionView, compute_view
from explorer.analysis.thinning import DRAW_BUDGET, DrawPlan, draw_plan
from explorer.caching import bounded_cache, loaded
from explorer.model.positional import ABSOLUTE_ENCODINGS, index_encoding, sinusoidal_encoding, sinusoidal_wavelengths
from explorer.training.minilm import minilm_positions
from explorer.training.pretrained import PretrainedModelError, load_model, model_name
from explorer.training.tasks import get_task

__all__ = [
    "DRAW_BUDGET",
    "LEARNED_MODEL",
    "LECTURE_WORDS",
    "MATRIX_KINDS",
    "MATRIX_TABLE_LIMIT",
    "MAX_DIMS",
    "MAX_POSITIONS",
    "SHIPPED_ENCODINGS",
    "DrawPlan",
    "EncodingMatrix",
    "MatrixView",
    "PretrainedModelError",
    "ReversalRun",
    "ShuffleResult",
    "colour_bound",
    "column_names",
    "draw_plan",
    "encoder_output",
    "encoding_matrix",
    "float64_encoder",
    "learned_table",
    "matrix_view",
    "mean_neighbour_cosine",
    "offset_explained_share",
    "reversal_run",
    "shuffle_demo",
    "shuffle_order",
    "similarity",
    "similarity_by_offset",
    "square_plan",
    "toeplitz_projection",
]

MAX_POSITIONS = 1024
MAX_DIMS = 1024
MATRIX_TABLE_LIMIT = 12  # up to this many positions and dimensions the page prints the numbers
LECTURE_WORDS = ("I", "am", "a", "robot")
REVERSE_TASK = "reverse"
SHIPPED_ENCODINGS = ("sinusoidal", "learned", "index", "none", "rope", "alibi", "t5")  # reverse-…-h4-l2
LEARNED_MODEL = model_name(REVERSE_TASK, "learned")
MINILM = "MiniLM"  # the learned table of a real model, all-MiniLM-L6-v2 (explorer.training.minilm)
MATRIX_KINDS = (*ABSOLUTE_ENCODINGS, MINILM)


# --- the encoding matrix ----------------------------------------------------------------------------


@dataclass(frozen=True)
class EncodingMatrix:
    """One absolute encoding: `values` (positions, d_model) in float64 and where it comes from."""

    kind: str
    values: np.ndarray
    base: float | None  # sinusoidal only
    source: str  # one line for a caption


@loaded(4)
def learned_table(name: str = LEARNED_MODEL, stack: str = "encoder") -> np.ndarray:
    """The position table a shipped model learned, as a read-only float64 copy (never the model's)."""
    module = getattr(load_model(name).model, stack).position
    if module.kind != "learned":
        raise ValueError(f"{name} has no learned position table")
    table = module.table.detach().to(torch.float64).numpy().copy()
    table.setflags(write=False)
    return table


def encoding_matrix(kind: str, n_positions: int, d_model: int, base: float = 10000.0) -> EncodingMatrix:
    """The matrix of an absolute scheme.  Learned and MiniLM: the shipped table, whatever the sizes asked."""
    if kind not in MATRIX_KINDS:
        raise ValueError(f"unknown absolute encoding {kind!r}; expected one of {MATRIX_KINDS}")
    if not (1 <= n_positions <= MAX_POSITIONS and 1 <= d_model <= MAX_DIMS):
        raise ValueError(f"need 1–{MAX_POSITIONS} positions and 1–{MAX_DIMS} dimensions")
    if kind == "sinusoidal":
        return EncodingMatrix(kind, sinusoidal_encoding(n_positions, d_model, base), float(base),
                              f"sin/cos, base {base:g}")
    if kind == "learned":
        table = learned_table()
        return EncodingMatrix(kind, table, None,
                              f"learned by `{LEARNED_MODEL}` (encoder), {table.shape[0]} positions × "
                              f"{table.shape[1]} dimensions")
    if kind == MINILM:  # raises MiniLMError, a PretrainedModelError, when the package is missing or damaged
        table = minilm_positions()[0]
        return EncodingMatrix(kind, table, None, f"learned by all-MiniLM-L6-v2, {table.shape[0]} positions × "
                                                 f"{table.shape[1]} dimensions")
    if kind == "index":
        return EncodingMatrix(kind, index_encoding(n_positions, d_model), None, "the raw index p in every dimension")
    return EncodingMatrix(kind, np.zeros((n_positions, d_model)), None, "nothing added")


def colour_bound(kind: str) -> float | None:
    """Where the matrix's colour scale stops (±), or None to span the values: ±1 for sinusoidal and
    none, the 99th percentile for MiniLM's table (a few outlying dimensions would wash it out)."""
    if kind == MINILM:
        return minilm_positions()[1]
    return {"sinusoidal": 1.0, "none": 1.0}.get(kind)


def column_names(d_model: int, base: float | None) -> list[str]:
    """Column headers for a small table: the dimension, and for sinusoidal the function it holds."""
    if base is None:
        return [f"dim {j}" for j in range(d_model)]
    names = []
    for j in range(d_model):
        divisor = base ** (2 * (j // 2) / d_model)
        names.append(f"{j}: {'sin' if j % 2 == 0 else 'cos'}(p/{divisor:.4g})")
    return names






def square_plan(n: int, limit: int = 256) -> np.ndarray:
    """Positions to draw of an n × n position-by-position matrix: every k-th, at most `limit`."""
    return np.arange(0, n, max(1, math.ceil(n / limit)))


# --- geometry --------------------------------------------------------------------------------------


def similarity(pe: np.ndarray, rows: np.ndarray | None = None, measure: str = "dot") -> np.ndarray:
    """PE·PEᵀ between the given positions (all by default), or their cosine similarity.

    Cosine similarity is undefined for an all-zero row (position 0 of the index encoding, every
    row of "none"): those entries are NaN.
    """
    if measure not in ("dot", "cosine"):
        raise ValueError("measure must be 'dot' or 'cosine'")
    picked = pe if rows is None else pe[rows]
    if measure == "cosine":
        norms = np.linalg.norm(picked, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            picked = picked / np.where(norms > 0, norms, np.nan)[:, None]
    return picked @ picked.T


def mean_neighbour_cosine(table: np.ndarray, k: int) -> float | None:
    """The mean cosine similarity of rows p and p + k (None: fewer than k + 1 rows, or a zero row)."""
    norms = np.linalg.norm(table, axis=1)
    if table.shape[0] <= k or not np.all(norms > 0):
        return None
    unit = table / norms[:, None]
    return float(np.mean(np.sum(unit[:-k] * unit[k:], axis=1)))


def toeplitz_projection(matrix: np.ndarray) -> np.ndarray:
    """The nearest Toeplitz matrix (least squares): every diagonal replaced by its mean.

    NaN entries are ignored in the means and stay NaN.
    """
    n_rows, n_cols = matrix.shape
    offset = np.arange(n_cols)[None, :] - np.arange(n_rows)[:, None] + (n_rows - 1)
    finite = np.isfinite(matrix)
    sums = np.bincount(offset[finite], weights=matrix[finite], minlength=n_rows + n_cols - 1)
    counts = np.bincount(offset[finite], minlength=n_rows + n_cols - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts
    return np.where(finite, means[offset], np.nan)


def offset_explained_share(matrix: np.ndarray) -> float | None:
    """How much of the matrix's variation the offset (column − row) alone explains, 0 to 1:
    1 − ‖S − toeplitz(S)‖² / ‖S − mean(S)‖² over the finite entries.  1 means S is Toeplitz.
    None when S is constant (there is no variation to explain)."""
    finite = np.isfinite(matrix)
    values = matrix[finite]
    if values.size == 0:
        return None
    total = float(np.sum((values - values.mean()) ** 2))
    if total <= 1e-24 * max(1.0, float(np.sum(values**2))):
        return None
    residual = float(np.sum((matrix - toeplitz_projection(matrix))[finite] ** 2))
    return max(0.0, 1.0 - residual / total)


def similarity_by_offset(pe: np.ndarray, starts, measure: str = "dot") -> dict[int, np.ndarray]:
    """For each start position p: the similarity of p with p + k for k = 0 … n − 1 − p."""
    result = {}
    for p in starts:
        row = pe[p] @ pe[p:].T
        if measure == "cosine":
            norms = np.linalg.norm(pe[p:], axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                row = row / np.where(norms * norms[0] > 0, norms * norms[0], np.nan)
        elif measure != "dot":
            raise ValueError("measure must be 'dot' or 'cosine'")
        result[int(p)] = row
    return result


def _offset_starts(n: int) -> list[int]:
    """Up to three starting positions spread over the sequence (not the last, which has no offsets)."""
    return sorted({0, n // 3, (2 * n) // 3} - {n - 1}) or [0]


@dataclass(frozen=True)
class MatrixView:
    """What sections 1 and 2 of the page draw for one setting — small arrays only (the drawn part),
    so many settings can be cached at once."""

    kind: str
    source: str
    base: float | None
    shape: tuple[int, int]  # of the full matrix
    plan: DrawPlan
    drawn: np.ndarray  # the matrix at plan.rows × plan.cols
    table: np.ndarray | None  # the full matrix when it is small enough to print
    sim_rows: np.ndarray  # positions of the similarity matrix
    similarity: np.ndarray
    offset_share: float | None
    curves: dict[int, np.ndarray]  # start position → similarity with start + k
    wavelengths: np.ndarray | None  # sinusoidal only
    neighbours: types.MappingProxyType  # k -> mean cosine of rows p and p + k of the full matrix (k = 1, 10), or None


def matrix_view(kind: str, n_positions: int, d_model: int, base: float, measure: str) -> MatrixView:
    """The encoding matrix, what of it is drawn, and its geometry (the lesson runtime caches it)."""
    matrix = encoding_matrix(kind, n_positions, d_model, base)
    pe = matrix.values
    plan = draw_plan(*pe.shape)
    drawn = pe[np.ix_(plan.rows, plan.cols)]
    small = max(pe.shape) <= MATRIX_TABLE_LIMIT
    sim_rows = square_plan(pe.shape[0])
    sim = similarity(pe, sim_rows, measure)
    waves = sinusoidal_wavelengths(pe.shape[1], base) if kind == "sinusoidal" else None
    arrays = [drawn, pe.copy() if small else None, sim_rows, sim, waves]
    curves = similarity_by_offset(pe, _offset_starts(pe.shape[0]), measure)
    for array in [*arrays, *curves.values()]:
        if array is not None:
            array.setflags(write=False)  # shared between sessions
    neighbours = types.MappingProxyType({k: mean_neighbour_cosine(pe, k) for k in (1, 10)})
    return MatrixView(kind, matrix.source, matrix.base, pe.shape, plan, drawn, arrays[1], sim_rows, sim,
                      offset_explained_share(sim), curves, waves, neighbours)


# --- why attention needs position: the shuffle demo --------------------------------------------------


@loaded(8)  # one per shipped encoding (7 of them)
def float64_encoder(encoding: str):
    """A float64 deep copy of the encoder of `reverse-<encoding>-h4-l2` (the shared model is untouched)."""
    encoder = copy.deepcopy(load_model(model_name(REVERSE_TASK, encoding)).model.encoder)
    return encoder.to(torch.float64).eval().requires_grad_(False)


@torch.no_grad()
def encoder_output(stack, ids: torch.Tensor) -> torch.Tensor:
    """Run an encoder stack on (B, T) token ids without a mask (no padding, not causal): (B, T, d_model)."""
    # The stack's own forward.  A float64 copy stays float64: ALiBi's float32 bias is promoted where it is added.
    output, _, _ = stack(ids, causal=False)  # (B, T, d); the stack's input and its layers' traces are not needed
    return output


def shuffle_order(n: int, seed: int) -> np.ndarray:
    """A permutation of 0..n−1 from `seed`, never the identity when n ≥ 2 (so something moves)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    while n >= 2 and np.array_equal(order, np.arange(n)):
        order = rng.permutation(n)
    return order


@dataclass(frozen=True)
class ShuffleResult:
    """before: outputs for the input; after: outputs for the shuffled input (row j is token order[j]);
    difference: after − before[order], i.e. each token's output after minus the same token's before."""

    encoding: str
    tokens: tuple[str, ...]
    order: np.ndarray
    before: np.ndarray
    after: np.ndarray
    difference: np.ndarray

    @property
    def shuffled_tokens(self) -> list[str]:
        return [self.tokens[i] for i in self.order]

    @property
    def max_abs_difference(self) -> float:
        return float(np.max(np.abs(self.difference)))


@bounded_cache(64, max_bytes=8_000_000)
def shuffle_demo(encoding: str, tokens: tuple[str, ...], seed: int) -> ShuffleResult:
    """Encode `tokens` and a shuffled copy with the float64 encoder of the shipped model."""
    task = get_task(REVERSE_TASK)
    order = shuffle_order(len(tokens), seed)
    ids = torch.tensor([task.encode(list(tokens))])
    encoder = float64_encoder(encoding)
    before = encoder_output(encoder, ids)[0].numpy()
    after = encoder_output(encoder, ids[:, torch.from_numpy(order)])[0].numpy()
    arrays = [order, before, after, after - before[order]]
    for array in arrays:
        array.setflags(write=False)  # cached and shared between sessions
    return ShuffleResult(encoding, tuple(tokens), *arrays)


# --- the shipped reversal models, one per encoding ----------------------------------------------------------


@dataclass(frozen=True)
class ReversalRun:
    encoding: str
    name: str
    view: AttentionView  # shared through the cache: read, never modify
    answer: list[str]
    correct: bool
    heldout_accuracy: float | None


@bounded_cache(64, max_bytes=8_000_000)
def reversal_run(encoding: str, tokens: tuple[str, ...]) -> ReversalRun:
    """Greedy reversal of `tokens` by `reverse-<encoding>-h4-l2`, with its attention (causal decoder)."""
    name = model_name(REVERSE_TASK, encoding)
    loaded = load_model(name)
    view = compute_view(loaded.model, loaded.task, list(tokens), "causal", len(tokens))
    expected = loaded.task.expected_output(list(tokens))
    accuracy = loaded.card.get("heldout_accuracy")
    return ReversalRun(encoding, name, view, view.output_tokens, view.output_tokens == expected,
                       None if accuracy is None else float(accuracy))
