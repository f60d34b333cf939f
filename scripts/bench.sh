#!/usr/bin/env bash
# The performance figures of issue 9, in one table: builds in release mode, generates
# a 1M-entry session and a ~100 MB one (`xcsh debug gen-session`), times the commands
# on them (each figure beside its reference measured in the same run: the bare
# serde_json typed parse of the same file, jq over the same file, raw read
# throughput), measures peak RSS with /usr/bin/time, runs the divan benchmarks of the
# crates (runtime loop, appends, log, replay, inspect), and marks each target met or
# missed. Other work on the machine skews the figures: the load is printed with them.
#
# The views at scale (issue 13): every view on sessions of many branches (a run per
# branch, `gen-session --branch-per-mille 1000 --max-rounds 1`: 2.5k and 10k branches)
# and of long chains of labels (`--label-chain`: 25k and 100k), each figure beside the
# same view on the shape 4× smaller, so that the growth (4× for linear work) shows,
# and the peak RSS of `export --format json` against the file's size.
#
# Environment: RUNS (timed runs per command, median taken; default 3),
# XCSH_BENCH_WORK (where the sessions go; default target/bench-work, on the disk the
# sessions would live on), BIG_ENTRIES (default 1000000), RESUME_ENTRIES (default
# 225000, about 100 MB), SKIP_DIVAN=1 (command timings only), VIEWS_ONLY=1 (only the
# views at scale: no 1M-entry session, no resume, no divan), TUI_ONLY=1 (only the
# terminal UI's streaming benchmark), XCSH_BIN (the binary timed; default this tree's
# release build), SCALING_ONLY=1 (only the scaling table of every
# command over SCALE_SIZES, default "10000 100000 1000000", and three shapes).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-3}
WORK=${XCSH_BENCH_WORK:-$ROOT/target/bench-work}
BIG_ENTRIES=${BIG_ENTRIES:-1000000}
RESUME_ENTRIES=${RESUME_ENTRIES:-225000}
mkdir -p "$WORK"
RESULTS=$WORK/results.txt
: > "$RESULTS"

need() {
    command -v "$1" > /dev/null 2>&1 && return 0
    echo "bench: installing $2" >&2
    if [ "$(id -u)" = 0 ]; then
        (apt-get update -qq && apt-get install -y -qq "$2") > /dev/null 2>&1 || true
    else
        (sudo apt-get update -qq && sudo apt-get install -y -qq "$2") > /dev/null 2>&1 || true
    fi
    command -v "$1" > /dev/null 2>&1 || { echo "bench: $1 is missing and could not be installed" >&2; exit 1; }
}
need jq jq
[ -x /usr/bin/time ] || need /usr/bin/time time
need python3 python3

