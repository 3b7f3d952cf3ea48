"""The block lesson's section on the Norm of Add & Norm: torch's LayerNorm and BatchNorm1d on the same real
activations (what layer 1's first LayerNorm reads, for a batch of four sentences), and how much each one's
output for the first sentence moves when nothing about that sentence changed
(explorer.analysis.addnorm.norm_changes).  Its settings, view and claims."""

from __future__ import annotations

import types
from dataclasses import dataclass

import numpy as np
import torch

from explorer.analysis.addnorm import norm_changes
from explorer.analysis.block import block_trace
from explorer.kit.claims import Claim

from .view import MODEL, PRESETS

__all__ = ["NORM_CLAIMS", "NormSettings", "NormView", "norm_table", "norm_view"]

OTHERS = ("the horse didn't cross the river because it was too wide",
          "the cow didn't cross the road because it was too tired",
          "the fox didn't catch the goat because it was too slow")
CASES = {"other sentences": "the other B sentences replaced",
         "padding": "every sentence padded with T zero vectors",
         "inference": "inference: the sentence alone, after N training batches"}
TRAINING_BATCHES = 20
UNMOVED = 1e-5  # float32 rounding: "does not move"


BATCH = tuple(PRESETS.values())  # the batch: the example sentences


@dataclass(frozen=True)
class NormSettings:
    """No controls: the batch is the example sentences (BATCH)."""


@dataclass(frozen=True)
class NormView:
    settings: NormSettings
    shape: tuple[int, int, int]
    changes: types.MappingProxyType  # {norm: {case: largest change}}


def _inputs(sentences) -> torch.Tensor:
    return torch.tensor(np.stack([block_trace(MODEL, s)["input"] for s in sentences]))  # (B, T, d)


def norm_view(settings: NormSettings) -> NormView:
    x, others = _inputs(BATCH), _inputs(OTHERS)
    changes = norm_changes(x, others, [x] * TRAINING_BATCHES)
    return NormView(settings, tuple(x.shape), types.MappingProxyType(
        {norm: types.MappingProxyType(cases) for norm, cases in changes.items()}))


def norm_table(view: NormView) -> dict:
    """The table the section shows: a row per case, the largest change of each norm's output."""
    cases = [text.replace(" T ", f" {view.shape[1]} ").replace(" N ", f" {TRAINING_BATCHES} ")
             .replace(" B ", f" {view.shape[0] - 1} ")
             for text in CASES.values()]
    return {"the first sentence unchanged, but": cases,
            "LayerNorm: its output moves by": [f"{view.changes['LayerNorm'][c]:.1g}" for c in CASES],
            "BatchNorm: its output moves by": [f"{view.changes['BatchNorm'][c]:.2f}" for c in CASES]}


def _values(shown) -> dict:
    view = shown.view
    batch, T, d = view.shape
    return {"batch": batch, "T": T, "d": d, "ln_most": max(view.changes["LayerNorm"].values()),
            "bn_least": min(view.changes["BatchNorm"].values()), "bn_most": max(view.changes["BatchNorm"].values()),
            "samples": batch * T}


NORM_CLAIMS = types.MappingProxyType({
    # LayerNorm's output does not move (rounding); BatchNorm's moves in every case
    "layer_not_batch": Claim(lambda shown: _values(shown)["ln_most"] < UNMOVED
                             and _values(shown)["bn_least"] > 100 * UNMOVED, _values),
})
