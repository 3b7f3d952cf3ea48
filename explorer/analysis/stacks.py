"""Plain against residual stacks, trained: the shipped curves and the facts a page states about them.

`stack_curves()` reads pretrained/stacks-training-curves.json (made by `python -m
explorer.training.stacks`, checked on load by `read_curves`) into arrays: for each depth ("shallow",
"deep") and wiring ("plain", "residual") the training loss and accuracy, one row per seed, one column
per recorded step.  `stack_facts(curves)` gives what a sentence about the figure may say: each cell's
final loss (the mean over the last recorded steps) per seed, its mean and range over the seeds, and
which cell ends above which, for every seed, by how much.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..training.curves import CURVES_PATH, read_curves

__all__ = ["CellFinal", "StackCurves", "StackFacts", "stack_curves", "stack_facts"]

Cell = tuple[str, str]  # (depth, wiring), e.g. ("deep", "plain")


@dataclass(frozen=True)
class StackCurves:
    """steps: (P,) the recorded steps.  loss, accuracy: (depth, wiring) → (seeds, P), float64.
    depths: depth name → layers.  uniform_guess_loss: the loss of a model whose answer ignores its
    input (every symbol equally likely).  card: the file's card (how the curves were made)."""

    steps: np.ndarray
    loss: dict[Cell, np.ndarray]
    accuracy: dict[Cell, np.ndarray]
    seeds: tuple[int, ...]
    depths: dict[str, int]
    wirings: tuple[str, ...]
    uniform_guess_loss: float
    card: dict


@dataclass(frozen=True)
class CellFinal:
    """One cell's final training loss: per seed (in `StackCurves.seeds` order), mean, lowest, highest."""

    per_seed: np.ndarray
    mean: float
    low: float
    high: float


@dataclass(frozen=True)
class StackFacts:
    """What the curves show at the end of training.  `gap` is deep − shallow per seed for a wiring."""

    final: dict[Cell, CellFinal]
    n_seeds: int
    deep_plain_above_shallow_plain: bool  # in every seed
    deep_residual_above_shallow_residual: bool  # in any seed
    deep_plain_above_deep_residual: bool  # in every seed
    deep_plain_from_uniform_guess: float  # the largest |final loss − uniform-guess loss| of the deep plain stack
    plain_gap: np.ndarray  # (seeds,) deep plain − shallow plain
    residual_gap: np.ndarray  # (seeds,) deep residual − shallow residual

    def values(self) -> dict[str, float]:
        """Numbers a sentence may quote: `n_seeds`, `<depth>_<wiring>_{mean,low,high}` (final losses),
        `{plain,residual}_gap_{mean,least,most}` (deep − shallow over the seeds) and
        `deep_plain_from_uniform_guess`."""
        out: dict[str, float] = {"n_seeds": self.n_seeds,
                                 "deep_plain_from_uniform_guess": self.deep_plain_from_uniform_guess}
        for (depth, wiring), cell in self.final.items():
            out |= {f"{depth}_{wiring}_mean": cell.mean, f"{depth}_{wiring}_low": cell.low,
                    f"{depth}_{wiring}_high": cell.high}
        for name, gap in (("plain_gap", self.plain_gap), ("residual_gap", self.residual_gap)):
            out |= {f"{name}_mean": float(gap.mean()), f"{name}_least": float(gap.min()),
                    f"{name}_most": float(gap.max())}
        return out


def stack_curves(path: Path = CURVES_PATH) -> StackCurves:
    """The shipped curves as arrays, read and checked at each call (a 25 kB file; raises
    StackCurvesError if malformed).  Not cached yet: the runtime lists only the caches of modules a
    lesson loads (tests/system/test_sessions.py), and no lesson draws these curves yet."""
    card = read_curves(path)
    seeds = tuple(card["seeds"])
    by_cell = {(run["depth"], run["wiring"], run["seed"]): run for run in card["runs"]}
    cells = [(depth, wiring) for depth in card["depths"] for wiring in card["wirings"]]

    def rows(key: str) -> dict[Cell, np.ndarray]:
        return {cell: np.array([by_cell[(*cell, seed)][key] for seed in seeds], dtype=np.float64) for cell in cells}

    return StackCurves(np.array(card["recorded_at_steps"]), rows("loss"), rows("accuracy"), seeds,
                       dict(card["depths"]), tuple(card["wirings"]), float(card["uniform_guess_loss"]), card)


def stack_facts(curves: StackCurves, last_points: int = 5) -> StackFacts:
    """Each cell's final loss = its mean over the last `last_points` recorded points (per seed), and
    the comparisons between cells that the page states."""
    final = {}
    for cell, loss in curves.loss.items():
        per_seed = loss[:, -last_points:].mean(axis=1)
        final[cell] = CellFinal(per_seed, float(per_seed.mean()), float(per_seed.min()), float(per_seed.max()))
    plain_gap = final[("deep", "plain")].per_seed - final[("shallow", "plain")].per_seed
    residual_gap = final[("deep", "residual")].per_seed - final[("shallow", "residual")].per_seed
    deep_gap = final[("deep", "plain")].per_seed - final[("deep", "residual")].per_seed
    from_guess = float(np.abs(final[("deep", "plain")].per_seed - curves.uniform_guess_loss).max())
    return StackFacts(final, len(curves.seeds), bool((plain_gap > 0).all()), bool((residual_gap > 0).any()),
                      bool((deep_gap > 0).all()), from_guess, plain_gap, residual_gap)