# The terminal UI's streaming renderer (issue 14): 100,000 stream deltas of a
# generated answer through xcsh-tui's MarkdownStream, frames drawn at most 60 times
# per second of a simulated clock into a 120x40 TestBackend (tui/benches/stream.rs):
# the cost per delta beside the cost of push alone and of rendering the whole answer
# at once, and the frames drawn. TUI_ONLY=1 runs only this section.
tui_section() {
    echo "bench: tui streaming (divan, tui/benches/stream.rs)" >&2
    local out=$WORK/tui.txt
    cargo bench -q -p xcsh-tui --bench stream 2> /dev/null > "$out"
    python3 - "$out" "$(cut -d' ' -f1-3 /proc/loadavg)" << 'PY'
import subprocess, sys
sys.path.insert(0, "scripts")
from bench_tables import medians, print_table
out, load = sys.argv[1:]
lines = open(out).read().splitlines()
facts = {}
for line in lines:
    parts = line.split()
    if len(parts) == 2 and parts[1].isdigit():
        facts[parts[0]] = int(parts[1])
bench = medians(lines, 2)
n = facts.get("deltas", 100000)
whole, push, render = bench.get("stream_100k_deltas_with_frames"), bench.get("push_100k_deltas"), bench.get("render_whole_answer")
if whole is None:
    sys.exit("bench: the tui benchmark printed no figure (cargo bench -p xcsh-tui --bench stream)")
per = whole / n
rows = [
    ("tui: per stream delta, frames into a 120x40 TestBackend (median)", f"{per * 1e6:.2f} µs", f"push alone {push / n * 1e6:.2f} µs" if push else "", f"{per / (push / n):.0f}× push" if push else "", "≤ 5 µs", "met" if per <= 5e-6 else "missed"),
    ("tui: frames drawn for the stream (≤ 60/s of a 0.5 ms/delta clock)", str(facts.get("frames_drawn", "?")), f"{n} deltas, {facts.get('bytes', 0) / 1e3:.0f} kB", "", "", ""),
]
nodraw, plain = bench.get("stream_100k_deltas_without_drawing"), bench.get("stream_100k_deltas_code_unhighlighted")
if nodraw:
    rows.append(("tui: per stream delta, the same frames not drawn (take + tail)", f"{nodraw / n * 1e6:.2f} µs", f"drawn {per * 1e6:.2f} µs", f"{nodraw / whole * 100:.0f}% of drawn", "", ""))
if plain:
    rows.append(("tui: per stream delta, drawn, code blocks not highlighted", f"{plain / n * 1e6:.2f} µs", f"highlighted {per * 1e6:.2f} µs", f"{(whole - plain) / whole * 100:.0f}% is highlighting", "", ""))
if "highlight_rust_block" in bench:
    rows.append(("tui: highlighter (table-driven lexer), one 10-line Rust block", f"{bench['highlight_rust_block'] * 1e6:.1f} µs", "", "", "", ""))
if render:
    rows.append(("tui: the whole answer rendered at once", f"{render * 1e3:.1f} ms", f"stream total {whole * 1e3:.0f} ms", f"{whole / render:.1f}× render", "", ""))
head = ("figure", "value", "reference (same run)", "ratio", "target", "")
print_table(head, rows)
date = subprocess.run(["date", "-u", "+%Y-%m-%d %H:%M UTC"], capture_output=True, text=True).stdout.strip()
print()
print(f"{date}; load average {load} at the end; divan medians of 5 runs (release).")
PY
    echo "bench: idle CPU of a waiting xcsh (scripts/bench-idle.sh 10)" >&2
    "$ROOT/scripts/bench-idle.sh" 10
}
if [ "${TUI_ONLY:-0}" = 1 ]; then
    tui_section
    exit 0
fi

echo "bench: building (release)" >&2
cargo build --release --bin xcsh --example parse_floor -p xcsh -p xcsh-log 2>&1 | tail -n 1 >&2
# XCSH_BIN: time another build of xcsh (an older commit's, for a before/after
# comparison) with this script and this tree's references.
X=${XCSH_BIN:-$ROOT/target/release/xcsh}
FLOOR=$ROOT/target/release/examples/parse_floor

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
VIEWS_ONLY=${VIEWS_ONLY:-0}
GEN_BIG="-: (skipped)"
GEN_MID="-: (skipped)"
BIG_BYTES=0
MID_BYTES=0

# measure NAME CMD...: RUNS timed runs (stdout discarded), wall µs and peak RSS KB.
measure() {
    local name=$1
    shift
    local i t0 t1
    for ((i = 0; i < RUNS; i++)); do
        [ -n "${BEFORE:-}" ] && eval "$BEFORE"
        t0=$(date +%s%N)
        if ! /usr/bin/time -f "%M" -o "$WORK/rss" "$@" > /dev/null 2> "$WORK/err"; then
            echo "bench: $name failed:" >&2
            cat "$WORK/err" >&2
            exit 1
        fi
        t1=$(date +%s%N)
        echo "$name $(((t1 - t0) / 1000)) $(tail -n 1 "$WORK/rss")" >> "$RESULTS"
    done
}

