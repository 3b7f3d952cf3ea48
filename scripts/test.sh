#!/usr/bin/env bash
# The one test command: installs what the tests need, then runs pytest with the given arguments.
#   bash scripts/test.sh                  # the whole suite (in two phases: see the end)
#   bash scripts/test.sh tests/browser -q # only the browser tests
# Creates .venv (python3) if missing, installs requirements-test.txt into it, installs Debian's
# Chromium for the browser tests and HAProxy and supervisor for the class-server tests when they are
# missing (as root), and exits with pytest's status.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-python3}"
VENV=.venv
CHROMIUM=/usr/bin/chromium

if [ ! -x "$VENV/bin/python" ]; then
    echo "test.sh: creating $VENV with $("$PYTHON" --version 2>&1)"
    "$PYTHON" -m venv "$VENV"
fi

# Pinned versions: about a second when everything is already installed.  --retries 1: as in the
# README's install command (requirements.txt adds PyTorch's CPU index; see the README).
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --retries 1 -r requirements-test.txt

if [ ! -x "$CHROMIUM" ]; then
    if [ "$(id -u)" -eq 0 ]; then
        echo "test.sh: installing Debian's chromium for the browser tests"
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
    else
        echo "test.sh: the browser tests need Chromium at $CHROMIUM. Install it as root:" >&2
        echo "    sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y chromium" >&2
        exit 1
    fi
fi

# deploy/class-server.sh (tests/system/test_class_server.py and the browser and deploy tests) runs
# Debian's HAProxy and supervisor.
missing=()
PATH="$PATH:/usr/sbin:/sbin" command -v haproxy >/dev/null 2>&1 || missing+=(haproxy)
command -v supervisord >/dev/null 2>&1 || missing+=(supervisor)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ]; then
        echo "test.sh: installing Debian's ${missing[*]} for the class-server tests"
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
    else
        echo "test.sh: the class-server tests need ${missing[*]}. Install as root:" >&2
        echo "    sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y haproxy supervisor" >&2
        exit 1
    fi
fi

# With a test path among the arguments: pytest on what they name, as given.  Without one, the whole
# suite in three phases: the unit and page tests (CPU only: no server, no browser, nothing timed) on
# two workers at once (pytest-xdist); the browser tests on two workers, a test at a time to each (each
# worker its own app server and Chromium: bounded waits, nothing timed); then the system tests and
# the class-server browser test (load, faults, timing: HAProxy, supervisor) one at a time, with the
# machine to themselves.  A --junitxml report covers all three.
named=0
for arg in "$@"; do
    [ -e "${arg%%::*}" ] && named=1
done
if [ "$named" -eq 1 ]; then
    status=0
    "$VENV/bin/python" -m pytest "$@" || status=$?
    exit "$status"
fi

junit=""
for arg in "$@"; do
    case "$arg" in --junitxml=*) junit="${arg#--junitxml=}" ;; esac
done
[ -n "$junit" ] && rm -f "$junit" "$junit".{parallel,browser,serial}.xml
phase_args() {  # $1: the phase's name; the arguments, with a --junitxml report written per phase
    for arg in "${@:2}"; do
        case "$arg" in
            --junitxml=*) echo "--junitxml=$junit.$1.xml" ;;
            *) echo "$arg" ;;
        esac
    done
}
mapfile -t parallel < <(phase_args parallel "$@")
mapfile -t serial < <(phase_args serial "$@")
mapfile -t browsers < <(phase_args browser "$@")
statuses=()
phase() {  # run pytest with the arguments given, record its exit status
    local status=0
    "$VENV/bin/python" -m pytest "$@" || status=$?
    statuses+=("$status")
}
phase -n 2 "${parallel[@]}" tests/unit tests/pages
phase -n 2 "${browsers[@]}" tests/browser --ignore=tests/browser/test_class_server_browser.py
phase "${serial[@]}" tests/system tests/browser/test_class_server_browser.py
if [ -n "$junit" ]; then
    "$VENV/bin/python" scripts/merge_junit.py "$junit" "$junit.parallel.xml" "$junit.browser.xml" "$junit.serial.xml"
    rm -f "$junit.parallel.xml" "$junit.browser.xml" "$junit.serial.xml"
fi
# pytest's 5 is "no test collected": a phase that a -k or -m left empty is not a failure if another ran.
status=5
for phase in "${statuses[@]}"; do
    if [ "$phase" -ne 0 ] && [ "$phase" -ne 5 ]; then
        echo "test.sh: pytest exit statuses of the three phases: ${statuses[*]}"
        exit "$phase"
    fi
    [ "$phase" -eq 0 ] && status=0
done
exit "$status"
