"""What a head's attention pattern does, read from its weights (numpy arrays, …, T_q, T_k): the key each
row weighs most, and whether most rows follow a rule ("reads the input from the end").  The lessons'
sentences about heads use these predicates (the attention lesson's notices, the positions lesson's
reversal models)."""

from __future__ import annotations

import numpy as np

__all__ = ["MOST", "brightest", "from_the_end"]

MOST = 0.75  # "a head does X": X holds for at least this share of the rows it is about


def brightest(weights: np.ndarray) -> np.ndarray:
    """(layers, heads, T_q): the key each row weighs most."""
    return weights.argmax(axis=-1)


def from_the_end(weights: np.ndarray, places: list[int], steps: int) -> bool:
    """Does cross-attention run along the anti-diagonal: in `weights` (…, T_q, T_k: heads, or one map),
    do most of the first `steps` rows weigh most the k-th of the input's `places` from the end (by place:
    compared by letter, a word of repeated letters would match wherever a head looked)?  True if some
    head does."""
    wanted = np.array(places[::-1][:steps])
    return bool(steps) and bool(((brightest(weights)[..., :steps] == wanted).mean(axis=-1) >= MOST).any())
