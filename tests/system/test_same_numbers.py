"""Same numbers always: no seeded view may depend on what other threads are doing.

Every seeded view of the lessons is computed once alone, then again while other threads build
shipped models, MiniLM and random-weight models in a loop (everything a fresh server's warm-up and
its visitors do at the moment a class arrives); every array must be bit-identical to the run alone.

The disturbance is real, not simulated: the building threads draw from torch's global random
generator (a random-weight `Transformer(config)`), or built on it before this project stopped doing
so (shipped models, MiniLM).  A view that reads that generator, directly or by seeding it, gets
other numbers here.  The switch interval is shortened for the test so that threads interleave
often, within one model build.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

import numpy as np
import torch

from explorer.analysis import dependency_views as dependency_module
from explorer.analysis import depth as depth_analysis
from explorer.analysis.timing import TIMED_LAYERS, build_timed_layer
from explorer.lessons.attention import models as attention_view
from explorer.lessons.depth.view import depth_curves
from explorer.lessons.gradients import measures as gradient_view
from explorer.model.transformer import Transformer, TransformerConfig
from explorer.training.live import LiveSettings, build, live_task, run_settings
from explorer.training.minilm import MiniLM, minilm_dir
from explorer.training.pretrained import load_model_uncached

ROUNDS = 2  # computations of every view while the other threads build
SHIPPED = ("reverse-learned-h4-l2", "reverse-rope-h4-l2", "recall-lstm", "coreference-sinusoidal-h4-l2")


def arrays(value) -> list[np.ndarray]:
    """Every array in a view's result, in a fixed order (tensors as numpy, mappings by key)."""
    if isinstance(value, torch.Tensor):
        return [value.detach().numpy().copy()]
    if isinstance(value, np.ndarray):
        return [value.copy()]
    if isinstance(value, (int, float)):
        return [np.array(value)]
    if isinstance(value, dict) or hasattr(value, "items"):
        return [a for key in sorted(value, key=str) for a in arrays(value[key])]
    if isinstance(value, (tuple, list)):
        return [a for item in value for a in arrays(item)]
    if hasattr(value, "__dataclass_fields__"):
        return [a for name in value.__dataclass_fields__ for a in arrays(getattr(value, name))]
    return []


def same(got: list[np.ndarray], expected: list[np.ndarray]) -> bool:
    """Bit-identical: the same arrays, shapes and values (NaN equal to NaN)."""
    return len(got) == len(expected) and all(
        a.shape == b.shape and np.array_equal(a, b, equal_nan=True) for a, b in zip(got, expected, strict=True))


def _model_numbers(model: torch.nn.Module) -> list[np.ndarray]:
    return arrays(dict(model.state_dict()))


def _random_weights(encoding: str, heads: int, layers: int) -> list[np.ndarray]:
    model = attention_view.random_model.__wrapped__("reverse", encoding, heads, layers)
    tokens = torch.tensor([[1, 2, 3, 4, 5, 6]])
    logits, trace = model(tokens, torch.tensor([[1, 2, 3]]))
    return [*_model_numbers(model), *arrays(logits), *arrays(trace.layers[0].cross_attention.weights)]


def _timed_layers(d: int) -> list[np.ndarray]:
    x = torch.randn(1, 12, d, generator=torch.Generator().manual_seed(7))
    out = []
    for layer in TIMED_LAYERS:
        result = build_timed_layer(layer, d)(x)
        out += arrays(result[0] if isinstance(result, tuple) else result.hidden)
    return out


def _depth(n_layers: int, width: int, T: int, n_seeds: int) -> list[np.ndarray]:
    depth_analysis._seed_weights.cache_clear()  # the drawn weights are cached per (width, seed)
    return [*arrays(depth_curves(n_layers, width, T, n_seeds)),
            *arrays(depth_analysis.layer_gradient_norms(3, width=width, residual=False, norm="pre", seed=1, T=T))]


