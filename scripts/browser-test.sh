#!/usr/bin/env bash
# The HTML export in a real browser (headless Chromium: Debian's, driven by
# playwright-core), in two scenarios, each a session made by the real xcsh binary
# (faux provider) and exported with `xcsh export --format html`:
#   branches  a session with two branches: checks that the tree and the branch list
#             show both, clicks the other branch, checks that the conversation
#             changed to it, clicks a tree node to switch back.
#   markdown  an answer in Markdown with every construct the page renders, XSS
#             attempts in the answer and in a tool result, a 2,000-line tool result,
#             a long paste and long reasoning: checks the rendered elements (a
#             heading, a table cell, a code block), that the long texts are folded
#             and unfold whole, and that no attempt made an element with an event
#             handler, a `javascript:` link, an image or a script, nor an alert.
# Each checks that the page made no network request and threw no error, and saves
# screenshots under target/test-artifacts/.
#
# usage: scripts/browser-test.sh [branches|markdown]  run a scenario (default
#                                           branches; installs what is missing)
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

# One setup at a time: the scenarios run as parallel tests.
mkdir -p "$work"
if command -v flock >/dev/null; then
    exec 9>"$work/setup.lock"
    flock 9
fi
setup
if command -v flock >/dev/null; then
    flock -u 9
fi
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
scenario=${1:-branches}

# What both scenarios' scripts share (written whole, then renamed: the scenarios run
# at once).
cat >"$work/open-page.mjs.$$" <<'JS'
import { chromium } from "playwright-core";
export const fail = (msg) => { console.error("browser-test: FAIL: " + msg); process.exit(1); };
// The page in headless Chromium, every request but for a file refused and recorded,
// every error and dialog (dismissed) recorded; `done` fails on any, then closes.
export async function open(page_path) {
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
  const dialogs = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("dialog", (d) => { dialogs.push(d.type() + ": " + d.message()); d.dismiss(); });
  await page.goto("file://" + page_path);
  const done = async () => {
    if (requests.length) fail("the page asked the network for " + requests.join(", "));
    if (errors.length) fail("the page threw: " + errors.join("; "));
    if (dialogs.length) fail("the page opened dialogs: " + dialogs.join("; "));
    await browser.close();
  };
  return { page, done };
}
JS
mv -f "$work/open-page.mjs.$$" "$work/open-page.mjs"

# Exports the workspace's session to target/test-artifacts/NAME.html and runs the
# page checks on stdin (node, with `page`, `done`, `fail` and `shots` at hand) on it.
check_page() {
    local name=$1 session page
    session=$(find "$XCSH_HOME/sessions" -name '*.jsonl' | head -1)
    page="$artifacts/$name.html"
    # `export -o` never overwrites: the page of an earlier run goes first.
    rm -f "$page"
    "$bin" export "$session" --format html -o "$page"
    {
        printf '%s\n' 'import { open, fail } from "./open-page.mjs";' \
            'const [page_path, shots] = process.argv.slice(2);' \
            'const { page, done } = await open(page_path);'
        cat
    } >"$work/$name.mjs"
    NODE_PATH="$work/node_modules" node "$work/$name.mjs" "$page" "$artifacts"
}

branches() {
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
check_page export-branched <<'JS'
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
await done();
console.log("browser-test: ok: 2 branches, switched by a click on a branch and on a tree node; screenshots in " + shots);
JS
}

