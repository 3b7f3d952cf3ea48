"""Text from a link or a text box is shown literally: it never renders as bold, a link or code."""

from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt

from explorer.lessons import LESSONS
from harness.apptest import info_text, run_page

# The attack from the classroom issue: a parameter name that closes the code span it is shown in.
HOSTILE_KEY = unquote("%60**Session%20expired.**%20%5BSign%20in%5D(%2F%2Fe.vil)%60")


def rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


@pytest.mark.parametrize("page", [p.path for p in LESSONS], ids=[p.url_path for p in LESSONS])
def test_a_hostile_parameter_name_is_shown_as_text(page):
    at = run_page(page, {HOSTILE_KEY: "1"})
    note = info_text(at)
    assert "Session" in note, "the unknown parameter is reported"
    html = rendered(note)
    assert "<strong>Session" not in html and "<a " not in html, html


def test_a_hostile_value_and_typed_words_are_shown_as_text():
    at = run_page("explorer/lessons/attention/attention.py",
                  {"task": "coreference", "input_coreference": "your own text…",
                                              "text_coreference": "the **dog** [x](//e.vil) `code` it"})
    note = info_text(at)
    assert "vil" in note and "code" in note, "the unknown words are reported"
    html = rendered(note)
    assert "<strong>dog" not in html and "<a " not in html and "<code>code" not in html, html
