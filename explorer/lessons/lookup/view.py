"""The lookup lesson, declared: its settings (the query, the dictionary as typed text, the sharpness)
and its view (settings → the lookup's arrays).  No Streamlit; the maths is explorer.analysis.lookup.
The runtime (explorer/serve) caches the view; explorer/lessons/lookup/lookup.py draws it."""

from __future__ import annotations

import math
import types
from dataclasses import dataclass

import numpy as np

from explorer.analysis.lookup import (
    EXAMPLE_KEYS,
    EXAMPLE_QUERY,
    EXAMPLE_VALUES,
    MAX_TEXT_LENGTH,
    LookupResult,
    format_vectors,
    parse_vectors,
    soft_lookup,
)
from explorer.kit.claims import Claim, listed
from explorer.kit.measured import Measured
from explorer.kit.settings import setting

from .boxes import self_match

__all__ = ["DIM", "LOOKUP_CLAIMS", "Dictionary", "LookupSettings", "LookupView", "listed", "lookup_facts",
           "lookup_view", "number", "read_dictionary"]

DIM = EXAMPLE_KEYS.shape[1]
QUERY_BOUNDS = (-10.0, 10.0, 0.1)
NOTHING = 0.005  # a weight below this is "nothing" (it shows as 0.00)


def _query(i: int):
    return setting(float(EXAMPLE_QUERY[i]), f"q{i + 1}", url=f"q{i + 1}", bounds=QUERY_BOUNDS)


@dataclass(frozen=True)
class LookupSettings:
    q1: float = _query(0)
    q2: float = _query(1)
    q3: float = _query(2)
    q4: float = _query(3)
    keys: str = setting(format_vectors(EXAMPLE_KEYS), f"Keys: one row per key, {DIM} numbers each", url="keys",
                        max_chars=MAX_TEXT_LENGTH, heading="Dictionary",
                        help="Separate numbers with commas or spaces and rows with ';' or new lines. "
                        "Up to 8 keys, numbers within ±100.")
    values: str = setting(format_vectors(EXAMPLE_VALUES), "Values: one row per key", url="values",
                          max_chars=MAX_TEXT_LENGTH, help="Any length up to 8 numbers, the same for every row.")
    scale: bool = setting(False, "Divide scores by √d", url="scale", flag=True, heading="Sharpness",
                          help="The transformer divides by √d: with independent query and key components of zero mean "
                          "and unit variance, q·k is a sum of d terms whose spread grows like √d with the dimension "
                          "d, and the division keeps the softmax's input at one scale whatever d is "
                          "(Vaswani et al., 2017, §3.2.1).")
    temperature: float = setting(1.0, "Temperature", url="temperature", bounds=(0.1, 10.0, 0.1),
                                 help="Scores are divided by the temperature before the softmax.")

    @property
    def query(self) -> np.ndarray:
        return np.array([self.q1, self.q2, self.q3, self.q4])


@dataclass(frozen=True)
class Dictionary:
    """The keys and values the lookup uses, and what could not be read from the typed text
    ((control label, message); the lecture's keys or fitting values are used instead)."""

    keys: np.ndarray
    values: np.ndarray
    notes: tuple[tuple[str, str], ...]


def read_dictionary(settings: LookupSettings) -> Dictionary:
    notes = []
    try:
        keys = parse_vectors(settings.keys, dim=DIM)
    except ValueError as problem:
        notes.append(("Keys", f"{problem}. Showing the lecture's keys instead."))
        keys = EXAMPLE_KEYS
    try:
        values = parse_vectors(settings.values, rows=len(keys))
    except ValueError as problem:
        lecture = len(keys) == len(EXAMPLE_VALUES)
        values = EXAMPLE_VALUES if lecture else np.eye(len(keys))
        notes.append(("Values", f"{problem}. Showing {'the lecture' if lecture else 'one-hot'} values instead."))
    return Dictionary(keys, values, tuple(notes))


@dataclass(frozen=True)
class LookupView:
    """The lookup at some settings: the one query's result, the same lookup with the query half as
    long (what doubling a query compares with), and every key used as a query too (`stacked`,
    the first row the query)."""

    settings: LookupSettings
    keys: np.ndarray
    values: np.ndarray
    key_labels: tuple[str, ...]
    result: LookupResult
    halved: LookupResult
    stacked: LookupResult
    query_labels: tuple[str, ...]
    box: Measured | None = None  # claims, measured: when q = k_j wins the lookup, on these keys

    @property
    def found_themselves(self) -> int:
        """How many keys, used as the query, give their own key the largest weight."""
        rows = self.stacked.weights[1:]
        return int(sum(np.argmax(row) == j for j, row in enumerate(rows)))


def _frozen(result: LookupResult) -> LookupResult:
    for array in (result.scores, result.scaled_scores, result.weights, result.output):
        array.setflags(write=False)  # cached and shared between sessions
    return result


