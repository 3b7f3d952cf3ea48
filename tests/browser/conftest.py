"""Fixtures for the browser tests: a real `streamlit run app.py` server and headless Debian Chromium.

The server is started once per session on a free loopback port and stopped at the end (also when a
test or the start-up fails).  Chromium is Debian's /usr/bin/chromium driven through Playwright;
Playwright's own browser download is never used.  A missing Chromium is a test failure, not a skip.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.browser_runs import RUN_TRACKER_JS
from harness.server import streamlit_server, tail

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = PROJECT_ROOT / "test-artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
SERVER_LOG = ARTIFACTS / "streamlit-server.log"  # the log of the session's server, set by app_url

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 900}
DEFAULT_TIMEOUT_MS = 20_000  # any single Playwright wait
TEST_WATCHDOG_SECONDS = 120  # last resort: a browser test that hangs longer than this fails


def _log_tail(lines: int = 40) -> str:
    return tail(SERVER_LOG, lines)


def require_chromium() -> str:
    """Fail (never skip) when Debian's Chromium is missing. Tests call this first, before asking for
    the server and browser fixtures, so that a missing browser is reported as a test FAILURE."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(
            f"Chromium is not installed at {CHROMIUM}; the browser tests need Debian's Chromium. "
            "Install it with `apt-get update && apt-get install -y chromium` (as root), "
            "or run `bash scripts/test.sh`, which does that for you.",
            pytrace=False,
        )
    return CHROMIUM


@pytest.fixture(scope="session")
def chromium_path() -> str:
    return require_chromium()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(scope="session")
def app_url(chromium_path) -> Iterator[str]:
    """Base URL (no trailing slash) of a `streamlit run app.py` server started for this session
    (harness/server.py, as for the session tests); its log goes to test-artifacts/."""
    global SERVER_LOG
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        with streamlit_server(log_dir=ARTIFACTS, name="streamlit-server") as server:
            SERVER_LOG = server.log_path
            yield server.url
    except RuntimeError as problem:  # the server exited or never answered /_stcore/health
        pytest.fail(f"`streamlit run app.py` did not start: {problem}", pytrace=False)


@pytest.fixture(scope="session")
def browser_context(chromium_path):
    """A Chromium context with a fresh temporary profile; pages of all tests open in it."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="attention-explorer-chromium-")
    try:
        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                profile,
                executable_path=chromium_path,
                headless=True,
                args=CHROMIUM_ARGS,
                viewport=VIEWPORT,
                timeout=60_000,
            )
            try:
                context.set_default_timeout(DEFAULT_TIMEOUT_MS)
                context.set_default_navigation_timeout(30_000)
                context.add_init_script(RUN_TRACKER_JS)
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def new_page(browser_context):
    """Factory for fresh tabs; each records uncaught page errors in `page.errors`. All closed after the test."""
    pages = []

    def make():
        page = browser_context.new_page()
        page.errors = []
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        pages.append(page)
        return page

    yield make
    for page in pages:
        with contextlib.suppress(Exception):  # the browser may already be gone after a failure
            page.evaluate(FORGET_SIDEBAR_JS)
            page.close()


# Streamlit keeps an opened or folded sidebar in the browser's localStorage (shared by every tab of the
# context): a test that opens it would narrow the next test's page.  Every tab forgets it when it closes.
FORGET_SIDEBAR_JS = """() => Object.keys(localStorage).filter((k) => k.startsWith('stSidebarCollapsed'))
  .forEach((k) => localStorage.removeItem(k))"""


@pytest.fixture(autouse=True)
def _watchdog():
    """Fail a browser test that hangs despite the bounded waits (SIGALRM, main thread only)."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(signum, frame):
        pytest.fail(f"browser test took longer than {TEST_WATCHDOG_SECONDS} s", pytrace=False)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(TEST_WATCHDOG_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def full_page_screenshot(page, path) -> None:
    """Streamlit scrolls inside [data-testid="stMain"], not the document, so Playwright's full_page
    captures only the viewport: grow the viewport to the content height for the shot, then restore."""
    viewport = page.viewport_size
    content_height = lambda: page.evaluate(  # noqa: E731
        "() => Math.max(...['stMain', 'stAppViewContainer'].map((id) =>"
        " document.querySelector(`[data-testid=\"${id}\"]`)?.scrollHeight || 0), document.body.scrollHeight)")
    height = viewport["height"]
    for _ in range(3):  # layout may change a little with the height
        wanted = min(max(content_height(), viewport["height"]), 12_000)
        if wanted == height:
            break
        height = wanted
        page.set_viewport_size({"width": viewport["width"], "height": height})
        page.wait_for_timeout(300)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(viewport)
