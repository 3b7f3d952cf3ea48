"""What the encoders lesson's steps say after Reveal, as claims (explorer/kit/claims.py): each step of
explorer/lessons/encoders/lesson.toml names one, checked on the view of the section it is about (the
token vectors and the corpus's pooling report: EncoderView; the similarity matrices; the search
results; the attention sinks; the BiRNN's dependencies), with the numbers and sentences it quotes
read from that view.  `s` is what is shown: `s.settings`, `s.view`.  No Streamlit.
"""

from __future__ import annotations

import dataclasses
import types

import numpy as np

from explorer.kit.claims import Claim, spelled
from explorer.lessons.encoders.view import DEFAULT_TEXT, search_view, shared_piece_cosines

__all__ = ["BIRNN_CLAIMS", "ENCODER_CLAIMS", "SEARCH_CLAIMS", "SIMILARITY_CLAIMS", "SINK_CLAIMS"]

HALF_ALIKE = (0.4, 0.7)  # a mean cosine in this range: "already look half alike"
NEARLY_SAME = 0.95  # a cosine at least this: "nearly the same vector"
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def _ok(s) -> bool:
    return s.view.problem is None


# --- the token vectors and the pooling report (EncoderView) --------------------------------------------


def _named(token: str) -> str:
    return "the full stop" if token == "." else token if token.startswith("[") else f"“{token}”"


def _ranked(s) -> list[int]:
    return [int(i) for i in np.argsort(-s.view.to_mean, kind="stable")]


def _closest_is_no_word(s) -> bool:
    """The token vector closest to the mean is the end marker [SEP], which every text has (not [CLS] nor
    the full stop, the step's other options), and "puppy" and [CLS] are not among the three closest."""
    if not _ok(s) or not {"puppy", ".", "[CLS]"} <= set(s.view.tokens):
        return False
    tokens, ranked = s.view.tokens, _ranked(s)
    closest = tokens[ranked[0]]
    top3 = {tokens[i] for i in ranked[:3]}
    return closest == "[SEP]" and not top3 & {"puppy", "[CLS]"}


def _closest(s) -> dict:
    tokens, to_mean, ranked = s.view.tokens, s.view.to_mean, _ranked(s)
    return {"closest": tokens[ranked[0]], "c1": float(to_mean[ranked[0]]), "second": _named(tokens[ranked[1]]),
            "c2": float(to_mean[ranked[1]]), "third": _named(tokens[ranked[2]]), "c3": float(to_mean[ranked[2]]),
            "puppy": float(to_mean[tokens.index("puppy")]), "cls": float(to_mean[tokens.index("[CLS]")])}


def _pooling(s) -> dict:
    mean, cls = s.view.report["mean"], s.view.report["cls"]
    return {"mean_unrelated": mean.unrelated, "cls_unrelated": cls.unrelated, "mean_paraphrase": mean.paraphrase,
            "cls_paraphrase": cls.paraphrase, "mean_gap": mean.paraphrase - mean.unrelated,
            "cls_gap": cls.paraphrase - cls.unrelated}


def _cls_bunches(s) -> bool:
    if not _ok(s):
        return False
    values = _pooling(s)
    return (HALF_ALIKE[0] <= values["cls_unrelated"] <= HALF_ALIKE[1]
            and values["mean_unrelated"] < values["cls_unrelated"] and values["cls_gap"] < values["mean_gap"])


ENCODER_CLAIMS = types.MappingProxyType({
    "closest_is_no_word": Claim(_closest_is_no_word, _closest),
    "cls_bunches": Claim(_cls_bunches, _pooling),
})


# --- similarity (SimilarityView) ------------------------------------------------------------------------


def _plain(sentence: str) -> list[str]:
    return [w.strip(".,;:!?").lower() for w in sentence.split()]


def _one_word_apart(a: str, b: str) -> bool:
    a, b = _plain(a), _plain(b)
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b, strict=True)) == 1


def _paraphrase_wins(s) -> bool:
    """S1 and S2 differ in one word; S2 and S3 share fewer words yet score a higher cosine."""
    view = s.view
    if not _ok(s) or len(view.sentences) < 3 or not _one_word_apart(*view.sentences[:2]):
        return False
    return bool(view.cosine[1, 2] > view.cosine[0, 1] and view.overlap[1, 2] < view.overlap[0, 1])


def _paraphrase(s) -> dict:
    cosine, overlap = s.view.cosine, s.view.overlap
    return {"c23": float(cosine[1, 2]), "c12": float(cosine[0, 1]), "o23": float(overlap[1, 2]),
            "o12": float(overlap[0, 1])}


def _same_words(a: str, b: str) -> bool:
    return sorted(_plain(a)) == sorted(_plain(b)) and _plain(a) != _plain(b)


def _swapped_noun(s) -> str | None:
    """The first word S1 and S2 share that changes place between them (the noun whose role swaps)."""
    a, b = _plain(s.view.sentences[0]), _plain(s.view.sentences[1])
    moved = [x for x, y in zip(a, b, strict=True) if x != y]
    return moved[0] if moved else None