# The scaling table (issue 19 item 4; SCALING_ONLY=1 runs only it): every command over
# the sizes SCALE_SIZES (default 10k, 100k and 1M entries) of three shapes (a deep
# chain: gen-session's default; wide branching: a branch every run; many labels: a
# chain of labels), time per entry at each size and its growth, peak RSS at the
# largest against the file (scripts/bench_scaling.py prints the table).
scaling_section() {
    local facts=$WORK/scaling-facts.txt results=$RESULTS shape size f leaf
    : > "$facts"
    for shape in deep wide labels; do
        for size in ${SCALE_SIZES:-10000 100000 1000000}; do
            f=$WORK/scale-$shape-$size.jsonl
            rm -f "$f" "$f".*
            case $shape in
                deep) "$X" debug gen-session --entries "$size" --seed 5 -o "$f" > /dev/null ;;
                wide) "$X" debug gen-session --entries "$size" --seed 5 --branch-per-mille 1000 --max-rounds 1 -o "$f" > /dev/null ;;
                labels) "$X" debug gen-session --entries "$size" --seed 5 --label-chain $((size * 9 / 10)) -o "$f" > /dev/null ;;
            esac
            echo "$shape $size $(wc -l < "$f") $(stat -c %s "$f")" >> "$facts"
            echo "bench: scaling, $shape, $size entries" >&2
            cat "$f" > /dev/null
            local p=scale_${shape}_${size}
            BEFORE="rm -f '$f.idx'" measure "${p}_tree_no_index" "$X" tree "$f"
            leaf=$("$X" tree "$f" --json | jq .leaf)
            measure "${p}_tree" "$X" tree "$f"
            measure "${p}_tree_full" "$X" tree "$f" --full
            measure "${p}_log" "$X" log "$f"
            measure "${p}_events" "$X" events "$f"
            measure "${p}_events_tool_result" "$X" events "$f" --type tool_result --json
            measure "${p}_stats" "$X" stats "$f"
            measure "${p}_check" "$X" check "$f"
            measure "${p}_replay" "$X" replay "$f"
            # Two entries that differ: exit 1 is the answer, not a failure.
            measure "${p}_diff" bash -c '"$0" diff "$1" "$2"; [ $? -le 1 ]' "$X" "$f@$leaf" "$f@$((leaf - 10))"
            measure "${p}_export_json" "$X" export "$f" --format json
            measure "${p}_export_md" "$X" export "$f" --format md
            measure "${p}_export_html" "$X" export "$f" --format html
            rm -f "$f" "$f".*
        done
    done
    python3 "$ROOT/scripts/bench_scaling.py" "$results" "$facts" "$LOAD_START" "$(cut -d' ' -f1-3 /proc/loadavg)"
}
if [ "${SCALING_ONLY:-0}" = 1 ]; then
    scaling_section
    exit 0
fi

