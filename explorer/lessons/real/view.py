"""The real-model lesson (all-MiniLM-L6-v2), declared: its settings (the controls) and views, one for
the page (the sentence's 72 heads and the lecture's tired / wide pair) and one per section with a view
of its own (what the heads do with "it", measured; the learned position table).  The runtime
(explorer/serve) caches them; real.py (the page) draws them.  The computations are explorer.lessons.real.heads.

Every number the lesson's prose and step answers quote is read here from the view it describes
(`*_facts`), never typed in explorer/lessons/real/."""

from __future__ import annotations

import math
import types
from dataclasses import dataclass

import numpy as np

from explorer.analysis.thinning import draw_plan
from explorer.kit.claims import Claim
from explorer.kit.settings import setting
from explorer.lessons.real.heads import (
    MAX_CHARS,
    PAGE_MAX_TOKENS,
    PRESETS,
    RealView,
    model_facts,
    pair_views,
    position_tables,
    real_view,
    referent_heads,
    token_lengths,
)
from explorer.training.minilm import checked_text
from explorer.training.pretrained import PretrainedModelError, load_model

__all__ = [
    "DEFAULT_SENTENCE",
    "SPLITS",
    "PositionTables",
    "RealLessonView",
    "RealSettings",
    "ReferentSettings",
    "ReferentView",
    "TableSettings",
    "lesson_view",
    "referent_view",
    "sentence_facts",
    "sentence_problem",
    "table_view",
]

SPLITS = {"all sentences": "overall", "“it” means the subject": "when_subject", "“it” means the object": "when_object"}
TOY_MODEL = "coreference-sinusoidal-h4-l2"  # the self-attention page's model of the same task


@dataclass(frozen=True)
class RealSettings:
    sentence: str = setting(PRESETS["too tired"], "Sentence", url="sentence", max_chars=MAX_CHARS, presets=PRESETS,
                            text_url="text", text_label="Your sentence",
                            help=f"Any text; the model reads at most {PAGE_MAX_TOKENS} word pieces here.")
    layer: int = setting(4, "Layer", url="layer", options=tuple(range(1, 7)), widget="select_slider",
                         help="The head enlarged under the grid, and compared on the lecture's pair.")
    head: int = setting(2, "Head", url="head", options=tuple(range(1, 13)), widget="select_slider")


@dataclass(frozen=True)
class RealLessonView:
    settings: RealSettings
    text: RealView  # the sentence as the model read it
    tired: RealView  # the lecture's pair
    wide: RealView
    model: types.MappingProxyType  # explorer.lessons.real.heads.model_facts


DEFAULT_SENTENCE = RealSettings.sentence


def sentence_problem(settings: RealSettings) -> str | None:
    """Why the typed sentence is not read (empty, only punctuation, no word pieces the model knows):
    the message that says so and names the default shown instead; None if it is read (or the model
    cannot be loaded: the view says that)."""
    try:
        _, notes = checked_text(settings.sentence, DEFAULT_SENTENCE, "sentence", latin=False)
    except PretrainedModelError:
        return None
    return notes[0] if notes else None


def lesson_view(settings: RealSettings) -> RealLessonView:
    """The sentence's heads (the default sentence's where the typed one cannot be read:
    `sentence_problem`) and the lecture's pair."""
    tired, wide = pair_views()
    text = DEFAULT_SENTENCE if sentence_problem(settings) else settings.sentence
    return RealLessonView(settings, real_view(text), tired, wide, types.MappingProxyType(model_facts()))


def _it_row(view: RealView, layer: int, head: int) -> dict | None:
    """The weights "it" gives the animal and the street in one head, where the sentence has all three."""
    places = [view.index(word) for word in ("it", "animal", "street")]
    if None in places:
        return None
    it, animal, street = places
    row = view.weights[layer - 1, head - 1, it]
    return {"animal": float(row[animal]), "street": float(row[street])}


def sentence_facts(shown) -> dict:
    """What the lesson says of the sentence shown: the previous-token head (layer 1 head 3), the share
    of attention on [CLS] in layers 2 to 5, the vocabulary; "it" in the chosen head, on this sentence
    and on the lecture's pair; and the pair in layer 4 head 2, the head the lesson reads aloud."""
    view, settings = shown.view, shown.settings
    weights, n = view.text.weights, len(view.text.tokens)
    values = {"vocabulary": view.model["vocabulary"], "layer": settings.layer, "head": settings.head,
              "n_heads": view.model["layers"] * view.model["heads"], "prev_layer": 1, "prev_head": 3,
              "next_layer": 2, "next_head": 9, "cls_from": 2, "cls_to": 5}
    values.update(_pieces(view.text.tokens))
    if n > 1:
        # The least such weight, rounded down: "0.99 or more" stays true of a least weight of 0.9996.
        values["prev_weight"] = math.floor(100 * float(min(weights[0, 2, i, i - 1] for i in range(1, n)))) / 100
        values["next_weight"] = float(np.mean([weights[1, 8, i, i + 1] for i in range(n - 1)]))
        cls = weights[1:5, :, :, 0].mean(axis=(1, 2))
        values.update(cls_low=float(cls.min()), cls_high=float(cls.max()), **_head_kinds(view.text))
    here = _it_row(view.text, settings.layer, settings.head)
    if here:
        values.update(it_animal=here["animal"], it_street=here["street"])
    for name, pair_view in (("tired", view.tired), ("wide", view.wide)):
        for at, (layer, head) in (("", (settings.layer, settings.head)), ("l4h2_", (4, 2))):
            row = _it_row(pair_view, layer, head)
            values.update({f"{at}{name}_{noun}": weight for noun, weight in row.items()})
    return values


