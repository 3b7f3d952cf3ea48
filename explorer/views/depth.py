"""What the depth lesson shows: the gradient reaching each layer of a deep stack for every wiring
(residual or not; post-norm, pre-norm or no LayerNorm), over several seeds.  Pure torch + numpy, no
Streamlit; the maths is `explorer.analysis.depth`.  The lesson is a declaration: `DepthSettings`
(its controls) and `depth_view(settings)`; the lesson runtime (explorer/serve) caches the view."""

from __future__ import annotations

import types
from dataclasses import dataclass

import numpy as np

from ..analysis.depth import depth_gradient_norms
from .pool import POOL
from .settings import setting

__all__ = ["DepthSettings", "depth_curves", "depth_view"]


@dataclass(frozen=True)
class DepthSettings:
    """The depth lesson's controls."""

    n_layers: int = setting(12, "Layers", url="layers", bounds=(1, 24, 1))
    width: int = setting(32, "Width d_model", url="width", options=(16, 32, 64),
                         help="4 attention heads; the feed-forward layer is 4 × wider.")
    T: int = setting(16, "Sequence length", url="T", options=(4, 8, 16, 32))
    n_seeds: int = setting(3, "Random seeds", url="seeds", bounds=(1, 5, 1),
                           help="Each seed draws new weights and a new input; the line is the mean of log10 of the "
                                "norm, the band ± one standard deviation.")


def depth_view(settings: DepthSettings) -> types.MappingProxyType[tuple[str, bool], np.ndarray]:
    """The lesson's view: `depth_curves` at the settings."""
    return depth_curves(settings.n_layers, settings.width, settings.T, settings.n_seeds)


def depth_curves(
    n_layers: int = 12, width: int = 32, T: int = 16, n_seeds: int = 3
) -> types.MappingProxyType[tuple[str, bool], np.ndarray]:
    """`layer_gradient_norms` for every (norm, residual) in DEPTH_CONFIGS: each (n_seeds, n_layers),
    in a read-only mapping (the runtime's cache shares it between sessions).  Computed by
    `depth_gradient_norms`, the seeds as one batch, each piece (a seed's weights, one wiring) on the pool."""
    if not 1 <= n_layers <= 64 or not 1 <= n_seeds <= 16:
        raise ValueError("n_layers must be 1–64 and n_seeds 1–16")
    curves = depth_gradient_norms(n_layers, width, T, n_seeds, run=POOL.run)
    for values in curves.values():
        values.setflags(write=False)  # cached and shared between sessions
    return types.MappingProxyType(curves)
