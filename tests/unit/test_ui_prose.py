"""explorer.kit.prose: the lesson text beside the pages is split into its sections as written, and
only the fields a section names are filled in."""

import pytest

from explorer.kit.prose import LESSON_DIR, lesson_sections, lesson_text


def test_every_lesson_file_has_named_sections_without_the_editors_note():
    files = sorted(LESSON_DIR.glob("*/prose.md"))
    assert files, "explorer/lessons/<page>/prose.md holds the lesson text"
    for path in files:
        sections = lesson_sections(path.parent.name)
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


def test_a_count_written_noun_s_agrees_with_its_number():
    """Lesson text writes "{n} layer(s)"; a lecturer reads "1 layer" and "2 layers", never "(s)"."""
    from explorer.kit.claims import fill
    from explorer.kit.text import counted

    said = fill("With {n} layer(s) and {g} key/value head(s).", {"n": 1, "g": 2})
    assert said == "With 1 layer and 2 key/value heads."
    assert fill("{n:,} run(s) at a time", {"n": 1000}) == "1,000 runs at a time"
    assert counted(1, "seed") == "1 seed" and counted(0, "seed") == "0 seeds"
    for path in sorted(LESSON_DIR.glob("*/prose.md")):  # every "(s)" in the lesson text follows a field
        for name, text in lesson_sections(path.parent.name).items():
            assert "(s)" not in fill(text, _AnyNumber(), where=name), f"{path} {name!r}"


class _AnyNumber(dict):
    """Every field 2 (a mapping that has every key)."""

    def __contains__(self, key):
        return True

    def __getitem__(self, key):
        return 2

    def get(self, key, default=None):
        return 2
