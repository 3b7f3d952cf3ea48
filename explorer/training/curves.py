"""The shipped training curves of plain and residual stacks (pretrained/stacks-training-curves.json):
where they are and their checked reader.  The command that makes them is explorer/training/stacks.py;
this module needs no torch, so a page (and pretrained/README.md's table, explorer/training/train.py)
reads the curves without importing the trainer.
"""

from __future__ import annotations

import json
from pathlib import Path

from .pretrained import PRETRAINED_DIR

__all__ = ["COMMAND", "CURVES_PATH", "StackCurvesError", "read_curves"]

COMMAND = "python -m explorer.training.stacks"
CURVES_PATH = PRETRAINED_DIR / "stacks-training-curves.json"


class StackCurvesError(ValueError):
    """The shipped curves file is missing or malformed (the message names the file and the command)."""


def _fail(path: Path, problem: str):
    raise StackCurvesError(f"{path.name}: {problem}. Regenerate it with: {COMMAND}")


def _check_runs(card: dict, path: Path) -> None:
    points = len(card["recorded_at_steps"])
    cells = {(run.get("depth"), run.get("wiring"), run.get("seed")) for run in card["runs"]}
    wanted = {(depth, wiring, seed) for depth in card["depths"] for wiring in card["wirings"] for seed in card["seeds"]}
    if cells != wanted or len(card["runs"]) != len(wanted):
        _fail(path, f"the runs are not one per depth × wiring × seed (missing {sorted(wanted - cells, key=str)})")
    for run in card["runs"]:
        for key in ("loss", "accuracy"):
            values = run.get(key)
            if (not isinstance(values, list) or len(values) != points
                    or not all(isinstance(v, (int, float)) and v == v and v >= 0 for v in values)):
                _fail(path, f"run {run['depth']}/{run['wiring']}/seed {run['seed']}: '{key}' is not "
                            f"{points} numbers ≥ 0")


def read_curves(path: Path = CURVES_PATH) -> dict:
    """The shipped card with its curves, checked: every cell present, every curve as long as the steps."""
    if not path.exists():
        _fail(path, "the file is missing")
    try:
        card = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as problem:
        _fail(path, f"it is not valid JSON ({problem})")
    if not isinstance(card, dict):
        _fail(path, "it is not a JSON object")
    missing = {"command", "depths", "wirings", "seeds", "recorded_at_steps", "runs", "uniform_guess_loss"} - set(card)
    if missing:
        _fail(path, f"it lacks {sorted(missing)}")
    if not isinstance(card["runs"], list) or not all(isinstance(run, dict) for run in card["runs"]):
        _fail(path, "'runs' is not a list of objects")
    _check_runs(card, path)
    return card
