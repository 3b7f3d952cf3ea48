"""Beyond one machine: deploy/compose.yaml (+ deploy/compose/haproxy.cfg) and deploy/k8s/.

There is no container engine or cluster here, so neither is started.  What is checked instead:

* the compose file and the manifests parse, and what they say fits together (the command, the port,
  the shared cookie secret, the health checks, the cookie affinity, labels and selectors, the files
  the kustomization lists);
* the compose file's HAProxy configuration passes `haproxy -c`, and it *works*: the real HAProxy
  runs it on 127.0.0.1 with two worker_app.py replicas on 127.0.0.3 and 127.0.0.4, which it finds
  through a small DNS server standing in for Docker's (the one change to the file: the addresses
  of that server and of the listening socket).  New sessions spread over both replicas, each is
  pinned by HAProxy's dynamic cookie, a download is served only by its replica, and Streamlit's
  scripts reach a client that accepts gzip gzipped.

Not run here (docs/DEPLOY.md says so too): `docker compose up`, a Swarm stack, `kubectl apply` and
the ingress-nginx controller's cookie affinity.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from harness.apptest import run_async
from harness.balancer import assert_scripts_gzipped, get, visit
from harness.server import ROOT, SBIN_PATH, free_port, stop, tail, wait_healthy

COMPOSE = ROOT / "deploy" / "compose.yaml"
COMPOSE_HAPROXY = ROOT / "deploy" / "compose" / "haproxy.cfg"
K8S = ROOT / "deploy" / "k8s"
REPLICAS = ("127.0.0.3", "127.0.0.4")


def haproxy() -> str:
    import shutil

    path = shutil.which("haproxy", path=SBIN_PATH)
    if path is None:
        pytest.fail("haproxy is not installed: `apt-get install -y haproxy` (as root), or run `bash scripts/test.sh`",
                    pytrace=False)
    return path


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_the_compose_file_runs_replicas_with_one_secret_behind_haproxy():
    services = compose()["services"]
    app, balancer = services["app"], services["balancer"]
    assert app["command"][:5] == ["python", "-m", "streamlit", "run", "app.py"]
    port = app["command"][app["command"].index("--server.port") + 1]
    assert app["expose"] == [port] and app["deploy"]["replicas"] >= 2
    assert app["environment"]["STREAMLIT_SERVER_COOKIE_SECRET"].startswith("${COOKIE_SECRET:?"), \
        "every replica must get the same secret, and compose must refuse to start without one"
    assert balancer["command"][0] == "haproxy"
    config = balancer["command"][balancer["command"].index("-f") + 1]
    assert config == "/app/" + COMPOSE_HAPROXY.relative_to(ROOT).as_posix(), "the image has the repository at /app"
    assert balancer["environment"]["APP_PORT"] == port and balancer["environment"]["APP_HOST"].endswith(":-app}")
    assert balancer["ports"] == ["${PORT:-8501}:8080"] and "bind :8080" in COMPOSE_HAPROXY.read_text()
    assert balancer["depends_on"] == ["app"]
    assert app["build"] == balancer["build"] and app["image"] == balancer["image"]


def test_the_compose_haproxy_configuration_is_valid():
    result = subprocess.run([haproxy(), "-c", "-f", str(COMPOSE_HAPROXY)], capture_output=True, text=True,
                            timeout=30, env=dict(os.environ, APP_HOST="app", APP_PORT="8501"))
    assert result.returncode == 0, result.stdout + result.stderr
    text = COMPOSE_HAPROXY.read_text()
    for line in ("balance leastconn", "option httpchk GET /_stcore/health", "option redispatch 1",
                 "retry-on conn-failure empty-response response-timeout", "fall 1 rise 2",
                 "timeout http-request", "timeout tunnel", "tcp-request connection track-sc0 src",
                 "http-request deny if { path,url_dec -m reg -i ^/+_stcore/+metrics }",
                 "nameserver dns 127.0.0.11:53"):
        assert line in text, line
    assert "shutdown-sessions" not in text, "a slow health check must not cut a busy replica's sessions"


class FakeDockerDns:
    """Answers every A query with REPLICAS (AAAA and others with no answer), on 127.0.0.1 over UDP,
    as Docker's DNS answers a service name with its replicas' addresses."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.queries = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> FakeDockerDns:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        self.thread.join(5)
        self.sock.close()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                query, client = self.sock.recvfrom(4096)
            except TimeoutError:
                continue
            with contextlib.suppress(Exception):
                self.sock.sendto(self.answer(query), client)

    def answer(self, query: bytes) -> bytes:
        self.queries += 1
        ident = query[:2]
        end = 12
        while query[end]:  # the question's name: labels up to the empty one
            end += query[end] + 1
        qtype = struct.unpack("!H", query[end + 1:end + 3])[0]
        question = query[12:end + 5]
        records = b""
        count = 0
        if qtype == 1:  # A
            for address in REPLICAS:
                records += struct.pack("!HHHIH", 0xC00C, 1, 1, 5, 4) + socket.inet_aton(address)
                count += 1
        return ident + struct.pack("!HHHHH", 0x8180, 1, count, 0, 0) + question + records


