"""What a link may say: the one parser of URL values for every setting of every page.

A link is typed by hand, pasted from a chat, cut short by a mail client or made up by someone
trying to break the app.  Each setting has a rule (`Choice`, `Number`, `Flag`, `Text`) that reads
what the link gives for it, `read(values, rule)`, and either returns the value or raises `Unusable`
with the reason in plain words.  The rules are strict: a value is usable only when it is written
the way the app itself writes it (`rule.text(value)`), once.  So an empty value, junk, a number out
of range or off the slider's steps, NaN, infinity, digits of another script ("１２", "٣"), and a
parameter given twice (`?T=5&T=7`: which one was meant?) are all unusable, and the page shows its
default with a note (explorer.kit.controls.UrlControls), never whatever some lenient parse made of it.

Each rule also says which values its widget can hold (`rule.holds(value)`): session state is shared
by the pages of a session, and a value another page left under the same key may not be one of them.

No Streamlit here: the rules are plain functions of text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = ["Choice", "Flag", "Number", "Text", "Unusable", "read"]

# A decimal number as the app writes one ("12", "0.1", "-2.5", "1e-05"): ASCII digits only, no
# spaces, no "_" separators, no "nan" or "inf" (Python's float() would take all of those).
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


class Unusable(ValueError):
    """A link value that a setting cannot take.  str() says why, in plain text, as the end of a
    sentence that starts with the quoted value: “abc” + " is not valid here (a number from 1 to 24)"."""


ALLOWED_CHARS = 200  # a note lists a control's options up to this length


@dataclass(frozen=True)
class Choice:
    """One of a list of options, written as its label (`format_func(option)`, str by default)."""

    options: Sequence
    format_func: Callable[[object], str] = str
    _index: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "_index", {self.format_func(o): i for i, o in enumerate(self.options)})

    @property
    def allowed(self) -> str:
        """The options, all of them where they fit in a note's line; else the first few and how many in all
        (a stage list of 17 labels made a note line of over 400 characters)."""
        labels = [self.format_func(o) for o in self.options]
        if len(", ".join(labels)) <= ALLOWED_CHARS:
            return "one of " + ", ".join(labels)
        shown = []
        while len(", ".join([*shown, labels[len(shown)]])) <= ALLOWED_CHARS - 40:
            shown.append(labels[len(shown)])
        return f"one of the {len(labels)} options of the control: {', '.join(shown)}, …"

    def parse(self, text: str):
        if text not in self._index:
            raise Unusable(f"is not valid here ({self.allowed})")
        return self.options[self._index[text]]

    def text(self, value) -> str:
        return self.format_func(value)

    def holds(self, value) -> bool:
        return value in self.options


@dataclass(frozen=True)
class Number:
    """A number from `low` to `high` on the slider's steps (`low`, `low + step`, …)."""

    low: float
    high: float
    step: float

    @property
    def integer(self) -> bool:
        return all(isinstance(x, int) and not isinstance(x, bool) for x in (self.low, self.high, self.step))

    @property
    def allowed(self) -> str:
        grid = "" if self.integer and self.step == 1 else f" in steps of {self.step}"
        return f"a number from {self.low} to {self.high}{grid}"

    def parse(self, text: str):
        number = float(text) if _NUMBER.fullmatch(text) else math.nan
        steps = (number - self.low) / self.step
        if not (self.low <= number <= self.high and math.isclose(steps, round(steps), rel_tol=0, abs_tol=1e-6)):
            raise Unusable(f"is not valid here ({self.allowed})")  # NaN and ±inf fail the range test
        return round(number) if self.integer else number

    def text(self, value) -> str:
        return str(int(value)) if float(value).is_integer() else str(value)

    def holds(self, value) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and self.low <= value <= self.high


@dataclass(frozen=True)
class Flag:
    """On or off, as `true` / `false` in any case (and whatever other words a setting accepts)."""

    true: tuple[str, ...] = ("true",)
    false: tuple[str, ...] = ("false",)

    @property
    def allowed(self) -> str:
        return f"{' or '.join(self.true)} for on, {' or '.join(self.false)} for off"

    def parse(self, text: str) -> bool:
        word = text.lower()
        if word in self.true or word in self.false:
            return word in self.true
        raise Unusable(f"is not valid here ({self.allowed})")

    def text(self, value) -> str:
        return self.true[0] if value else self.false[0]

    def holds(self, value) -> bool:
        return isinstance(value, bool)


@dataclass(frozen=True)
class Text:
    """Free text of at most `max_chars` characters (the page reads it and says what it could not)."""

    max_chars: int

    @property
    def allowed(self) -> str:
        return f"text of at most {self.max_chars} characters"

    def parse(self, text: str) -> str:
        if len(text) > self.max_chars:
            raise Unusable(f"is {len(text)} characters long ({self.allowed})")
        return text

    def text(self, value) -> str:
        return str(value)

    def holds(self, value) -> bool:
        return isinstance(value, str)


def read(values: Sequence[str], rule):
    """The value a link's `values` for one parameter (all of them, `st.query_params.get_all`) ask for.

    Raises Unusable when there is no value, more than one, or one the rule does not accept."""
    if len(values) != 1:  # ?T=5&T=7: which one was meant?
        raise Unusable(f"is {len(values)} values, one is allowed ({rule.allowed})")
    return rule.parse(values[0])
