#!/usr/bin/env bash
# Serve Attention Explorer to a class: N Streamlit workers behind HAProxy on one port.
#
#   deploy/class-server.sh --port 8501 --workers 2          # foreground; Ctrl-C or SIGTERM stops all
#   deploy/class-server.sh --port 8501 -- --server.maxMessageSize 10   # flags after -- go to every worker
#
# A Streamlit process runs every session's script in threads of one Python process, so it computes
# on one core.  This starts N `streamlit run app.py` workers on loopback ports, with the production
# profile's settings (.streamlit/production.toml, as flags), under Debian's supervisor (which
# restarts a worker that dies; its event listener deploy/watchdog.py, one that hangs) and HAProxy on
# the public port (which keeps each browser on its worker with a cookie, sends new browsers to the
# worker with the fewest connections, passes over a worker that stops answering its health check
# and limits what one client address may hold).  Configurations and logs live in a temporary
# directory, removed on exit; every log is followed onto this script's stdout.
# Needs: apt-get install haproxy supervisor   (docs/DEPLOY.md, "Serving a class")
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
COOKIE=ae_worker
START_TIMEOUT_S=120
MAXCONN_CAP=4096    # HAProxy holds two 16 kB buffers per connection: at most ~130 MB at the cap

usage() {
    cat <<EOF
usage: deploy/class-server.sh [--port P] [--workers N] [--address A] [--app SCRIPT]
                              [--per-source C] [--profile FILE] [-- STREAMLIT FLAGS...]
  --port P         public port (default: \$PORT or 8501)
  --workers N      Streamlit workers, 1-32 (default: \$EXPLORER_WORKERS or one per core: $(cores))
  --address A      address HAProxy listens on (default: 0.0.0.0)
  --app SCRIPT     the Streamlit script, relative to the repository (default: app.py)
  --per-source C   connections one client address may hold at once (default: a quarter of
                   HAProxy's maxconn, which follows from ulimit -n)
  --profile FILE   Streamlit settings for every worker, given to it as flags (default:
                   .streamlit/production.toml; "none": only .streamlit/config.toml, for development)
  --check          print the generated HAProxy and supervisor configurations and exit
Flags after -- are passed to every \`streamlit run\`, after the profile's (a value there wins, a list
item is added: -- --server.allowedHosts class.example.org, the host browsers use).  Environment:
PYTHON (the interpreter of the workers; default .venv/bin/python if present, else python3);
CLASS_SERVER_EXTRA_PATH (searched for haproxy and supervisord after PATH; default /usr/sbin:/sbin).
EOF
}

# The cores this process may use: nproc (CPU affinity), and no more than a container's CPU quota
# (cgroup v2 cpu.max, v1 cfs_quota_us), which nproc does not see.
cores() {
    local n quota period
    n="$(nproc)"
    if [ -r /sys/fs/cgroup/cpu.max ]; then
        read -r quota period < /sys/fs/cgroup/cpu.max || true
    elif [ -r /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] && [ -r /sys/fs/cgroup/cpu/cpu.cfs_period_us ]; then
        quota="$(< /sys/fs/cgroup/cpu/cpu.cfs_quota_us)"
        period="$(< /sys/fs/cgroup/cpu/cpu.cfs_period_us)"
    fi
    if [[ "${quota:-}" =~ ^[0-9]+$ ]] && [[ "${period:-}" =~ ^[0-9]+$ ]] && [ "$period" -gt 0 ]; then
        quota=$(( (quota + period - 1) / period ))
        [ "$quota" -lt "$n" ] && n=$quota
    fi
    echo "$(( n > 0 ? n : 1 ))"
}

say() { echo "class-server: $*" >&2; }
die() { say "$*"; exit 1; }

PORT_ARG="${PORT:-8501}"
WORKERS="${EXPLORER_WORKERS:-$(cores)}"
ADDRESS=0.0.0.0
APP=app.py
PROFILE="$ROOT/.streamlit/production.toml"
PER_SOURCE=""
CHECK=""
EXTRA=()
while [ $# -gt 0 ]; do
    case "$1" in
        --port) PORT_ARG="${2:?--port needs a value}"; shift 2 ;;
        --port=*) PORT_ARG="${1#*=}"; shift ;;
        --workers) WORKERS="${2:?--workers needs a value}"; shift 2 ;;
        --workers=*) WORKERS="${1#*=}"; shift ;;
        --address) ADDRESS="${2:?--address needs a value}"; shift 2 ;;
        --address=*) ADDRESS="${1#*=}"; shift ;;
        --app) APP="${2:?--app needs a value}"; shift 2 ;;
        --app=*) APP="${1#*=}"; shift ;;
        --per-source) PER_SOURCE="${2:?--per-source needs a value}"; shift 2 ;;
        --per-source=*) PER_SOURCE="${1#*=}"; shift ;;
        --profile) PROFILE="${2:?--profile needs a value}"; shift 2 ;;
        --profile=*) PROFILE="${1#*=}"; shift ;;
        --check) CHECK=1; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; EXTRA=("$@"); break ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[[ "$PORT_ARG" =~ ^[0-9]+$ ]] && [ "$PORT_ARG" -ge 1 ] && [ "$PORT_ARG" -le 65535 ] || die "--port must be 1-65535"
[[ "$WORKERS" =~ ^[0-9]+$ ]] && [ "$WORKERS" -ge 1 ] && [ "$WORKERS" -le 32 ] || die "--workers must be 1-32"
[ -f "$ROOT/$APP" ] || die "no such app: $ROOT/$APP"

# Debian installs haproxy in /usr/sbin, which a user's PATH may lack.
export PATH="$PATH:${CLASS_SERVER_EXTRA_PATH-/usr/sbin:/sbin}"
missing=()
command -v haproxy >/dev/null 2>&1 || missing+=(haproxy)
command -v supervisord >/dev/null 2>&1 || missing+=(supervisor)
if [ ${#missing[@]} -gt 0 ]; then
    say "${missing[*]} not found. Install with:"
    say "    sudo apt-get update && sudo apt-get install -y haproxy supervisor"
    exit 127
fi

if [ -n "${PYTHON:-}" ]; then
    :
elif [ -x "$ROOT/.venv/bin/python" ]; then
    PYTHON="$ROOT/.venv/bin/python"
else
    PYTHON=python3
fi
"$PYTHON" -c "import streamlit" 2>/dev/null || die "$PYTHON cannot import streamlit (set PYTHON, or install requirements.txt)"

# The production profile, as flags for every worker: a worker reads .streamlit/config.toml (the local
# profile: file watcher on, full error details), which flags override.
PROFILE_FLAGS=()
if [ "$PROFILE" != none ]; then
    profile_text="$("$PYTHON" "$ROOT/deploy/profile_flags.py" "$PROFILE")" || die "cannot use the profile $PROFILE"
    [ -z "$profile_text" ] || readarray -t PROFILE_FLAGS <<< "$profile_text"
fi

# The watchdog runs with supervisord's own Python (the interpreter of its script), which has
# supervisor's library.
read -r -a SUPERVISOR_PYTHON <<< "$(sed -n '1s/^#! *//p' "$(command -v supervisord)")"
[ ${#SUPERVISOR_PYTHON[@]} -gt 0 ] && "${SUPERVISOR_PYTHON[@]}" -c "import supervisor.childutils" 2>/dev/null \
    || die "supervisord's interpreter (${SUPERVISOR_PYTHON[*]:-none}) cannot import supervisor: the watchdog needs it"

# --- limits ----------------------------------------------------------------------------------------
# HAProxy uses two descriptors per proxied connection (client and worker) plus a few of its own;
# maxconn stays within what the soft limit allows, raised to the hard limit first where possible.
hard="$(ulimit -Hn)"
if [ "$hard" = unlimited ] || [ "$hard" -gt 65536 ]; then hard=65536; fi
[ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$hard" ] && ulimit -n "$hard" 2>/dev/null || true
nofile="$(ulimit -n)"
[ "$nofile" = unlimited ] && nofile=65536
MAXCONN=$(( (nofile - 40 - 2 * WORKERS) / 2 ))
[ "$MAXCONN" -gt "$MAXCONN_CAP" ] && MAXCONN=$MAXCONN_CAP
[ "$MAXCONN" -ge 100 ] || die "ulimit -n is $nofile: too few file descriptors (raise it to 1024 or more)"
PER_SOURCE="${PER_SOURCE:-$(( MAXCONN / 4 ))}"
[[ "$PER_SOURCE" =~ ^[0-9]+$ ]] && [ "$PER_SOURCE" -ge 1 ] || die "--per-source must be a positive number"
PER_SOURCE_RATE=$(( PER_SOURCE * 4 ))  # new connections per 10 s from one address

# --- run directory, worker ports, shared secret ---------------------------------------------------------------
RUN="$(mktemp -d "${TMPDIR:-/tmp}/class-server.XXXXXX")"
SUPERVISORD_PID=""
TAIL_PID=""
cleanup() {
    local status=$?
    trap - EXIT INT TERM
    if [ -n "$SUPERVISORD_PID" ] && kill -0 "$SUPERVISORD_PID" 2>/dev/null; then
        kill -TERM "$SUPERVISORD_PID" 2>/dev/null || true
        wait "$SUPERVISORD_PID" 2>/dev/null || true
    fi
    if [ -n "$TAIL_PID" ]; then  # the last lines, then the follower itself
        sleep 0.3
        kill "$TAIL_PID" 2>/dev/null || true
        wait "$TAIL_PID" 2>/dev/null || true
    fi
    rm -rf "$RUN"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Free loopback ports for the workers (the kernel picks them; none is the public port).
read -r -a WORKER_PORTS <<< "$("$PYTHON" - "$WORKERS" "$PORT_ARG" <<'PY'
import socket, sys
count, avoid = int(sys.argv[1]), int(sys.argv[2])
held, ports = [], []
while len(ports) < count:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    held.append(s)
    if s.getsockname()[1] != avoid:
        ports.append(s.getsockname()[1])
print(" ".join(map(str, ports)))
PY
)"

# One secret for every worker, so that cookies Streamlit signs are valid on all of them.
export STREAMLIT_SERVER_COOKIE_SECRET="${STREAMLIT_SERVER_COOKIE_SECRET:-$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')}"
# Fewer glibc malloc arenas: Streamlit runs each session's script in its own thread, and one arena per
# thread fragments memory (benchmarks/RESULTS.md).  No fixed MALLOC_MMAP_THRESHOLD_: it multiplies
# page faults on heavy reruns and did not win on both CPU and memory (docs/DEPLOY.md); the
# environment passes on to the workers, so it can still be tried.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
export PYTHONUNBUFFERED=1

# --- HAProxy --------------------------------------------------------------------------------------------------
{
    cat <<EOF
# Generated by deploy/class-server.sh; see docs/DEPLOY.md.
global
    maxconn $MAXCONN
    log stdout format iso local0 info
    quiet                          # no start-up notices
    stats socket $RUN/haproxy.sock mode 600 level admin

defaults
    mode http
    log global
    option httplog
    option dontlog-normal          # log errors, timeouts and refusals, not every request
    # A request its worker refused, dropped unanswered (it died) or left unanswered for 4 s (it hangs)
    # is sent again, to another worker (redispatch on every retry), also for a browser pinned to it.
    option redispatch 1
    retries 3
    retry-on conn-failure empty-response response-timeout
    maxconn $MAXCONN
    timeout connect 5s
    timeout http-request 10s       # a whole request head within 10 s, or the connection is closed
    timeout http-keep-alive 10s
    timeout client 60s             # an idle client
    timeout client-fin 10s
    timeout server 4s              # a worker's answer (not an open websocket's: that is the tunnel's)
    timeout tunnel 1h              # an open websocket (a browser tab) with no traffic
    timeout queue 30s
    timeout check 4s

frontend class
    bind $ADDRESS:$PORT_ARG
    # Per client address: at most $PER_SOURCE connections at once and $PER_SOURCE_RATE new ones per 10 s,
    # so that one address cannot take what the others need.
    stick-table type ipv6 size 100k expire 60s store conn_cur,conn_rate(10s)
    tcp-request connection track-sc0 src
    tcp-request connection reject if { sc0_conn_cur gt $PER_SOURCE }
    tcp-request connection reject if { sc0_conn_rate gt $PER_SOURCE_RATE }
    # Behind an HTTPS front end (e.g. a Hugging Face Space, shown in a cross-site frame) a Lax
    # cookie would be dropped by the browser: mark it for a third-party context there.
    http-request set-var(txn.https) req.hdr(x-forwarded-proto),lower
    http-after-response replace-header Set-Cookie '^($COOKIE=[^;]*;.*)SameSite=Lax(.*)$' '\1SameSite=None; Secure; Partitioned\2' if { var(txn.https) -m str https }
    # Streamlit's metrics (cache internals) are for the machine, not the public.
    http-request deny if { path,url_dec -m reg -i ^/+_stcore/+metrics }
    http-request del-header X-Forwarded-For  # the client's address to the workers, never one it wrote
    option forwardfor                        # (live training's share per client counts it)
    default_backend workers

backend workers
    balance leastconn
    # A class arrives at once and every browser fetches Streamlit's scripts (several MB), which Streamlit
    # sends uncompressed: HAProxy gzips text on the way out (libslz: stateless and fast).  The websocket
    # and the fonts are left as they are.
    compression algo gzip
    compression type application/javascript text/javascript text/css text/html text/plain application/json image/svg+xml
    # Sticky: a Streamlit session, and the URLs of its downloads, live in one worker process.
    cookie $COOKIE insert indirect nocache httponly attr SameSite=Lax
    option httpchk GET /_stcore/health
    http-check expect string ok
    # A check every second; a worker that does not answer one within 4 s gets no new visitors (within
    # 5 s of hanging) until it answers two.  Its open websockets are kept: a busy worker answers late,
    # not never (the watchdog restarts one that has hung).
    default-server check inter 1s fastinter 1s downinter 1s fall 1 rise 2
EOF
    for i in "${!WORKER_PORTS[@]}"; do
        echo "    server w$i 127.0.0.1:${WORKER_PORTS[$i]} cookie w$i"
    done
} > "$RUN/haproxy.cfg"
haproxy -c -f "$RUN/haproxy.cfg" >/dev/null || die "the generated HAProxy configuration is invalid: $RUN/haproxy.cfg"

# --- supervisor -----------------------------------------------------------------------------------------------
SUPERVISOR_PASSWORD="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
sv_quote() {  # one argument for supervisor's command= (shell-like splitting; % is its escape)
    local quoted
    quoted="$(printf '%q' "$1")"
    printf '%s' "${quoted//%/%%}"
}
{
    cat <<EOF
; Generated by deploy/class-server.sh.
[supervisord]
nodaemon=true
$([ "$(id -u)" -eq 0 ] && echo "user=root" || true)
logfile=/dev/null
logfile_maxbytes=0
loglevel=warn
pidfile=$RUN/supervisord.pid
childlogdir=$RUN

[unix_http_server]
file=$RUN/supervisor.sock
chmod=0700
username=class-server
password=$SUPERVISOR_PASSWORD

[rpcinterface:supervisor]
supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface

[supervisorctl]
serverurl=unix://$RUN/supervisor.sock
username=class-server
password=$SUPERVISOR_PASSWORD

[program:haproxy]
command=haproxy -db -f $(sv_quote "$RUN/haproxy.cfg")
autostart=false
autorestart=true
startsecs=1
priority=900
stopsignal=TERM
stopwaitsecs=5
stdout_logfile=$RUN/logs/haproxy.log
stdout_logfile_maxbytes=10MB
stdout_logfile_backups=1
redirect_stderr=true
EOF
    names=()
    for i in "${!WORKER_PORTS[@]}"; do
        command="$(sv_quote "$PYTHON") -m streamlit run $(sv_quote "$APP")"
        command+=" --server.port ${WORKER_PORTS[$i]} --server.address 127.0.0.1 --server.headless true"
        for flag in "${PROFILE_FLAGS[@]}" "${EXTRA[@]}"; do command+=" $(sv_quote "$flag")"; done
        cat <<EOF

[program:worker-$i]
command=$command
directory=$(sv_quote "$ROOT")
environment=CLASS_SERVER_WORKER="w$i",EXPLORER_TRUSTED_PROXIES="127.0.0.1"
autorestart=true
startsecs=3
startretries=20
priority=100
stopsignal=TERM
stopwaitsecs=7
stopasgroup=true
killasgroup=true
stdout_logfile=$RUN/logs/worker-$i.log
stdout_logfile_maxbytes=10MB
stdout_logfile_backups=1
redirect_stderr=true
EOF
        names+=("worker-$i")
    done
    printf '\n[group:workers]\nprograms=%s\npriority=100\n' "$(IFS=,; echo "${names[*]}")"
    watched=()
    for i in "${!WORKER_PORTS[@]}"; do watched+=("workers:worker-$i=${WORKER_PORTS[$i]}"); done
    cat <<EOF

[eventlistener:watchdog]
command=$(for word in "${SUPERVISOR_PYTHON[@]}" "$ROOT/deploy/watchdog.py" "${watched[@]}"; do printf '%s ' "$(sv_quote "$word")"; done)
events=TICK_5
environment=SUPERVISOR_USERNAME="class-server",SUPERVISOR_PASSWORD="$SUPERVISOR_PASSWORD"
autorestart=true
priority=200
stderr_logfile=$RUN/logs/watchdog.log
stderr_logfile_maxbytes=1MB
stderr_logfile_backups=1
EOF
} > "$RUN/supervisord.conf"

if [ -n "$CHECK" ]; then
    cat "$RUN/haproxy.cfg" "$RUN/supervisord.conf"
    exit 0
fi

# Every program's output goes to a file of its own in $RUN/logs (supervisord rotates them at 10 MB),
# which tail follows onto this script's stdout: unlike supervisord reopening /dev/stdout, that works
# whatever stdout is (a terminal, a pipe, a file of another user, journald's socket).
mkdir "$RUN/logs"
LOGS=("$RUN/logs/haproxy.log" "$RUN/logs/watchdog.log")
for i in "${!WORKER_PORTS[@]}"; do LOGS+=("$RUN/logs/worker-$i.log"); done
touch "${LOGS[@]}"

hosts="$(for ((k = 0; k + 1 < ${#PROFILE_FLAGS[@]}; k += 2)); do [ "${PROFILE_FLAGS[k]}" != --server.allowedHosts ] || printf '%s ' "${PROFILE_FLAGS[k + 1]}"; done)"
[ -z "$hosts" ] || say "browsers must reach it as ${hosts% } (another host name or address: -- --server.allowedHosts NAME)"
say "starting $WORKERS worker(s) of $APP on 127.0.0.1 ports ${WORKER_PORTS[*]} (maxconn $MAXCONN, ulimit -n $nofile, $PER_SOURCE per client address; run directory $RUN)"
supervisord -c "$RUN/supervisord.conf" &
SUPERVISORD_PID=$!
tail -n +1 -F --pid="$SUPERVISORD_PID" "${LOGS[@]}" &
TAIL_PID=$!

# HAProxy opens the public port once every worker answers its health check.
# (In the background, so that a SIGTERM meanwhile is handled at once.)
"$PYTHON" - "$START_TIMEOUT_S" "$SUPERVISORD_PID" "${WORKER_PORTS[@]}" <<'PY' &
import os, sys, time, urllib.request
timeout, supervisor, ports = float(sys.argv[1]), int(sys.argv[2]), [int(p) for p in sys.argv[3:]]
deadline = time.monotonic() + timeout
waiting = set(ports)
while waiting:
    try:
        os.kill(supervisor, 0)
    except OSError:
        sys.exit("class-server: supervisord exited while the workers were starting")
    for port in sorted(waiting):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    waiting.discard(port)
        except OSError:
            pass
    if waiting and time.monotonic() > deadline:
        sys.exit(f"class-server: workers on ports {sorted(waiting)} did not answer within {timeout:.0f} s")
    time.sleep(0.2)
PY
wait $! || exit 1
supervisorctl -c "$RUN/supervisord.conf" start haproxy >/dev/null || die "HAProxy did not start"
say "serving http://$ADDRESS:$PORT_ARG (HAProxy in front of $WORKERS worker(s))"

# Until supervisord ends (on SIGTERM / Ctrl-C the trap stops it and the programs it runs).
set +e
wait "$SUPERVISORD_PID"
status=$?
SUPERVISORD_PID=""
exit "$status"
