"""explorer.serve.prose: the lesson text beside the pages is split into its sections as written, and
only the fields a section names are filled in."""

import pytest

from explorer.serve.prose import LESSON_DIR, lesson_sections, lesson_text


def test_every_lesson_file_has_named_sections_without_the_editors_note():
    files = sorted(LESSON_DIR.glob("*.md"))
    assert files, "app_pages/lessons/ holds the lesson text"
    for path in files:
        sections = lesson_sections(path.stem)
        assert sections and all(name and text and not text.startswith("\n") for name, text in sections.items())
        assert not any("<!--" in text for text in sections.values()), "a marker line was not recognised"


def test_fields_are_filled_and_other_braces_left_alone():
    formula = lesson_text("positions", "matrix: sinusoidal formula")
    assert r"$\sin(p/b^{2i/d})$" in formula and "$2i{+}1$" in formula
    filled = lesson_text("positions", "wavelengths", first=6.283185, last="1,000", beyond=3, pairs=8, n_rows=100)
    assert filled.startswith("Pair *i* repeats every 2π·base^(2i/d) positions: from 6.28 positions")
    assert "{" not in filled and "Here 3 of the 8 pairs" in filled


def test_a_missing_field_is_an_error():
    with pytest.raises(KeyError, match="beyond"):
        lesson_text("positions", "wavelengths", first=1.0, last="2", pairs=8, n_rows=100)
