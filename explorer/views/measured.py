"""Claims, measured: where the lecture notes slip, the app measures the statement on the real modules
beside the lesson's figure.  Each box is what the notes say, a table measured now, and the finding,
its words chosen and its numbers read from that table (claims are code).  Pure numpy/torch: a lesson's view holds its
boxes (the runtime caches them with it), and `serve.adapter.measured_box` draws one.

    attention_parameters(d_model)      self-attention's parameters do not grow with T or with heads
    convolution_parallel(T, kernel)    a convolution computes every position in one step; its limit is the path
    sinusoidal_bounds(n, d, base)      sinusoidal values lie in [−1, 1], not [0, 1]; their rows' length is bounded
    added_not_concatenated(d_model)    the position vector is added: the width stays d
    index_on_one_dimension(E, seen)    a raw index that survives LayerNorm: far along, it outweighs the letter
    order_seen(T)                      a fully connected layer over the sequence sees order; attention
                                       without positions (and the per-position feed-forward) does not
    self_match(keys)                   q = k_j wins the lookup for every j when the keys have equal length
    published_lengths()                the maximum lengths, as the papers give them
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..analysis.claims import (
    PUBLISHED_LENGTHS,
    added_or_concatenated,
    attention_parameters_by_heads,
    attention_parameters_by_length,
    convolution_steps,
    self_match_wins,
    sinusoidal_range,
)
from ..model.building import seeded
from ..model.positional import index_encoding, sinusoidal_encoding

__all__ = ["Measured", "added_not_concatenated", "attention_parameters", "convolution_parallel",
           "index_on_one_dimension", "order_seen", "published_lengths", "self_match", "sinusoidal_bounds"]

LENGTHS = (8, 64, 512)


@dataclass(frozen=True)
class Measured:
    """One box: the notes' statement, what was measured (columns and rows), and the finding."""

    title: str
    notes_say: str
    columns: tuple[str, ...]
    rows: tuple[tuple, ...]
    finding: str


def attention_parameters(d_model: int) -> Measured:
    heads = tuple(h for h in (1, 2, 4, 8) if d_model % h == 0)
    by_length = attention_parameters_by_length(d_model, heads[-1], LENGTHS)
    by_heads = attention_parameters_by_heads(d_model, heads)
    rows = tuple(("sequence length T", T, n) for T, n in by_length.items())
    rows += tuple(("heads", h, n) for h, n in by_heads.items())
    counts = set(by_length.values()) | set(by_heads.values())
    if len(counts) == 1:
        (count,) = counts
        finding = (f"The same module takes every length: {count:,} parameters at T = {LENGTHS[0]} and at T = "
                   f"{LENGTHS[-1]}, and at every number of heads, 4·(d² + d) for d = {d_model}. Self-attention's "
                   "parameters are O(d²); what grows with T is the work, O(T·d² + T²·d), not the weights.")
    else:
        finding = f"The counts differ: {sorted(counts)}."
    return Measured("Self-attention's parameters against T and heads",
                    "One version of the notes gives a transformer layer T times an RNN's parameters, O(T·d²), as if "
                    "every position had its own weights.",
                    ("what changes", "value", "parameters (counted on the built module)"), rows, finding)


def convolution_parallel(T: int, kernel: int) -> Measured:
    steps = convolution_steps(T, kernel)
    rows = (("steps within one layer that wait for another", steps.sequential_steps),
            ("layers before the last output depends on the first input", steps.layers_to_connect),
            ("the RNN's steps, for comparison", T))
    finding = (f"One call of torch's Conv1d gives all {T} outputs at once: no output waits for another "
               f"({steps.sequential_steps} step per layer). What a convolution pays for is the path: "
               f"{steps.layers_to_connect} stacked layers of width {kernel} before the last output can see the "
               f"first input, against 1 for self-attention.")
    return Measured("Do convolutions run in parallel?",
                    "The notes' table gives a convolution O(T) sequential steps, saying overlapping kernels "
                    "cannot be parallelised.", ("measured", "count"), rows, finding)


