"""What the self-attention lesson's steps say after Reveal, as claims (explorer/kit/claims.py): each
step of explorer/lessons/attention/lesson.toml names one, whose check reads the grid on screen (the
enlarged layer and head of the block shown) and the model's answer, and whose values are the
numbers and words the answer quotes.  A claim that does not hold for the controls as they are now
hides its sentence.  `s` is what is shown: `s.settings` (AttentionSettings), `s.view`
(AttentionLessonView).  No Streamlit.
"""

from __future__ import annotations

import types

import numpy as np

from explorer.kit.claims import Claim
from explorer.lessons.attention.models import ModelChoice, attention_hint, default_shape, silenced_accuracy
from explorer.training.tasks import get_task

__all__ = ["ATTENTION_CLAIMS"]

ALL = 0.995  # a weight that shows as 1.00: "all of the weight"
SHARP = 0.95  # a head that puts at least this on one word "puts it on" that word
FLAT = 2.5  # a row is "nearly flat" when no weight exceeds this many times the even split


def _panel(s) -> np.ndarray:
    """The enlarged head's weights (T_q, T_k)."""
    return s.view.attention.weights[s.settings.layer - 1, s.settings.head - 1]


def _words(tokens) -> str:
    """'a', 'a and b', 'a, b and c'."""
    tokens = list(tokens)
    return tokens[0] if len(tokens) == 1 else ", ".join(tokens[:-1]) + " and " + tokens[-1]


def _guess(s) -> str:
    return s.view.run.attention.output_tokens[s.view.focus_row]


def _it_row(s) -> dict:
    it, keys = s.view.focus_row, s.view.attention.key_tokens
    row = _panel(s)[it]
    weight = float(row.max())
    share = "all" if weight >= ALL else "most" if weight > 0.5 else "the largest share"
    return {"word": keys[int(row.argmax())], "weight": weight, "share": share,
            "answer": _guess(s), "layer": s.settings.layer, "head": s.settings.head, "how": _how(s)}


def _how(s) -> str:
    """" An extra loss nudged it there … silenced, it leaves the model …% accurate" (the accuracy computed
    from the model) where the card of the model shown records a hint on the enlarged head; else nothing."""
    hint = attention_hint(s.settings.choice) if s.view.run.trained else None
    if hint is None or (hint["layer"] + 1, hint["head"] + 1) != (s.settings.layer, s.settings.head):
        return ""
    choice = s.settings.choice
    _, without = silenced_accuracy(choice.name, choice.n_layers, choice.n_heads)
    left = without[(hint["layer"], hint["head"])]
    return (f" An extra loss nudged it there for the first {hint['steps']} training steps; silenced, it leaves the "
            f"model {left:.1%} accurate.")


def _it_right(s) -> bool:
    """Trained, and the enlarged head's row of "it" weighs the right noun most, as the answer says."""
    if s.view.focus_row is None or not s.view.run.trained:
        return False
    row = _it_row(s)
    return row["word"] == row["answer"] == s.view.expected[0]


def _agent(s) -> str:
    return s.view.attention.query_tokens[1]  # the ANIMAL of "the ANIMAL didn't VERB the NOUN because it …"


def _heads(s) -> dict:
    """Where each head of the enlarged layer sends "it": heads that put (nearly) all of it on one word,
    grouped by word, and heads that spread it."""
    it, keys, settings = s.view.focus_row, s.view.attention.key_tokens, s.settings
    rows = s.view.attention.weights[settings.layer - 1, :, it]
    sharp: dict[str, list[str]] = {}
    spread = []
    for number, row in enumerate(rows, start=1):
        name = f"{number} (enlarged)" if number == settings.head else str(number)
        word, weight = keys[int(row.argmax())], float(row.max())
        if weight >= SHARP:
            sharp.setdefault(word, []).append(name)
        else:
            spread.append(f"head {name} spreads it, at most {weight:.2f} on *{word}*")
    parts = [f"{'heads' if len(names) > 1 else 'head'} {_words(names)} put{'' if len(names) > 1 else 's'} "
             + ("nearly all of the weight of “it”" if not k else "it") + f" on *{word}*"
             for k, (word, names) in enumerate(sharp.items())] + spread
    text = _words(parts)
    return {"who": text[0].upper() + text[1:]}


def _heads_differ(s) -> bool:
    if s.view.focus_row is None:
        return False
    rows = s.view.attention.weights[s.settings.layer - 1, :, s.view.focus_row]
    return len({int(row.argmax()) for row in rows}) > 1


def _flat(s) -> dict:
    it = s.view.focus_row
    rows = s.view.attention.weights[s.settings.layer - 1, :, it]
    guess, tokens = _guess(s), s.view.attention.query_tokens
    seen = int((~_grey(s)[it]).sum())  # the keys the row of "it" may see (the mask is every head's)
    return {"top": float(rows.max()), "n": seen, "even": 1 / seen, "layer": s.settings.layer,
            "guess": guess, "where": "is not even in the sentence" if guess not in tokens else "is wrong",
            "origin": _origin(s.settings.task)}


def _origin(task: str) -> str:
    """How step 1's trained model (the task's first shipped shape) got its pattern, from its card:
    ", with an extra loss nudging that head for the first 600 steps" where the card records a hint."""
    hint = attention_hint(ModelChoice(task, *default_shape(task), True))
    return f", with an extra loss nudging that head for the first {hint['steps']} steps" if hint else ""


