"""‖∂y_t/∂x_s‖ for a recurrent network, a causal attention layer and the same layer unmasked, on one
random input (explorer.analysis.dependency computes each matrix): computed once per setting and shared,
read-only.  The gradients lesson draws them; the encoders lesson compares a recurrent network with a
bidirectional one on them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..caching import bounded_cache
from ..model.rnn import RECURRENT_KINDS
from ..pieces import piece
from .dependency import UnmaskedAttentionStack, fast_dependency_matrix
from .gradients import INPUT_SEED_OFFSET, build_sequence_model, random_sequence

__all__ = ["DependencyViews", "dependency_views"]


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@dataclass(frozen=True)
class DependencyViews:
    """‖∂y_t/∂x_s‖ for the recurrent model, the causal attention layer and the same layer unmasked."""

    kind: str
    recurrent: np.ndarray
    causal: np.ndarray
    unmasked: np.ndarray


@bounded_cache(32, max_bytes=8_000_000)
def dependency_views(
    kind: str = "rnn", T: int = 32, width: int = 16, init: str = "default", gain: float = 1.0, seed: int = 0,
    forget_bias: float = 0.0,
) -> DependencyViews:
    """The three dependency matrices on one input (random_sequence(T, width, seed=1000 + seed)), each
    one piece of work (explorer.pieces).  forget_bias: the LSTM's (`build_sequence_model`)."""
    if not 1 <= T <= 128 or not 1 <= width <= 64:
        raise ValueError("the dependency view is bounded to T ≤ 128 and width ≤ 64")
    causal, unmasked = _attention_dependency(T, width, seed)
    recurrent = piece(_recurrent_dependency, kind, T, width, init, gain, seed, forget_bias)
    return DependencyViews(kind, _frozen(recurrent), causal, unmasked)


def _recurrent_dependency(kind: str, T: int, width: int, init: str, gain: float, seed: int,
                          forget_bias: float = 0.0) -> np.ndarray:
    x = random_sequence(T, width, seed=INPUT_SEED_OFFSET + seed)
    # A fresh model of our own, so its parameters can be frozen (no graph for the weights).
    recurrent = build_sequence_model(kind, width, init=init, gain=gain, seed=seed,
                                     forget_bias=forget_bias).requires_grad_(False)
    return fast_dependency_matrix(recurrent, x, causal=kind in RECURRENT_KINDS)  # "birnn" reads both ways


def _attention_matrix(T: int, width: int, seed: int, masked: bool) -> np.ndarray:
    x = random_sequence(T, width, seed=INPUT_SEED_OFFSET + seed)
    causal = build_sequence_model("transformer", width, seed=seed).requires_grad_(False)
    return fast_dependency_matrix(causal, x, causal=True) if masked else \
        fast_dependency_matrix(UnmaskedAttentionStack(causal), x)


@bounded_cache(16, max_bytes=4_000_000)
def _attention_dependency(T: int, width: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The attention layer's two matrices (causal, unmasked), cached on their own: they do not depend
    on the recurrent network's kind or initialisation, and they are the costlier part, so changing
    those settings recomputes only the recurrent matrix.  Two pieces of work."""
    return (_frozen(piece(_attention_matrix, T, width, seed, True)),
            _frozen(piece(_attention_matrix, T, width, seed, False)))
