"""Text from users and links, made safe to show in Streamlit's Markdown.

Anything a user typed or a link carried is shown as literal text: every character that Markdown
(or Streamlit's own extensions: `:red[…]` colours, `:material/…:` icons, `$…$` maths) could read as
syntax is backslash-escaped, and line breaks become spaces, so a value can neither break out of the
sentence it is quoted in nor become a link, emphasis, a heading or a code span.
"""

from __future__ import annotations

import re

__all__ = ["counted", "escape_markdown", "quoted"]

# Every ASCII punctuation character may be backslash-escaped in CommonMark; these are the ones that
# mean something inside a line in Markdown, HTML or Streamlit's extensions (a user's text never starts
# a line here: line breaks are folded, so list and heading markers need no escape).
_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#|~$&])")


def escape_markdown(text: object, limit: int | None = None) -> str:
    """`text` as literal Markdown (at most `limit` characters of it, with … when cut)."""
    text = str(text)
    if limit is not None and len(text) > limit:
        text = text[:limit] + "…"
    text = re.sub(r"\s+", " ", text)
    # Icons (:material/name:) and emoji shortcodes (:smile:) are replaced in the parsed text, after
    # backslash escapes are gone: a zero-width space after each colon keeps them from matching.
    return re.sub(r":(?=\S)", "\\:\u200b", _SPECIAL.sub(r"\\\1", text))


def quoted(text: object, limit: int = 40) -> str:
    """A user's value inside typographic quotes, escaped: “like this”."""
    return f"“{escape_markdown(text, limit)}”"


def counted(n: int, noun: str) -> str:
    """ "1 seed", "3 seeds": a count with its noun, for a sentence built in a page (lesson text writes
    "{n} seed(s)", and explorer.kit.claims.fill does the same)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
