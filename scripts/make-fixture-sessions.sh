#!/usr/bin/env bash
# Regenerates fixtures/sessions/*.jsonl (and the family in fixtures/sessions/delegation/) by running the real xcsh binary with the faux
# provider over the scripts in fixtures/scripts/sessions/ (NAME.jsonl is the model's
# script, NAME.user.jsonl the scripted user commands, if any). Every fixture runs in
# its own fresh workspace and $XCSH_HOME, so each produces exactly one session file.
# The logs are deterministic except for timestamps, hashes, timings, session ids and
# the temporary workspace path (in the header and in recorded file changes).
#
# usage: scripts/make-fixture-sessions.sh [NAME...]   (default: all of them)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
scripts="$root/fixtures/scripts/sessions"
out="$root/fixtures/sessions"
cargo build --quiet --manifest-path "$root/Cargo.toml" --bin xcsh
bin="$root/target/debug/xcsh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

# Sets up a fresh home and workspace for fixture $1.
begin() {
    name=$1
    export XCSH_HOME="$tmp/$name/home"
    work="$tmp/$name/work"
    mkdir -p "$work"
}

# xcsh_run EXPECTED_EXIT ARGS...: runs `xcsh run` in the fixture's workspace.
xcsh_run() {
    local expected=$1
    shift
    local code=0
    (cd "$work" && "$bin" run "$@" >"$tmp/$name/stdout" 2>"$tmp/$name/stderr") || code=$?
    if [ "$code" != "$expected" ]; then
        echo "$name: xcsh run $* exited $code, expected $expected" >&2
        cat "$tmp/$name/stderr" >&2
        exit 1
    fi
}

# The one session file of the current fixture.
session_file() {
    local files
    files=$(find "$XCSH_HOME/sessions" -name '*.jsonl' | sort)
    if [ "$(printf '%s\n' "$files" | wc -l)" != 1 ]; then
        echo "$name: expected one session file, found: $files" >&2
        exit 1
    fi
    printf '%s\n' "$files"
}

# Copies the fixture's session to fixtures/sessions/NAME.jsonl and checks it replays.
finish() {
    cp "$(session_file)" "$out/$name.jsonl"
    "$bin" replay "$out/$name.jsonl" >/dev/null
    echo "fixtures/sessions/$name.jsonl"
}

script() { printf '%s\n' "$scripts/$1"; }

# scripted NAME EXPECTED_EXIT PROMPT [FLAGS...]: the fixture NAME of one run of the
# test tools over NAME's script (and its user script NAME.user.jsonl, if there is
# one), with FLAGS, that exits EXPECTED_EXIT.
scripted() {
    local fixture=$1 expected=$2 prompt=$3
    shift 3
    local user=()
    if [ -f "$scripts/$fixture.user.jsonl" ]; then
        user=(--user-script "$(script "$fixture.user.jsonl")")
    fi
    begin "$fixture"
    xcsh_run "$expected" --tools test "$@" --script "$(script "$fixture.jsonl")" "${user[@]}" \
        -p "$prompt"
    finish
}

make_plain() { scripted plain 0 "What is the capital of France?"; }

make_tool_rounds() {
    begin tool-rounds
    printf 'The project builds with cargo.\nRun `cargo test` before a commit.\n' >"$work/notes.txt"
    mkdir -p "$work/src"
    printf 'pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n' >"$work/src/lib.rs"
    xcsh_run 0 --tools standard --permissions yolo --script "$(script tool-rounds.jsonl)" \
        -p "How does this project build? Write the answer to answer.txt."
    finish
}

make_parallel_tools() { scripted parallel-tools 0 "Do three things at once."; }

make_steer() { scripted steer 0 "Run the slow check."; }

make_follow_up() { scripted follow-up 0 "Run the slow check."; }

make_interrupt() { scripted interrupt 130 "Wait a minute."; }

make_length_stop() { scripted length-stop 4 "Print the whole file."; }

make_budget_stop() { scripted budget-stop 4 "Keep going until done." --max-tokens 1000; }

make_compaction() { scripted compaction 0 "Echo two things." --compact-at 1000; }

make_branch_at() {
    begin branch-at
    local s
    s=$(script branch-at.jsonl)
    xcsh_run 0 --tools test --script "$s" -p "first"
    xcsh_run 0 --tools test --continue --script "$s" -p "second"
    # Entries: 0 session, 1 prompt, 2 step_started, 3 step, 4 run_finished, then the
    # second run; continue from entry 4 on a new branch.
    xcsh_run 0 --tools test --resume "$(session_file)" --at 4 --script "$s" -p "instead"
    finish
}

