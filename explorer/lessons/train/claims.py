"""The live-training lesson's step answers as claims (explorer/kit/claims.py).  Step 1 is about the
untrained model, in the view from the start.  Steps 2–6 are about how a run turns out, so they are
read from the finished run (`ready`: the run is done) and never typed: a run is a function of its
settings on one machine, but float rounding differs between CPUs (PyTorch picks its kernels by what
the CPU offers: AVX2, AVX-512…), and a run's path drifts with it.  A race also depends on how far
each runner gets in its seconds.  No Streamlit here.

`s` is what is shown (runtime.Shown): `s.settings` (TrainSettings) and `s.view`, the TrainView at
the moment of the session's run (`s.view.snapshots[0]`: the transformer's snapshots reached).
"""

from __future__ import annotations

import types

import numpy as np

from explorer.analysis.length import trained_lengths
from explorer.kit.claims import Claim
from explorer.training.pretrained import load_model

__all__ = ["MARK", "TRAIN_CLAIMS", "anti_diagonal", "on_the_clock", "overtaking", "race_story", "sorted_rows"]

MARK = 0.9  # the held-out accuracy a run "passes" in the answers


def anti_diagonal(attention: np.ndarray) -> np.ndarray:
    """(layers, heads): the mean weight on the reversal's cells (answer row i, input letter n − 1 − i)."""
    n = attention.shape[-1]
    return attention[:, :, np.arange(n), np.arange(n)[::-1]].mean(-1)


def _done(s) -> bool:
    return s.view.state == "done"


def _run(s):
    return s.view.snapshots[0]


def _passes(snapshots) -> int | None:
    """The first step at which the run's held-out accuracy reaches MARK (None: never)."""
    return next((x.step for x in snapshots if x.accuracy >= MARK), None)


def _shape(s) -> tuple[int, int]:
    """(layers, heads) of the transformer's probe attention."""
    return _run(s)[0].attention.shape[:2]


# Step 1: the untrained model spreads its weights about evenly (no weight near 0 or 1).
def _even_at_start(s) -> bool:
    weights = _run(s)[0].attention
    return weights is not None and float(weights.min()) > 0.05 and float(weights.max()) < 0.5


def _start_values(s) -> dict:
    return {"keys": len(s.view.keys), "vocab": s.view.start.vocab}


# Step 2: reversing, two layers of one head — an anti-diagonal forms, sharpest in layer 2.
def _reverse_values(s) -> dict:
    run = _run(s)
    start, end = anti_diagonal(run[0].attention)[:, 0], anti_diagonal(run[-1].attention)[:, 0]
    return {"mark": 100 * MARK, "first": _passes(run), "end": 100 * run[-1].accuracy, "start1": start[0],
            "end1": end[0], "start2": start[-1], "end2": end[-1],
            "rows": float(run[-1].attention[-1, 0].max(-1).mean())}


def _reverse_forms(s) -> bool:
    if s.settings.task != "reverse" or _shape(s) != (2, 1):
        return False
    v = _reverse_values(s)
    return bool(v["first"] is not None and max(v["start1"], v["start2"]) < 0.25 and v["end2"] >= 0.5
                and v["end2"] > v["end1"])


# Step 3: no positions — nothing learnt, the anti-diagonal about an even spread.
def _blind_values(s) -> dict:
    last = _run(s)[-1]
    return {"accuracy": 100 * last.accuracy, "steps": last.step, "loss": last.loss, "keys": len(s.view.keys),
            "anti": float(anti_diagonal(last.attention)[-1, 0])}


def _blind(s) -> bool:
    if s.settings.task != "reverse" or s.settings.encoding != "none" or _shape(s) != (2, 1):
        return False
    values, even = _blind_values(s), 1 / len(s.view.keys)
    stays = max(x.accuracy for x in _run(s)) < 0.05  # "stays near 0": at every snapshot
    return stays and 0.5 * even <= values["anti"] <= 1.5 * even


# Step 4: one layer of one head learns the reversal too.  With inputs of varying length (2–10 letters) the
# answer's i-th letter moves with the length: the shipped one- and two-layer reversal models' cards say how
# far each got there.
VARYING = ("reverse-sinusoidal-h4-l1", "reverse-sinusoidal-h4-l2")


def _varying() -> dict:
    cards = [load_model(name).card for name in VARYING]
    low, high = trained_lengths(VARYING[0])
    return {"low": low, "high": high, "l1": cards[0]["heldout_accuracy"], "l1_steps": cards[0]["steps"],
            "l2": cards[1]["heldout_accuracy"], "l2_steps": cards[1]["steps"]}


def _one_layer_values(s) -> dict:
    run = _run(s)
    return {"mark": 100 * MARK, "first": _passes(run), "end": 100 * run[-1].accuracy,
            "anti": float(anti_diagonal(run[-1].attention)[0, 0]), **_varying()}


def _one_layer(s) -> bool:
    if s.settings.task != "reverse" or _shape(s) != (1, 1):
        return False
    v = _one_layer_values(s)
    return (v["first"] is not None and v["end"] >= 100 * MARK and v["anti"] >= 0.5
            and v["l1"] < v["l2"] and v["l1_steps"] >= v["l2_steps"])  # one layer: less, in as many steps or more


