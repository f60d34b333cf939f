#!/usr/bin/env bash
# The HTML export in a real browser: makes a session with two branches (the real
# xcsh binary, faux provider), exports it with `xcsh export --format html`, opens the
# file in headless Chromium (Debian's, driven by playwright-core), checks that the
# tree and the branch list show both branches, clicks the other branch, checks that
# the conversation changed to it, clicks a tree node to switch back, checks that the
# page made no network request and threw no error, and saves screenshots under
# target/test-artifacts/.
#
# usage: scripts/browser-test.sh            run the test (installs what is missing)
#        scripts/browser-test.sh --setup    only install: Debian's chromium (and node
#                                           and npm if missing), playwright-core into
#                                           target/browser-test/node_modules
# XCSH_BIN: the xcsh binary to use (default: cargo build, target/debug/xcsh).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work="$root/target/browser-test"
artifacts="$root/target/test-artifacts"
chromium=/usr/bin/chromium

apt_install() {
    if [ "$(id -u)" != 0 ]; then
        echo "browser-test: $* missing and not root; install it: apt-get install $*" >&2
        exit 1
    fi
    if [ -z "${apt_updated:-}" ]; then
        apt-get update -qq
        apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

setup() {
    [ -x "$chromium" ] || apt_install chromium
    command -v node >/dev/null || apt_install nodejs
    command -v npm >/dev/null || apt_install npm
    if [ ! -f "$work/node_modules/playwright-core/package.json" ]; then
        mkdir -p "$work"
        npm install --prefix "$work" --no-save --no-audit --no-fund --loglevel=error \
            playwright-core@1 >/dev/null
    fi
}

setup
if [ "${1:-}" = "--setup" ]; then
    echo "browser-test: chromium $("$chromium" --version 2>/dev/null | awk '{print $2}'), playwright-core $(node -p "require('$work/node_modules/playwright-core/package.json').version")"
    exit 0
fi

bin=${XCSH_BIN:-}
if [ -z "$bin" ]; then
    cargo build --quiet --manifest-path "$root/Cargo.toml" --bin xcsh
    bin="$root/target/debug/xcsh"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XCSH_HOME="$tmp/home"
mkdir -p "$tmp/work" "$artifacts"
printf '%s\n' '{"text":"working on it","tool_calls":[{"name":"echo","arguments":{"step":"one"}}]}' \
    '{"text":"the first task is done"}' >"$tmp/first.jsonl"
printf '%s\n' '{"text":"the second task is done"}' >"$tmp/second.jsonl"
printf '%s\n' '{"text":"the alternative is done"}' >"$tmp/instead.jsonl"
run() { (cd "$tmp/work" && "$bin" run --tools test "$@" >/dev/null 2>&1); }
run --script "$tmp/first.jsonl" -p "first task"
run --continue --script "$tmp/second.jsonl" -p "second task"
session=$(find "$XCSH_HOME/sessions" -name '*.jsonl' | head -1)
# Entries: 0 session, 1 prompt … 7 step, 8 run_finished; then the second run.
run --resume "$session" --at 8 --script "$tmp/instead.jsonl" -p "instead, another task"
page="$artifacts/export-branched.html"
# `export -o` never overwrites: the page of an earlier run goes first.
rm -f "$page"
"$bin" export "$session" --format html -o "$page"

cat >"$work/click.mjs" <<'JS'
import { chromium } from "playwright-core";
const [page_path, shots] = process.argv.slice(2);
const fail = (msg) => { console.error("browser-test: FAIL: " + msg); process.exit(1); };
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
const requests = [];
await context.route("**/*", (route) => {
  const url = route.request().url();
  if (url.startsWith("file:")) return route.continue();
  requests.push(url);
  return route.abort();
});
const page = await context.newPage();
const errors = [];
page.on("pageerror", (e) => errors.push(String(e)));
await page.goto("file://" + page_path);
await page.waitForSelector("button.branch");
const branches = await page.$$eval("button.branch", (bs) =>
  bs.map((b) => ({ leaf: b.dataset.leaf, text: b.textContent, selected: b.classList.contains("selected") })));
if (branches.length !== 2) fail("expected 2 branches, got " + JSON.stringify(branches));
const tree = await page.textContent("#tree");
for (const t of ["second task", "instead, another task"]) {
  if (!tree.includes(t)) fail("the tree does not show " + t + ": " + tree);
}
const before = await page.textContent("#conversation");
if (!before.includes("instead, another task") || before.includes("second task"))
  fail("the recorded leaf's branch is not shown first: " + before);
await page.screenshot({ path: shots + "/export-branch-leaf.png", fullPage: true });
await page.click("button.branch:not(.selected)");
const after = await page.textContent("#conversation");
if (after === before) fail("the conversation did not change on a click");
if (!after.includes("second task") || after.includes("instead, another task"))
  fail("the other branch's conversation is not shown: " + after);
await page.screenshot({ path: shots + "/export-branch-switched.png", fullPage: true });
// A click on a tree node of the first branch switches back.
await page.click('#tree .node:has-text("instead, another task")');
const back = await page.textContent("#conversation");
if (!back.includes("instead, another task")) fail("a click in the tree did not switch back: " + back);
if (requests.length) fail("the page asked the network for " + requests.join(", "));
if (errors.length) fail("the page threw: " + errors.join("; "));
await browser.close();
console.log("browser-test: ok: 2 branches, switched by a click on a branch and on a tree node; screenshots in " + shots);
JS
NODE_PATH="$work/node_modules" node "$work/click.mjs" "$page" "$artifacts"
