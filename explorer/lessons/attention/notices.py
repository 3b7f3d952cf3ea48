"""What the self-attention page may say beside its grid: each claim is a section of the lesson text
(explorer/lessons/attention/prose.md, its id) with a check on the view shown.  A claim whose check fails
is not shown; the sentences that are shown hold for the figure beside them.

    mask: none / causal / padding / causal padding
                            the grey cells on screen, counted from the mask the model ran with
    notice: <task> <block>  the task's "What to notice", each with its check (CHECKS)
    off-mask                a trained model run with a mask other than the one it learned with
    random                  the weights shown were never trained

The checks read the arrays: where a head looks (its brightest key per row), which cells are masked,
whether a shipped trained model ran.  No Streamlit.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from explorer.analysis.patterns import MOST, brightest, from_the_end
from explorer.training.tasks import BOS, EOS, PAD

__all__ = ["CHECKS", "Seen", "from_the_end", "mask_claim", "notices", "referent_rows"]



@dataclass(frozen=True)
class Seen:
    """What a claim may look at: the block on screen, the model's answer, whether a shipped trained
    model ran, the mask it ran with and the one it learned with, the right answer (input read whole),
    and (the "it" model) the head its card names, (layer, head) from 0, and whether the card records
    that an extra loss nudged that head in training (`nudged`)."""

    block: object  # AttentionBlock
    answer: tuple[str, ...]
    trained: bool
    mask: str
    natural: str
    expected: tuple[str, ...] | None
    referent: tuple[int, int] | None
    nudged: bool = False




def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def mask_claim(block) -> tuple[str, dict] | None:
    """The mask section for the grey cells of `block` (the same in every layer and head), or None
    when they follow none of the patterns the text describes."""
    allowed = np.isfinite(block.masked_scores)
    grey = ~allowed[0, 0]
    if not (allowed == allowed[0, 0]).all():
        return None
    pads = np.array([k == PAD for k in block.key_tokens])
    padded = np.broadcast_to(pads, grey.shape)
    future = np.triu(np.ones_like(grey), 1) if grey.shape[0] == grey.shape[1] else np.zeros_like(grey)
    fields = {"cells": _count(int(future.sum()), "cell"), "pads": _count(int(pads.sum()), "column")}
    for name, pattern in (("none", np.zeros_like(grey)), ("causal", future), ("padding", padded),
                          ("causal padding", future | padded)):
        if np.array_equal(grey, pattern) and (name == "none" or pattern.any()):
            return f"mask: {name}", fields
    return None


def _unmasked(seen: Seen) -> bool:
    return bool(np.isfinite(seen.block.masked_scores).all())


def _causal(seen: Seen) -> bool:
    claim = mask_claim(seen.block)
    return claim is not None and claim[0] == "mask: causal"


def _letters(tokens) -> list[int]:
    """The places of the input's letters (not padding nor a start or end marker)."""
    return [i for i, t in enumerate(tokens) if t not in (PAD, BOS, EOS)]


def _reads_the_letter_it_writes(seen: Seen) -> bool:
    """Cross-attention: in some head of the last layer, most decoder steps weigh most the input
    letter they write next (sorting: a repeated letter may be read at any of its places)."""
    writes = [t for t in seen.answer if t != EOS]
    if not seen.trained or not writes:
        return False
    keys = np.array(seen.block.key_tokens)
    looked = keys[brightest(seen.block.weights[-1])[:, :len(writes)]]  # (heads, steps)
    return bool(((looked == np.array(writes)).mean(axis=1) >= MOST).any())




def _reads_from_the_end(seen: Seen) -> bool:
    """Reversal's cross-attention runs along the anti-diagonal, in some head of the last layer."""
    places = _letters(seen.block.key_tokens)
    steps = min(len([t for t in seen.answer if t != EOS]), len(places))
    return seen.trained and from_the_end(seen.block.weights[-1], places, steps)


def _traces_the_sort(seen: Seen) -> bool:
    """Sorting's cross-attention traces the sorting permutation "rather than a diagonal": the model
    writes the input sorted, the input was not in order already, and its steps read the letters
    they write."""
    letters = [seen.block.key_tokens[i] for i in _letters(seen.block.key_tokens)]
    written = tuple(t for t in seen.answer if t != EOS)
    return (letters != sorted(letters) and seen.expected is not None
            and written == tuple(t for t in seen.expected if t != EOS) and _reads_the_letter_it_writes(seen))


