"""Lesson text: a comment over several lines is an editor's note (a cited source beside its sentence),
never part of a section; a one-line comment starts a section."""

from explorer.kit import prose


def test_a_comment_over_several_lines_is_dropped(tmp_path, monkeypatch):
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "prose.md").write_text(
        "<!--\nfor editors\n-->\n\n<!-- one -->\nFirst {n}.\n<!--\nCited: a paper, §3.\n-->\nStill first.\n"
        "\n<!-- two -->\nSecond.\n", encoding="utf-8")
    monkeypatch.setattr(prose, "LESSON_DIR", tmp_path)
    sections = prose.lesson_sections.__wrapped__("demo") if hasattr(prose.lesson_sections, "__wrapped__") \
        else prose.lesson_sections("demo")
    assert sections == {"one": "First {n}.\nStill first.", "two": "Second."}