make_provider_error() { scripted provider-error 3 "What is the status?"; }

make_ten_steps() { scripted ten-steps 0 "Take ten steps."; }

# A fork needs `xcsh fork SESSION ENTRY -o PATH`: the original session stays in the
# temporary home; the fixture is the forked file, continued with one more run.
make_fork() {
    begin fork
    if ! "$bin" fork --help >/dev/null 2>&1; then
        echo "fork: skipped, this xcsh has no \`fork\` command yet" >&2
        return 0
    fi
    local s original forked
    s=$(script fork.jsonl)
    xcsh_run 0 --tools test --script "$s" -p "first question"
    original=$(session_file)
    forked="$tmp/fork/forked.jsonl"
    # Entries: 0 session, 1 prompt, 2 step_started, 3 step, 4 tool_dispatched,
    # 5 tool_result, 6 step_started, 7 step, 8 run_finished: fork at the run's end.
    "$bin" fork "$original" 8 -o "$forked" >/dev/null
    xcsh_run 0 --tools test --resume "$forked" --script "$(script fork.second.jsonl)" \
        -p "second question, in the fork"
    cp "$forked" "$out/fork.jsonl"
    "$bin" replay "$out/fork.jsonl" >/dev/null
    echo "fixtures/sessions/fork.jsonl"
}

# Memory (SPEC.md §28) over two turns in one session: the first turn's extraction
# (the script's last step) writes two notes into the fixture's temporary home and
# workspace; the second turn (`--continue`, its own script) carries them in its
# `memory_index`, reads one with `memory_read`, and its extraction updates it.
make_memory() {
    begin memory
    xcsh_run 0 --tools test --memory --script "$(script memory.jsonl)" \
        -p "How does this project build?"
    xcsh_run 0 --tools test --memory --continue --script "$(script memory.second.jsonl)" \
        -p "And for a release?"
    finish
}

# The task plan (SPEC.md §27): a run that sets the plan twice, a second run that
# sends a broken plan (two items in progress), then a valid third update; then a
# branch from the first run's end whose run changes the plan another way.
make_plan() {
    begin plan
    xcsh_run 0 --tools test --script "$(script plan.jsonl)" -p "Fix the parser bug."
    xcsh_run 0 --tools test --continue --script "$(script plan.second.jsonl)" -p "Go on."
    # Entries: 0 session, 1 prompt, 2 step_started, 3 step, 4 tool_dispatched (plan),
    # 5 tool_result, 6 step_started, 7 step, 8-9 tool_dispatched (echo, plan),
    # 10-11 tool_result, 12 step_started, 13 step, 14 run_finished: branch there.
    xcsh_run 0 --tools test --resume "$(session_file)" --at 14 \
        --script "$(script plan.branch.jsonl)" -p "Write a regression test before the fix."
    finish
}

# A family (SPEC §29): the parent delegates to two sub-agents at once, one of which
# fails. The folder fixtures/sessions/delegation/ holds the parent (as parent.jsonl:
# its id is its header's) and the children under the names their links give them.
make_delegation() {
    begin delegation
    xcsh_run 0 --tools test --delegate --script "$(script delegation.jsonl)" \
        -p "Count the files and read the notes."
    local dir="$out/delegation" f parent=""
    rm -rf "$dir"
    mkdir -p "$dir"
    for f in $(find "$XCSH_HOME/sessions" -name '*.jsonl' | sort); do
        # Only a sub-agent's header (the first line) has a "parent".
        if head -n 1 "$f" | grep -q '"parent":'; then
            cp "$f" "$dir/"
        else
            parent=$f
        fi
    done
    cp "$parent" "$dir/parent.jsonl"
    "$bin" replay "$dir" >/dev/null
    for f in "$dir"/*.jsonl; do
        "$bin" check "$f" >/dev/null
    done
    echo "fixtures/sessions/delegation/"
}

all=(plain tool-rounds parallel-tools steer follow-up interrupt length-stop budget-stop
    compaction branch-at provider-error ten-steps fork memory plan delegation)
if [ $# -eq 0 ]; then
    set -- "${all[@]}"
fi
for fixture in "$@"; do
    "make_${fixture//-/_}"
done
