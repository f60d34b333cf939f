#!/usr/bin/env bash
# Installs what the test suite needs beyond Rust: tmux (the interactive-mode test
# drives xcsh in a real terminal) and Arize Phoenix (the traces test's backend,
# scripts/phoenix.sh). Idempotent; run by .ci/run before the tests.
set -euo pipefail

missing=()
command -v tmux >/dev/null 2>&1 || missing+=(tmux)

if [ ${#missing[@]} -gt 0 ]; then
    echo "setup-test-deps: installing ${missing[*]}"
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
echo "setup-test-deps: tmux $(tmux -V | cut -d' ' -f2)"
"$(dirname "$0")/phoenix.sh" setup
