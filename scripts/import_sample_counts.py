#!/usr/bin/env python3
"""import_sample_counts.py: counts what the import samples hold, for fixtures/import/counts.json.

Usage: import_sample_counts.py fixtures/import > fixtures/import/counts.json

For each sample DIR/{pi,codex,claude}/*.jsonl it prints
  {"user_messages": N, "tool_calls": N, "tool_results": N, "branches": N, "records": N,
   "unknown_records": N}
keyed by the path relative to DIR, computed from the file itself (Python 3 stdlib only):

- user_messages: the messages the user typed (not tool results, not injected context such
  as Codex's AGENTS.md / environment messages or Claude Code's meta and command records).
- tool_calls / tool_results: every call the model made and every result recorded for one,
  in the whole file (all branches, sub-agent sidechains included).
- branches: leaves of the entry tree minus one (0 for a linear session); only pi
  (`id`/`parentId`) and Claude Code (`uuid`/`parentUuid`, sidechains left out) have trees.
- records: lines of the file; unknown_records: lines whose `type` the format does not
  have (the hand-made `*-unknown-record.jsonl` samples).
"""

import json
import os
import sys

PI_TYPES = {"session", "message", "model_change", "thinking_level_change", "compaction",
            "branch_summary", "custom", "custom_message", "label", "session_info"}
CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted",
               "world_state", "token_usage_record"}
CLAUDE_TYPES = {"user", "assistant", "system", "summary", "file-history-snapshot",
                "queue-operation", "attachment", "progress", "custom-title", "ai-title",
                "last-prompt", "tag", "agent-name", "permission-mode", "mode",
                "worktree-state", "pr-link", "content-replacement"}


def leaves_minus_one(nodes):
    """nodes: (id, parent) pairs; the number of leaves minus one."""
    ids = {i for i, _ in nodes}
    parents = {p for _, p in nodes if p in ids}
    leaves = [i for i in ids if i not in parents]
    return max(0, len(leaves) - 1)


def count_pi(records):
    c = {"user_messages": 0, "tool_calls": 0, "tool_results": 0}
    nodes = []
    for r in records:
        if r.get("type") != "session" and "id" in r:
            nodes.append((r["id"], r.get("parentId")))
        if r.get("type") != "message":
            continue
        m = r["message"]
        if m["role"] == "user":
            c["user_messages"] += 1
        elif m["role"] == "assistant":
            c["tool_calls"] += sum(1 for b in m["content"] if b.get("type") == "toolCall")
        elif m["role"] == "toolResult":
            c["tool_results"] += 1
    c["branches"] = leaves_minus_one(nodes)
    c["unknown_records"] = sum(1 for r in records if r.get("type") not in PI_TYPES)
    return c


# Context Codex injects as user messages (not typed by the user).
CODEX_CONTEXT = ("<environment_context>", "<user_instructions>", "# AGENTS.md",
                 "<turn_aborted>", "<user_shell_command>", "<skills_instructions>")


def count_codex(records):
    c = {"user_messages": 0, "tool_calls": 0, "tool_results": 0, "branches": 0}
    meta = records[0].get("payload", {}) if records else {}
    if meta.get("forked_from_id"):
        c["forked_from"] = {"id": meta["forked_from_id"],
                            "ordinal_exclusive": meta.get("forked_from_ordinal_exclusive")}
    for r in records:
        p = r.get("payload", {})
        if r.get("type") != "response_item":
            continue
        t = p.get("type")
        if t == "message" and p.get("role") == "user":
            text = "".join(b.get("text", "") for b in p.get("content", []))
            if not text.startswith(CODEX_CONTEXT):
                c["user_messages"] += 1
        if t in ("function_call", "custom_tool_call", "local_shell_call"):
            c["tool_calls"] += 1
        elif t in ("function_call_output", "custom_tool_call_output"):
            c["tool_results"] += 1
    c["unknown_records"] = sum(1 for r in records if r.get("type") not in CODEX_TYPES)
    return c


def count_claude(records):
    c = {"user_messages": 0, "tool_calls": 0, "tool_results": 0}
    nodes = []
    for r in records:
        t = r.get("type")
        if t in ("user", "assistant", "system", "attachment") and "uuid" in r \
                and not r.get("isSidechain"):
            nodes.append((r["uuid"], r.get("parentUuid")))
        if t not in ("user", "assistant"):
            continue
        content = r.get("message", {}).get("content")
        blocks = content if isinstance(content, list) else []
        if t == "assistant":
            c["tool_calls"] += sum(1 for b in blocks if b.get("type") == "tool_use")
            continue
        results = sum(1 for b in blocks if b.get("type") == "tool_result")
        c["tool_results"] += results
        if results or r.get("isMeta") or r.get("isCompactSummary") or r.get("isSidechain"):
            continue
        text = content if isinstance(content, str) else "".join(
            b.get("text", "") for b in blocks if b.get("type") == "text")
        if text.startswith("<command-") or text.startswith("<local-command-"):
            continue
        c["user_messages"] += 1
    c["branches"] = leaves_minus_one(nodes)
    c["unknown_records"] = sum(1 for r in records if r.get("type") not in CLAUDE_TYPES)
    return c


COUNTERS = {"pi": count_pi, "codex": count_codex, "claude": count_claude}


def main():
    root = sys.argv[1]
    out = {}
    for agent, counter in COUNTERS.items():
        d = os.path.join(root, agent)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith(".jsonl"):
                continue
            path = os.path.join(d, name)
            with open(path, encoding="utf-8") as f:
                records = [json.loads(line) for line in f if line.strip()]
            c = counter(records)
            c["records"] = len(records)
            out[f"{agent}/{name}"] = {k: c[k] for k in (
                "user_messages", "tool_calls", "tool_results", "branches", "records",
                "unknown_records", "forked_from") if k in c}
    # A Codex fork names its parent by session id: name the sample file too.
    ids = {}
    for key in out:
        agent, name = key.split("/", 1)
        with open(os.path.join(root, key), encoding="utf-8") as f:
            first = json.loads(f.readline() or "{}")
        sid = first.get("payload", {}).get("id") if agent == "codex" else None
        if sid and "unknown-record" not in name:
            ids[sid] = key
    for c in out.values():
        if "forked_from" in c:
            c["forked_from"]["file"] = ids.get(c["forked_from"]["id"])
    json.dump(out, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
