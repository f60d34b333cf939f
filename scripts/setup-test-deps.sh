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

# The reference MCP server the MCP tests start (SPEC.md §32), pinned, installed
# into a cache folder outside the repository; skipped (loudly) when npm is missing.
MCP_EVERYTHING_VERSION=2026.8.31
mcp_dir="${XDG_CACHE_HOME:-$HOME/.cache}/xcsh-test-deps/mcp-everything-$MCP_EVERYTHING_VERSION"
if [ -f "$mcp_dir/node_modules/@modelcontextprotocol/server-everything/package.json" ]; then
    :
elif command -v npm >/dev/null 2>&1; then
    echo "setup-test-deps: installing @modelcontextprotocol/server-everything@$MCP_EVERYTHING_VERSION into $mcp_dir"
    mkdir -p "$mcp_dir"
    npm install --prefix "$mcp_dir" --no-audit --no-fund --silent \
        "@modelcontextprotocol/server-everything@$MCP_EVERYTHING_VERSION" >/dev/null
else
    echo "setup-test-deps: npm is missing: the MCP tests that need server-everything will be skipped (required under CI=true)"
fi
if [ -f "$mcp_dir/node_modules/@modelcontextprotocol/server-everything/package.json" ]; then
    echo "setup-test-deps: server-everything $MCP_EVERYTHING_VERSION ($mcp_dir)"
fi