# The views at scale: S = the small shape, L = 4× larger.
echo "bench: views at scale (many branches, long chains of labels)" >&2
VIEWS=$WORK/views.txt
: > "$VIEWS"
for size in S L; do
    if [ $size = S ]; then entries=25000 chain=25000; else entries=100000 chain=100000; fi
    B=$WORK/branches-$size.jsonl
    C=$WORK/labels-$size.jsonl
    rm -f "$B" "$B".* "$C" "$C".*
    g=$("$X" debug gen-session --entries $entries --seed 3 --branch-per-mille 1000 --max-rounds 1 -o "$B")
    echo "branches_$size ${g#*: }" >> "$VIEWS"
    echo "branches_${size}_bytes $(stat -c %s "$B")" >> "$VIEWS"
    g=$("$X" debug gen-session --entries $((chain + 2000)) --seed 3 --label-chain $chain -o "$C")
    echo "labels_$size ${g#*: }" >> "$VIEWS"
    cat "$B" "$C" > /dev/null
    "$X" tree "$B" > /dev/null # builds the index, as a first look does
    "$X" tree "$C" > /dev/null
    LEAF=$("$X" tree "$B" --json | jq .leaf)
    measure "html_$size" "$X" export "$B" --format html
    measure "json_$size" "$X" export "$B" --format json
    measure "md_$size" "$X" export "$B" --format md
    measure "btree_$size" "$X" tree "$B"
    measure "btreefull_$size" "$X" tree "$B" --full
    measure "btreejson_$size" "$X" tree "$B" --json
    measure "blog_$size" "$X" log "$B"
    measure "bevents_$size" "$X" events "$B"
    measure "bstats_$size" "$X" stats "$B"
    measure "bcheck_$size" "$X" check "$B"
    # Two branches that differ: exit 1 is the answer, not a failure.
    measure "bdiff_$size" bash -c '"$0" diff "$1" "$2"; [ $? -le 1 ]' "$X" "$B@$LEAF" "$B@$((LEAF - 10))"
    measure "ltreefull_$size" "$X" tree "$C" --full
    measure "ltree_$size" "$X" tree "$C"
    measure "llog_$size" "$X" log "$C"
    measure "lcheck_$size" "$X" check "$C"
    measure "lhtml_$size" "$X" export "$C" --format html
    measure "ljson_$size" "$X" export "$C" --format json
done
VH=$WORK/views-home
rm -rf "$VH"
mkdir -p "$VH/sessions/views"
ln -f "$WORK/branches-L.jsonl" "$VH/sessions/views/2026-01-05T09-00-00-000Z_branches.jsonl"
ln -f "$WORK/labels-L.jsonl" "$VH/sessions/views/2026-01-05T09-00-00-001Z_labels.jsonl"
measure sessions_views env XCSH_HOME="$VH" "$X" sessions --all

if [ "$VIEWS_ONLY" != 1 ]; then
BIG=$WORK/big.jsonl
MID=$WORK/mid.jsonl
rm -f "$BIG" "$BIG".* "$MID" "$MID".*
echo "bench: generating $BIG_ENTRIES and $RESUME_ENTRIES entries" >&2
GEN_BIG=$("$X" debug gen-session --entries "$BIG_ENTRIES" --seed 1 -o "$BIG")
GEN_MID=$("$X" debug gen-session --entries "$RESUME_ENTRIES" --seed 2 -o "$MID")
BIG_BYTES=$(stat -c %s "$BIG")
MID_BYTES=$(stat -c %s "$MID")
echo '{"text":"ok","usage":{"input":10,"output":1}}' > "$WORK/one-step.jsonl"

echo "bench: commands on the ${BIG_BYTES}-byte session" >&2
cat "$BIG" > /dev/null # warm the page cache, as for every reader below
measure raw_read cat "$BIG"
measure parse_floor "$FLOOR" "$BIG"
measure replay "$X" replay "$BIG"
measure check "$X" check "$BIG"
# Without an index (issue 19 item 3): the scan by envelope on the parallel workers.
BEFORE="rm -f '$BIG.idx'" measure events_tool_result_no_index "$X" events "$BIG" --type tool_result --json
BEFORE="rm -f '$BIG.idx'" measure tree_no_index "$X" tree "$BIG"
measure tree "$X" tree "$BIG"
measure stats "$X" stats "$BIG"
measure stats_all "$X" stats "$BIG" --all
measure replay_with_index "$X" replay "$BIG"
measure events_tool_result "$X" events "$BIG" --type tool_result --json
measure jq_tool_result jq -c 'select(.type=="tool_result")' "$BIG"
HOME_DIR=$WORK/home
rm -rf "$HOME_DIR"
mkdir -p "$HOME_DIR/sessions/bench"
ln -f "$BIG" "$HOME_DIR/sessions/bench/2026-01-05T09-00-00-000Z_synth1.jsonl"
XCSH_HOME=$HOME_DIR "$X" sessions --all > /dev/null # builds its index
XCSH_HOME=$HOME_DIR measure sessions env XCSH_HOME="$HOME_DIR" "$X" sessions --all

