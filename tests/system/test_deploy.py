"""The deployment files: the production profile and the Dockerfile (requirements: test_install.py).

There is no container engine here, so the image is not built.  What is checked instead:

* every option of .streamlit/production.toml exists in the installed Streamlit and takes its value;
* the Dockerfile's build context (the project minus .dockerignore) holds everything the app needs:
  a copy of it, with production.toml as its config.toml as the Dockerfile does, is started with the
  Dockerfile's command (deploy/class-server.sh: two workers behind HAProxy, on 127.0.0.1), answers
  the Dockerfile's HEALTHCHECK command, serves every page without an exception, and refuses a
  websocket whose Host is not allowed;
* the image installs HAProxy and supervisor, which that command needs.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from explorer.serve.catalog import PAGES
from harness.apptest import run_async
from harness.server import ROOT, class_server_workers, free_port, process_tree, stop, wait_healthy
from harness.wsclient import Session

PRODUCTION = ROOT / ".streamlit" / "production.toml"


def production_options() -> dict[str, object]:
    data = tomllib.loads(PRODUCTION.read_text())
    return {f"{section}.{key}": value for section, values in data.items() for key, value in values.items()}


def test_every_production_option_exists_in_this_streamlit_and_takes_its_value():
    from streamlit import config

    config.get_config_options()
    known = config._config_options
    options = production_options()
    unknown = sorted(set(options) - set(known))
    assert not unknown, f"not options of Streamlit {__import__('streamlit').__version__}: {unknown}"
    required = {
        "server.fileWatcherType": "none", "server.runOnSave": False, "client.showErrorDetails": "type",
        "client.toolbarMode": "viewer", "server.enableXsrfProtection": True, "server.enableCORS": True,
        "browser.gatherUsageStats": False,
    }
    for name, value in required.items():
        assert options.get(name) == value, f"{name} should be {value!r} in production, is {options.get(name)!r}"
    assert options.get("server.allowedHosts"), "production must list the allowed hosts"
    assert options["server.maxUploadSize"] <= 10 and options["server.maxMessageSize"] <= 50
    for name, value in options.items():
        assert isinstance(value, type(known[name].default_val)) or known[name].default_val is None, (
            f"{name} = {value!r} does not have the type of its default {known[name].default_val!r}")


def test_production_draws_the_pages_in_the_colours_of_development():
    """The theme (a red dark enough for WCAG AA's 4.5:1: explorer/kit/present.py) is the same in both
    profiles: the Dockerfile replaces config.toml by production.toml."""
    development = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    production = tomllib.loads(PRODUCTION.read_text())
    assert development.get("theme") and development.get("theme") == production.get("theme")


def dockerfile() -> str:
    return (ROOT / "Dockerfile").read_text()


def test_dockerfile_uses_python_311_the_requirements_the_production_profile_and_a_health_check():
    text = dockerfile()
    assert re.search(r"^FROM python:3\.11", text, re.M)
    assert "COPY requirements.txt ./" in text and "pip install -r requirements.txt" in text
    assert "cp .streamlit/production.toml .streamlit/config.toml" in text
    assert re.search(r"^HEALTHCHECK .*", text, re.M) and "/_stcore/health" in text
    assert re.search(r"^USER ", text, re.M), "the app should not run as root"
    assert "MALLOC_ARENA_MAX=2" in text, "bounded malloc arenas (see benchmarks/RESULTS.md, memory)"
    assert "MALLOC_MMAP_THRESHOLD_" not in text, "a fixed mmap threshold costs ~20 % CPU on heavy reruns (issue 15)"
    install = re.search(r"^RUN apt-get update.*?apt-get install (.+?)(?:&&|$)", text, re.M | re.S)
    assert install and {"haproxy", "supervisor"} <= set(install.group(1).split()), "the class server needs both"


def build_context(target: Path) -> Path:
    """Copy the project as `docker build .` would send it (minus .dockerignore), then apply the
    Dockerfile's config step."""
    patterns = [p.strip() for p in (ROOT / ".dockerignore").read_text().splitlines()
                if p.strip() and not p.startswith("#")]

    def ignored(relative: str) -> bool:
        parts = relative.split("/")
        for pattern in patterns:
            bare = pattern.removeprefix("**/")
            if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(parts[-1], bare) or parts[0] == pattern:
                return True
        return False

    for path in sorted(ROOT.rglob("*")):
        relative = path.relative_to(ROOT).as_posix()
        if path.is_dir() or ignored(relative) or any(ignored("/".join(relative.split("/")[:i + 1]))
                                                     for i in range(relative.count("/"))):
            continue
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, destination)
    shutil.copy2(target / ".streamlit" / "production.toml", target / ".streamlit" / "config.toml")
    return target


