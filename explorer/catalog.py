"""The app's pages in one list: app.py builds the navigation from it, the home page links to every
entry, and the tests visit every entry.  Adding a lesson page means adding one line here."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PAGES", "LESSONS", "PageInfo"]


@dataclass(frozen=True)
class PageInfo:
    path: str  # script path relative to the project root
    title: str
    url_path: str  # "" for the home page
    icon: str
    summary: str  # one line for the home page


PAGES = (
    PageInfo("pages/home.py", "Home", "", ":material/home:",
             "What the app teaches and where to start."),
    PageInfo("pages/lookup.py", "Attention as a lookup", "lookup", ":material/search:",
             "A query scores every key; softmax turns scores into weights; the answer mixes the values."),
)
LESSONS = tuple(p for p in PAGES if p.url_path)
