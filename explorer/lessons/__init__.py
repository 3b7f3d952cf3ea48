"""The lessons: one folder each, and this registry, which finds them.  Adding a lesson is adding a folder.

    explorer/lessons/<name>/
        lesson.toml   its card ([page]: title, icon, order, summary) and its steps ([[steps]])
        spec.py       SPECS: what the runtime serves (explorer.kit.spec.LessonSpec: settings, view, figures, claims)
        <name>.py     the page script, drawn top-down with explorer.serve (named as its URL path,
                      as Streamlit names a page after its file)
        prose.md      its longer text, section by section (optional)
        *.py          its settings, views, claims and figures, imported by nobody outside the folder

The folder's name is the page's URL path.  `LESSONS` is every lesson's card in navigation order, read
from the TOML files alone (no lesson code is imported: the app's navigation loads without torch);
`specs()` imports each lesson's spec.py (the server's warm-up).  A lesson never imports another
lesson: what two share lives in model/, training/, analysis/, figures/ or kit/
(tests/system/test_layers.py)."""

from __future__ import annotations

import importlib
import tomllib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FOLDER", "LESSONS", "Card", "folder", "specs"]

FOLDER = Path(__file__).resolve().parent
PROJECT = FOLDER.parents[1]


@dataclass(frozen=True)
class Card:
    """A page of the app's navigation: a lesson's, read from its lesson.toml (or the home page's)."""

    path: str  # its page script, relative to the project root
    title: str
    url_path: str  # "" for the home page
    icon: str
    summary: str  # one line for the home page
    order: int = 0


def folder(name: str) -> Path:
    """The folder of the lesson `name` (its URL path)."""
    return FOLDER / name


def _card(path: Path) -> Card:
    page = tomllib.loads(path.read_text(encoding="utf-8"))["page"]
    name = path.parent.name
    return Card(str((path.parent / f"{name}.py").relative_to(PROJECT)), page["title"], name, page["icon"],
                page["summary"], int(page["order"]))


LESSONS: tuple[Card, ...] = tuple(sorted((_card(path) for path in FOLDER.glob("*/lesson.toml")),
                                         key=lambda card: (card.order, card.url_path)))


def specs() -> tuple:
    """Every lesson's LessonSpecs (each folder's spec.py, SPECS), the lessons in navigation order."""
    return tuple(spec for card in LESSONS
                 for spec in importlib.import_module(f"{__name__}.{card.url_path}.spec").SPECS)
