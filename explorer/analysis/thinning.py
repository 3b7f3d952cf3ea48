"""Which rows and columns of a large matrix a heatmap draws: every k-th, within a budget of cells, so that
a 1024 × 1024 matrix is sent as a few hundred rows (the positions and real-model lessons)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["DRAW_BUDGET", "DrawPlan", "draw_plan"]

DRAW_BUDGET = 256 * 256  # cells a heatmap draws at most (float32: 256 KB of z before base64)


@dataclass(frozen=True)
class DrawPlan:
    """Which rows and columns of a big matrix a figure draws: every `row_step`-th row from 0 and
    every `col_step`-th column from 0.  The column step is odd, so the drawn columns alternate
    between sine (even) and cosine (odd) dimensions instead of showing only one kind."""

    n_rows: int
    n_cols: int
    row_step: int
    col_step: int

    @property
    def rows(self) -> np.ndarray:
        return np.arange(0, self.n_rows, self.row_step)

    @property
    def cols(self) -> np.ndarray:
        return np.arange(0, self.n_cols, self.col_step)

    @property
    def downsampled(self) -> bool:
        return self.row_step > 1 or self.col_step > 1

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.rows), len(self.cols)


def draw_plan(n_rows: int, n_cols: int, budget: int = DRAW_BUDGET) -> DrawPlan:
    """The smallest steps that keep the drawn cells within `budget` (widening the longer side first)."""
    if n_rows < 1 or n_cols < 1 or budget < 1:
        raise ValueError("need a non-empty matrix and a positive budget")
    row_step, col_step = 1, 1
    while math.ceil(n_rows / row_step) * math.ceil(n_cols / col_step) > budget:
        if math.ceil(n_rows / row_step) >= math.ceil(n_cols / col_step):
            row_step += 1
        else:
            col_step += 2  # stays odd
    return DrawPlan(n_rows, n_cols, row_step, col_step)