@pytest.fixture(scope="module")
def compose_balancer(tmp_path_factory):
    """The compose file's HAProxy configuration, run on 127.0.0.1 in front of two worker_app.py
    replicas (one on 127.0.0.3, one on 127.0.0.4, the same port, as replicas in containers)."""
    executable = haproxy()
    logs = tmp_path_factory.mktemp("compose-balancer")
    exclude: set[int] = set()
    while True:
        port = free_port(exclude)
        exclude.add(port)
        with contextlib.ExitStack() as probes:
            try:
                for address in REPLICAS:
                    probe = probes.enter_context(socket.socket())
                    probe.bind((address, port))
                break
            except OSError:
                continue
    front = free_port(exclude | {port})
    processes = []
    try:
        for index, address in enumerate(REPLICAS):
            with open(logs / f"replica-{index}.log", "w") as out:
                processes.append(subprocess.Popen(
                    [sys.executable, "-m", "streamlit", "run", "harness/worker_app.py", "--server.address",
                     address, "--server.port", str(port), "--server.headless", "true",
                     "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                    cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True))
        for index, (address, process) in enumerate(zip(REPLICAS, processes, strict=True)):
            wait_healthy(f"http://{address}:{port}", process, 90, logs / f"replica-{index}.log")
        with FakeDockerDns() as dns:
            text = COMPOSE_HAPROXY.read_text()
            assert "bind :8080" in text and "nameserver dns 127.0.0.11:53" in text
            config = logs / "haproxy.cfg"
            config.write_text(text.replace("bind :8080", f"bind 127.0.0.1:{front}")
                              .replace("nameserver dns 127.0.0.11:53", f"nameserver dns 127.0.0.1:{dns.port}"))
            log = logs / "haproxy.log"
            with open(log, "w") as out:
                processes.append(subprocess.Popen(
                    [executable, "-db", "-f", str(config)], stdout=out, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, start_new_session=True,
                    env=dict(os.environ, APP_HOST="app", APP_PORT=str(port))))
            url = f"http://127.0.0.1:{front}"
            deadline = time.monotonic() + 20
            while not all(f"app/app-{i} changed its IP" in log.read_text() for i in (1, 2)):  # both found
                if time.monotonic() > deadline or processes[-1].poll() is not None:
                    pytest.fail(f"HAProxy did not bring up both replicas in 20 s:\n{tail(log)}", pytrace=False)
                time.sleep(0.2)
            yield url, processes[:2], dns
    finally:
        for process in reversed(processes):
            stop(process)


def test_the_compose_balancer_finds_the_replicas_spreads_and_pins_sessions(compose_balancer):
    url, replicas, dns = compose_balancer
    assert dns.queries > 0, "HAProxy found the replicas through the DNS server"

    async def two_at_once():
        first = await visit(url, keep_open=True)
        try:
            return first[:3], await visit(url)
        finally:
            await first[3].close()

    first, second = run_async(two_at_once())
    cookies = {first[0], second[0]}
    assert len(cookies) == 2 and None not in cookies, f"two new sessions, one replica each: {cookies}"
    assert {first[1], second[1]} == {process.pid for process in replicas}
    for cookie, pid, download in (first, second):
        assert run_async(visit(url, cookie))[:2] == (None, pid), "a browser with its cookie stays on its replica"
        assert get(url + download, cookie)[:2] == (200, f"made by {pid}")
        other = (cookies - {cookie}).pop()
        assert get(url + download, other)[0] == 404
    assert get(url + "/_stcore/metrics")[0] == 403, "Streamlit's metrics are not for the public"


def _k8s(name: str) -> dict:
    return yaml.safe_load((K8S / name).read_text())


def test_the_compose_balancer_gzips_streamlits_scripts(compose_balancer):
    assert_scripts_gzipped(compose_balancer[0])


def test_the_kubernetes_manifests_fit_together():
    kustomization = _k8s("kustomization.yaml")
    assert sorted(kustomization["resources"]) == sorted(p.name for p in K8S.glob("*.yaml")
                                                         if p.name != "kustomization.yaml")
    deployment, service, ingress = _k8s("deployment.yaml"), _k8s("service.yaml"), _k8s("ingress.yaml")
    assert (deployment["kind"], service["kind"], ingress["kind"]) == ("Deployment", "Service", "Ingress")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["selector"].items() <= labels.items()
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"].split(":")[0] == kustomization["images"][0]["name"]
    command = container["command"]
    assert command[:5] == ["python", "-m", "streamlit", "run", "app.py"]
    [port] = container["ports"]
    assert int(command[command.index("--server.port") + 1]) == port["containerPort"]
    assert service["spec"]["ports"][0]["targetPort"] == port["name"]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/_stcore/health", "port": port["name"]}, probe
    secret = {e["name"]: e for e in container["env"]}["STREAMLIT_SERVER_COOKIE_SECRET"]
    assert secret["valueFrom"]["secretKeyRef"]["key"] == "cookie-secret", "one secret for every replica"
    assert deployment["spec"]["replicas"] >= 2

    annotations = ingress["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert annotations["nginx.ingress.kubernetes.io/session-cookie-name"] == "ae_worker"
    assert int(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600, "websockets stay open"
    [rule] = ingress["spec"]["rules"]
    backend = rule["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": service["metadata"]["name"], "port": {"name": service["spec"]["ports"][0]["name"]}}


def test_the_image_holds_what_the_balancer_and_the_class_server_need():
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert not {"deploy", "deploy/", "deploy/compose"} & ignored
    assert Path(ROOT / "deploy" / "class-server.sh").stat().st_mode & 0o111
