#!/usr/bin/env bash
# The one test command: installs what the tests need, then runs pytest with the given arguments.
#   bash scripts/test.sh                  # the whole suite
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

status=0
"$VENV/bin/python" -m pytest "$@" || status=$?
exit "$status"
