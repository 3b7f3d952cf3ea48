"""The class server's watchdog: restarts a Streamlit worker that has hung (deploy/class-server.sh).

A supervisor event listener (run by supervisord's own Python, for its `supervisor.childutils`).  On
every TICK_5 event it asks each running worker's `/_stcore/health` on its loopback port, all at once,
allowing each `--timeout` seconds; a worker that has not answered "ok" at `--misses` checks in a row
(so for at least (misses - 1) × 5 s + timeout) is hung, not busy: the watchdog sends it SIGKILL through
supervisord's XML-RPC interface, and supervisord, which restarts any worker that exits, starts it
again.  A worker is not asked during its first `--grace` seconds (it is still starting).

A busy worker answers its health check within a second or so even while a whole class opens its
lesson (docs/DEPLOY.md); one that is stopped (SIGSTOP), deadlocked or stuck in a call that never
returns does not answer at all.  HAProxy has already stopped sending it new visitors by then (its own
check allows 4 s); the watchdog is what brings it back.

    watchdog.py [--timeout S] [--misses N] [--grace S] GROUP:NAME=PORT ...   (supervisor's names)

Its log lines go to stderr (stdout is the event listener protocol's channel).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from supervisor import childutils

RUNNING = 20  # supervisor's ProcessStates.RUNNING


def log(message: str) -> None:
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} watchdog: {message}", file=sys.stderr, flush=True)


def answers(port: int, timeout: float) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=timeout) as response:
            return response.status == 200 and response.read(16).strip() == b"ok"
    except (OSError, ValueError):  # refused, reset, timed out
        return False


class Watchdog:
    def __init__(self, rpc, ports: dict[str, int], timeout: float, misses: int, grace: float):
        self.rpc, self.ports, self.timeout, self.misses, self.grace = rpc, ports, timeout, misses, grace
        self.missed: dict[str, tuple[int, int]] = {}  # name -> (pid, checks missed in a row)
        self.pool = ThreadPoolExecutor(max_workers=len(ports))

    def tick(self) -> None:
        now = time.time()
        every = {f"{info['group']}:{info['name']}": info for info in self.rpc.supervisor.getAllProcessInfo()}
        running = {name: info for name, info in every.items()
                   if name in self.ports and info["state"] == RUNNING and now - info["start"] >= self.grace}
        results = dict(zip(running, self.pool.map(lambda name: answers(self.ports[name], self.timeout), running),
                           strict=True))
        for name, ok in results.items():
            pid = running[name]["pid"]
            before_pid, before = self.missed.get(name, (pid, 0))
            count = 0 if ok else (before + 1 if before_pid == pid else 1)
            self.missed[name] = (pid, count)
            if count >= self.misses:
                self.restart(name, pid)

    def restart(self, name: str, pid: int) -> None:
        log(f"{name} (pid {pid}) has not answered /_stcore/health within {self.timeout:g} s at {self.misses} "
            f"checks in a row: hung; restarting it (SIGKILL, then supervisord starts it again)")
        self.missed.pop(name, None)
        try:
            self.rpc.supervisor.signalProcess(name, "KILL")
        except Exception as problem:  # it exited meanwhile; supervisord restarts it anyway
            log(f"could not signal {name}: {problem}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="watchdog.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=4.0, help="seconds a health check may take (default 4)")
    parser.add_argument("--misses", type=int, default=3, help="checks missed in a row before a restart (default 3)")
    parser.add_argument("--grace", type=float, default=20.0, help="seconds after a start without checks (default 20)")
    parser.add_argument("workers", nargs="+", metavar="NAME=PORT")
    args = parser.parse_args(argv)
    ports = {name: int(port) for name, port in (w.split("=", 1) for w in args.workers)}
    watchdog = Watchdog(childutils.getRPCInterface(os.environ), ports, args.timeout, args.misses, args.grace)
    log(f"watching {', '.join(f'{n} (port {p})' for n, p in ports.items())}: a worker that misses {args.misses} "
        f"health checks in a row ({args.timeout:g} s each, one per 5 s) is restarted")
    while True:
        headers, _ = childutils.listener.wait(sys.stdin, sys.stdout)
        try:
            if headers.get("eventname", "").startswith("TICK"):
                watchdog.tick()
        except Exception as problem:  # supervisord busy or restarting: try again at the next tick
            log(f"check failed: {type(problem).__name__}: {problem}")
        childutils.listener.ok(sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
