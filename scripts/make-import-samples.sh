#!/usr/bin/env bash
# Makes the import samples (fixtures/import/): runs the REAL CLIs of pi, Codex and
# Claude Code, non-interactively (and pi's tree view in tmux), against the scripted mock
# model server scripts/mock-model.py on 127.0.0.1, and copies the session files they
# write into fixtures/import/{pi,codex,claude}/. No key, no network beyond 127.0.0.1
# (except the npm install of the pinned packages into a cache folder outside the repo).
#
# Usage: scripts/make-import-samples.sh [pi] [codex] [claude]   (default: all three)
#
# Everything the agents write goes under /tmp/xcsh-import-sample (a temporary HOME, agent
# config dirs and the workspace /tmp/xcsh-import-sample/work, fixed so that re-running
# gives the same paths in the samples); the real home is never touched. The model's side
# of each conversation is in fixtures/import/mock-scripts/*.json; the requests the agents
# sent are kept in /tmp/xcsh-import-sample/requests-*.jsonl for debugging.
# Before the agents, scripts/check-mock-model.mjs checks the mock's three protocols with
# the official SDKs. The counts (fixtures/import/counts.json) are recomputed from the
# samples by scripts/import_sample_counts.py at the end. Needs: node/npm, python3, jq,
# curl, tmux (scripts/setup-test-deps.sh installs tmux).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
# The pinned packages (PI_PKG, CODEX_PKG, CLAUDE_PKG) and agents_install.
. "$REPO/scripts/agents.sh"
CACHE=$AGENTS_CACHE
BASE=/tmp/xcsh-import-sample
WORK=$BASE/work
OUT=$REPO/fixtures/import
SCRIPTS=$OUT/mock-scripts

# (and pi 0.31.1 and 0.30.2 for the older session versions 2 and 1: make_pi_old)

