"""The class server in a real browser: deploy/class-server.sh, two app.py workers behind HAProxy.

Chromium opens a page through HAProxy and is pinned to a worker by HAProxy's cookie; the page runs
over the websocket HAProxy passes through; a download made on click (by the worker that holds the
session) arrives, because the browser's request for it carries the cookie to that worker.  Then the
worker the browser is pinned to is killed: the page reconnects by itself (to the other worker, or
to the killed one once supervisord has restarted it), and a control changed then runs the page in
the new session.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest

from harness.server import SBIN_PATH, class_server_workers, streamlit_server
from tests.browser.conftest import ARTIFACTS, require_chromium
from tests.browser.test_browser import (
    assert_no_exception,
    full_page_screenshot,
    nudge_slider,
    open_page,
    runs_done,
    wait_until_settled,
)


@pytest.fixture(scope="module")
def class_server(chromium_path):
    missing = [tool for tool in ("haproxy", "supervisord") if shutil.which(tool, path=SBIN_PATH) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed; run `apt-get install -y haproxy supervisor` (as root) "
                    "or `bash scripts/test.sh`", pytrace=False)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        with streamlit_server(workers=2, log_dir=ARTIFACTS, name="class-server") as server:
            yield server
    except RuntimeError as problem:
        pytest.fail(f"deploy/class-server.sh did not start: {problem}", pytrace=False)


def pinned_worker(page, url: str) -> list[str]:
    return [c["value"] for c in page.context.cookies(url) if c["name"] == "ae_worker"]


def test_a_browser_through_haproxy_is_pinned_runs_the_page_and_downloads(class_server, new_page, screenshot_dir):
    require_chromium()
    url = class_server.url
    page = open_page(new_page, url + "/depth")
    assert_no_exception(page, "the depth page through HAProxy")
    pinned = pinned_worker(page, url)
    assert pinned in (["w0"], ["w1"]), f"HAProxy did not pin the browser: {page.context.cookies(url)}"
    full_page_screenshot(page, screenshot_dir / "class-server-depth.png")

    with page.expect_download(timeout=30_000) as download:
        page.get_by_role("button", name="Download the curves (CSV)").click()
    text = Path(download.value.path()).read_text()
    lines = text.splitlines()
    assert len(lines) > 10 and "layer" in lines[0], text[:300]

    second = open_page(new_page, url + "/")  # another tab of the same browser: same worker
    assert pinned_worker(second, url) == pinned
    assert_no_exception(second, "the home page through HAProxy")


def test_the_page_reconnects_when_its_worker_is_killed(class_server, new_page, screenshot_dir):
    require_chromium()
    url = class_server.url
    page = open_page(new_page, url + "/depth")
    [worker] = pinned_worker(page, url)
    # Streamlit's front end notices the closed websocket and opens a new one through HAProxy, which
    # sends it to a live worker (the other one, or this one once supervisord has restarted it).
    with page.expect_websocket(timeout=20_000) as reconnected:
        os.kill(class_server_workers(class_server.process.pid)[worker], signal.SIGKILL)
    assert reconnected.value.url.endswith("/_stcore/stream")
    # The page keeps what it showed; the next change of a control runs in the new session.
    before = runs_done(page)
    assert nudge_slider(page, 0), "the first slider did not move"
    wait_until_settled(page, before, "a control changed after the worker was killed")
    assert_no_exception(page, "the depth page after its worker was killed")
    assert pinned_worker(page, url) in (["w0"], ["w1"])
    full_page_screenshot(page, screenshot_dir / "class-server-reconnected.png")