echo "bench: resume of the ${MID_BYTES}-byte session" >&2
R=$WORK/resume.jsonl
RESUME=(env XCSH_HOME="$HOME_DIR" "$X" run --resume "$R" -p hi --script "$WORK/one-step.jsonl" --tools test)
# The session as a previous resume leaves it: one run appended, and its index with
# the machine snapshot that resume saved after replaying the whole branch. (A
# synthetic session's workspace, /work/synth, does not exist: the first resume moves
# it to $WORK, SPEC §22.2.)
cp "$MID" "$R"
rm -f "$R.idx"
"${RESUME[@]}" --workspace "$WORK" > /dev/null
cp "$R" "$WORK/resume.jsonl.saved"
cp "$R.idx" "$WORK/resume.idx.saved"
BEFORE="cp '$WORK/resume.jsonl.saved' '$R'; cp '$WORK/resume.idx.saved' '$R.idx'" measure resume_with_index "${RESUME[@]}"
BEFORE="cp '$WORK/resume.jsonl.saved' '$R'; rm -f '$R.idx'" measure resume_no_index "${RESUME[@]}"

fi # VIEWS_ONLY

DIVAN=$WORK/divan.txt
LONG_RUN=$WORK/long_run.txt
: > "$DIVAN"
: > "$LONG_RUN"
if [ "${SKIP_DIVAN:-0}" != 1 ] && [ "$VIEWS_ONLY" != 1 ]; then
    echo "bench: divan benchmarks" >&2
    export XCSH_BENCH_DIR=$WORK/divan-sessions
    mkdir -p "$XCSH_BENCH_DIR"
    for spec in "xcsh-runtime runtime" "xcsh-log log" "xcsh-tools bash" "xcsh-tools sandbox" "xcsh-replay replay" "xcsh-inspect inspect"; do
        set -- $spec
        echo "## $2" >> "$DIVAN"
        cargo bench -q -p "$1" --bench "$2" 2> /dev/null >> "$DIVAN"
    done
    # The 1,000-step run (runtime/benches/long_run.rs prints `NAME VALUE` lines).
    cargo bench -q -p xcsh-runtime --bench long_run 2> /dev/null > "$LONG_RUN"
fi
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$RESULTS" "$DIVAN" "$BIG_BYTES" "$MID_BYTES" "$LOAD_START" "$LOAD_END" "$GEN_BIG" "$GEN_MID" "$BIG_ENTRIES" "$VIEWS" "$LONG_RUN" << 'PY'
import re, statistics, subprocess, sys
results, divan, big_bytes, mid_bytes, load0, load1, gen_big, gen_mid, big_entries, views, long_run = sys.argv[1:]
n = int(big_entries)
N = f"{n // 1000000}M" if n % 1000000 == 0 else (f"{n // 1000}k" if n % 1000 == 0 else str(n))
big, mid = int(big_bytes), int(mid_bytes)
runs = {}
for line in open(results):
    name, us, rss = line.split()
    runs.setdefault(name, []).append((int(us) / 1e6, int(rss)))
def t(name): return statistics.median(s for s, _ in runs[name])
def rss(name): return max(r for _, r in runs[name]) * 1024
sys.path.insert(0, "scripts")
from bench_tables import medians, print_table
bench = medians(open(divan).read().splitlines(), 4)
def mb(x): return f"{x / 1e6:.0f} MB"
def secs(x): return f"{x * 1000:.0f} ms" if x < 10 else f"{x:.1f} s"
def mbs(n, x): return f"{n / x / 1e6:.0f} MB/s"
rows = []
def row(what, figure, reference, ratio, target, met, mem=""):
    rows.append((what, figure, reference, ratio, target, "met" if met else ("missed" if met is not None else ""), mem))