def lookup_view(settings: LookupSettings) -> LookupView:
    found = read_dictionary(settings)
    keys, values = found.keys, found.values
    query = settings.query
    options = {"scale_by_sqrt_d": settings.scale, "temperature": settings.temperature}
    result = soft_lookup(query, keys, values, **options)
    halved = soft_lookup(query / 2, keys, values, **options)
    stacked = soft_lookup(np.vstack([query[None], keys]), keys, values, **options)
    key_labels = tuple(f"k{j + 1}" for j in range(len(keys)))
    query_labels = ("your query", *(f"k{j + 1} as query" for j in range(len(keys))))
    return LookupView(settings, _readonly(keys), _readonly(values), key_labels, _frozen(result), _frozen(halved),
                      _frozen(stacked), query_labels, self_match(keys))


def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.array(array)
    array.setflags(write=False)
    return array


def number(x: float) -> str:
    """A score as the lesson writes it: 2.0, −12.5, 20.25 (a true minus sign)."""
    text = f"{x:.2f}".rstrip("0")
    return (text + "0" if text.endswith(".") else text).replace("-", "−")


def lookup_facts(view: LookupView) -> dict[str, object]:
    """The numbers the lesson's sentences name, read from the view: w1…, s1… (weight and score of
    each key), scores, output, mix, the best key and the runner-up (by score), their lead before and
    after the scaling, the even split, √d, and the halved query's weights (w1_half…)."""
    result, labels = view.result, view.key_labels
    order = np.argsort(-result.scores, kind="stable")
    best, runner = int(order[0]), int(order[1]) if len(order) > 1 else int(order[0])
    lead = float(result.scores[best] - result.scores[runner])
    facts: dict[str, object] = {
        "n": len(labels), "even": 1 / len(labels), "d": DIM, "sqrt_d": math.sqrt(DIM), "scale": result.scale,
        "scores": listed([number(s) for s in result.scores]),
        "output": "[" + ", ".join(f"{x:.2f}" for x in result.output) + "]",
        "mix": " + ".join(f"{w:.2f}·v{j + 1}" for j, w in enumerate(result.weights) if w >= NOTHING),
        "best": labels[best], "best_weight": float(result.weights[best]), "best_score": float(result.scores[best]),
        "best_value": f"v{best + 1}", "runner": labels[runner], "runner_weight": float(result.weights[runner]),
        "runner_score": float(result.scores[runner]), "lead": lead, "scaled_lead": lead * result.scale,
        "asks_for_best": bool(np.array_equal(view.settings.query, view.keys[best])),
        "scaled_by_sqrt_d": bool(view.settings.scale),
        # the keys that score highest, three of them where a fourth scores strictly less ("the three leaders")
        "leaders": frozenset(labels[int(j)] for j in order[:3])
        if len(order) > 3 and result.scores[order[2]] > result.scores[order[3]] else frozenset(),
    }
    for j in range(len(labels)):
        facts.update({f"w{j + 1}": float(result.weights[j]), f"s{j + 1}": number(result.scores[j]),
                      f"w{j + 1}_half": float(view.halved.weights[j])})
    return facts


def _facts(shown) -> dict[str, object]:
    facts = lookup_facts(shown.view)
    facts["as_temperature"] = shown.settings.temperature / 2  # a query twice as long acts as this temperature
    return facts


def _claim(holds) -> Claim:
    return Claim(lambda shown: len(shown.view.key_labels) == 5 and holds(lookup_facts(shown.view)), _facts)


# What each lesson step's answer says, as a predicate on the view (explorer/lessons/lookup/lesson.toml names them).
LOOKUP_CLAIMS = types.MappingProxyType({
    "lecture_blend": _claim(lambda f: f["best"] == "k2" and f["w2"] < 0.5 and max(f["w3"], f["w5"]) < NOTHING
                            and f["mix"].count("·v") == 3),
    # "the three leaders" are k1, k2 and k4: they score highest
    "hot_flattens": _claim(lambda f: min(f["w3"], f["w5"]) >= NOTHING and max(f["w1"], f["w2"], f["w4"]) < 0.3
                           and f["leaders"] == {"k1", "k2", "k4"}),
    "cold_picks_max": _claim(lambda f: f["best"] == "k2" and f["runner"] == "k1" and f["w2"] > 0.95),
    "longer_sharpens": _claim(lambda f: f["best"] == "k2" and f["w2"] > f["w2_half"]),
    # "as a dictionary would return it for that key": the query is that key
    "key_retrieves": _claim(lambda f: f["best_weight"] > 0.99 and f["runner"] != f["best"] and f["asks_for_best"]),
    # "dividing by √d": the scale is exactly 1/√d (a temperature would change it)
    "sqrt_d_softens": _claim(lambda f: f["runner"] != f["best"] and f["scaled_by_sqrt_d"]
                             and math.isclose(f["scale"], 1 / f["sqrt_d"])
                             and f["best_weight"] < 0.99),
    "zero_query_even": _claim(lambda f: all(f[f"s{j}"] == "0.0" for j in range(1, 6))),
})
