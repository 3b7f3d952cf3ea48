"""The browser tests' run counter (harness/browser_runs.py) counts exactly the runs the server
reports finished: every wait in the browser tests and benchmarks stands on it."""

from __future__ import annotations

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tests.browser.conftest import require_chromium
from tests.browser.test_browser import runs_done, wait_until_settled
from tests.browser.test_present_browser import PROJECTOR, press_when_the_clicker_listens


def test_the_counter_counts_every_run_the_server_finishes(new_page, app_url):
    """Load a lesson whose deferred section runs as a fragment, then step through it with the clicker
    (short runs, whose start and end the page may draw as one): after each gesture the page's count
    equals the script_finished messages Playwright saw on the websocket."""
    require_chromium()
    page = new_page()
    finished = []

    def read(frame) -> None:
        message = ForwardMsg.FromString(frame if isinstance(frame, bytes) else frame.encode())
        if message.WhichOneof("type") == "script_finished":
            finished.append(ForwardMsg.ScriptFinishedStatus.Name(message.script_finished))

    page.on("websocket", lambda socket: socket.on("framereceived", read))
    page.set_viewport_size(PROJECTOR)
    page.goto(f"{app_url}/depth?present=1", wait_until="domcontentloaded")
    wait_until_settled(page, 0, "loading depth")
    assert "FINISHED_SUCCESSFULLY" in finished, finished
    assert runs_done(page) == len(finished), (runs_done(page), finished)
    for key in ("PageDown", "PageDown", "PageDown", "PageUp"):  # step 1, its answer, step 2, back to 1
        before = runs_done(page)
        press_when_the_clicker_listens(page, key)
        wait_until_settled(page, before, f"pressing {key}")
        page.wait_for_timeout(300)  # Playwright's frame events reach Python a little after the page's
        assert runs_done(page) == len(finished), (key, runs_done(page), finished)
    assert "step=1" in page.url, page.url
