#!/usr/bin/env python3
"""A small MCP server for xcsh's tests (stdlib only): JSON-RPC 2.0, one message a
line on stdin/stdout. It writes `started` into MARKER_DIR when it starts and
`cancelled` when told to cancel a request. Tools: `ok` (read-only, answers),
`touch` (creates a file: the sandbox decides), `crash` (the process exits in the
middle of the call), `hang` (never answers). `--hang-on-start`: never answers
`initialize` (a server that does not start in time)."""

import json
import os
import sys

marker_dir = sys.argv[1]
hang_on_start = "--hang-on-start" in sys.argv[2:]


def mark(name, text=""):
    with open(os.path.join(marker_dir, name), "a") as f:
        f.write(text + "\n")


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def schema(properties, required):
    return {"type": "object", "properties": properties, "required": required}


PATH = {"path": {"type": "string", "description": "A path"}}
TOOLS = [
    {
        "name": "ok",
        "description": "Answers with the path it was given\nSecond line of the description.",
        "inputSchema": schema(PATH, ["path"]),
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "touch",
        "description": "Creates an empty file at the path",
        "inputSchema": schema(PATH, ["path"]),
    },
    {"name": "crash", "description": "Exits in the middle of the call", "inputSchema": schema({}, [])},
    {
        "name": "hang",
        "description": "Never answers",
        "inputSchema": schema({}, []),
        "annotations": {"readOnlyHint": True},
    },
]

mark("started", str(os.getpid()))
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    message = json.loads(line)
    method = message.get("method")
    ident = message.get("id")
    if method == "initialize":
        if hang_on_start:
            continue
        send({
            "jsonrpc": "2.0",
            "id": ident,
            "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "probe", "version": "1.0"},
            },
        })
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": ident, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        name = message["params"]["name"]
        args = message["params"].get("arguments") or {}
        if name == "ok":
            text, error = "ok: " + args["path"], False
        elif name == "touch":
            try:
                open(args["path"], "w").close()
                text, error = "created " + args["path"], False
            except OSError as e:
                text, error = "cannot create %s: %s" % (args["path"], e.strerror), True
        elif name == "crash":
            sys.stderr.write("probe: crashing on purpose\n")
            sys.stderr.flush()
            os._exit(3)
        else:
            continue
        send({"jsonrpc": "2.0", "id": ident,
              "result": {"content": [{"type": "text", "text": text}], "isError": error}})
    elif method == "notifications/cancelled":
        mark("cancelled", str(message["params"].get("requestId")))
    elif ident is not None and method is not None:
        send({"jsonrpc": "2.0", "id": ident,
              "error": {"code": -32601, "message": "no method " + method}})