def _dependency(kind: str, init: str, gain: float) -> list[np.ndarray]:
    dependency_module._attention_dependency.cache_clear()  # cached apart from the recurrent matrix
    return arrays(gradient_view.dependency_views.__wrapped__(kind, 12, 8, init, gain, 0))


def _live(settings: LiveSettings) -> list[np.ndarray]:
    snapshot = next(run_settings(settings))
    return [*_model_numbers(build(settings, live_task(settings.task, settings.letters))),
            *arrays((snapshot.loss, snapshot.accuracy)), *arrays(snapshot.attention)]


# Every seeded view of the lessons, at small sizes (what each reads from its seeds is the same at any size).
VIEWS: dict[str, Callable[[], list[np.ndarray]]] = {
    **{f"gradient curves, {init} gain {gain}, BPTT {window}": (
        lambda init=init, gain=gain, window=window: arrays(
            gradient_view.gradient_curves.__wrapped__(40, 12, init, gain, window, 2)))
       for init, gain, window in (("default", 1.0, None), ("orthogonal", 1.1, None), ("default", 1.0, 8))},
    **{f"dependency, {kind}": (lambda kind=kind: _dependency(kind, "default", 1.0)) for kind in ("rnn", "lstm", "gru")},
    "dependency, gru orthogonal 0.9": lambda: _dependency("gru", "orthogonal", 0.9),
    "depth": lambda: _depth(5, 16, 6, 2),
    "attention, random weights (learned, 2 heads, 1 layer)": lambda: _random_weights("learned", 2, 1),
    "attention, random weights (t5, 4 heads, 2 layers)": lambda: _random_weights("t5", 4, 2),
    "cost, timed layers": lambda: _timed_layers(16),
    "live training, step 0 (transformer)": lambda: _live(LiveSettings(d_model=16, n_heads=2)),
    "live training, step 0 (GRU)": lambda: _live(LiveSettings(model="gru", d_model=16)),
}


def _build_in_a_loop(stop: threading.Event, build_one: Callable[[int], object], counts: dict, name: str) -> None:
    i = 0
    while not stop.is_set():
        build_one(i)
        i += 1
    counts[name] = i


def _random_weight_model(i: int) -> Transformer:
    return Transformer(TransformerConfig(vocab_size=20, d_model=16, n_heads=2, n_layers=1 + i % 2,
                                         architecture="encoder-decoder", encoding="learned"))


def mismatches(alone: dict[str, list[np.ndarray]], rounds: int) -> tuple[list[str], dict[str, int]]:
    """Each view computed `rounds` times while three threads build models: the views whose numbers
    differed from `alone` (one entry per differing computation), and how many models each thread built."""
    stop = threading.Event()
    counts: dict[str, int] = {}
    minilm_path = minilm_dir()
    builders = {
        "shipped models": lambda i: load_model_uncached(SHIPPED[i % len(SHIPPED)]),
        "MiniLM": lambda i: MiniLM(minilm_path),
        "random-weight models": _random_weight_model,
    }
    threads = [threading.Thread(target=_build_in_a_loop, args=(stop, fn, counts, name), daemon=True)
               for name, fn in builders.items()]
    wrong = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        for thread in threads:
            thread.start()
        time.sleep(0.2)
        for _ in range(rounds):
            for name, compute in VIEWS.items():
                if not same(compute(), alone[name]):
                    wrong.append(name)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        sys.setswitchinterval(interval)
    return wrong, counts


def test_every_seeded_view_gives_the_same_numbers_while_other_threads_build_models():
    alone = {name: compute() for name, compute in VIEWS.items()}
    assert all(alone.values())
    again = {name: compute() for name, compute in VIEWS.items()}  # alone twice: each view is deterministic
    assert all(same(again[name], alone[name]) for name in VIEWS)

    wrong, counts = mismatches(alone, ROUNDS)
    assert all(counts.get(name, 0) > 0 for name in ("shipped models", "MiniLM", "random-weight models")), counts
    assert not wrong, (f"{len(wrong)} of {ROUNDS * len(VIEWS)} seeded computations differed from the same "
                       f"computation alone while other threads built models ({counts}): {sorted(set(wrong))}")
