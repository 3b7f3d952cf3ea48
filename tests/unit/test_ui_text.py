"""User and link text shown in Markdown stays literal text (explorer.kit.text)."""

import re

import pytest
from markdown_it import MarkdownIt

from explorer.kit.text import escape_markdown, quoted

HOSTILE = [
    "`**Session expired.** [Sign in](//e.vil)`",
    "**bold** _it_ [link](http://x) ![img](http://x/a.png)",
    "# heading\n- item\n> quote",
    ":red[alarm] :material/warning: $x^2$ <b>html</b> &amp;",
    "``` fence ```",
    "a\\`b",
]


def rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_text_renders_as_plain_text(text):
    html = rendered(f"Before {escape_markdown(text)} after")
    assert re.fullmatch(r"<p>Before .* after</p>\n", html, flags=re.S), html
    for tag in ("<a ", "<strong>", "<em>", "<code>", "<img", "<h1>", "<li>", "<blockquote>", "<b>"):
        assert tag not in html, (tag, html)


def test_streamlit_extensions_are_neutralised():
    """Icons and emoji shortcodes (matched in the parsed text) do not survive parsing; colour
    directives and maths (read by the parser itself) are backslash-escaped."""
    escaped = escape_markdown(":red[alarm] :material/warning: :smile: $x$")
    text = re.sub(r"</?p>|\n", "", rendered(escaped))
    assert not re.search(r":material/\w+:|:\w+:", text), text
    assert re.search(r"\\:\u200bred\\\[", escaped) and "\\$x\\$" in escaped, escaped


def test_quoted_cuts_long_values_and_keeps_one_line():
    shown = quoted("x" * 100 + "\nsecond line", limit=40)
    assert shown.startswith("“") and shown.endswith("…”") and "\n" not in shown
