"""The app's pages: the home page, then every lesson the registry finds (explorer/lessons), in order.
app.py builds the navigation from it, the home page links to every lesson, and the tests visit every
page.  It names no lesson: a lesson is added by adding its folder.

The home page's script lives in `app_pages/`, not `pages/`: a folder named `pages/` beside app.py makes
Streamlit start in its legacy multipage mode, and the first deep link after a restart (say /lookup)
would then run the page script on its own, without app.py's navigation and settings."""

from __future__ import annotations

from ..lessons import LESSONS, Card

__all__ = ["HOME", "PAGES"]

HOME = Card("app_pages/home.py", "Home", "", ":material/home:", "What the app teaches and where to start.")
PAGES: tuple[Card, ...] = (HOME, *LESSONS)
