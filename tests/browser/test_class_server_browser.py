"""The production server in a real browser: serve.py with two Streamlit workers behind its balancer.

Chromium opens a page through the balancer and is pinned to a worker by its cookie; the page runs
over the websocket the balancer passes through; a download made on click (by the worker that holds
the session) arrives, because the browser's request for it carries the cookie to that worker.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.conftest import ARTIFACTS, require_chromium
from tests.browser.test_browser import assert_no_exception, full_page_screenshot, open_page
from tests.support.server import streamlit_server


@pytest.fixture(scope="module")
def serve_url(chromium_path):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        with streamlit_server(workers=2, log_dir=ARTIFACTS, name="serve") as server:
            yield server.url
    except RuntimeError as problem:
        pytest.fail(f"serve.py did not start: {problem}", pytrace=False)


def test_a_browser_through_the_balancer_is_pinned_runs_the_page_and_downloads(serve_url, new_page, screenshot_dir):
    require_chromium()
    page = open_page(new_page, serve_url + "/depth")
    assert_no_exception(page, "the depth page through serve.py")
    pinned = [c["value"] for c in page.context.cookies(serve_url) if c["name"] == "ae_worker"]
    assert pinned in (["0"], ["1"]), f"the balancer did not pin the browser: {page.context.cookies(serve_url)}"
    full_page_screenshot(page, screenshot_dir / "serve-depth.png")

    with page.expect_download(timeout=30_000) as download:
        page.get_by_role("button", name="Download the curves (CSV)").click()
    text = Path(download.value.path()).read_text()
    lines = text.splitlines()
    assert len(lines) > 10 and "layer" in lines[0], text[:300]

    second = open_page(new_page, serve_url + "/")  # another tab of the same browser: same worker
    assert [c["value"] for c in second.context.cookies(serve_url) if c["name"] == "ae_worker"] == pinned
    assert_no_exception(second, "the home page through serve.py")