def big_rows():
    floor, raw = t("parse_floor"), t("raw_read")
    rows.append((f"raw read (cat) of the {N}-entry file", f"{secs(raw)} ({mbs(big, raw)})", "", "", "", "", mb(rss("raw_read"))))
    rows.append(("parse floor: serde_json typed parse, 1 thread", f"{secs(floor)} ({mbs(big, floor)})", f"raw read {mbs(big, raw)}", f"{raw / floor:.2f}× raw", "", "", mb(rss("parse_floor"))))
    for name, what in [("replay", f"xcsh replay ({N} entries, no index)"), ("replay_with_index", f"xcsh replay ({N} entries, index)"), ("check", f"xcsh check ({N} entries)")]:
        x = t(name); r = floor / x
        row(what, f"{secs(x)} ({mbs(big, x)})", f"floor {mbs(big, floor)}", f"{r:.2f}× floor", "≥ 0.85× floor; RSS ≤ 2× file", r >= 0.85 and rss(name) <= 2 * big, f"{mb(rss(name))} ({rss(name) / big:.2f}× file)")
    ev, jq = t("events_tool_result"), t("jq_tool_result")
    row(f"xcsh events --type tool_result --json ({N}, index)", secs(ev), f"jq -c select(): {secs(jq)}", f"{jq / ev:.1f}× faster", "≥ 30× jq", jq / ev >= 30, mb(rss("events_tool_result")))
    evn = t("events_tool_result_no_index")
    row(f"xcsh events --type tool_result --json ({N}, no index)", secs(evn), f"jq -c select(): {secs(jq)}", f"{jq / evn:.1f}× faster", "≥ 10× jq", jq / evn >= 10, mb(rss("events_tool_result_no_index")))
    for name, what in [("tree", f"xcsh tree ({N} entries, valid index)"), ("stats", f"xcsh stats ({N} entries, valid index)")]:
        x = t(name)
        row(what, secs(x), "", "", "< 50 ms", x < 0.05, mb(rss(name)))
    row(f"xcsh stats --all ({N} entries, valid index; every step and run)", secs(t("stats_all")), "", "", "", None, mb(rss("stats_all")))
    row("xcsh tree, no index (reads the log, writes the index)", secs(t("tree_no_index")), f"floor {secs(floor)}", f"{floor / t('tree_no_index'):.2f}× floor", "", None, mb(rss("tree_no_index")))
    row(f"xcsh sessions --all ({N}-entry session, valid index)", secs(t("sessions")), "", "", "", None, mb(rss("sessions")))
    ri, rn = t("resume_with_index"), t("resume_no_index")
    row(f"resume {mb(mid)} session to its run's end, valid index with snapshot", secs(ri), "pi: 3.3–7.5 s, 400–800 MB", "", "< 0.3 s, ≤ 1/4 pi's memory", ri < 0.3 and rss("resume_with_index") <= 100e6, mb(rss("resume_with_index")))
    row(f"resume {mb(mid)} session to its run's end, no index", secs(rn), "pi: 3.3–7.5 s, 400–800 MB", "", "< 1.5 s, ≤ 1/4 pi's memory", rn < 1.5 and rss("resume_no_index") <= 100e6, mb(rss("resume_no_index")))
gen = {}
for line in open(views):
    name, rest = line.rstrip("\n").split(" ", 1)
    gen[name] = rest
