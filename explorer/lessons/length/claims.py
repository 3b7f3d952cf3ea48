"""What the length lesson's steps say after Reveal, as claims (explorer/kit/claims.py): each step of
explorer/lessons/length/lesson.toml names one, checked on the view of its section (accuracy against
length and the drawn model's attention: LengthView; bytes against T: MemoryView; GQA, tiled and
windowed attention: length_parts).  The accuracy claims walk whatever models `view.models` holds
(analysis.length.REVERSAL_MODELS: every shipped reversal model), never a fixed list.
`s` is what is shown: `s.settings`, `s.view`.  No Streamlit.
"""

from __future__ import annotations

import math
import types

import numpy as np

from explorer.kit.claims import Claim, power_of_ten, spelled
from explorer.lessons.length.view import ENCODING_LABELS

__all__ = ["GQA_CLAIMS", "LENGTH_CLAIMS", "MEMORY_CLAIMS", "TILED_CLAIMS", "WINDOW_CLAIMS", "size"]

SUBJECTS = {"t5": "T5", "rope": "RoPE", "alibi": "ALiBi"}  # a model named as a sentence's subject
FRACTIONS = {2: "half", 3: "a third", 4: "a quarter", 8: "an eighth"}


def size(n: float) -> str:
    """Bytes in decimal units, as the lesson's tables write them: 2.15 GB, 4.1 kB, 512 B."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


# --- accuracy past the trained length and the drawn model's attention (LengthView) ---------------------


def _past(s) -> np.ndarray:
    return s.view.lengths > s.view.trained[1]


def _working(s) -> list[str]:
    """The models that loaded and give a number past the trained band."""
    view = s.view
    return [e for e in view.models if e not in view.damaged and not np.isnan(view.accuracy[e][_past(s)]).all()]


def _nothing_left(s) -> bool:
    """The drawn model gets every input past the band wrong; some other model keeps something just past
    it; and every model that refuses names the position it has no row for."""
    view, chosen = s.view, s.settings.encoding
    if chosen not in _working(s) or not _past(s).any():
        return False
    others = [e for e in _working(s) if e != chosen]
    return bool((view.accuracy[chosen][_past(s)] == 0).all()) and bool(others) and \
        max(view.accuracy[e][_past(s)][0] for e in others) > 0


def _left(s) -> dict:
    view, chosen, past = s.view, s.settings.encoding, _past(s)
    lengths = view.lengths[past]
    others = [e for e in _working(s) if e != chosen]
    best = max(others, key=lambda e: view.accuracy[e][past][0])
    accuracy = view.accuracy[best][past]
    zero = [int(n) for n, a in zip(lengths, accuracy, strict=True) if a == 0]
    tail = f"is at {0:.0%} from {zero[0]}" if zero and (accuracy[lengths >= zero[0]] == 0).all() else \
        f"has {accuracy[-1]:.0%} at {int(lengths[-1])}"
    refusing = [e for e in view.models if e not in view.damaged and view.refused.get(e)]
    stops = "".join(f" The {ENCODING_LABELS.get(e, e)} stops at {_last_number(s, e)}: it has no row for position "
                    f"{_last_number(s, e) + 1}." for e in refusing)
    return {"first_accuracy": float(view.accuracy[chosen][past][0]), "first": int(lengths[0]),
            "longest": int(lengths[-1]),
            "best": SUBJECTS.get(best, ENCODING_LABELS.get(best, best)),
            "best_accuracy": float(accuracy[0]), "tail": tail, "stops": stops}


def _last_number(s, encoding: str) -> int:
    accuracy = s.view.accuracy[encoding]
    return int(s.view.lengths[~np.isnan(accuracy)].max())


def _reach(s) -> int:
    """The furthest input position any row of the unseen length's grid weighs most."""
    n = s.view.unseen.length
    return int(s.view.unseen.weights[:n].argmax(1).max())


def _old_rows(s) -> list[int]:
    """The rows whose own position and whose letter's position (n − 1 − i) both occur at the trained lengths."""
    n, high = s.view.unseen.length, s.view.trained[1]
    return [i for i in range(n) if i < high and n - 1 - i < high]


def _lost_the_diagonal(s) -> bool:
    """At the longest trained length the weight on the letter being written is over three times an even
    spread (the anti-diagonal the step's question describes); at the unseen length it falls below half
    of that, stays above an even spread but below twice it, and decoding goes wrong; no row weighs a
    position past the trained ones most, and the rows that meet only trained positions (if any) are
    below half the trained length's weight too."""
    seen, unseen = s.view.seen, s.view.unseen
    if seen.refused or unseen.refused:
        return False
    even = 1 / unseen.length
    followed = seen.on_target > 3 / seen.length  # at the trained length the weight follows the anti-diagonal
    old = _old_rows(s)
    weights, n = unseen.weights, unseen.length
    old_ok = not old or float(np.mean([weights[i, n - 1 - i] for i in old])) < seen.on_target / 2
    return (followed and unseen.on_target < seen.on_target / 2 and even < unseen.on_target < 2 * even
            and not unseen.reversed_right and _reach(s) < s.view.trained[1] and old_ok)