def _head_kinds(text: RealView) -> dict:
    """How many heads put most of their weight (over half, averaged over the rows) on the markers [CLS] and
    [SEP], and how many of the others on the token one before or one after: heads that read a place in the
    text, not a word."""
    weights, n = text.weights, len(text.tokens)
    marks = [i for i, token in enumerate(text.tokens) if token in ("[CLS]", "[SEP]")]
    on_marks = weights[:, :, :, marks].sum(-1).mean(-1)  # (layers, heads)
    before = np.mean([weights[:, :, i, i - 1] for i in range(1, n)], axis=0)
    after = np.mean([weights[:, :, i, i + 1] for i in range(n - 1)], axis=0)
    markers = on_marks > 0.5
    offset = ~markers & (np.maximum(before, after) > 0.5)
    return {"markers": int(markers.sum()), "offset": int(offset.sum()), "elsewhere": int(markers.sum() + offset.sum())}


def _pieces(tokens: tuple[str, ...]) -> dict:
    """How the example sentence's rare words and number were cut: "cr ##eme", "br ##ule ##e", "12 · . · 50"."""
    found = {}
    for name, first in (("creme", "cr"), ("brulee", "br")):
        if first in tokens:
            start = end = tokens.index(first)
            while end + 1 < len(tokens) and tokens[end + 1].startswith("##"):
                end += 1
            found[name] = " ".join(tokens[start:end + 1])
    if "for" in tokens and "euros" in tokens and tokens.index("for") + 1 < tokens.index("euros"):
        found["number"] = " · ".join(tokens[tokens.index("for") + 1:tokens.index("euros")])
    return found


def _facts(name: str):
    return lambda s: name in sentence_facts(s)


REAL_CLAIMS = {
    # Layer 1 head 3 reads the previous token, and [CLS] takes a large share in layers 2 to 5.
    # and at least half of the heads put most of their weight on [CLS] / [SEP] or one token over.
    "not_meaning": Claim(lambda s: sentence_facts(s).get("prev_weight", 0) >= 0.9 and _facts("cls_low")(s)
                         and 2 * sentence_facts(s)["elsewhere"] >= sentence_facts(s)["n_heads"], sentence_facts),
    # The heads counted: most of their weight on the markers, or one token over.
    "head_kinds": Claim(_facts("elsewhere"), sentence_facts),
    "previous_token": Claim(lambda s: sentence_facts(s).get("prev_weight", 0) >= 0.9, sentence_facts),
    "next_token": Claim(lambda s: sentence_facts(s).get("next_weight", 0) >= 0.5, sentence_facts),
    "cls_share": Claim(lambda s: sentence_facts(s).get("cls_low", 0) >= 0.25, sentence_facts),
    # In the chosen head "it" reads the animal more than the street.
    "it_reads_animal": Claim(lambda s: _facts("it_animal")(s)
                             and sentence_facts(s)["it_animal"] > sentence_facts(s)["it_street"], sentence_facts),
    # On the pair, in the chosen head: the animal falls, the street rises, the animal still wins.
    "shift_not_switch": Claim(lambda s: _shifts(sentence_facts(s), ""), sentence_facts),
    "pair_l4h2": Claim(lambda s: _shifts(sentence_facts(s), "l4h2_"), sentence_facts),
    # The example sentence's emoji is [UNK] and its rare words and number come in pieces.
    "word_pieces": Claim(lambda s: "[UNK]" in s.view.text.tokens
                         and all(k in sentence_facts(s) for k in ("creme", "brulee", "number")), sentence_facts),
}


def _shifts(f: dict, at: str) -> bool:
    return (f[f"{at}wide_animal"] < f[f"{at}tired_animal"]
            and f[f"{at}tired_street"] < f[f"{at}wide_street"] < f[f"{at}wide_animal"])


# --- what the heads do with "it", measured -------------------------------------------------------------------


@dataclass(frozen=True)
class ReferentSettings:
    split: str = setting("all sentences", "“it” scores over", url="split", options=tuple(SPLITS), widget="radio",
                         help="Which of the 1000 sentences the map of “it” scores counts.")


@dataclass(frozen=True)
class ReferentView:
    settings: ReferentSettings
    shares: np.ndarray  # (layers, heads): the chosen split's
    top: tuple[tuple[int, int], ...]  # the three best heads, (layer, head) from 0
    facts: types.MappingProxyType  # what the text quotes