def branches_of(size): return int(re.search(r"(\d+) branches", gen[f"branches_{size}"]).group(1))
def labels_of(size): return int(re.search(r"(\d+) labels", gen[f"labels_{size}"]).group(1))
def entries_of(key): return int(re.search(r"(\d+) entries", gen[key]).group(1))
def k(n): return f"{n / 1000:.1f}k".replace(".0k", "k")
def growth(name): return t(f"{name}_L") / t(f"{name}_S")
def view_table():
    bs, bl = branches_of("S"), branches_of("L")
    ls, ll = labels_of("S"), labels_of("L")
    jb = int(gen["branches_L_bytes"])
    view_rows = [
        ("html", f"xcsh export --format html, {k(bl)} branches ({k(entries_of('branches_L'))} entries)", "≤ 2 s, linear", lambda x, g: x <= 2 and g < 6),
        ("ltreefull", f"xcsh tree --full, {k(ll)} chained labels", "≤ 2 s, linear", lambda x, g: x <= 2 and g < 6),
        ("json", f"xcsh export --format json, {k(bl)} branches ({mb(jb)})", "RSS ≤ 2× file, linear", None),
        ("md", f"xcsh export --format md, {k(bl)} branches", "", None),
        ("btree", f"xcsh tree, {k(bl)} branches (index)", "", None),
        ("btreefull", f"xcsh tree --full, {k(bl)} branches", "", None),
        ("btreejson", f"xcsh tree --json, {k(bl)} branches", "", None),
        ("blog", f"xcsh log, {k(bl)} branches", "", None),
        ("bevents", f"xcsh events, {k(bl)} branches", "", None),
        ("bstats", f"xcsh stats, {k(bl)} branches (index)", "", None),
        ("bcheck", f"xcsh check, {k(bl)} branches", "", None),
        ("bdiff", f"xcsh diff of two branches, {k(bl)} branches", "", None),
        ("ltree", f"xcsh tree, {k(ll)} chained labels (index)", "", None),
        ("llog", f"xcsh log, {k(ll)} chained labels", "", None),
        ("lcheck", f"xcsh check, {k(ll)} chained labels", "", None),
        ("lhtml", f"xcsh export --format html, {k(ll)} chained labels", "", None),
        ("ljson", f"xcsh export --format json, {k(ll)} chained labels", "", None),
    ]
    for name, what, target, ok in view_rows:
        x, g = t(f"{name}_L"), growth(name)
        small = f"{k(bs)} branches" if not name.startswith("l") else f"{k(ls)} labels"
        ref = f"{secs(t(name + '_S'))} on {small}"
        if name == "json":
            r = rss("json_L")
            row(what, secs(x), ref, f"{g:.1f}× for 4×", target, r <= 2 * jb and g < 6, f"{mb(r)} ({r / jb:.2f}× file)")
        else:
            row(what, secs(x), ref, f"{g:.1f}× for 4×", target, ok(x, g) if ok else None, mb(rss(f"{name}_L")))
    row(f"xcsh sessions --all ({k(bl)} branches and {k(ll)} labels, indexes built)", secs(t("sessions_views")), "", "", "", None, mb(rss("sessions_views")))
if "raw_read" in runs:
    big_rows()
if gen:
    view_table()
