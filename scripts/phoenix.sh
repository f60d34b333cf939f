#!/usr/bin/env bash
# Arize Phoenix, the real OpenTelemetry backend of the traces end-to-end test
# (tests/otel_phoenix.rs): `setup` installs it (pinned) into a venv in the test-deps
# cache, `start` serves it on 127.0.0.1 on free ports with a temporary working dir and
# waits until it answers, `stop` ends it. `start` prints `export XCSH_PHOENIX_URL=...`;
# the state (pid, url, working dir) lives in $STATE so `stop` finds it.
set -euo pipefail

PHOENIX_VERSION=20.26.1
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/xcsh-test-deps/phoenix-$PHOENIX_VERSION"
VENV="$CACHE/venv"
STATE="${XCSH_PHOENIX_STATE:-${TMPDIR:-/tmp}/xcsh-phoenix.state}"

setup() {
    if [ -x "$VENV/bin/phoenix" ] && [ -f "$VENV/.installed" ]; then
        echo "phoenix: arize-phoenix $PHOENIX_VERSION already installed in $VENV" >&2
        return
    fi
    local py="${PYTHON:-python3}"
    echo "phoenix: installing arize-phoenix $PHOENIX_VERSION into $VENV" >&2
    mkdir -p "$CACHE"
    if ! "$py" -m venv "$VENV" 2>/dev/null; then
        # Debian's python3 needs its venv package for `-m venv`.
        rm -rf "$VENV"
        if [ "$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
        "$py" -m venv "$VENV"
    fi
    "$VENV/bin/pip" install -q --disable-pip-version-check "arize-phoenix==$PHOENIX_VERSION" >&2
    touch "$VENV/.installed"
}

free_port() {
    "$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

start() {
    setup
    if [ -f "$STATE" ]; then stop; fi
    local port grpc dir
    port=$(free_port)
    grpc=$(free_port)
    while [ "$grpc" = "$port" ]; do grpc=$(free_port); done
    dir=$(mktemp -d "${TMPDIR:-/tmp}/xcsh-phoenix.XXXXXX")
    PHOENIX_WORKING_DIR="$dir" PHOENIX_HOST=127.0.0.1 PHOENIX_PORT="$port" \
        PHOENIX_GRPC_PORT="$grpc" PHOENIX_TELEMETRY_ENABLED=false \
        nohup "$VENV/bin/phoenix" serve >"$dir/phoenix.log" 2>&1 </dev/null &
    local pid=$!
    local url="http://127.0.0.1:$port"
    printf 'pid=%s\nurl=%s\ndir=%s\n' "$pid" "$url" "$dir" >"$STATE"
    # Readiness: the REST API answers. Bounded: 120 s.
    local deadline=$((SECONDS + 120))
    until "$VENV/bin/python" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \
        "$url/v1/projects" 2>/dev/null; do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "phoenix: exited during start-up; its log:" >&2
            tail -n 40 "$dir/phoenix.log" >&2
            rm -f "$STATE"
            exit 1
        fi
        if [ $SECONDS -ge $deadline ]; then
            echo "phoenix: not ready after 120 s; its log:" >&2
            tail -n 40 "$dir/phoenix.log" >&2
            stop
            exit 1
        fi
        sleep 0.2
    done
    echo "phoenix: serving on $url (pid $pid, working dir $dir)" >&2
    echo "export XCSH_PHOENIX_URL=$url"
}

stop() {
    [ -f "$STATE" ] || { echo "phoenix: not running" >&2; return 0; }
    local pid dir
    pid=$(sed -n 's/^pid=//p' "$STATE")
    dir=$(sed -n 's/^dir=//p' "$STATE")
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    fi
    case "$dir" in "${TMPDIR:-/tmp}"/xcsh-phoenix.*) rm -rf "$dir" ;; esac
    rm -f "$STATE"
    echo "phoenix: stopped" >&2
}

case "${1:-}" in
    setup) setup ;;
    start) start ;;
    stop) stop ;;
    *) echo "usage: scripts/phoenix.sh setup|start|stop" >&2; exit 2 ;;
esac