def sinusoidal_bounds(n_positions: int, d_model: int, base: float) -> Measured:
    """The notes' "useful range [0..1]" (lecture 004), measured on the table shown: its smallest and
    largest values, how many are negative, and the lengths of its rows beside the raw index's."""
    low, high = sinusoidal_range(n_positions, d_model, base)
    table, index = sinusoidal_encoding(n_positions, d_model, base), index_encoding(n_positions, d_model)
    lengths, index_lengths = np.linalg.norm(table, axis=1), np.linalg.norm(index, axis=1)
    negative = int((table < 0).sum())
    rows = ((f"sinusoidal, {n_positions} × {d_model}, base {base:g}", low, high, negative,
             float(lengths.min()), float(lengths.max())),
            (f"raw index p, {n_positions} × {d_model}", float(index.min()), float(index.max()), 0,
             float(index_lengths.min()), float(index_lengths.max())))
    if negative:
        sign = (f"{negative:,} of the {table.size:,} values are negative, down to {low:.4f}: a sine or cosine "
                "ranges over [−1, 1], not [0, 1]")
    else:
        sign = (f"none of these {table.size:,} values is negative (the smallest is {low:.4f}), but only because "
                "every angle here is small: a sine or cosine ranges over [−1, 1], not [0, 1]")
    if d_model % 2 == 0:
        size = (f"every row has the same length, √(d/2) = {lengths[0]:.4g} (sin² + cos² = 1 in each pair), "
                "whatever the position")
    else:
        size = f"every row's length stays between {lengths.min():.4g} and {lengths.max():.4g}"
    index = (f"the raw index's rows grow to {index_lengths.max():,.4g} by position {n_positions - 1}"
             if n_positions > 1 else "a raw index's rows would grow with the position")
    finding = (f"{sign}. What matters is not the sign but that the size is bounded: {size}, while {index}. "
               "So the table stays within [−1, 1] at any position, and what is added to a word's vector does "
               "not grow with where the word stands.")
    return Measured("Are sinusoidal encodings in [0, 1]?",
                    "Among the advantages of the sine/cosine scheme the notes list that its values are in a "
                    "“useful range [0..1]”.",
                    ("table", "smallest", "largest", "negative values", "shortest row", "longest row"), rows,
                    finding)


def added_not_concatenated(d_model: int) -> Measured:
    combined = added_or_concatenated(d_model)
    rows = tuple((way, c.width, c.query_parameters) for way, c in combined.items())
    added, joined = combined["added"], combined["concatenated"]
    finding = (f"The transformer adds: each position's vector stays {added.width} wide and the query projection "
               f"has {added.query_parameters:,} parameters. Concatenating would make it {joined.width} wide and "
               f"every projection after it larger ({joined.query_parameters:,} for the query alone).")
    return Measured("Is the position vector added or concatenated?",
                    "The notes say the “+” in the diagram concatenates the embedding and the encoding.",
                    ("way", "width of each position's vector", "parameters of the query projection"), rows, finding)


INDEX_POSITIONS = (0, 100, 300, 1000)  # where the one-dimension index is measured, beside the longest input


def _normalised(x: np.ndarray) -> np.ndarray:
    """LayerNorm without its learned scale and shift (ε = 10⁻⁵), then scaled to length 1."""
    centred = x - x.mean(axis=-1, keepdims=True)
    normed = centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + 1e-5)
    return normed / np.linalg.norm(normed, axis=-1, keepdims=True)


def index_on_one_dimension(embeddings: np.ndarray, seen: int) -> Measured:
    """The raw index p added to one dimension of each token embedding (rows of `embeddings`, as the model
    adds them), then a LayerNorm: the mean cosine of two different tokens at position p.  `seen`: the
    last position a training input reaches."""
    tokens = len(embeddings)
    rows = []
    for p in sorted({seen, *INDEX_POSITIONS}):
        shifted = embeddings.copy()
        shifted[:, 0] += p
        unit = _normalised(shifted)
        pairs = unit @ unit.T
        rows.append((p, float((pairs.sum() - np.trace(pairs)) / (tokens * (tokens - 1)))))
    start, trained, (far, alike) = rows[0][1], dict(rows)[seen], rows[-1]
    middle = ", ".join(f"{c:.2f} at position {p}" for p, c in rows if seen < p < far)
    finding = ("In section 1's models the index never gets that far: LayerNorm removes it. Added instead to one "
               "dimension of the shipped index model's letter embeddings (no training), it is no longer a constant, "
               f"and LayerNorm keeps it. At "
               f"position {seen}, the farthest a training input reaches, two different letters are still apart "
               f"after LayerNorm (mean cosine {trained:.3f}; {start:.3f} at position 0); farther on they grow "
               f"alike — {middle} and {alike:.3f} at position {far}")
    if alike > 0.9 and trained < 0.5:
        finding += (": far enough along, the position outweighs the letter, and a model trained on short inputs "
                    "would meet, in long ones, letters it can hardly tell apart.")
    else:
        finding += "."
    return Measured("A raw index that survives LayerNorm",
                    "The notes reject the raw index: it “doesn't generalize well to arbitrary lengths of "
                    "sentences”.",
                    ("position p", "mean cosine of two different letters after LayerNorm"), tuple(rows), finding)