def healthcheck_command() -> str:
    match = re.search(r"HEALTHCHECK .*?CMD (python -c .+?)$", dockerfile(), re.S | re.M)
    assert match, "no HEALTHCHECK ... CMD python -c ... line"
    return match.group(1)


def container_command() -> list[str]:
    """The Dockerfile's CMD (exec form), bound to 127.0.0.1 instead of every address."""
    match = re.search(r"^CMD (\[.+\])$", dockerfile(), re.M)
    assert match, "no exec-form `CMD [...]` line"
    command = json.loads(match.group(1))
    assert command[:2] == ["bash", "deploy/class-server.sh"], command
    return [*command, "--address", "127.0.0.1"]


@pytest.fixture(scope="module")
def container(tmp_path_factory):
    """The build context started with the Dockerfile's command (loopback only), as in the image."""
    context = build_context(tmp_path_factory.mktemp("image") / "app")
    port = free_port()
    log = context / "server.log"
    # Two workers behind HAProxy, as on a 2-core host: the checks below go through it.  The workers run
    # this interpreter (in the image: the image's python3).
    env = dict(os.environ, PORT=str(port), PYTHONUNBUFFERED="1", EXPLORER_WORKERS="2", PYTHON=sys.executable)
    with open(log, "a") as out:  # append: supervisord's programs write to the same file
        process = subprocess.Popen(container_command(), cwd=context, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", process, 90, log)
        yield context, port, env, process
    finally:
        stop(process)


def test_the_image_contents_pass_the_dockerfile_health_check(container):
    context, _, env, _ = container
    assert not (context / "tests").exists() and not (context / ".venv").exists()
    command = shlex.split(healthcheck_command())
    result = subprocess.run([sys.executable, *command[1:]], env=env, cwd=context, timeout=30, capture_output=True)
    assert result.returncode == 0, result.stderr.decode()


def test_the_image_contents_serve_every_page_with_the_production_profile(container):
    _, port, _, process = container
    assert sorted(class_server_workers(process.pid)) == ["w0", "w1"], "two Streamlit workers"
    commands = [Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0] for pid in process_tree(process.pid)]
    assert b"haproxy" in commands, commands

    async def visit():
        problems = []
        for info in PAGES:
            session = Session(f"http://127.0.0.1:{port}", info.url_path)
            await session.connect()
            try:
                result = await session.rerun()
                for run in [result, *await session.follow_ups()]:  # and the sections under the key figure
                    if not run.ok:
                        problems.append(f"{info.url_path or 'home'}: {run.status} {run.exceptions}")
            finally:
                await session.close()
        return problems

    assert run_async(visit()) == []


async def websocket_with_host(port: int, host: str) -> str:
    """Open the app's websocket on 127.0.0.1 with `host` in the Host header; how did it go?"""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        async with connect(f"ws://{host}:{port}/_stcore/stream", sock=sock, subprotocols=["streamlit"],
                           open_timeout=10, close_timeout=2) as ws:
            try:
                await asyncio.wait_for(ws.recv(), 3)
            except TimeoutError:
                return "open"  # accepted: the server waits for the client's first message
            except ConnectionClosed as closed:
                return f"closed {closed.rcvd.code if closed.rcvd else None}"
            return "open"
    except InvalidStatus as refused:
        return f"refused {refused.response.status_code}"


def test_the_production_profile_refuses_a_websocket_from_a_host_not_allowed(container):
    _, port, _, _ = container
    # Streamlit closes before accepting (policy violation), which the handshake reports as HTTP 403.
    assert run_async(websocket_with_host(port, "attacker.example")) in ("refused 403", "closed 1008")
    assert run_async(websocket_with_host(port, "someone-attention-explorer.hf.space")) == "open"
    assert run_async(websocket_with_host(port, "127.0.0.1")) == "open"
