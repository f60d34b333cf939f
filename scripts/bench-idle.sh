#!/usr/bin/env bash
# Idle CPU of a waiting xcsh: the terminal UI (and the plain mode, for reference) in
# tmux at its prompt, nothing typed; CPU time (utime + stime from /proc) used over
# SECONDS seconds (default 10). Prints one line per mode: `idle-cpu MODE: T ms over
# S s (P %)`.
#
# usage: scripts/bench-idle.sh [SECONDS]     XCSH_BIN: the binary (default: release build)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-10}
bin=${XCSH_BIN:+$(realpath "$XCSH_BIN")}
if [ -z "$bin" ]; then
    cargo build --quiet --release --manifest-path "$root/Cargo.toml" --bin xcsh
    bin="$root/target/release/xcsh"
fi
tmp=$(mktemp -d)
sock="xcsh-idle-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/ws"
tck=$(getconf CLK_TCK)

cpu_ms() { # utime + stime of pid $1, in ms
    awk -v t="$tck" '{ sub(/^[^)]*\) /, ""); print int(($12 + $13) * 1000 / t) }' "/proc/$1/stat"
}

for mode in tui plain; do
    flag=""
    [ "$mode" = plain ] && flag="--plain"
    tmux -L "$sock" new-session -d -s "$mode" -x 120 -y 40 -c "$tmp/ws" \
        "exec env XCSH_HOME=$tmp/home $bin --script $root/fixtures/scripts/demo.jsonl $flag"
    for _ in $(seq 1 100); do
        tmux -L "$sock" capture-pane -p -t "$mode" | grep -q "commands" && break
        sleep 0.1
    done
    pid=$(tmux -L "$sock" display -p -t "$mode" '#{pane_pid}')
    before=$(cpu_ms "$pid")
    sleep "$secs"
    after=$(cpu_ms "$pid")
    used=$((after - before))
    awk -v m="$mode" -v u="$used" -v s="$secs" 'BEGIN { printf "idle-cpu %s: %d ms over %d s (%.2f %%)\n", m, u, s, u / (s * 10) }'
done