def _diagonal(s) -> dict:
    unseen, high = s.view.unseen, s.view.trained[1]
    n, old = unseen.length, _old_rows(s)
    rows = "" if not old else (f"; rows {old[0]}–{old[-1]}, all of whose positions were trained, put "
                               f"{np.mean([unseen.weights[i, n - 1 - i] for i in old]):.0%} on their letter")
    return {"on_target": unseen.on_target, "even": 1 / n, "n": n, "seen": s.view.seen.on_target,
            "seen_n": s.view.seen.length, "reach": _reach(s), "high": high, "rows": rows,
            "last": ", the last trained" if _reach(s) == high - 1 else f" (positions up to {high - 1} were trained)"}


LENGTH_CLAIMS = types.MappingProxyType({
    "nothing_left": Claim(_nothing_left, _left),
    "lost_the_diagonal": Claim(_lost_the_diagonal, _diagonal),
})


# --- bytes against T (MemoryView) -----------------------------------------------------------------------


def _shape(s, prefix: str) -> int | None:
    return next((i for i, shape in enumerate(s.view.shapes) if shape.name.startswith(prefix)), None)


def _cache_formula(s) -> bool:
    """Llama-2-7B and Mistral-7B are both listed, and Mistral's cache is Llama's times its share of K/V heads;
    at a T both models can read (past a model's context, its cache is one it never holds; within Llama-2-7B's
    4,096 positions Mistral's sliding window keeps every key too)."""
    llama, mistral = _shape(s, "Llama-2-7B"), _shape(s, "Mistral-7B")
    if llama is None or mistral is None:
        return False
    a, b = s.view.shapes[llama], s.view.shapes[mistral]
    ratio = a.n_kv_heads // b.n_kv_heads
    readable = all(shape.max_positions is not None and shape.max_positions >= s.settings.T for shape in (a, b))
    return readable and ratio in FRACTIONS and math.isclose(s.view.kv_at[mistral] * ratio, s.view.kv_at[llama])


def _cache(s) -> dict:
    llama, mistral = _shape(s, "Llama-2-7B"), _shape(s, "Mistral-7B")
    a, b = s.view.shapes[llama], s.view.shapes[mistral]
    return {"kv": size(s.view.kv_at[llama]), "layers": a.n_layers, "kv_heads": a.n_kv_heads, "d_head": a.d_head,
            "T": s.settings.T, "bytes": s.settings.bytes_per_value, "mistral_heads": b.n_kv_heads,
            "fraction": FRACTIONS[a.n_kv_heads // b.n_kv_heads], "mistral": size(s.view.kv_at[mistral]),
            "heads": a.n_heads, "scores": size(s.view.scores_at[llama])}


MEMORY_CLAIMS = types.MappingProxyType({"cache_formula": Claim(_cache_formula, _cache)})


# --- grouped-query attention (GqaView) --------------------------------------------------------------------


def _heads_still_differ(s) -> bool:
    """Fewer K/V heads than query heads, yet no two query heads' grids are the same."""
    view, w = s.view, s.view.weights
    if view.kv_heads >= view.heads:
        return False
    return all(not np.allclose(w[i], w[j]) for i in range(view.heads) for j in range(i))


def _kv(count: int) -> str:
    return f"{spelled(count)} K/V head" + ("" if count == 1 else "s")


def _shrinks(s) -> dict:
    view = s.view
    here = view.cache_here
    g = view.kv_counts.index(view.kv_heads)
    return {"heads": view.heads, "fold": view.heads // view.kv_heads, "big": size(here[0]), "small": size(here[g]),
            "kv7b": _kv(view.full_kv_heads[g]), "all7b": view.full_kv_heads[0], "big7b": size(view.cache_full[0]),
            "small7b": size(view.cache_full[g])}


GQA_CLAIMS = types.MappingProxyType({"heads_still_differ": Claim(_heads_still_differ, _shrinks)})


# --- tiled attention (TiledView) ---------------------------------------------------------------------------


def _tiles_match(s) -> bool:
    """One tile is held at a time, fewer values than the whole matrix, and the result equals plain
    attention to float64 precision."""
    view = s.view
    return view.held == view.T * view.block < view.full and view.max_error < 1e-9


def _tiles(s) -> dict:
    error = s.view.max_error
    within = "exactly" if error == 0 else f"to within {power_of_ten(10.0 ** math.ceil(math.log10(error)))}"
    return {"held": s.view.held, "T": s.view.T, "block": s.view.block, "full": s.view.full, "within": within}


TILED_CLAIMS = types.MappingProxyType({"tiles_match": Claim(_tiles_match, _tiles)})


# --- sliding windows (WindowView) ---------------------------------------------------------------------------


def _window_path(s) -> bool:
    """The last position needs ⌈(T − 1) / (w − 1)⌉ layers to read the first, more than are stacked, so
    after the stacked layers it reaches back less far; full causal attention needs one."""
    view = s.view
    if view.path is None or view.window < 2:
        return False
    return (view.path == math.ceil((view.T - 1) / (view.window - 1)) and view.layers < view.path
            and view.reach_back == view.layers * (view.window - 1) and view.causal_path == 1)


def _window(s) -> dict:
    view = s.view
    step, span = view.window - 1, view.T - 1
    division = f"{span} / {step} = {view.path}" if span % step == 0 else f"⌈{span} / {step}⌉ = {view.path}"
    return {"path": view.path, "step": step, "span": span, "division": division, "layers": view.layers,
            "layer_word": "layer" if view.layers == 1 else "layers", "back": view.reach_back,
            "causal": view.causal_path}


WINDOW_CLAIMS = types.MappingProxyType({"window_path": Claim(_window_path, _window)})