ORDER_WIDTH = 16  # features per position in the order box


@torch.no_grad()
def _order_changes(T: int, d: int = ORDER_WIDTH) -> dict[str, tuple[float, float]]:
    """layer -> (largest change of an output when the T input rows are reversed, largest difference
    between the new outputs and the old ones reversed the same way), torch's own modules in float64,
    weights and input drawn from seed 0."""
    with seeded(0) as generator:
        dense = torch.nn.Linear(T * d, T * d, dtype=torch.float64)
        shared = torch.nn.Linear(d, d, dtype=torch.float64)
        attention = torch.nn.MultiheadAttention(d, 4, batch_first=True, dtype=torch.float64)
        x = torch.randn(1, T, d, generator=generator, dtype=torch.float64)
    layers = {"fully connected over the whole sequence (Linear on T·d numbers)":
              lambda v: dense(v.flatten(1)).view(1, T, d),
              "the same Linear(d, d) at every position (a transformer's feed-forward layer)": shared,
              "self-attention without positions (MultiheadAttention)": lambda v: attention(v, v, v)[0]}
    order = torch.arange(T - 1, -1, -1)
    changes = {}
    for name, layer in layers.items():
        before, after = layer(x), layer(x[:, order])
        changes[name] = (float((after - before).abs().max()), float((after - before[:, order]).abs().max()))
    return changes


def order_seen(T: int) -> Measured:
    changes = _order_changes(T)
    rows = tuple((name, change, undone) for name, (change, undone) in changes.items())
    (_, (_, dense_undone)), *rest = changes.items()
    moved = max(undone for _, (_, undone) in rest)
    sees = dense_undone > 1e-3
    finding = (f"Reversing the {T} input rows changes the fully connected layer's output, and reversing the output "
               f"back does {'not ' if sees else ''}restore the old one (off by up to {dense_undone:.2g}): each of its "
               "weights joins one input position to one output position, so it " +
               ("sees the order." if sees else "does not see the order here.") +
               (f" Self-attention without positions and the per-position feed-forward layer only move each output "
                f"with its input (off by {moved:.0e} after reversing back: rounding). A transformer is built of these "
                "(and LayerNorm, also applied per position), which is why it needs a positional encoding."
                if moved < 1e-9 else ""))
    return Measured("Do fully connected layers ignore order?",
                    "The notes say inputs to most layer types (“e.g., Fully Connected”) are unordered, as the reason "
                    "a positional encoding is needed.",
                    ("layer (torch's module, float64)", "largest change of an output when the input is reversed",
                     "after reversing the output back"), rows, finding)


def self_match(keys) -> Measured:
    keys = np.asarray(keys, dtype=np.float64)
    wins = self_match_wins(keys)
    lengths = np.linalg.norm(keys, axis=1)
    rows = tuple((f"k{j + 1}", float(n), "yes" if w else "no")
                 for j, (n, w) in enumerate(zip(lengths, wins, strict=True)))
    equal = bool(np.allclose(lengths, lengths[0]))
    losers = [f"k{j + 1}" for j in np.flatnonzero(~wins)]
    if not losers:
        finding = ("Here every key wins when it is the query" + (", as it must when all keys have the same length "
                   "(q·k_j = |q|² is then the largest dot product)." if equal else
                   ": these keys differ in length, but not enough to let a longer one outscore a key on itself."))
    else:
        finding = (f"Here {', '.join(losers)} {'loses' if len(losers) == 1 else 'lose'}: with q = k_j another, longer "
                   "key in a similar direction scores higher. Equal lengths (keys scaled to one length) would "
                   "guarantee that a query finds the key equal to it; with unequal lengths it depends on the keys.")
    return Measured("Does q = k_j always pick key j?",
                    "The notes look up the value of key k₄ with the query q = k₄.",
                    ("key", "length |k|", "wins when it is the query"), rows, finding)


def published_lengths() -> Measured:
    rows = tuple((p.model, "none built in" if p.positions is None else p.positions, p.what, p.source)
                 for p in PUBLISHED_LENGTHS)
    fixed = [p for p in PUBLISHED_LENGTHS if p.positions is not None]
    finding = ("A maximum length comes from how positions are encoded or from the length trained on: "
               + "; ".join(f"{p.model}: {p.positions}" for p in fixed)
               + ". The original transformer's sinusoids have no built-in maximum.")
    return Measured("The maximum lengths, as published",
                    "The notes say the original transformer's maximum was 512 tokens and GPT-3's 2048, and that a "
                    "transformer's fixed number of parallel units limits the length.",
                    ("model", "maximum positions", "why", "source"), rows, finding)
