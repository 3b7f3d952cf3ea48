"""What the depth lesson shows, computed and cached: the gradient reaching each layer of a deep
stack for every wiring (residual or not; post-norm, pre-norm or no LayerNorm), over several seeds.
Pure torch + numpy, no Streamlit; the maths is `explorer.analysis.depth`."""

from __future__ import annotations

import types

import numpy as np

from ..analysis.caching import bounded_cache
from ..analysis.depth import depth_gradient_norms
from .pool import POOL

__all__ = ["depth_curves"]


@bounded_cache(32, max_bytes=2_000_000)
def depth_curves(
    n_layers: int = 12, width: int = 32, T: int = 16, n_seeds: int = 3
) -> types.MappingProxyType[tuple[str, bool], np.ndarray]:
    """`layer_gradient_norms` for every (norm, residual) in DEPTH_CONFIGS: each (n_seeds, n_layers),
    in a read-only mapping (the cache is shared).  Computed by `depth_gradient_norms`, the seeds
    as one batch, each piece (a seed's weights, one wiring) on the shared pool."""
    if not 1 <= n_layers <= 64 or not 1 <= n_seeds <= 16:
        raise ValueError("n_layers must be 1–64 and n_seeds 1–16")
    curves = depth_gradient_norms(n_layers, width, T, n_seeds, run=POOL.run)
    for values in curves.values():
        values.setflags(write=False)  # cached and shared between sessions
    return types.MappingProxyType(curves)
