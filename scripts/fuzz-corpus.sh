#!/usr/bin/env bash
# Builds the fuzz seed corpus under fuzz/corpus/ (generated, not committed):
# - jsonl_reader: every fixtures/sessions/*.jsonl, and each of its lines alone;
# - mapper_openai, mapper_anthropic, mapper_responses: each recorded stream of
#   ../shared/provider-streams (or $XCSH_PROVIDER_STREAMS) of that protocol, rebuilt
#   into raw SSE bytes as providers/src/regress.rs does (Chat Completions:
#   `data: <line>\n\n` per line, then `data: [DONE]\n\n`; the others:
#   `event: <payload.type>\ndata: <line>\n\n`);
# - sse_parser: every rebuilt stream, behind one byte that picks its chunking.
# Needs python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
streams=${XCSH_PROVIDER_STREAMS:-$root/../shared/provider-streams}
corpus=$root/fuzz/corpus
mkdir -p "$corpus"/{jsonl_reader,sse_parser,mapper_openai,mapper_anthropic,mapper_responses}

python3 - "$root" "$streams" "$corpus" <<'PY'
import hashlib, json, pathlib, sys

root, streams, corpus = (pathlib.Path(a) for a in sys.argv[1:4])

def put(target, data):
    name = hashlib.sha1(data).hexdigest()
    (corpus / target / name).write_bytes(data)

sessions = sorted((root / "fixtures" / "sessions").glob("*.jsonl"))
for path in sessions:
    data = path.read_bytes()
    put("jsonl_reader", data)
    for line in data.splitlines(keepends=True):
        put("jsonl_reader", line)

folders = {
    "openai-chat": "mapper_openai",
    "anthropic-messages": "mapper_anthropic",
    "openai-responses": "mapper_responses",
}
count = {}
for folder, target in folders.items():
    for path in sorted((streams / folder).glob("*.jsonl")):
        if path.name.endswith(".golden.jsonl"):
            continue
        out = bytearray()
        for line in path.read_bytes().splitlines():
            if not line.strip():
                continue
            if folder != "openai-chat":
                kind = json.loads(line)["type"]
                out += b"event: " + kind.encode() + b"\n"
            out += b"data: " + line + b"\n\n"
        if folder == "openai-chat":
            out += b"data: [DONE]\n\n"
        put(target, bytes(out))
        put("sse_parser", bytes([len(out) % 256]) + bytes(out))
        count[target] = count.get(target, 0) + 1
print("fuzz corpus:", len(sessions), "sessions;",
      ", ".join(f"{t} {n} streams" for t, n in count.items()))
PY