def referent_view(settings: ReferentSettings) -> ReferentView:
    """pretrained/minilm-referent-heads.json (MiniLMError if it cannot be read), and the toy model's
    referent head from its card."""
    scores = referent_heads()
    best = scores.best
    listed = "; ".join(f"layer {b['layer']} head {b['head']}: {b['right_above_other']:.0%} "
                       f"({b['when_subject']:.0%} when “it” means the subject, {b['when_object']:.0%} when it "
                       "means the object)" for b in best[:3])
    card = load_model(TOY_MODEL).card
    toy = card["referent_head"]["right_noun_above_other"]
    facts = {"sentences": scores.sentences, "seed": scores.seed, "best": best[0]["right_above_other"],
             "best_subject": best[0]["when_subject"], "best_object": best[0]["when_object"],
             "layer": best[0]["layer"], "head": best[0]["head"], "listed": listed, "regenerate": scores.regenerate,
             "both": int(np.sum(np.minimum(scores.when_subject, scores.when_object) > 0.5)),
             "n_heads": scores.overall.size, "toy": float(toy), **_steered(card)}
    return ReferentView(settings, getattr(scores, SPLITS[settings.split]),
                        tuple((b["layer"] - 1, b["head"] - 1) for b in best[:3]), types.MappingProxyType(facts))


def _steered(card: dict) -> dict:
    """How the toy model's referent head came to be, from its card: the extra loss that steered one of its
    heads towards the referent (`attention_hint`: how many steps of how many), whether that is the head the
    card names, and the best score of the heads it did not steer."""
    hint, named = card.get("attention_hint"), card["referent_head"]
    if not hint:
        return {}
    steered = f"layer {hint['layer'] + 1} head {hint['head'] + 1}"
    others = {name: score for name, score in named.get("every_head", {}).items() if name != steered}
    best = max(others, key=others.get) if others else None
    return {"hint_steps": hint["steps"], "toy_steps": card["steps"], "steered": steered,
            "steered_is_best": (hint["layer"], hint["head"]) == (named["layer"], named["head"]),
            "unsteered": best, "unsteered_score": others.get(best, float("nan"))}


REFERENT_CLAIMS = {
    # No head resolves "it": the best is right well short of always, and prefers the subject.
    "best_head": Claim(lambda s: s.view.facts["best"] < 0.75
                       and s.view.facts["best_subject"] > s.view.facts["best_object"], lambda s: s.view.facts),
    # The toy model's best head is the one an extra loss steered towards the referent (its card).
    "toy_steered": Claim(lambda s: bool(s.view.facts.get("steered_is_best")) and s.view.facts["unsteered"] is not None,
                         lambda s: s.view.facts),
}


# --- the learned position table ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableSettings:
    """The position tables have no controls."""


@dataclass(frozen=True)
class PositionTables:
    learned: np.ndarray  # the drawn rows and columns of MiniLM's table
    sinusoidal: np.ndarray  # ... of the sinusoidal table of the same size
    rows: np.ndarray
    cols: np.ndarray
    shape: tuple[int, int]
    clip: float  # where the learned table's colours stop: 99 % of its |values| lie within
    facts: types.MappingProxyType  # what the text quotes


def _mean_cosine(table: np.ndarray, k: int) -> float:
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    return float(np.mean(np.sum(unit[:-k] * unit[k:], axis=1)))


def table_view(settings: TableSettings) -> PositionTables:
    learned, sinusoidal, clip = position_tables()
    plan = draw_plan(*learned.shape, budget=96 * 96)  # two of them: 36 KB of float32 each
    norms = np.linalg.norm(learned, axis=1)
    d = learned.shape[1]
    facts = {"learned_1": _mean_cosine(learned, 1), "sinusoidal_1": _mean_cosine(sinusoidal, 1),
             "learned_10": _mean_cosine(learned, 10), "sinusoidal_10": _mean_cosine(sinusoidal, 10),
             "shortest": float(norms.min()), "longest": float(norms.max()), "d": d,
             "position_median": float(np.median(norms)), "token_median": float(np.median(token_lengths())),
             "sinusoidal_length": float(np.linalg.norm(sinusoidal, axis=1).max()),
             "largest": float(np.abs(learned).max()), "clip": clip,
             "rows": learned.shape[0], "row_step": plan.row_step, "col_step": plan.col_step}
    picked = [table[np.ix_(plan.rows, plan.cols)] for table in (learned, sinusoidal)]
    for array in picked:
        array.setflags(write=False)
    return PositionTables(*picked, plan.rows, plan.cols, learned.shape, clip, types.MappingProxyType(facts))


TABLE_CLAIMS = {
    # Neighbouring rows are alike, and less so ten apart, in both tables.
    "neighbours_alike": Claim(lambda s: s.view.facts["learned_10"] < s.view.facts["learned_1"]
                              and s.view.facts["sinusoidal_10"] < s.view.facts["sinusoidal_1"], lambda s: s.view.facts),
}
