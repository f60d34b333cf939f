#!/usr/bin/env bash
# The side-by-side harness of issue 19: xcsh, pi and Codex, each against the project's
# own mock model (scripts/mock-model.py: pi on Chat Completions, Codex on Responses,
# xcsh on Chat Completions with --provider openai), over N tool steps (the model asks
# for `echo step K` through the agent's shell tool N times, then answers with a text)
# and a resume (a second prompt continuing the session of the largest N, one more step),
# RUNS reps each, interleaved. Per run: the gap per step (between consecutive model
# requests, from the mock's monotonic receive stamps), the time from the agent's spawn
# to its first model request, peak RSS (/usr/bin/time %M) and CPU, the bytes its session
# folder grew by; and the floor measured in the same run: a bare `bash -c 'echo step 1'`
# spawn (median of many) plus the mock's serve time per request. Prints one table (the
# medians) and the ratios issue 19 asks for, each met or missed, and writes JSON.
# Not part of CI; figures come from a run on a quiet machine (the load is printed).
#
# pi (@mariozechner/pi-coding-agent) and Codex (@openai/codex) are installed from npm
# into ${XDG_CACHE_HOME:-$HOME/.cache}/xcsh-agents (scripts/agents.sh), not the repo.
# The mock and every agent run inside a network namespace with only loopback
# (`unshare -rn`) when the kernel allows it, else on the host's 127.0.0.1 (said in the
# output). Each run gets a fresh temporary HOME, workspace and session folder.
#
# Usage: scripts/bench-peers.sh [--quick] [--json FILE]
#   --quick      N = 1 and 10, 1 rep (a smoke run)
#   --json FILE  where the JSON goes (default target/bench-peers/results.json)
# Environment: RUNS (reps, default 3), STEPS (default "1 10 50"), AGENTS (default
# "xcsh pi codex"), XCSH_BIN (default target/release/xcsh, built if missing),
# XCSH_SANDBOX (xcsh's --sandbox, default off: the peers run unsandboxed too),
# FLOOR_REPS (bare bash spawns for the floor, default 200), KEEP_WORK=1 (keep the
# agents' folders and output; they are kept anyway when a run fails), NO_NETNS=1 (no
# network namespace even where one is possible).
# Needs: node/npm (Node 20+), python3, bash, GNU time; util-linux unshare and iproute2 ip for the
# namespace.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
. "$REPO/scripts/agents.sh"

log() { echo "bench-peers: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

QUICK=()
JSON=$REPO/target/bench-peers/results.json
while [ $# -gt 0 ]; do
    case $1 in
    --quick) QUICK=(--quick) ;;
    --json)
        [ $# -ge 2 ] || die "--json needs a file"
        JSON=$2
        shift
        ;;
    --json=*) JSON=${1#--json=} ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *) die "unknown argument '$1' (--quick, --json FILE, --help)" ;;
    esac
    shift
done
case $JSON in /*) ;; *) JSON=$PWD/$JSON ;; esac

command -v python3 >/dev/null 2>&1 || die "python3 is needed"
command -v bash >/dev/null 2>&1 || die "bash is needed"
[ -x /usr/bin/time ] || die "GNU time is needed at /usr/bin/time (apt-get install time)"

agents=${AGENTS:-xcsh pi codex}
versions="{"
PI=
CODEX=
CODEX_ROOT=
XCSH=
for a in $agents; do
    case $a in
    pi)
        agents_install pi "$PI_PKG" || die "could not install $PI_PKG"
        PI=$AGENTS_CACHE/pi/node_modules/.bin/pi
        versions+="\"pi\": \"$PI_PKG\", "
        ;;
    codex)
        agents_install codex "$CODEX_PKG" || die "could not install $CODEX_PKG"
        # The native binary the npm launcher (bin/codex.js) runs.
        case $(uname -m) in
        x86_64) triple=x86_64-unknown-linux-musl pkg=codex-linux-x64 ;;
        aarch64) triple=aarch64-unknown-linux-musl pkg=codex-linux-arm64 ;;
        *) die "Codex: no native binary for $(uname -m)" ;;
        esac
        CODEX=$AGENTS_CACHE/codex/node_modules/@openai/$pkg/vendor/$triple/bin/codex
        CODEX_ROOT=$AGENTS_CACHE/codex/node_modules/@openai/codex
        [ -x "$CODEX" ] || die "Codex: no native binary at $CODEX (reinstall: rm -r $AGENTS_CACHE/codex)"
        versions+="\"codex\": \"$CODEX_PKG\", "
        ;;
    xcsh)
        if [ -n "${XCSH_BIN:-}" ]; then
            XCSH=$XCSH_BIN
        else
            XCSH=$REPO/target/release/xcsh
            if [ ! -x "$XCSH" ]; then
                log "building xcsh (release)"
                (cd "$REPO" && nice -n 10 cargo build --release --bin xcsh) >&2
            fi
        fi
        [ -x "$XCSH" ] || die "no xcsh binary at $XCSH (XCSH_BIN)"
        versions+="\"xcsh\": \"$("$XCSH" --version 2>/dev/null | head -n 1) ($XCSH)\", "
        ;;
    *) die "AGENTS: unknown agent '$a' (xcsh, pi, codex)" ;;
    esac
done
versions="${versions%, }}"
[ -n "$PI" ] || PI=none
[ -n "$CODEX" ] || CODEX=none
[ -n "$XCSH" ] || XCSH=none

args=(--repo "$REPO" --xcsh "$XCSH" --pi "$PI" --codex "$CODEX"
    --codex-package-root "$CODEX_ROOT" --json "$JSON" --versions "$versions" "${QUICK[@]}")
PY=$(command -v python3)
if [ "${NO_NETNS:-}" != 1 ] && command -v unshare >/dev/null 2>&1 &&
    command -v ip >/dev/null 2>&1 && unshare -rn ip link set lo up 2>/dev/null; then
    exec unshare -rn sh -c 'ip link set lo up && exec "$@"' sh "$PY" "$REPO/scripts/bench_peers.py" \
        --network "a network namespace with only loopback (unshare -rn): mock and agents on its 127.0.0.1" \
        "${args[@]}"
fi
why="unshare -rn is not available here"
[ "${NO_NETNS:-}" != 1 ] || why="NO_NETNS=1"
command -v unshare >/dev/null 2>&1 || why="no unshare (util-linux)"
command -v ip >/dev/null 2>&1 || why="no ip (iproute2) to bring up the namespace's loopback"
log "NOTE: $why: the mock listens on the host's 127.0.0.1"
exec "$PY" "$REPO/scripts/bench_peers.py" \
    --network "the host's 127.0.0.1 ($why; no namespace)" "${args[@]}"
