"""Past the trained length: the shipped reversal models, one per positional encoding, on longer inputs.

The reversal models were trained on inputs of 2–10 letters (`SequenceToSequenceTask`: min_len 2,
max_seq 10) and built with max_len 11 (the decoder reads <s> and up to 10 letters).  Only the learned
table is really limited by that: it has 11 rows, one per position it was trained on.  The other
encodings are functions of the position (sinusoidal, the raw index), nothing at all (none), or act on
the offset between query and key (RoPE, ALiBi, T5), so the same weights run at any length: here they
are loaded into a model built with room for `LONGEST` letters (max_len is the size of a fixed table in
those, not a weight).  T5's learned table is indexed by buckets of offsets, not by positions, and every
offset has a bucket (those past its maximum distance share the last one), so it runs at any length
too, though offsets longer than any in training land in buckets no training input reached (their
biases are the random initial ones, only shrunk by weight decay).  A learned table asked for a
position it has no row for raises ValueError.

Scored as the cards score them (explorer.training.pretrained.evaluate): greedy decoding, an example
right only if every output token up to and including </s> is; `sequences_right` is that score for a
batch of inputs of one length, and the card's number is its mean over the held-out set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..caching import bounded_cache
from ..model.building import with_weights
from ..model.generation import IncrementalDecoder
from ..model.positional import ENCODINGS, t5_relative_buckets
from ..training.pretrained import MODEL_SPECS, build_model, load_model, model_name
from ..training.tasks import EOS, SequenceToSequenceTask

__all__ = [
    "LONGEST",
    "REVERSAL_MODELS",
    "SAMPLES",
    "SEED",
    "BucketsMet",
    "accuracy_by_length",
    "difference_without_positions",
    "longest_length",
    "mirror_difference",
    "sequences_right",
    "stretched_model",
    "t5_buckets_met",
    "trained_lengths",
]

# The shipped reversal model of each encoding (an encoding without one would have no entry).
REVERSAL_MODELS: dict[str, str] = {
    encoding: model_name("reverse", encoding) for encoding in ENCODINGS
    if any(spec.name == model_name("reverse", encoding) for spec in MODEL_SPECS)
}
LONGEST = 64  # the longest input accuracy_by_length runs (letters)
SAMPLES = 100  # inputs drawn per length
SEED = 2024  # inputs of length n are drawn from a generator seeded SEED + n: the same whatever else is asked


def _task(name: str) -> SequenceToSequenceTask:
    task = load_model(name).task
    if not isinstance(task, SequenceToSequenceTask) or task.name != "reverse":
        raise ValueError(f"{name!r} is not a shipped reversal model; these are: {sorted(REVERSAL_MODELS.values())}")
    return task


def trained_lengths(name: str) -> tuple[int, int]:
    """The shortest and longest inputs (letters) the model was trained on: (2, 10) for the reversal task."""
    task = _task(name)
    return task.min_len, task.max_seq


def longest_length(name: str) -> int:
    """The longest input the model can read: a learned table's rows − 1 (the decoder also reads <s>),
    else LONGEST."""
    config = load_model(name).model.config
    return config.max_len - 1 if config.encoding == "learned" else LONGEST


@bounded_cache(8, max_bytes=8_000_000)  # the shipped tensors (shared), one per reversal model
def stretched_model(name: str) -> nn.Module:
    """The shipped model `name` with room for LONGEST letters: the same weights, the same tensors (not
    copies); only a table that is a function of the position is made longer.  A learned table as it is.
    What to run (or draw the attention of) at a length the model never saw; callers must not modify it."""
    loaded = load_model(name)
    config = loaded.model.config
    if config.encoding == "learned":
        return loaded.model
    stretched = {**config.to_dict(), "max_len": LONGEST + 1}
    model = with_weights(lambda: build_model("transformer", loaded.task, stretched), loaded.model.state_dict())
    return model.eval().requires_grad_(False)


@torch.no_grad()
def sequences_right(model: nn.Module, task: SequenceToSequenceTask, source: torch.Tensor) -> torch.Tensor:
    """(B,) booleans: is the greedy output for each input of `source` (B, n), n letters each (no
    padding), its reverse followed by </s>?  Decoded as model.generate(…, cache=True) decodes (the
    same tokens as without the cache), step by step, stopping once every example has a wrong token:
    later tokens cannot make it right."""
    n = source.shape[1]
    expected = torch.cat([source.flip(1), torch.full((len(source), 1), task.index[EOS])], dim=1)
    decoder = IncrementalDecoder(model, source)
    fed = torch.full((len(source), 1), task.index["<s>"])
    right = torch.ones(len(source), dtype=torch.bool)
    for step in range(n + 1):
        logits, _ = decoder.step(fed)
        fed = logits[:, -1:].argmax(-1)  # the likeliest next token is the next input
        right &= fed[:, 0] == expected[:, step]
        if not right.any():
            break
    return right


def _inputs(task: SequenceToSequenceTask, length: int, samples: int) -> torch.Tensor:
    """`samples` inputs of `length` letters, drawn from a generator of their own (seed SEED + length)."""
    first = task.index[task.symbols[0]]
    generator = torch.Generator().manual_seed(SEED + length)
    return torch.randint(first, first + len(task.symbols), (samples, length), generator=generator)


@bounded_cache(1024, max_bytes=1_000_000)  # a float each
def _accuracy(name: str, length: int, samples: int) -> float:
    right = sequences_right(stretched_model(name), _task(name), _inputs(_task(name), length, samples))
    return right.double().mean().item()


def _check(name: str, lengths, samples: int) -> list[int]:
    _task(name)
    lengths = [int(n) for n in lengths]
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ValueError(f"samples must be a positive integer, got {samples!r}")
    for n in lengths:
        if not 1 <= n <= LONGEST:
            raise ValueError(f"lengths must be between 1 and {LONGEST} letters, got {n}")
    config = load_model(name).model.config
    too_long = [n for n in lengths if n > longest_length(name)]
    if config.encoding == "learned" and too_long:
        n = min(too_long)
        raise ValueError(
            f"{name}: an input of {n} letters needs position {n} (the decoder reads <s> and {n} letters, "
            f"positions 0–{n}), but its learned position table has {config.max_len} rows (positions "
            f"0–{config.max_len - 1}): no row was ever trained for position {config.max_len} or beyond")
    return lengths


def accuracy_by_length(model_name: str, lengths, samples: int = SAMPLES) -> dict[int, float]:
    """{length: share of inputs of that many letters the model reverses right}, for a shipped reversal model.

    `samples` inputs per length, drawn from their own generator (seed SEED + length; never torch's
    global one), scored as the cards score (see the module).  Each (model, length) is computed once
    per process.  Raises ValueError for a model that is not a reversal model, a length outside
    1 … LONGEST, or a length the model's learned position table has no row for (naming the position
    and the table's size)."""
    lengths = _check(model_name, lengths, samples)
    return {n: _accuracy(model_name, n, samples) for n in lengths}