agents=("$@")
[ ${#agents[@]} -gt 0 ] || agents=(pi codex claude)

log() { echo "make-import-samples: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# install NAME SPEC: the npm package SPEC into $CACHE/NAME (once per version).
install() { agents_install "$@" || die "could not install $2"; }

# The mock: one server for the whole run; each phase loads its own script.
MOCK_PID=
stop_mock() { [ -z "$MOCK_PID" ] || kill "$MOCK_PID" 2>/dev/null || true; }
trap stop_mock EXIT
start_mock() {
    local reqlog=$1
    stop_mock
    rm -f "$BASE/mock.port" "$reqlog"
    python3 "$REPO/scripts/mock-model.py" --script <(echo '[]') --requests-log "$reqlog" \
        --port-file "$BASE/mock.port" >"$BASE/mock.out" 2>"$BASE/mock.err" &
    MOCK_PID=$!
    for _ in $(seq 100); do [ -s "$BASE/mock.port" ] && break; sleep 0.05; done
    PORT=$(cat "$BASE/mock.port")
    MOCK=http://127.0.0.1:$PORT
    log "mock model on $MOCK (requests: $reqlog)"
}
# load_script NAME: serve fixtures/import/mock-scripts/NAME.json from now on.
load_script() {
    curl -sf -X POST --data-binary "@$SCRIPTS/$1.json" "$MOCK/_mock/script" >/dev/null \
        || die "the mock refused the script $1"
    CURRENT_SCRIPT=$1
}
# check_script: every turn of the current script was served, none missed its expectation.
check_script() {
    local status
    status=$(curl -sf "$MOCK/_mock/status")
    echo "$status" | python3 -c '
import json, sys
s = json.load(sys.stdin)
bad = s["turns_left"] or s["exhausted_requests"] or s["expect_misses"]
sys.exit(1 if bad else 0)' || die "script $CURRENT_SCRIPT not served as written: $status"
}

# fresh_workspace: the same small project for every agent.
fresh_workspace() {
    rm -rf "$WORK"
    mkdir -p "$WORK"
    printf 'print("Helo, world")\n' >"$WORK/hello.py"
    printf 'The greeting in hello.py has a typo.\n' >"$WORK/notes.txt"
}

# publish AGENT SRC NAME: copy a session file into fixtures/import/AGENT/NAME.
publish() {
    mkdir -p "$OUT/$1"
    cp "$2" "$OUT/$1/$3"
    log "wrote fixtures/import/$1/$3"
}

# new_file AGENT LISTING KNOWN...: the one path of LISTING (one a line) that is none
# of the KNOWN ones (the session file a fork wrote), or die naming what was there.
new_file() {
    local agent=$1 listing=$2 known=() k found
    shift 2
    for k in "$@"; do known+=(-e "$k"); done
    found=$(echo "$listing" | grep -vF "${known[@]}" || true)
    [ -n "$found" ] && [ "$(echo "$found" | wc -l)" = 1 ] ||
        die "$agent: expected one new session file beside $*, got: ${found:-none}"
    echo "$found"
}

# publish_with_fork AGENT SRC NAME FORK: SRC as NAME.jsonl and FORK as fork.jsonl.
publish_with_fork() {
    publish "$1" "$2" "$3.jsonl"
    publish "$1" "$4" fork.jsonl
}

# last_of AGENT NAME FILTER: the jq FILTER of the last record of a published sample.
last_of() { tail -n 1 "$OUT/$1/$2.jsonl" | jq -r "$3"; }

# unknown_record AGENT NAME LINE: NAME with LINE appended, as NAME-unknown-record.jsonl
# (hand-edited: a record type no importer knows).
unknown_record() {
    local src=$OUT/$1/$2.jsonl dst=$OUT/$1/$2-unknown-record.jsonl
    cp "$src" "$dst"
    printf '%s\n' "$3" >>"$dst"
    log "wrote fixtures/import/$1/$2-unknown-record.jsonl (hand-edited)"
}

# tmux helpers for the interactive parts.
TMUX_SESSION=xcsh-import-sample
tmux_wait_for() { # tmux_wait_for TEXT [SECONDS]
    local text=$1 secs=${2:-30} i
    for i in $(seq $((secs * 10))); do
        if tmux capture-pane -p -t "$TMUX_SESSION" | grep -qF -- "$text"; then return 0; fi
        sleep 0.1
    done
    tmux capture-pane -p -t "$TMUX_SESSION" >&2
    die "timed out waiting for '$text' in the terminal"
}

# tmux_submit TEXT: type TEXT into the agent's editor, wait until it shows, press Enter
# (a moment later: a TUI may first open its completion menu on a slash command).
tmux_submit() {
    tmux send-keys -t "$TMUX_SESSION" -l "$1"
    tmux_wait_for "$1" 10
    sleep 0.3
    tmux send-keys -t "$TMUX_SESSION" Enter
}

# ------------------------------------------------------------------ pi
make_pi() {
    install pi "$PI_PKG"
    local pi=$CACHE/pi/node_modules/.bin/pi agent=$BASE/pi-agent
    rm -rf "$BASE/home" "$agent"
    mkdir -p "$BASE/home" "$agent"
    fresh_workspace
    start_mock "$BASE/requests-pi.jsonl"
    cat >"$agent/models.json" <<EOF
{"providers": {"mock": {"baseUrl": "$MOCK/v1", "api": "openai-completions", "apiKey": "dummy",
  "compat": {"supportsDeveloperRole": false},
  "models": [{"id": "mock-model", "name": "Mock model", "reasoning": true,
    "contextWindow": 128000, "maxTokens": 8000,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]}}}
EOF
    cat >"$agent/settings.json" <<EOF
{"defaultProvider": "mock", "defaultModel": "mock-model", "treeFilterMode": "user-only",
 "quietStartup": true, "branchSummary": {"skipPrompt": true}}
EOF
    local env=(env HOME="$BASE/home" PI_CODING_AGENT_DIR="$agent" PI_OFFLINE=1 PI_TELEMETRY=0)
    cd "$WORK"
    # 1. A first prompt: shell, two reads at once, an edit, a failing read.
    load_script pi-1
    "${env[@]}" "$pi" -p "Read notes.txt and fix what it says in hello.py." >&2
    check_script
    # 2. The session continued (-c) with a second prompt.
    load_script pi-2
    "${env[@]}" "$pi" -c -p "Run it to check." >&2
    check_script
    # 3. In the interactive mode (tmux): /tree back to the second prompt and a different
    #    one there (a branch in the same file), /compact, a last prompt, /quit.
    tmux kill-session -t "$TMUX_SESSION" 2>/dev/null || true
    tmux new-session -d -s "$TMUX_SESSION" -x 120 -y 40 -c "$WORK" "${env[*]} $pi -c"
    tmux_wait_for 'It prints "Hello, world".'
    load_script pi-3
    tmux_submit "/tree"
    tmux_wait_for "Session Tree"
    tmux_wait_for "› • user: Run it to check."
    tmux send-keys -t "$TMUX_SESSION" Enter # the leaf goes to that prompt's parent
    tmux_wait_for "Navigated to selected point"
    tmux send-keys -t "$TMUX_SESSION" C-u # the editor holds the old prompt: clear it
    tmux_submit "Instead of running it, add a comment at the top of hello.py."
    tmux_wait_for "Added a comment at the top of hello.py."
    check_script
    load_script pi-4
    tmux_submit "/compact"
    tmux_wait_for "Compacted from"
    check_script
    load_script pi-5
    tmux_submit "What did we change, in one line?"
    tmux_wait_for "We fixed the typo and documented hello.py."
    check_script
    tmux_submit "/quit"
    for _ in $(seq 50); do tmux has-session -t "$TMUX_SESSION" 2>/dev/null || break; sleep 0.1; done
    tmux kill-session -t "$TMUX_SESSION" 2>/dev/null || true
    local file
    file=$(ls "$agent"/sessions/*/*.jsonl)
    [ "$(echo "$file" | wc -l)" = 1 ] || die "pi wrote more than one session: $file"
    # 4. --fork: a new session file from that one, and a prompt in it.
    load_script pi-6
    "${env[@]}" "$pi" --fork "$file" -p "Say that this session was forked." >&2
    check_script
    cd "$REPO"
    local fork
    fork=$(new_file pi "$(ls "$agent"/sessions/*/*.jsonl)" "$file")
    publish_with_fork pi "$file" branch "$fork"
    unknown_record pi branch \
        "{\"type\":\"xcsh_invented_record\",\"id\":\"feedbeef\",\"parentId\":\"$(last_of pi branch .id)\",\"timestamp\":\"2026-12-02T00:00:00.000Z\",\"note\":\"hand-made: a record type no importer knows\"}"
}

# make_pi_old VERSION NAME [tree]: an older pi (its session format: 0.30 writes
# version 1, a list without ids; 0.31-0.34 version 2, the tree without the v3 renames),
# prompt 1 and prompt 2 (-c), with `tree` also a /tree branch with a branch summary,
# into fixtures/import/pi/NAME.jsonl.
make_pi_old() {
    local version=$1 name=$2
    install "pi-$version" "@mariozechner/pi-coding-agent@$version"
    local pi=$CACHE/pi-$version/node_modules/.bin/pi agent=$BASE/pi-agent
    rm -rf "$BASE/home" "$agent"
    mkdir -p "$BASE/home" "$agent"
    fresh_workspace
    start_mock "$BASE/requests-pi-$version.jsonl"
    cat >"$agent/models.json" <<EOF
{"providers": {"mock": {"baseUrl": "$MOCK/v1", "api": "openai-completions", "apiKey": "dummy",
  "models": [{"id": "mock-model", "name": "Mock model", "reasoning": true, "input": ["text"],
    "contextWindow": 128000, "maxTokens": 8000,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]}}}
EOF
    local env=(env HOME="$BASE/home" PI_CODING_AGENT_DIR="$agent" PI_OFFLINE=1 PI_TELEMETRY=0)
    local model=(--provider mock --model mock-model)
    cd "$WORK"
    load_script pi-old-1
    "${env[@]}" "$pi" "${model[@]}" -p "Read notes.txt and fix what it says in hello.py." >&2
    check_script
    load_script pi-2
    "${env[@]}" "$pi" "${model[@]}" -c -p "Run it to check." >&2
    check_script
    if [ "${3:-}" = tree ]; then
        # /tree (searched) to prompt 1's answer, "Summarize branch?" Yes (a
        # branch_summary entry), the branch prompt, then Ctrl+D on the empty editor.
        tmux kill-session -t "$TMUX_SESSION" 2>/dev/null || true
        tmux new-session -d -s "$TMUX_SESSION" -x 120 -y 40 -c "$WORK" \
            "${env[*]} $pi ${model[*]} -c"
        tmux_wait_for 'It prints "Hello, world".'
        load_script pi-old-3
        tmux_submit "/tree"
        tmux_wait_for "Session Tree"
        tmux send-keys -t "$TMUX_SESSION" -l "Fixed the typo"
        tmux_wait_for "› • assistant: Fixed the typo"
        tmux send-keys -t "$TMUX_SESSION" Enter
        tmux_wait_for "Summarize branch?"
        tmux send-keys -t "$TMUX_SESSION" Enter # → Yes
        tmux_wait_for "Navigated to selected point"
        tmux_submit "Instead of running it, add a comment at the top of hello.py."
        tmux_wait_for "Added a comment at the top of hello.py."
        check_script
        tmux send-keys -t "$TMUX_SESSION" C-d
        for _ in $(seq 50); do tmux has-session -t "$TMUX_SESSION" 2>/dev/null || break; sleep 0.1; done
        tmux kill-session -t "$TMUX_SESSION" 2>/dev/null || true
    fi
    cd "$REPO"
    local file
    file=$(ls "$agent"/sessions/*/*.jsonl)
    [ "$(echo "$file" | wc -l)" = 1 ] || die "pi $version wrote more than one session: $file"
    publish pi "$file" "$name.jsonl"
}

# ------------------------------------------------------------------ codex
make_codex() {
    install codex "$CODEX_PKG"
    local codex=$CACHE/codex/node_modules/.bin/codex chome=$BASE/codex-home
    rm -rf "$BASE/home" "$chome"
    mkdir -p "$BASE/home" "$chome"
    fresh_workspace
    start_mock "$BASE/requests-codex.jsonl"
    sed "s|@BASE_URL@|$MOCK/v1|" "$REPO/scripts/codex-mock-config.toml" >"$chome/config.toml"
    local env=(env HOME="$BASE/home" CODEX_HOME="$chome" MOCK_API_KEY=dummy)
    local opts=(--skip-git-repo-check --dangerously-bypass-approvals-and-sandbox)
    cd "$WORK"
    # 1. A first prompt: shell, two reads at once, apply_patch, a failing command.
    load_script codex-1
    "${env[@]}" "$codex" exec "${opts[@]}" "Read notes.txt and fix what it says in hello.py." </dev/null >&2
    check_script
    local first id
    first=$(ls "$chome"/sessions/*/*/*/rollout-*.jsonl)
    id=$(head -n 1 "$first" | jq -r .payload.id)
    # 2. A fork of that session (a new rollout file) with a different second prompt.
    load_script codex-3
    "${env[@]}" "$codex" exec fork "${opts[@]}" "$id" "Instead of running it, add a comment at the top of hello.py." </dev/null >&2
    check_script
    # 3. The first session resumed with a second prompt.
    load_script codex-2
    "${env[@]}" "$codex" exec resume "${opts[@]}" "$id" "Run it to check." </dev/null >&2
    check_script
    # 4. Resumed again with a low auto-compaction limit: Codex compacts before the turn
    #    (a summary request to the model, a `compacted` record), then answers.
    load_script codex-4
    "${env[@]}" "$codex" exec resume "${opts[@]}" -c model_auto_compact_token_limit=5000 \
        "$id" "What did we change, in one line?" </dev/null >&2
    check_script
    cd "$REPO"
    local fork
    fork=$(new_file codex "$(ls "$chome"/sessions/*/*/*/rollout-*.jsonl)" "$first")
    publish_with_fork codex "$first" resume "$fork"
    unknown_record codex resume \
        "{\"timestamp\":\"$(last_of codex resume .timestamp)\",\"type\":\"xcsh_invented_record\",\"payload\":{\"note\":\"hand-made: a record type no importer knows\"}}"
}

# ------------------------------------------------------------------ claude
make_claude() {
    install claude "$CLAUDE_PKG"
    local claude=$CACHE/claude/node_modules/.bin/claude cfg=$BASE/claude-config
    rm -rf "$BASE/home" "$cfg"
    mkdir -p "$BASE/home" "$cfg"
    fresh_workspace
    start_mock "$BASE/requests-claude.jsonl"
    local env=(env HOME="$BASE/home" CLAUDE_CONFIG_DIR="$cfg" ANTHROPIC_BASE_URL="$MOCK"
        ANTHROPIC_API_KEY=dummy CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1
        DISABLE_AUTOUPDATER=1 DISABLE_ERROR_REPORTING=1)
    local opts=(-p --allowedTools "Bash Read Edit Write Agent")
    local sid=01a2357e-0000-7000-8000-00000000c1a0
    cd "$WORK"
    # 1. A first prompt: shell, two reads at once, an edit, a failing read.
    load_script claude-1
    "${env[@]}" "$claude" "${opts[@]}" --session-id "$sid" \
        "Read notes.txt and fix what it says in hello.py." </dev/null >&2
    check_script
    local project=$cfg/projects/${WORK//\//-}
    local file=$project/$sid.jsonl
    [ -f "$file" ] || die "claude: no session file $file"
    # The record of the first prompt's last answer: where the branch will start.
    local at
    at=$(jq -r 'select(.type == "assistant") | .uuid' "$file" | tail -n 1)
    # 2. The session resumed with a second prompt.
    load_script claude-2
    "${env[@]}" "$claude" "${opts[@]}" --resume "$sid" "Run it to check." </dev/null >&2
    check_script
    # 3. A branch: resumed at the first prompt's last answer, a different second prompt.
    load_script claude-3
    "${env[@]}" "$claude" "${opts[@]}" --resume "$sid" --resume-session-at "$at" \
        "Instead of running it, add a comment at the top of hello.py." </dev/null >&2
    check_script
    # 4. Another session: a sub-agent (the Agent tool: a sidechain), then /compact.
    local sid2=01a2357e-0000-7000-8000-00000000c1a1
    load_script claude-4
    "${env[@]}" "$claude" "${opts[@]}" --session-id "$sid2" \
        "Use a sub-agent to count the lines of hello.py." </dev/null >&2
    check_script
    load_script claude-5
    "${env[@]}" "$claude" "${opts[@]}" --resume "$sid2" "/compact" </dev/null >&2
    check_script
    # 5. --fork-session: the first session resumed into a new session id (a new file).
    load_script claude-6
    "${env[@]}" "$claude" "${opts[@]}" --resume "$sid" --fork-session \
        "Say that this session was forked." </dev/null >&2
    check_script
    local fork
    fork=$(new_file claude "$(ls "$project"/*.jsonl)" "$sid.jsonl" "$sid2.jsonl")
    cd "$REPO"
    publish claude "$fork" fork.jsonl
    publish claude "$file" branch.jsonl
    publish claude "$project/$sid2.jsonl" subagent.jsonl
    # The sub-agent's transcript, where Claude Code keeps it: next to the session file,
    # in a folder named like it (SESSION/subagents/agent-ID.jsonl and its .meta.json).
    rm -rf "$OUT/claude/subagent"
    mkdir -p "$OUT/claude/subagent"
    cp -r "$project/$sid2/subagents" "$OUT/claude/subagent/"
    log "wrote fixtures/import/claude/subagent/subagents/"
    unknown_record claude branch \
        "{\"type\":\"xcsh_invented_record\",\"sessionId\":\"$sid\",\"timestamp\":\"2026-12-02T00:00:00.000Z\",\"note\":\"hand-made: a record type no importer knows\"}"
}

# ------------------------------------------------------------------ main
mkdir -p "$BASE"
# First the mock itself, through the official SDKs' stream parsers (pi's install has
# both `openai` and `@anthropic-ai/sdk`).
install pi "$PI_PKG"
start_mock "$BASE/requests-check.jsonl"
NODE_PATH=$CACHE/pi/node_modules node "$REPO/scripts/check-mock-model.mjs" "$MOCK" >&2 \
    || die "the mock model failed its check (scripts/check-mock-model.mjs)"
for agent in "${agents[@]}"; do
    case $agent in
    pi)
        make_pi
        make_pi_old 0.31.1 version2 tree
        make_pi_old 0.30.2 version1
        ;;
    codex) make_codex ;;
    claude) make_claude ;;
    *) die "unknown agent '$agent' (pi, codex, claude)" ;;
    esac
done
python3 "$REPO/scripts/import_sample_counts.py" "$OUT" >"$OUT/counts.json"
log "wrote fixtures/import/counts.json"
