"""Claims are code: a sentence on screen that states something about a figure names a claim, and
the claim says when the sentence is true of what is shown (`holds`) and which numbers it quotes
(`values`), read from the view.  The lesson runtime shows a sentence only where its claim holds,
with its numbers filled in.  No Streamlit here.

    DEPTH_CLAIMS = {
        "bare_collapses": Claim(lambda s: lost(s, "none", False) > 2,
                                lambda s: {"lost": lost(s, "none", False)}),
    }

`s` is what is shown: `s.settings` (the lesson's settings dataclass) and `s.view` (its view).  The
sentences live with the lesson's prose: a lesson step names its claim (`claim = "bare_collapses"` in
`explorer/lessons/<page>/lesson.toml`, its `reveal` quoting `{lost:.1f}`), and a prose section of
`<page>.md` named `<!-- claim: bare_collapses -->` is that claim's sentence.  A sentence quotes no
number typed by hand: every number about the figure is a `{field}` its claim computes
(tests/unit/test_claims_hold.py checks every claim over many settings, every step's claim at the
step's own settings, and that no such sentence carries a typed number).

A claim about something that comes later than the view (a live run's outcome: the lesson's view at
Reveal is its step 0) says when it can be judged (`ready`); until then the runtime shows the step's
answer as waiting, neither true nor false.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..figures.logscale import power_label

__all__ = ["Claim", "fill", "listed", "power_of_ten", "say", "scientific", "spelled", "typed_numbers"]

FIELD = re.compile(r"\{([A-Za-z_]\w*)(?::([^{}]*))?\}")
_COUNTED = re.compile(FIELD.pattern + r"( [^{}()\n]{1,30}?)\(s\)")  # a field, then a noun in the plural with "(s)"
# A number written into a sentence by hand: digits, not part of a {field}, a subscript, a name
# like x1 or d_model, nor "O(T²)"-like notation; a number that names a thing on the figure's axes
# ("layer 0", "head 3", "t = 48") is a name, not a quantity.
_NAMED = re.compile(r"\b(?:layer|head|step|section|position|t =|T =)\s*\d+")
_NUMBER = re.compile(r"(?<![\w.{^_/])[−-]?\d+(?:[.,]\d+)?(?![\w}])")


def _nothing(shown) -> Mapping[str, object]:
    return {}


def _always(shown) -> bool:
    return True


@dataclass(frozen=True)
class Claim:
    """When a sentence is true of what is shown, the numbers it quotes, and whether what it is about
    has been shown yet (see the module)."""

    holds: Callable[[Any], bool]
    values: Callable[[Any], Mapping[str, object]] = _nothing
    ready: Callable[[Any], bool] = _always


def fill(text: str, values: Mapping[str, object], where: str = "a sentence") -> str:
    """`text` with every `{field}` / `{field:format}` filled from `values` (Python's format mini-
    language); a field with no value is an error, other braces ($b^{2i/d}$) are left alone."""

    def one(field: re.Match) -> str:
        if field[1] not in values:
            raise KeyError(f"{where}: no value for {{{field[1]}}}")
        return format(values[field[1]], field[2] or "")

    def counted(field: re.Match) -> str:  # "{n} layer(s)": "1 layer", "2 layers"
        return one(field) + field[3] + ("" if values.get(field[1]) == 1 else "s")

    return FIELD.sub(one, _COUNTED.sub(counted, text))


def say(claims: Mapping[str, Claim], name: str, text: str, shown) -> str | None:
    """The sentence `text` of claim `name`, its numbers filled from what is shown; None where the
    claim does not hold there (the sentence would be false beside this figure)."""
    claim = claims[name]
    if not claim.holds(shown):
        return None
    return fill(text, claim.values(shown), where=f"claim {name!r}")


def typed_numbers(text: str) -> list[str]:
    """The numbers written into `text` by hand, outside its `{fields}` (see `_NUMBER`)."""
    return _NUMBER.findall(_NAMED.sub("", FIELD.sub("", text)))


def listed(items) -> str:
    """'a, b and c'."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def scientific(x: float) -> str:
    """0.26 as it is, and below 0.01 two digits and a power of ten, 1.1×10⁻⁵ (not Python's 1.1e-05)."""
    if x >= 0.01 or x == 0:
        return f"{x:.2g}"
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"{mantissa}×10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def power_of_ten(x: float) -> str:
    """The power of ten nearest `x` (> 0) as the log axes print it (explorer.figures.logscale.power_label:
    10⁻³, 1, 10, 10²): how a sentence quotes a size on a log axis."""
    return power_label(round(math.log10(x)))


_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


def spelled(n: int) -> str:
    """A small count as a word ("five"), a larger one in digits."""
    return _WORDS[n] if 0 <= n < len(_WORDS) else f"{n:,}"
