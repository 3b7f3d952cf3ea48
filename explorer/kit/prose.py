"""Lesson text kept beside the page script as Markdown, `explorer/lessons/<page>/prose.md`, so that a page
script holds what the page does and the prose can be read and edited as prose.

A line `<!-- name -->` starts the section `name`, which runs to the next such line; text before the
first one is a note for whoever edits the file.  A comment that spans several lines (`<!--` on one line,
`-->` on a later one) is a note too, wherever it stands: a source cited beside a sentence is kept there,
never shown.  `{field}` and `{field:format}` in a section are
filled in from the values the page passes, with Python's format mini-language, and each of them must
be given.  Other braces ($b^{2i/d}$, $2i{+}1$) are left alone.
"""

from __future__ import annotations

import re

from ..caching import loaded
from .claims import fill
from .spec import LESSON_FOLDER as LESSON_DIR

__all__ = ["LESSON_DIR", "lesson_sections", "lesson_text"]

_SECTION = re.compile(r"^<!-- (.+?) -->$", re.MULTILINE)
_NOTE = re.compile(r"<!--(?:(?!-->).)*\n.*?-->\n?", re.DOTALL)  # a comment over several lines


@loaded(16)
def lesson_sections(page: str) -> dict[str, str]:
    """{section name: its text, without the blank lines around it} of explorer/lessons/<page>/prose.md,
    read once per process."""
    parts = _SECTION.split(_NOTE.sub("", (LESSON_DIR / page / "prose.md").read_text(encoding="utf-8")))
    return {name: text.strip("\n") for name, text in zip(parts[1::2], parts[2::2], strict=True)}


def lesson_text(page: str, section: str, **values) -> str:
    """The section `section` of the page's lesson text with its fields filled in from `values`."""
    return fill(lesson_sections(page)[section], values, where=f"explorer/lessons/{page}/prose.md, section {section!r}")
