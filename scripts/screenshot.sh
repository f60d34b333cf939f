#!/usr/bin/env bash
# The README's screenshot of the terminal UI: a real session (the xcsh binary, the
# faux provider playing fixtures/scripts/tui-demo.jsonl, the real tools in a scratch
# workspace) in a real terminal (tmux, 100x34), captured with its colours
# (capture-pane -e) while the edit waits for approval and after the answer, turned
# into HTML (a small ANSI-to-HTML step below) and into PNGs by headless Chromium.
#
# usage: scripts/screenshot.sh      writes docs/tui-approval.png, docs/tui-answer.png
#                                   and docs/tui-answer.txt (the plain text)
# Needs tmux and chromium (scripts/setup-test-deps.sh, scripts/browser-test.sh --setup).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cargo build --quiet --manifest-path "$root/Cargo.toml" --bin xcsh
bin="$root/target/debug/xcsh"
out="$root/docs"
mkdir -p "$out"
tmp=$(mktemp -d)
sock="xcsh-shot-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/ws" "$tmp/home"
cat > "$tmp/ws/greet.rs" <<'RS'
/// The greeting for `name`.
pub fn greet(name: &str) -> String {
    format!("Hello!")
}
RS
git -C "$tmp/ws" init -q

tmux -L "$sock" new-session -d -s t -x 100 -y 34 -c "$tmp/ws" \
    "XCSH_HOME=$tmp/home $bin --script $root/fixtures/scripts/tui-demo.jsonl --permissions ask"
tmux -L "$sock" set-option -t t remain-on-exit on >/dev/null

wait_for() {
    for _ in $(seq 1 300); do
        if tmux -L "$sock" capture-pane -p -t t | grep -qF -- "$1"; then
            return 0
        fi
        sleep 0.1
    done
    echo "screenshot: waited for '$1'; the screen:" >&2
    tmux -L "$sock" capture-pane -p -t t >&2
    exit 1
}

wait_for "commands"
tmux -L "$sock" send-keys -t t -l "make greet use the name it is given"
tmux -L "$sock" send-keys -t t Enter
wait_for "allow edit"
tmux -L "$sock" capture-pane -p -e -t t > "$tmp/approval.ansi"
tmux -L "$sock" send-keys -t t y
wait_for "allow bash"
tmux -L "$sock" send-keys -t t y
wait_for "─ done"
tmux -L "$sock" capture-pane -p -e -t t > "$tmp/answer.ansi"
tmux -L "$sock" capture-pane -p -t t | sed -e 's/[[:space:]]*$//' | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' > "$out/tui-answer.txt"
tmux -L "$sock" send-keys -t t C-d

# ANSI (SGR only: what capture-pane -e writes) to HTML.
to_html() {
    python3 - "$1" "$2" <<'PY'
import html, re, sys
src, dst = sys.argv[1], sys.argv[2]
base = ["#1d1f21", "#cc6666", "#b5bd68", "#f0c674", "#81a2be", "#b294bb", "#8abeb7", "#c5c8c6"]
bright = ["#666666", "#d54e53", "#b9ca4a", "#e7c547", "#7aa6da", "#c397d8", "#70c0b1", "#eaeaea"]
def c256(n):
    if n < 8: return base[n]
    if n < 16: return bright[n - 8]
    if n < 232:
        n -= 16; r, g, b = n // 36, (n // 6) % 6, n % 6
        f = lambda v: 0 if v == 0 else 55 + 40 * v
        return "#%02x%02x%02x" % (f(r), f(g), f(b))
    v = 8 + 10 * (n - 232); return "#%02x%02x%02x" % (v, v, v)
state = {}
out = []
def style():
    s = []
    fg, bg = state.get("fg"), state.get("bg")
    if state.get("rev"): fg, bg = bg or "#1d1f21", fg or "#c5c8c6"
    if fg: s.append("color:" + fg)
    if bg: s.append("background:" + bg)
    if state.get("bold"): s.append("font-weight:bold")
    if state.get("dim"): s.append("opacity:0.6")
    if state.get("italic"): s.append("font-style:italic")
    if state.get("under"): s.append("text-decoration:underline")
    return ";".join(s)
def sgr(params):
    ps = [int(p) if p else 0 for p in params.split(";")] if params else [0]
    i = 0
    while i < len(ps):
        p = ps[i]
        if p == 0: state.clear()
        elif p == 1: state["bold"] = True
        elif p == 2: state["dim"] = True
        elif p == 3: state["italic"] = True
        elif p == 4: state["under"] = True
        elif p == 7: state["rev"] = True
        elif p == 22: state.pop("bold", None); state.pop("dim", None)
        elif p == 23: state.pop("italic", None)
        elif p == 24: state.pop("under", None)
        elif p == 27: state.pop("rev", None)
        elif 30 <= p <= 37: state["fg"] = base[p - 30]
        elif p == 39: state.pop("fg", None)
        elif 40 <= p <= 47: state["bg"] = base[p - 40]
        elif p == 49: state.pop("bg", None)
        elif 90 <= p <= 97: state["fg"] = bright[p - 90]
        elif p in (38, 48) and i + 1 < len(ps):
            key = "fg" if p == 38 else "bg"
            if ps[i + 1] == 5 and i + 2 < len(ps): state[key] = c256(ps[i + 2]); i += 2
            elif ps[i + 1] == 2 and i + 4 < len(ps): state[key] = "#%02x%02x%02x" % tuple(ps[i + 2:i + 5]); i += 4
        i += 1
text = open(src, encoding="utf-8").read().rstrip("\n")
for part in re.split(r"(\x1b\[[0-9;]*m)", text):
    m = re.fullmatch(r"\x1b\[([0-9;]*)m", part)
    if m: sgr(m.group(1)); continue
    if part: out.append('<span style="%s">%s</span>' % (style(), html.escape(part)))
page = """<!doctype html><meta charset="utf-8"><style>
body{margin:0;background:#1d1f21}
pre{margin:0;padding:14px 18px;color:#c5c8c6;font:14px/1.3 'DejaVu Sans Mono','Liberation Mono',monospace}
</style><pre>%s</pre>""" % "".join(out)
open(dst, "w", encoding="utf-8").write(page)
PY
}

for shot in approval answer; do
    to_html "$tmp/$shot.ansi" "$tmp/$shot.html"
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --window-size=900,640 --screenshot="$out/tui-$shot.png" "file://$tmp/$shot.html" 2>/dev/null
done
echo "screenshot: docs/tui-approval.png docs/tui-answer.png docs/tui-answer.txt"