def _order(s) -> dict:
    view, noun = s.view, _swapped_noun(s)
    cls = view.by_pooling["cls"]
    return {"c01": float(view.by_pooling["mean"][0, 1]), "c23": float(view.by_pooling["mean"][2, 3]),
            "cls01": float(cls[0, 1]), "noun": noun,
            "token": shared_piece_cosines(*view.sentences[:2]).get(noun, float("nan"))}


def _order_in_the_vectors(s) -> bool:
    """Two pairs of sentences with the same words in another order (the second swaps a cat and a mouse),
    nearly the same mean vector; and without any averaging — the [CLS] vectors, and the swapped noun's
    own vector as subject and as object — nearly the same too: the model's vectors, not the pooling,
    barely register the swap."""
    view = s.view
    if not _ok(s) or view.pooling != "mean" or len(view.sentences) < 4:
        return False
    pairs = _same_words(*view.sentences[:2]) and _same_words(*view.sentences[2:4])
    if not (pairs and {"cat", "mouse"} <= set(_plain(view.sentences[2]))):
        return False
    values = _order(s)
    return all(values[k] >= NEARLY_SAME for k in ("c01", "c23", "cls01", "token"))  # False for a NaN


SIMILARITY_CLAIMS = types.MappingProxyType({
    "paraphrase_wins": Claim(_paraphrase_wins, _paraphrase),
    "order_in_the_vectors": Claim(_order_in_the_vectors, _order),
})


# --- search (SearchView) --------------------------------------------------------------------------------


def _meaning_wins(s) -> bool:
    """Mean pooling ranks the step's sentence first; word overlap leaves it out of its results and
    ranks another sentence first."""
    view = s.view
    if not _ok(s) or view.pooling != "mean" or not view.meaning:
        return False
    best = view.meaning[0][0]
    return view.corpus[best] == DEFAULT_TEXT and best not in [i for i, _ in view.overlap]


def _meaning(s) -> dict:
    view = s.view
    first, score = view.overlap[0]
    return {"cosine": view.meaning[0][1], "shared": view.overlap_of_meaning[0], "k": len(view.overlap),
            "spelled": view.corpus[first], "overlap": score}


def _mean_hits(s):
    return search_view(dataclasses.replace(s.settings, pooling="mean")).meaning


def _cls_bunches_hits(s) -> bool:
    """With [CLS] the last hit still scores high: above the last hit with mean pooling."""
    view = s.view
    if not _ok(s) or view.pooling != "cls" or len(view.meaning) < 2:
        return False
    mean = _mean_hits(s)
    return len(mean) == len(view.meaning) and view.meaning[-1][1] > mean[-1][1]


def _bunched(s) -> dict:
    view = s.view
    last, score = view.meaning[-1]
    return {"first": view.meaning[0][1], "nth": _ORDINALS[len(view.meaning) - 1], "sentence": view.corpus[last],
            "last": score, "mean_last": _mean_hits(s)[-1][1]}


SEARCH_CLAIMS = types.MappingProxyType({
    "meaning_wins": Claim(_meaning_wins, _meaning),
    "cls_bunches_hits": Claim(_cls_bunches_hits, _bunched),
})


# --- attention sinks (SinkView) ---------------------------------------------------------------------------


def _sink(s) -> dict:
    cls, sep = s.view.cls, s.view.sep
    later = float(cls[1:].mean())
    return {"later": later, "times": spelled(round(later / s.view.uniform)), "over_half": int((cls > 0.5).sum()),
            "heads": cls.size, "sep": float(sep.mean())}


def _cls_is_a_sink(s) -> bool:
    """From layer 2 on, the average head gives [CLS] more than half its weight, far more than [SEP]."""
    return _ok(s) and s.view.cls.shape[0] > 1 and float(s.view.cls[1:].mean()) > 0.5 \
        and float(s.view.sep.mean()) < float(s.view.cls[1:].mean())


SINK_CLAIMS = types.MappingProxyType({"cls_is_a_sink": Claim(_cls_is_a_sink, _sink)})


# --- the BiRNN (BiRNNView) ------------------------------------------------------------------------------


def _fades(s) -> bool:
    """The BiRNN and unmasked attention fill every cell; the BiRNN's dependency falls at every step
    of distance up to the one quoted; its path to the farthest input, T − 1 positions away, is T steps
    (one per position and one to read it in); attention's longest path is one step."""
    view = s.view
    matrix = view.panels[1][1]
    T = matrix.shape[0]
    gap = np.abs(np.subtract.outer(np.arange(T), np.arange(T)))
    by_gap = [matrix[gap == g].mean() for g in range(view.distance + 1)]
    farthest = view.paths["birnn"][gap == T - 1]
    return (view.reach["birnn"] == 1.0 and view.reach["unmasked"] == 1.0 and bool(np.all(np.diff(by_gap) < 0))
            and float(view.paths["unmasked"].max()) == 1.0 and bool(np.all(farthest == T))
            and float(view.paths["birnn"].max()) == T)


def _fade(s) -> dict:
    paths = s.view.paths["birnn"]
    return {"far": int(paths[np.isfinite(paths)].max()), "gap": paths.shape[0] - 1, "distance": s.view.distance,
            "fall": 10 ** s.view.fall["birnn"], "attention": int(s.view.paths["unmasked"].max())}


BIRNN_CLAIMS = types.MappingProxyType({"birnn_fades": Claim(_fades, _fade)})
