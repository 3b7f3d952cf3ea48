"""The positions lesson's "claims, measured" boxes: the range of the sinusoidal values, the position added
not concatenated, a raw index on one dimension, and which layers see order (explorer.kit.measured.Measured)."""

from __future__ import annotations

import numpy as np
import torch

from explorer.analysis.claims import added_or_concatenated, sinusoidal_range
from explorer.kit.measured import Measured
from explorer.model.building import seeded
from explorer.model.positional import index_encoding, sinusoidal_encoding

__all__ = ["added_not_concatenated", "index_on_one_dimension", "order_seen", "sinusoidal_bounds"]


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
