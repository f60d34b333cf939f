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
- records: lines of the file; unknown_records: lines of the invented type
  `xcsh_invented_record` (one in each hand-made `*-unknown-record.jsonl` sample; the
  real files hold no type their own agent does not write).
"""

import json
import os
import sys

INVENTED = "xcsh_invented_record"  # the type of the hand-made unknown records


def leaves_minus_one(nodes, ignore=()):
    """nodes: (id, parent) pairs; the number of leaves (not in ignore) minus one."""
    ids = {i for i, _ in nodes}
    parents = {p for _, p in nodes if p in ids}
    leaves = [i for i in ids if i not in parents and i not in ignore]
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
    c["unknown_records"] = sum(1 for r in records if r.get("type") == INVENTED)
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
    c["unknown_records"] = sum(1 for r in records if r.get("type") == INVENTED)
    return c


def only_tool_results(r):
    content = r.get("message", {}).get("content")
    return isinstance(content, list) and content and all(
        b.get("type") == "tool_result" for b in content)


def count_claude(records):
    c = {"user_messages": 0, "tool_calls": 0, "tool_results": 0}
    nodes = []
    results_only = set()
    for r in records:
        t = r.get("type")
        if t in ("user", "assistant", "system", "attachment") and "uuid" in r \
                and not r.get("isSidechain"):
            # A compact boundary starts a new root; its logical parent links it on.
            nodes.append((r["uuid"], r.get("parentUuid") or r.get("logicalParentUuid")))
            if t == "user" and only_tool_results(r):
                results_only.add(r["uuid"])
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
    # Claude Code chains the results of parallel tool calls oddly (the second call's
    # result hangs off the second tool_use record, the first call's result goes on): a
    # tool result is never where a conversation ends, so such leaves are no branches.
    c["branches"] = leaves_minus_one(nodes, ignore=results_only)
    c["unknown_records"] = sum(1 for r in records if r.get("type") == INVENTED)
    return c


COUNTERS = {"pi": count_pi, "codex": count_codex, "claude": count_claude}


def main():
    root = sys.argv[1]
    out = {}
    for agent, counter in COUNTERS.items():
        d = os.path.join(root, agent)
        if not os.path.isdir(d):
            continue
        names = sorted(os.path.relpath(os.path.join(top, f), d)
                       for top, _, files in os.walk(d) for f in files)
        for name in names:
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