def _flat_and_wrong(s) -> bool:
    if s.view.focus_row is None or s.view.run.trained:
        return False
    found = _flat(s)
    return found["top"] < FLAT * found["even"] and found["guess"] != s.view.expected[0]


def _grey(s) -> np.ndarray:
    return ~np.isfinite(s.view.attention.masked_scores[s.settings.layer - 1, s.settings.head - 1])


def _answer(s) -> tuple[str, ...]:
    return tuple(t for t in s.view.run.attention.output_tokens if t != "</s>")


def _expected(s) -> tuple[str, ...]:
    return tuple(t for t in (s.view.expected or ()) if t != "</s>")


def _decoder(s) -> bool:
    """The decoder's self-attention of an encoder–decoder task is on screen."""
    return get_task(s.settings.task).architecture == "encoder-decoder" and s.settings.block == "decoder"


def _causal_right(s) -> bool:
    grey = _grey(s)
    square = grey.shape[0] == grey.shape[1]
    return (_decoder(s) and square and np.array_equal(grey, np.triu(np.ones_like(grey), 1))
            and grey.any() and s.view.expected is not None and _answer(s) == _expected(s))


def _causal(s) -> dict:
    grey = _grey(s)
    return {"grey": int(grey.sum()), "cells": grey.size, "answer": " ".join(_answer(s))}


def _short(s) -> str:
    """How the answer differs from the right one: ", one L short", or ' instead of "O L L E H"'."""
    answer, expected = _answer(s), _expected(s)
    if len(answer) + 1 == len(expected):
        for i, token in enumerate(expected):
            if expected[:i] + expected[i + 1:] == answer:
                return f", one {token} short"
    return f" instead of {' '.join(expected)}"


def _unmasked_wrong(s) -> bool:
    return (_decoder(s) and s.view.run.trained and s.settings.mask == "none"
            and s.view.expected is not None and not _grey(s).any() and _answer(s) != _expected(s))


def _reads_backwards(s) -> bool:
    """Cross-attention of a trained reversal model: in the enlarged head, row k (the decoder's k-th
    step, from the start token) weighs most the k-th input letter from the end, for every letter."""
    block, n = s.view.attention, len(s.view.tokens)
    if s.settings.task != "reverse" or s.settings.block != "cross" or not s.view.run.trained or n < 2:
        return False
    brightest = _panel(s)[:n].argmax(axis=-1)
    return bool((brightest == np.arange(n)[::-1]).all()) and len(block.key_tokens) == n \
        and _answer(s) == _expected(s)


def _backwards(s) -> dict:
    n, keys = len(s.view.tokens), s.view.attention.key_tokens
    weights = _panel(s)[:n].max(axis=-1)
    return {"head": s.settings.head, "first": keys[n - 1], "first_weight": float(weights[0]),
            "rest": _words(keys[n - 1 - k] for k in range(1, n)), "low": float(weights[1:].min()),
            "high": float(weights[1:].max())}


def _repeats(s) -> list[tuple[int, int]]:
    """(row, the row after the token's first occurrence) for every repeated token."""
    tokens = s.view.attention.query_tokens
    return [(i, tokens.index(t) + 1) for i, t in enumerate(tokens) if tokens.index(t) < i]


def _induction_right(s) -> bool:
    """A trained model's enlarged head sends every repeated token to the one after its first
    occurrence, and the model predicts each token of the repeat after the first."""
    if s.settings.task != "induction" or not s.view.run.trained or len(_repeats(s)) < 2:
        return False
    tokens, output, panel = s.view.attention.query_tokens, s.view.run.attention.output_tokens, _panel(s)
    rows = _repeats(s)
    looks = all(int(panel[i].argmax()) == j for i, j in rows)
    return looks and all(output[i] == tokens[i + 1] for i, _ in rows if i + 1 < len(tokens))


def _induction(s) -> dict:
    tokens, panel, rows = s.view.attention.query_tokens, _panel(s), _repeats(s)
    (first, target), rest = rows[0], rows[1:]
    then = [f"{tokens[i]} at {tokens[j]} ({panel[i, j]:.2f})" for i, j in rest]
    then[0] = then[0].replace(" at ", " looks at ", 1)
    return {"token": tokens[first], "next": tokens[target], "weight": float(panel[first, target]),
            "then": _words(then), "predicted": " ".join(tokens[i + 1] for i, _ in rows if i + 1 < len(tokens))}


ATTENTION_CLAIMS = types.MappingProxyType({
    "it_reads_referent": Claim(lambda s: _it_right(s) and _it_row(s)["word"] == _agent(s), _it_row),
    "it_moves": Claim(lambda s: _it_right(s) and _it_row(s)["word"] != _agent(s), _it_row),
    "heads_differ": Claim(_heads_differ, _heads),
    "random_flat": Claim(_flat_and_wrong, _flat),
    "causal_grid": Claim(_causal_right, _causal),
    "unmasked_fails": Claim(_unmasked_wrong, lambda s: {"answer": " ".join(_answer(s)), "short": _short(s)}),
    "cross_backwards": Claim(_reads_backwards, _backwards),
    "induction_head": Claim(_induction_right, _induction),
})