@bounded_cache(8, max_bytes=100_000)  # a float each
def difference_without_positions(name: str, samples: int = 20) -> float:
    """The largest |difference| between the logits of the shipped model `name` and those of the same
    weights built with no positional encoding, teacher-forced on `samples` inputs of every trained
    length.  For the raw index it is float rounding only: the index adds the same number p to every
    dimension, and each pre-norm layer's LayerNorm (and the final one) subtracts a vector's mean, so
    p never reaches attention (Ba et al. 2016, LayerNorm: the mean over the features is removed)."""
    loaded = load_model(name)
    task = _task(name)
    config = loaded.model.config.to_dict()
    bare = with_weights(lambda: build_model("transformer", task, {**config, "encoding": "none"}),
                        loaded.model.state_dict()).eval()
    return _largest_difference(name, samples, lambda source, target: (loaded.model(source, target)[0],
                                                                      bare(source, target)[0]))


@bounded_cache(8, max_bytes=100_000)  # a float each
def mirror_difference(name: str, samples: int = 20) -> float:
    """The largest |difference| between the shipped model's logits for `samples` inputs of every trained length
    and for the same inputs backwards, teacher-forced on the same answer.  Near 0 for ALiBi here: its bias
    −slope·|i − j| is the same both ways in the encoder and cross-attention has no positions, so the model
    cannot tell an input from its mirror image."""
    model = load_model(name).model
    return _largest_difference(name, samples, lambda source, target: (model(source, target)[0],
                                                                      model(source.flip(1), target)[0]))


def _largest_difference(name: str, samples: int, pair) -> float:
    """The largest |a − b| over `samples` inputs of every length `name` was trained on, teacher-forced on
    the reversed input, where (a, b) = pair(source, target) are two logit tensors."""
    task = _task(name)
    largest = 0.0
    low, high = trained_lengths(name)
    with torch.no_grad():
        for n in range(low, high + 1):
            source = _inputs(task, n, samples)
            target = torch.cat([torch.full((samples, 1), task.index["<s>"]), source.flip(1)], dim=1)
            first, second = pair(source, target)
            largest = max(largest, float((first - second).abs().max()))
    return largest


# --- T5: the buckets an input of n letters needs, and which of them training reached -----------------


@dataclass(frozen=True)
class BucketsMet:
    """The buckets of one stack's T5 bias table that the self-attention over an input of `length` letters
    looks up (the encoder reads the n letters, both ways; the decoder <s> and n letters, looking back),
    and those no training input reached (offsets longer than any in the trained lengths)."""

    stack: str  # "encoder" or "decoder"
    length: int
    longest_offset: int  # the largest |k − q| a query meets
    buckets: tuple[int, ...]
    untrained: tuple[int, ...]
    table_size: int  # buckets in the table


def _buckets(bias, stack: str, n: int) -> set[int]:
    T = n if stack == "encoder" else n + 1
    buckets = t5_relative_buckets(T, T, bias.bidirectional, bias.num_buckets, bias.max_distance)
    if stack == "decoder":
        buckets = buckets[np.tril(np.ones((T, T), dtype=bool))]  # causal: only keys at or before the query
    return {int(b) for b in np.unique(buckets)}


def t5_buckets_met(name: str, length: int) -> dict[str, BucketsMet]:
    """For a shipped T5 reversal model: per stack, the bias buckets an input of `length` letters looks up
    and which of them training never reached (inputs of trained_lengths(name)).  Cross-attention has no bias."""
    model = load_model(name).model
    if model.config.encoding != "t5":
        raise ValueError(f"{name} has no T5 bias table (its encoding is {model.config.encoding!r})")
    longest = trained_lengths(name)[1]
    met = {}
    for stack in ("encoder", "decoder"):
        bias = getattr(model, stack).t5_bias
        here, trained = _buckets(bias, stack, length), set().union(
            *(_buckets(bias, stack, n) for n in range(1, longest + 1)))
        met[stack] = BucketsMet(stack, length, length - 1 if stack == "encoder" else length, tuple(sorted(here)),
                                tuple(sorted(here - trained)), bias.num_buckets)
    return met