# Step 5: sorting — each row looks at the letter it is about to write, wherever it stands.
def sorted_rows(keys) -> list[int]:
    """Row i of the sorting probe writes the i-th letter of the sorted input: where that letter stands."""
    return [list(keys).index(letter) for letter in sorted(keys)]


def _sort_values(s) -> dict:
    run, keys = _run(s), s.view.keys
    at = sorted_rows(keys)
    right = [float(np.mean([x.attention[-1, 0, i, j] for i, j in enumerate(at)])) for x in (run[0], run[-1])]
    looked = keys[int(np.argmax(run[-1].attention[-1, 0, 0]))]
    first = sorted(keys)[0]
    return {"end": 100 * run[-1].accuracy, "right": right[1], "right0": right[0],
            "first_row": f"and its first row, about to write {first}, looks at {first}" if looked == first else
            f"though its first row, about to write {first}, looks at {looked} instead"}


def _sorts(s) -> bool:
    """The rows about to write the 2nd to last letters each look hardest at that letter, and the
    letters are the lesson's example (B E A D F C): the answer names them."""
    if s.settings.task != "sort" or _shape(s) != (2, 1) or tuple(s.view.keys) != tuple("BEADFC"):
        return False
    last, at = _run(s)[-1], sorted_rows(s.view.keys)
    looks = last.attention[-1, 0].argmax(-1)
    return all(looks[i] == at[i] for i in range(1, len(at))) and _sort_values(s)["right"] >= 0.5


# Step 6: the race, for equal steps.
def race_story(transformer, recurrent) -> dict | None:
    """At the steps both runners measured: the step from which the transformer leads at every one
    (`over`), the step before it where the recurrent network led by most (`early`), and the last
    step both reached; with the two accuracies (%) at each, and at how many of the steps both measured
    before the overtake the recurrent network was ahead (`ahead` of `measured`).  None where the race
    does not go so (the recurrent network never ahead first, or the transformer never ahead for good)."""
    tf, rnn = ({x.step: 100 * x.accuracy for x in runner if x.step} for runner in (transformer, recurrent))
    common = sorted(set(tf) & set(rnn))
    over = next((step for i, step in enumerate(common) if all(tf[c] > rnn[c] for c in common[i:])), None)
    before = [step for step in common if over is not None and step < over and rnn[step] > tf[step]]
    if not before:
        return None
    early = max(before, key=lambda step: rnn[step] - tf[step])
    return {"ahead": len(before), "measured": sum(step < over for step in common),
            **{name: value for step, label in ((early, "early"), (over, "over"), (common[-1], "last"))
               for name, value in ((label, step), (f"tf_{label}", tf[step]), (f"rnn_{label}", rnn[step]))}}


def overtaking(story: dict) -> str:
    """The race for equal steps from the overtake on, as the answer says it: the transformer leads from
    step `over` to the last step both measured, or, where those are one step, overtakes only there."""
    last = f"({story['tf_last']:.1f} % against {story['rnn_last']:.1f} %)"
    if story["over"] == story["last"]:
        return f"the transformer overtakes it only at step {story['last']}, the last both measured {last}"
    return f"the transformer leads from step {story['over']} to step {story['last']}, the last both measured {last}"


def on_the_clock(transformer, recurrent, rival: str = "GRU") -> str:
    """The race for equal seconds: each runner's latest accuracy by the seconds both reached (the
    left panel, read at the right end of the shorter curve), and which one leads there."""
    seconds = min(transformer[-1].training_seconds, recurrent[-1].training_seconds)
    tf, rnn = (100 * [x for x in runner if x.training_seconds <= seconds][-1].accuracy
               for runner in (transformer, recurrent))
    if round(tf, 1) == round(rnn, 1):
        return f"after {seconds:.1f} s each, they are level ({tf:.1f} %)"
    leader, ahead, behind = ("the transformer", tf, rnn) if tf > rnn else (f"the {rival}", rnn, tf)
    return f"after {seconds:.1f} s each, {leader} leads ({ahead:.1f} % against {behind:.1f} %)"


def _race_values(s) -> dict:
    story = race_story(*s.view.snapshots)
    if story is None:
        return {}
    rival = s.view.job.runners[1].model.upper()
    return {**story, "overtake": overtaking(story), "clock": on_the_clock(*s.view.snapshots, rival), "rival": rival}


def _races(s) -> bool:
    return s.settings.race and len(s.view.snapshots) == 2 and bool(_race_values(s))


TRAIN_CLAIMS = types.MappingProxyType({
    "even_at_start": Claim(_even_at_start, _start_values),
    "reverse_forms": Claim(_reverse_forms, _reverse_values, ready=_done),
    "blind": Claim(_blind, _blind_values, ready=_done),
    "one_layer": Claim(_one_layer, _one_layer_values, ready=_done),
    "sorts": Claim(_sorts, _sort_values, ready=_done),
    "race": Claim(_races, _race_values, ready=_done),
})