def _it_reads_its_referent(seen: Seen) -> bool:
    """In the head the card names, which its card says was nudged in training, the row of "it"
    weighs the right noun most, and "it" may see the last word (the one that decides)."""
    tokens = seen.block.query_tokens
    if not seen.trained or seen.referent is None or not seen.nudged or seen.expected is None or "it" not in tokens:
        return False
    it, (layer, head) = tokens.index("it"), seen.referent
    last = _letters(seen.block.key_tokens)[-1]  # the last word (padding after it under a padding mask)
    if layer >= seen.block.weights.shape[0] or not np.isfinite(seen.block.masked_scores[layer, head, it, last]):
        return False
    return seen.block.key_tokens[int(seen.block.weights[layer, head, it].argmax())] == seen.expected[0]


def referent_rows(seen: Seen) -> str:
    """How many rows besides "it" weigh the referent most in the card's head, said as a clause: the
    hint trained the row of "it" alone, but the head may point other rows there too."""
    tokens = list(seen.block.query_tokens)
    if seen.referent is None or seen.expected is None or "it" not in tokens \
            or seen.referent[0] >= seen.block.weights.shape[0]:
        return ""
    it, (layer, head) = tokens.index("it"), seen.referent
    keys = np.array(seen.block.key_tokens)
    rows = [i for i, t in enumerate(tokens) if t not in (PAD, BOS, EOS) and i != it]
    same = int((keys[brightest(seen.block.weights)[layer, head, rows]] == seen.expected[0]).sum())
    if 2 * same > len(rows):
        return f" Not only “it”: {same} of the other {len(rows)} rows of this head weigh that noun most too."
    return f" Of the other {len(rows)} rows of this head, {same} weigh that noun most too."


def _induction(seen: Seen) -> bool:
    """The second half of the input repeats the first; some head of layer 2 sends most repeated tokens
    to the token after their first occurrence, and some head of layer 1 sends most tokens to the one
    before them."""
    tokens, weights = seen.block.query_tokens, seen.block.weights
    words = [tokens[i] for i in _letters(tokens)]
    half = len(words) // 2
    if not seen.trained or weights.shape[0] < 2 or len(words) % 2 or not half or words[half:] != words[:half]:
        return False
    repeats = [(i, tokens.index(t) + 1) for i, t in enumerate(tokens) if tokens.index(t) < i]
    if not repeats:
        return False
    rows, targets = np.array(repeats).T
    induction = (brightest(weights[1])[:, rows] == targets).mean(axis=1) >= MOST
    previous = (brightest(weights[0])[:, 1:] == np.arange(len(tokens) - 1)).mean(axis=1) >= MOST
    return bool(induction.any() and previous.any())


def _recall(seen: Seen) -> bool:
    """In some head, the row of the (last) '?' weighs the first token most."""
    tokens = list(seen.block.query_tokens)
    if not seen.trained or "?" not in tokens:
        return False
    asks = len(tokens) - 1 - tokens[::-1].index("?")
    return bool((brightest(seen.block.weights)[:, :, asks] == 0).any())


def _trained_and_unmasked(seen: Seen) -> bool:
    return seen.trained and _unmasked(seen)


CHECKS: dict[str, Callable[[Seen], bool]] = {
    "notice: reverse cross": _reads_from_the_end,
    "notice: reverse decoder": _causal,
    "notice: reverse encoder": _trained_and_unmasked,
    "notice: sort cross": _traces_the_sort,
    "notice: sort decoder": _causal,
    "notice: sort encoder": _trained_and_unmasked,
    "notice: coreference encoder": _it_reads_its_referent,
    "notice: induction encoder": _induction,
    "notice: recall encoder": _recall,
    "off-mask": lambda seen: seen.trained and seen.mask != seen.natural,
    "random": lambda seen: not seen.trained,
}


def notices(task: str, block_name: str, seen: Seen) -> tuple[tuple[str, types.MappingProxyType], ...]:
    """(lesson-text section, its fields) of every claim that holds for the view, in reading order."""
    shown = []
    claim = mask_claim(seen.block)
    if claim is not None:
        shown.append(claim)
    head = "" if seen.referent is None else f"layer {seen.referent[0] + 1}, head {seen.referent[1] + 1}"
    for name in (f"notice: {task} {block_name}", "off-mask", "random"):
        if name in CHECKS and CHECKS[name](seen):
            shown.append((name, {"mask": seen.mask, "natural": seen.natural, "head": head,
                                 "rows": referent_rows(seen) if name == "notice: coreference encoder" else ""}))
    return tuple((name, types.MappingProxyType(fields)) for name, fields in shown)