if bench:
    def per(name, n): return bench[name] / n if name in bench else None
    f = per("faux_loop_50_steps", 51)
    h = per("http_loop_50_steps", 51)
    if f is not None:
        row("runtime: per step, faux provider + echo tool (median)", f"{f * 1e3:.3f} ms", "", "", "≤ 0.5 ms", f <= 0.5e-3)
    if h is not None:
        row("runtime: per step, OpenAI SSE from a local HTTP server", f"{h * 1e3:.3f} ms", "pi ~10 ms, Claude Code ~40 ms, Codex ~65 ms", f"{10e-3 / h:.0f}× pi", "≤ 0.5 ms", h <= 0.5e-3)
    lr = dict((l.split()[0], float(l.split()[1])) for l in open(long_run) if len(l.split()) == 2)
    if "long_run_gap_at_10_us" in lr and "long_run_gap_at_1000_us" in lr:
        e, l = lr["long_run_gap_at_10_us"], lr["long_run_gap_at_1000_us"]
        row("runtime: per step at step 1,000 of a 1,000-step faux run / at step 10", f"{l / 1e3:.3f} ms / {e / 1e3:.3f} ms", f"mean over the run {lr.get('long_run_gap_mean_us', 0) / 1e3:.3f} ms", f"{l / e:.2f}×", "≤ 1.5×", l / e <= 1.5)
    if "long_run_body_at_1000_us_per_kb" in lr:
        row("runtime: the OpenAI request body at step 10 / 1,000, serialized (reported apart)", f"{lr['long_run_body_at_10_us_per_kb']:.2f} / {lr['long_run_body_at_1000_us_per_kb']:.2f} µs per KB", f"{lr['long_run_body_at_10_kb']:.0f} KB / {lr['long_run_body_at_1000_kb']:.0f} KB", "", "", None)
    if "step_2000_deltas" in bench and "step_1_delta" in bench:
        d = (bench["step_2000_deltas"] - bench["step_1_delta"]) / 1999
        row("runtime: per stream delta", f"{d * 1e6:.2f} µs", "", "", "< 2 µs", d < 2e-6)
    if "bash_tool" in bench and "bare_bash_c" in bench:
        b, t, u = bench["bare_bash_c"], bench["bash_tool"], bench.get("bash_tool_with_an_unknown_child")
        row("bash call `true` (tool) / a bare `bash -c true`", f"{t * 1e3:.2f} ms / {b * 1e3:.2f} ms", f"with an unknown child (scan): {u * 1e3:.2f} ms" if u else "", f"{t / b:.2f}×", "≤ 1.2×", t / b <= 1.2)
    if "bash_bare" in bench and "bash_sandboxed" in bench:
        b, sb = bench["bash_bare"], bench["bash_sandboxed"]
        fk = bench.get("bash_forked")
        why = f"; bare but forked (a pre_exec hook, as the sandbox needs): {fk * 1e3:.2f} ms" if fk else ""
        row("bash -c true spawned and waited for, in the sandbox (workspace-write)", f"{sb * 1e3:.2f} ms", f"bare: {b * 1e3:.2f} ms{why}", f"{sb / b:.2f}× bare", "≤ 1.2× bare", sb <= 1.2 * b)
    a, g = per("append_100_fsync_each", 100), per("append_100_group_commit", 100)
    if a is not None and g is not None:
        rows.append(("append: fsync per decision / group commit", f"{a * 1e6:.0f} µs / {g * 1e6:.1f} µs per entry", "", f"{a / g:.0f}×", "", "", ""))
    for name, what in [("open_parse", "log open + parse (50k entries)"), ("dag_build", "DAG build (50k)"), ("context_rebuild_deep_leaf", "context rebuild at the deepest leaf (50k)"), ("replay_whole_file", "replay, streamed from the file (50k)"), ("replay_log_in_memory", "replay of a log read already (50k)"), ("check_whole_file", "check (50k)"), ("tree_with_index", "tree, index (50k)"), ("stats_with_index", "stats, index (50k)"), ("sessions_summary_with_index", "sessions summary, index (50k)"), ("events_tool_results_with_index", "events --type tool_result, index (50k)")]:
        if name in bench:
            rows.append((f"divan: {what}", secs(bench[name]) if bench[name] >= 1e-3 else f"{bench[name] * 1e6:.0f} µs", "", "", "", "", ""))
head = ("figure", "value", "reference (same run)", "ratio", "target", "", "peak RSS")
print_table(head, rows)
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
mem = subprocess.run(["free", "-h"], capture_output=True, text=True).stdout.splitlines()[1].split()[1]
date = subprocess.run(["date", "-u", "+%Y-%m-%d %H:%M UTC"], capture_output=True, text=True).stdout.strip()
print()
print(f"{date}; {nproc} cores ({cpu}), {mem} memory; load average {load0} at the start, {load1} at the end (other work on the machine slows every figure).")
print(f"sessions: {gen_big.split(': ', 1)[1]}")
print(f"          {gen_mid.split(': ', 1)[1]}")
for key in ("branches_S", "branches_L", "labels_S", "labels_L"):
    if key in gen:
        print(f"          {gen[key]}")
print(f"medians of {len(next(iter(runs.values())))} runs; divan medians for the runtime and micro benchmarks.")
PY
if [ "${SKIP_DIVAN:-0}" != 1 ] && [ "$VIEWS_ONLY" != 1 ]; then
    echo
    tui_section
fi
