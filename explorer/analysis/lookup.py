"""Attention as a soft dictionary lookup: a query scores every key, softmax turns the scores into
weights, and the answer is the weighted mix of the values.

The worked example reproduces the lecture's numbers: with the query and keys below the scores are
2.0, 2.4, −10, 1.8, −12.5 and the weights ≈ .30, .45, 0, .25, 0.  The keys are also chosen so that a
query equal to any one key retrieves (almost only) that key's value.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import torch

from ..model.attention import attention_pipeline

__all__ = [
    "EXAMPLE_KEYS",
    "EXAMPLE_QUERY",
    "EXAMPLE_VALUES",
    "LookupResult",
    "format_vectors",
    "parse_vectors",
    "soft_lookup",
]

EXAMPLE_QUERY = np.array([-1.0, 2.0, -2.0, -2.0])
EXAMPLE_KEYS = np.array(
    [
        [2.0, 4.0, 1.5, 0.5],
        [-3.0, -1.8, -2.5, 1.0],
        [3.0, 1.0, 2.5, 2.0],
        [-3.0, 2.4, 2.0, 1.0],
        [1.5, -4.0, 0.5, 1.0],
    ]
)
EXAMPLE_VALUES = np.array(
    [
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 1.0],
    ]
)

MAX_ROWS = 8
MAX_DIM = 8
MAX_ABS_VALUE = 100.0
MAX_TEXT_LENGTH = 600


@dataclass
class LookupResult:
    """float64 arrays; for one query the leading query axis is dropped."""

    scores: np.ndarray  # q·k_i
    scaled_scores: np.ndarray  # q·k_i × scale / temperature, what the softmax sees
    weights: np.ndarray  # softmax over keys, each row sums to 1
    output: np.ndarray  # weights @ values
    scale: float  # the factor applied to the scores before the softmax


def soft_lookup(
    query: np.ndarray,
    keys: np.ndarray,
    values: np.ndarray,
    *,
    scale_by_sqrt_d: bool = False,
    temperature: float = 1.0,
) -> LookupResult:
    """Look up `query` (d,) — or several stacked queries (n, d) — among `keys` (m, d).

    scale_by_sqrt_d divides the scores by √d as the transformer does; temperature divides them
    further (high temperature flattens the weights, low temperature sharpens them).
    """
    query, keys, values = (np.asarray(a, dtype=np.float64) for a in (query, keys, values))
    single = query.ndim == 1
    q = np.atleast_2d(query)
    if keys.ndim != 2 or values.ndim != 2 or q.shape[1] != keys.shape[1] or keys.shape[0] != values.shape[0]:
        raise ValueError(
            f"shapes do not fit: query {query.shape}, keys {keys.shape}, values {values.shape}; "
            "queries and keys need the same length and there must be one value per key"
        )
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    scale = (1.0 / math.sqrt(keys.shape[1]) if scale_by_sqrt_d else 1.0) / temperature
    trace = attention_pipeline(*(torch.from_numpy(a) for a in (q, keys, values)), scale=scale)
    parts = [t.numpy() for t in (trace.raw_scores, trace.scaled_scores, trace.weights, trace.output)]
    if single:
        parts = [p[0] for p in parts]
    return LookupResult(*parts, scale=scale)


_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def parse_vectors(text: str, *, rows: int | None = None, dim: int | None = None) -> np.ndarray:
    """Parse rows of numbers typed by a user: rows split by ';' or new lines, numbers by ',' or spaces.

    Raises ValueError with a message meant for the user when the text is too long, a number is not
    a finite number, the rows differ in length, or the size is not the one asked for.
    """
    if len(text) > MAX_TEXT_LENGTH:
        raise ValueError(f"the text is too long ({len(text)} characters; at most {MAX_TEXT_LENGTH})")
    lines = [line.strip() for line in re.split(r"[;\n]", text) if line.strip()]
    if not lines:
        raise ValueError("no numbers found")
    matrix = []
    for n, line in enumerate(lines, start=1):
        row = []
        for token in re.split(r"[,\s]+", line):
            if not token:
                continue
            if not _NUMBER.match(token):
                raise ValueError(f"row {n}: {token[:20]!r} is not a number")
            number = float(token)
            if not math.isfinite(number) or abs(number) > MAX_ABS_VALUE:
                raise ValueError(f"row {n}: {token[:20]} is outside ±{MAX_ABS_VALUE:g}")
            row.append(number)
        if not row:
            raise ValueError(f"row {n} has no numbers")
        matrix.append(row)
    widths = {len(r) for r in matrix}
    if len(widths) != 1:
        raise ValueError("every row needs the same number of entries")
    width = widths.pop()
    if rows is not None and len(matrix) != rows:
        raise ValueError(f"expected {_count(rows, 'row')}, found {len(matrix)}")
    if dim is not None and width != dim:
        raise ValueError(f"expected {_count(dim, 'number')} per row, found {width}")
    if len(matrix) > MAX_ROWS or width > MAX_DIM:
        raise ValueError(f"at most {MAX_ROWS} rows of at most {MAX_DIM} numbers")
    return np.array(matrix, dtype=np.float64)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def format_vectors(matrix: np.ndarray) -> str:
    """The inverse of parse_vectors: one row per line, '2, 4, 1.5, 0.5', minimal decimals."""
    return "\n".join(", ".join(f"{x:.10g}" for x in row) for row in np.atleast_2d(matrix))
