"""The server the README starts (`streamlit run app.py` in the repository, its venv in `.venv`) runs
no file watcher.

Streamlit's watcher watches the app's folder recursively, and the README's venv lives in that folder:
every page a browser opens reads Streamlit's static files from `.venv`, the watcher's queue
overflows and it walks all those files again (what that costs a first visit: benchmarks/RESULTS.md,
"The README's server").  `.streamlit/config.toml` turns the watcher off.

What is checked is the running process: an inotify instance among its open files is a watcher.  The
same server started with `--server.fileWatcherType auto` must have one, so the check can see a
watcher when there is one.  Only loopback flags are added to the README's command (port, address,
headless), none about watching.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import pytest

from harness.apptest import run_async
from harness.server import streamlit_server
from harness.wsclient import open_session


def inotify_instances(pid: int) -> int:
    """How many inotify instances the process has open."""
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):  # closed meanwhile
            count += os.readlink(fd) == "anon_inode:inotify"
    return count


def watchers_after_a_visit(options: dict[str, str], tmp_path: Path) -> int:
    with streamlit_server(options=options, as_typed=True, name="test-readme", log_dir=tmp_path) as server:
        run_async(_visit(server.url))  # Streamlit starts watching with a session's first run
        time.sleep(1.0)
        return inotify_instances(server.process.pid)


async def _visit(url: str) -> None:
    session, first = await open_session(url, "")
    await session.close()
    assert first.ok, "the home page ran"


@pytest.mark.parametrize(("options", "watchers"), [({}, 0), ({"server.fileWatcherType": "auto"}, 1)],
                         ids=["as-the-readme-says", "watcher-asked-for"])
def test_the_readme_server_watches_no_files(options, watchers, tmp_path):
    found = watchers_after_a_visit(options, tmp_path)
    if watchers:
        assert found >= 1, "a server asked to watch files has an inotify instance (the check can see one)"
    else:
        assert found == 0, f"the README's server watches files ({found} inotify instance(s)): see config.toml"
