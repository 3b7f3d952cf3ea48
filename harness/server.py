"""Start and stop `streamlit run` servers on 127.0.0.1 for the benchmarks, and read their memory.

Each server is the leader of its own process group and is always stopped (SIGTERM, then SIGKILL)
by the context manager, also when a benchmark fails.  Ports come from PORT_RANGE only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PORT_RANGE = range(8620, 8691)
START_TIMEOUT_S = 90.0
CLASS_SERVER = ROOT / "deploy" / "class-server.sh"
# Where to look for haproxy and supervisord: Debian installs haproxy in /usr/sbin, which a user's PATH may lack.
SBIN_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])

# Flags every benchmark server gets: no browser, loopback only, no usage stats, no file watcher.
BASE_FLAGS = {
    "server.headless": "true",
    "server.address": "127.0.0.1",
    "browser.gatherUsageStats": "false",
    "server.fileWatcherType": "none",
}


def free_port(exclude: set[int] = frozenset(), *, highest_first: bool = False) -> int:
    """A free loopback port of PORT_RANGE; `highest_first` searches from the top (benchmarks run beside
    tests, which take ports from the bottom)."""
    ports = list(reversed(PORT_RANGE) if highest_first else PORT_RANGE)
    # Test workers running at once (pytest-xdist's gw0, gw1, …: scripts/test.sh) search from different
    # ports, so that two starting together do not both pick the first free one.
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")[2:]
    shift = (int(worker) * 20 if worker.isdigit() else 0) % len(ports)
    for port in ports[shift:] + ports[:shift]:
        if port in exclude:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {PORT_RANGE.start}-{PORT_RANGE.stop - 1}")


@dataclass
class Server:
    process: subprocess.Popen
    port: int
    log_path: Path
    started: float  # time.monotonic() at Popen
    ready_seconds: float  # Popen to /_stcore/health answering "ok"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def rss_mb(self) -> float:
        """Resident memory of the server process, MB (from /proc)."""
        return rss_mb(self.process.pid)


def _proc_kb_as_mb(path: str, field: str) -> float:
    """The `field:` line (in kB) of a /proc file, in MB; NaN when the process is gone."""
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def rss_mb(pid: int) -> float:
    return _proc_kb_as_mb(f"/proc/{pid}/status", "VmRSS:")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def process_tree(pid: int) -> list[int]:
    """`pid` and all its descendants (the class server: its shell, supervisord, HAProxy and the
    Streamlit workers)."""
    tree, frontier = [pid], [pid]
    while frontier:
        parent = frontier.pop()
        try:
            tasks = Path(f"/proc/{parent}/task").iterdir()
            children = [int(c) for t in tasks for c in (t / "children").read_text().split()]
        except OSError:
            children = []
        tree += children
        frontier += children
    return tree


def pss_mb(pid: int) -> float:
    """Proportional set size, MB: resident memory with pages shared between processes divided among
    them, so that the sum over several processes is the memory they take together."""
    return _proc_kb_as_mb(f"/proc/{pid}/smaps_rollup", "Pss:")


def tree_memory_mb(pid: int) -> dict:
    """Memory of a server and its worker processes: RSS summed (counts shared pages once per process)
    and PSS summed (counts them once in all)."""
    pids = process_tree(pid)
    return {"processes": len(pids), "rss": sum(rss_mb(p) for p in pids), "pss": sum(pss_mb(p) for p in pids)}


def tree_memory_by_process(pid: int) -> dict[str, float]:
    """PSS in MB of a server's processes by kind (the class server: its Streamlit workers apart from
    HAProxy, supervisord and the shell script that runs them), summed per kind."""
    kinds: dict[str, float] = {}
    for child in process_tree(pid):
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [Path(a.decode(errors="replace")).name for a in argv[:4]]
        if "streamlit" in words:
            kind = "streamlit"
        elif "supervisord" in words:
            kind = "supervisord"
        else:
            kind = words[0] if words else "?"
        kinds[kind] = round(kinds.get(kind, 0.0) + pss_mb(child), 1)
    return kinds


def tree_cpu_seconds(pid: int) -> float:
    return sum(cpu_seconds(p) for p in process_tree(pid))


def wait_healthy(url: str, process: subprocess.Popen, timeout: float, log_path: Path) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {process.returncode}; see {log_path}:\n{tail(log_path)}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200 and response.read().decode().strip() == "ok":
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} not healthy after {timeout:.0f} s; see {log_path}:\n{tail(log_path)}")
        time.sleep(0.05)


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def stop(process: subprocess.Popen) -> None:
    """SIGTERM to the process group, SIGKILL after 10 s; then SIGKILL to any descendant still there
    (the class server's workers run in process groups of their own under supervisord)."""
    if process.poll() is not None:
        return
    tree = process_tree(process.pid)[1:]
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    deadline = time.monotonic() + 5
    while (left := [p for p in tree if Path(f"/proc/{p}").exists() and not _zombie(p)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def class_server_workers(pid: int) -> dict[str, int]:
    """The class server's Streamlit workers under `pid`: {HAProxy cookie value ("w0", ...): process id},
    from the CLASS_SERVER_WORKER variable deploy/class-server.sh gives each worker."""
    workers = {}
    for child in process_tree(pid):
        try:
            environ = Path(f"/proc/{child}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        for item in environ:
            if item.startswith(b"CLASS_SERVER_WORKER="):
                workers[item.split(b"=", 1)[1].decode()] = child
    return workers


@contextlib.contextmanager
def streamlit_server(script: str = "app.py", *, options: dict[str, str] | None = None, env: dict | None = None,
                     log_dir: Path | None = None, name: str = "app", port: int | None = None,
                     exclude_ports: set[int] = frozenset(), workers: int = 0, root: Path = ROOT,
                     as_typed: bool = False) -> Iterator[Server]:
    """`streamlit run SCRIPT` on 127.0.0.1 with BASE_FLAGS and `options` (e.g. {"runner.postScriptGC":
    "false"}), from the project root; yields once /_stcore/health answers, stops it on exit.

    With `workers` > 0, the production server instead: deploy/class-server.sh with that many
    Streamlit workers behind HAProxy (the flags go to every worker; the workers run this
    interpreter); the yielded process is the script's, the root of the class server's tree.  With
    `as_typed`, none of BASE_FLAGS, only `options`: the command as the README or an operator types it
    (the single server still gets loopback, headless and its port; its `.streamlit/config.toml` rules).
    `root`: the checkout to serve (default this one; an export of another commit, to compare)."""
    log_dir = log_dir or ROOT / "test-artifacts" / "benchmark-logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    fixed, tried = port, set(exclude_ports)
    for attempt in range(1 if fixed or not workers else 3):  # the class server: another port if its was taken
        port = fixed or free_port(tried)
        tried.add(port)
        log_path = log_dir / f"{name}-{port}.log"
        if workers:
            flags = {k: v for k, v in {**({} if as_typed else BASE_FLAGS), **(options or {})}.items()
                     if k not in ("server.address", "server.headless")}
            command = ["bash", str(root / CLASS_SERVER.relative_to(ROOT)), "--port", str(port), "--address",
                       "127.0.0.1", "--workers", str(workers), "--app", script, "--"]
        else:
            base = {"server.headless": "true", "server.address": "127.0.0.1"} if as_typed else BASE_FLAGS
            flags = {**base, **(options or {}), "server.port": str(port)}
            command = [sys.executable, "-m", "streamlit", "run", script]
        for option, value in flags.items():
            command += [f"--{option}", value]
        environment = dict(os.environ, PYTHONUNBUFFERED="1", PYTHON=sys.executable, **(env or {}))
        # Append mode: the class server's programs (supervisord's children) open the same file again.
        with open(log_path, "w") as log:
            pass
        with open(log_path, "a") as log:
            started = time.monotonic()
            process = subprocess.Popen(command, cwd=root, stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, env=environment, start_new_session=True)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_healthy(url, process, START_TIMEOUT_S, log_path)
            if workers and not _class_server_serving(process, log_path, port):
                raise PortTaken(f"port {port} was taken meanwhile (a server of other work?); see {log_path}")
        except PortTaken:
            stop(process)
            if attempt == 2:
                raise
            continue
        except BaseException:
            stop(process)
            raise
        break
    try:
        yield Server(process, port, log_path, started, time.monotonic() - started)
    finally:
        stop(process)


class PortTaken(RuntimeError):
    """The class server's HAProxy could not bind its port: the port's health check was answered by
    another server on this machine."""


def _class_server_serving(process: subprocess.Popen, log_path: Path, port: int, timeout: float = 20.0) -> bool:
    """Whether the class server says it serves `port` (True), rather than exiting because HAProxy
    could not bind it (False): a health check on the port may have been answered by someone else's."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log_path.read_text(errors="replace")
        if f"serving http://127.0.0.1:{port} " in text:
            return True
        if "HAProxy did not start" in text or process.poll() is not None:
            return False
        time.sleep(0.1)
    raise RuntimeError(f"the class server on {port} did not say it serves within {timeout:.0f} s; see {log_path}")