markdown() {
cat >"$tmp/answer.md" <<'MD'
# Heading 1

Intro with **bold**, *italic*, `inline code`, ~~struck~~, snake_case_name, a
[link](https://example.com/docs?a=1&b=2) and https://example.org/bare.

## Heading 2

- bullet one
- bullet two
  - nested bullet
    - deeper bullet

1. first
2. second
   1. nested numbered

> A block quote with *emphasis*.

| Name | Count |
|:-----|------:|
| alpha | 1 |
| beta | 22 |

```rust
fn main() {
    println!("<b>not bold</b>");
}
```

---

Attempts: <img src=x onerror=alert(1)> <script>alert(2)</script>
[x](javascript:alert(3)) [y](data:text/html,<script>alert(4)</script>) [z]( JAVASCRIPT:alert(5) )
![i](https://example.com/a.png) <javascript:alert(6)> [q](https://example.com/" onmouseover="alert(7))
MD
# The faux script, JSON-encoded by node (which the test needs anyway).
node -e '
const fs = require("fs");
const [md, out] = process.argv.slice(1);
const reasoning = Array.from({ length: 100 }, (_, i) => `reasoning line ${i + 1}`).join("\n");
const bash = (command) => ({ name: "bash", arguments: { command } });
fs.writeFileSync(out, [
  { text: "Counting.", reasoning, tool_calls: [bash("seq 2000"),
    bash("printf \"%s\\n\" \"</script><script>alert(8)</script>\" \"<img src=x onerror=alert(9)>\"")] },
  { text: fs.readFileSync(md, "utf8") },
].map((s) => JSON.stringify(s) + "\n").join(""));
' "$tmp/answer.md" "$tmp/md.jsonl"
(cd "$tmp/work" && "$bin" run --tools standard --permissions yolo --script "$tmp/md.jsonl" \
    "a paste:
$(seq -f 'pasted line %g' 60)" >/dev/null 2>&1)
check_page export-markdown <<'JS'
await page.waitForSelector("#conversation .item.assistant");
const md = "#conversation .item.assistant .body.md";
const text = (sel) => page.$$eval(sel, (es) => es.map((e) => e.textContent));
// The Markdown, rendered as elements.
const want = async (sel, has) => {
  const found = await text(sel);
  if (!found.some((t) => t.includes(has))) fail(`no ${sel} with ${JSON.stringify(has)}: ${JSON.stringify(found)}`);
};
for (const [sel, has] of [
  ["h1", "Heading 1"], ["h2", "Heading 2"], ["strong", "bold"], ["em", "italic"],
  ["p code", "inline code"], ["ul ul ul li", "deeper bullet"], ["ol ol li", "nested numbered"],
  ["blockquote em", "emphasis"], ["table th", "Count"], ["table td", "22"],
  ["pre code.language-rust", 'println!("<b>not bold</b>");'],
  ["hr + p", "Attempts: <img src=x onerror=alert(1)>"],
  ['a[href="https://example.com/docs?a=1&b=2"][rel="noopener noreferrer"]', "link"],
]) await want(md + " " + sel, has);
const raw = await page.textContent(md);
for (const t of ["# Heading", "| alpha", "**bold**", "```"]) if (raw.includes(t)) fail("shown raw: " + t);
// The XSS attempts: none made an element that acts.
const bad = await page.evaluate(() => {
  const out = [];
  for (const e of document.querySelectorAll("*")) {
    for (const a of e.attributes) {
      const v = a.value.trim().toLowerCase();
      if (a.name.startsWith("on")) out.push(`${e.tagName} ${a.name}`);
      if (["href", "src", "action", "formaction", "xlink:href"].includes(a.name) && !/^https?:/.test(v))
        out.push(`${e.tagName} ${a.name}=${a.value}`);
    }
  }
  for (const e of document.querySelectorAll("img, iframe, object, embed, form, svg, math, base, meta[http-equiv]"))
    out.push("element " + e.tagName);
  const scripts = document.querySelectorAll("script");
  if (scripts.length !== 2) out.push(`${scripts.length} script elements`);
  return out;
});
if (bad.length) fail("the session's content made live markup: " + bad.join("; "));
const links = await page.$$eval("#conversation a", (as) => as.map((a) => a.getAttribute("href")));
if (links.some((h) => !/^https?:\/\//.test(h))) fail("a link that is not http(s): " + links.join(" "));
await want("#conversation .item.result .body", "</script><script>alert(8)</script>");
await want(md + " .link", "x (javascript:alert(3))");
// The 2,000-line result folded: its first and last lines, the rest behind a click.
const result = "#conversation .item.result:has(.folded)";
const fold = result + " .body.folded";
await want(fold + " details.fold > summary", "1,964 more lines");
const shown = await page.innerText(fold);
if (!shown.includes("\n17\n") || !shown.includes("\n2000\n") || shown.includes("\n1000\n"))
  fail("the folded result does not show its ends only: " + shown);
const whole = await page.$eval(fold, (e) =>
  [...e.querySelectorAll(".fold-head, .fold-middle, .fold-tail")].map((p) => p.textContent).join(""));
for (let n = 1; n <= 2000; n++) if (!whole.includes(`\n${n}\n`)) fail(`the page lost line ${n}`);
const tall = (await page.locator(result).boundingBox()).height;
if (tall > 1000) fail(`the folded result is ${tall} px tall`);
await want("#conversation .item.user .body.folded summary", "21 more lines");
await want("#conversation .item.assistant .reasoning.folded summary", "60 more lines");
await page.screenshot({ path: shots + "/export-markdown.png", fullPage: true });
await page.click(fold + " summary");
if (!(await page.innerText(fold)).includes("\n1000\n")) fail("the fold did not open to the whole result");
if ((await page.locator(result).boundingBox()).height < 10 * tall) fail("the opened result is not whole");
await page.locator(result).screenshot({ path: shots + "/export-markdown-unfolded.png" });
await done();
console.log("browser-test: ok: markdown rendered, XSS attempts inert, long texts folded; screenshots in " + shots);
JS
}

case "$scenario" in
    branches) branches ;;
    markdown) markdown ;;
    *) echo "browser-test: no scenario $scenario (branches, markdown)" >&2; exit 2 ;;
esac
