#!/usr/bin/env python3
"""mock-model.py: a scripted mock model server for running real agent CLIs offline.

It speaks, streaming (SSE) or not, three wire protocols on 127.0.0.1:

  POST /v1/chat/completions   OpenAI Chat Completions   (pi, Ollama-style clients)
  POST /v1/responses          OpenAI Responses          (Codex)
  POST /v1/messages           Anthropic Messages        (Claude Code)

and the trivial endpoints clients probe at start-up:

  GET  /v1/models[/ID]              a one-model list (OpenAI and Anthropic shapes)
  POST /v1/messages/count_tokens    {"input_tokens": N}
  GET  /  (and /health, HEAD /)     200 {"ok": true} (health checks)
  GET  /_mock/status                JSON: turns served, turns left, unmatched expectations
  POST /_mock/script                replaces the script (the body: a script, as below) and
                                    starts its turns from the first; 200 {"ok": true}
  anything else                     404, logged to the requests log as "unknown"

(The `/v1` prefix is optional: `/chat/completions`, `/responses`, `/messages` work too.)

Usage:
  mock-model.py --script SCRIPT.json [--requests-log REQ.jsonl] [--port N] [--port-file F]
                [--model NAME]

It binds 127.0.0.1:PORT (PORT 0, the default, picks a free one), prints
`PORT <n>` on stdout (and writes the number to --port-file), then serves until killed.

The script (JSON) is either a list of turns or an object
  {"turns": [TURN, ...], "side": [SIDE, ...], "default_text": "..."}.

Each model request takes the next TURN, in order, whatever protocol it came on:
  {"text": "answer"}                                        a text answer
  {"reasoning": "thoughts", "text": "..."}                  with reasoning first
  {"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}, ...]}
                                                            one or more tool calls
  {"text": "...", "tool_calls": [...]}                      text, then the calls
  {"error": {"status": 529, "message": "overloaded"}}       an HTTP error instead, in
                            the protocol's error shape (clients retry 429/5xx: each
                            retry takes the next turn)
  optional in a turn:
    "expect": "substring"   the raw request body should contain it (a miss is
                            counted in /_mock/status and logged, the turn is served anyway)
    "note": "..."           free text, ignored
  optional in a tool call:
    "id": "call_x"          the call id (default: numbered, see "Ids" below)
    "custom": true,         Responses only: a freeform `custom_tool_call` whose raw
    "input": "text"         input is "input" (Codex's apply_patch grammar tool)
  The reasoning is sent as the protocol carries it: Anthropic `thinking` blocks (with a
  fake signature), Responses `reasoning` items with a summary, Chat Completions
  `reasoning_content` deltas.

A SIDE rule answers a request that is not part of the scripted conversation (titles,
summaries, quota probes) without taking a turn. The first rule whose conditions all hold
answers with its "text" (or "json": the text is the JSON-encoded value):
  {"contains": "substring of the raw body", "no_tools": true, "model_contains": "haiku",
   "text": "reply"}
When the turns are used up, every request gets "default_text" (default
"(mock script exhausted)") and the miss is counted in /_mock/status.

Ids: message, response and call ids are numbered by the count of model requests since
the server started (`toolu_mock_7_0`, `call_mock_7_1`, `resp_mock_7`: request 7, calls 0
and 1), so they never repeat while one server runs, across script reloads.

Every request is appended to --requests-log as one JSON line, once its response is sent:
  {"n": 1, "method": "POST", "path": "/v1/messages", "kind": "turn"|"side"|"exhausted"|
   "probe"|"unknown", "turn": 0, "t_ns": 123, "serve_ns": 456, "body": {...}}
(a body that is not JSON is logged as a string; chunked and gzip/deflate request bodies
are decoded). `n` numbers the requests in the order they arrived (lines of concurrent
requests may be written out of that order); `t_ns` is the CLOCK_MONOTONIC time
(time.monotonic_ns(), comparable across the processes of one machine) at which the
request line and headers had been read, `serve_ns` the time from then until the last byte
of the response was handed to the kernel (scripts/bench-peers.sh measures with both). Responses are produced at once: no
sleeps, so the server is as fast as the client lets it be (one thread per connection).
scripts/check-mock-model.mjs checks the streams with the official SDKs' parsers; the
real CLIs that accept them: pi 0.73 (Chat Completions), Codex 0.171 (Responses), Claude
Code 2.1.332 (Messages), see scripts/make-import-samples.sh.

Python 3 standard library only.
"""

import argparse
import gzip
import json
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def chunks(text, n=3):
    """Splits text into up to n pieces (at spaces) so deltas look like a stream."""
    if not text:
        return []
    words = text.split(" ")
    if len(words) < n:
        return [text]
    size = (len(words) + n - 1) // n
    out = []
    for i in range(0, len(words), size):
        piece = " ".join(words[i:i + size])
        if i + size < len(words):
            piece += " "
        out.append(piece)
    return out


def tokens_of(raw):
    """A deterministic stand-in for a token count."""
    return max(1, len(raw) // 4)


class Script:
    """The scripted turns and side rules, shared by all handler threads."""

    def __init__(self, data):
        if isinstance(data, list):
            data = {"turns": data}
        self.turns = data.get("turns", [])
        self.side = data.get("side", [])
        self.default_text = data.get("default_text", "(mock script exhausted)")
        self.lock = threading.Lock()
        self.next = 0
        self.served = 0
        self.exhausted = 0
        self.expect_misses = []
        self.n = 0
        # Model requests answered since the server started, across script reloads:
        # numbers the message and call ids, so that they never repeat in a server's life.
        self.serial = 0

    def side_reply(self, body, raw):
        for rule in self.side:
            if "contains" in rule and rule["contains"] not in raw:
                continue
            if rule.get("no_tools") and isinstance(body, dict) and body.get("tools"):
                continue
            if "model_contains" in rule:
                model = body.get("model", "") if isinstance(body, dict) else ""
                if rule["model_contains"] not in str(model):
                    continue
            if "json" in rule:
                return {"text": json.dumps(rule["json"])}
            return {"text": rule.get("text", "")}
        return None

    def take(self, body, raw):
        """Returns (kind, turn index or None, turn)."""
        with self.lock:
            self.serial += 1
            side = self.side_reply(body, raw)
            if side is not None:
                return "side", None, dict(side, _serial=self.serial)
            if self.next >= len(self.turns):
                self.exhausted += 1
                return "exhausted", None, {"text": self.default_text, "_serial": self.serial}
            i = self.next
            self.next += 1
            self.served += 1
            turn = dict(self.turns[i], _serial=self.serial)
            exp = turn.get("expect")
            if exp is not None and exp not in raw:
                self.expect_misses.append({"turn": i, "expect": exp})
                sys.stderr.write(f"mock-model: turn {i}: request lacks {exp!r}\n")
            return "turn", i, turn

    def status(self):
        with self.lock:
            return {
                "turns_total": len(self.turns),
                "turns_served": self.served,
                "turns_left": len(self.turns) - self.next,
                "exhausted_requests": self.exhausted,
                "expect_misses": self.expect_misses,
                "requests": self.n,
            }


def call_id(turn_index, call_index, call, prefix):
    return call.get("id") or f"{prefix}{turn_index}_{call_index}"


def args_json(call):
    args = call.get("arguments", {})
    return args if isinstance(args, str) else json.dumps(args)


# ---------------------------------------------------------------- Anthropic Messages

def anthropic_events(turn, ti, model, in_tokens):
    """The Messages stream of a turn: a list of (event name, data)."""
    mid = f"msg_mock_{ti}"
    ev = [("message_start", {"type": "message_start", "message": {
        "id": mid, "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": in_tokens, "output_tokens": 1,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})]
    idx = 0
    out_tokens = 0
    if turn.get("reasoning"):
        ev.append(("content_block_start", {"type": "content_block_start", "index": idx,
                   "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
        for piece in chunks(turn["reasoning"]):
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": idx,
                       "delta": {"type": "thinking_delta", "thinking": piece}}))
        ev.append(("content_block_delta", {"type": "content_block_delta", "index": idx,
                   "delta": {"type": "signature_delta", "signature": f"mock-signature-{ti}"}}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": idx}))
        out_tokens += tokens_of(turn["reasoning"])
        idx += 1
    if turn.get("text"):
        ev.append(("content_block_start", {"type": "content_block_start", "index": idx,
                   "content_block": {"type": "text", "text": ""}}))
        for piece in chunks(turn["text"]):
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": idx,
                       "delta": {"type": "text_delta", "text": piece}}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": idx}))
        out_tokens += tokens_of(turn["text"])
        idx += 1
    calls = turn.get("tool_calls", [])
    for ci, call in enumerate(calls):
        a = args_json(call)
        ev.append(("content_block_start", {"type": "content_block_start", "index": idx,
                   "content_block": {"type": "tool_use", "id": call_id(ti, ci, call, "toolu_mock_"),
                                     "name": call["name"], "input": {}}}))
        half = len(a) // 2
        for piece in (a[:half], a[half:]):
            if piece:
                ev.append(("content_block_delta", {"type": "content_block_delta", "index": idx,
                           "delta": {"type": "input_json_delta", "partial_json": piece}}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": idx}))
        out_tokens += tokens_of(a)
        idx += 1
    stop = "tool_use" if calls else "end_turn"
    ev.append(("message_delta", {"type": "message_delta",
               "delta": {"stop_reason": stop, "stop_sequence": None},
               "usage": {"output_tokens": max(1, out_tokens)}}))
    ev.append(("message_stop", {"type": "message_stop"}))
    return ev


def anthropic_message(turn, ti, model, in_tokens):
    """The non-streaming Messages response of a turn."""
    content = []
    if turn.get("reasoning"):
        content.append({"type": "thinking", "thinking": turn["reasoning"],
                        "signature": f"mock-signature-{ti}"})
    if turn.get("text"):
        content.append({"type": "text", "text": turn["text"]})
    calls = turn.get("tool_calls", [])
    for ci, call in enumerate(calls):
        content.append({"type": "tool_use", "id": call_id(ti, ci, call, "toolu_mock_"),
                        "name": call["name"], "input": json.loads(args_json(call))})
    return {"id": f"msg_mock_{ti}", "type": "message",
            "role": "assistant", "model": model, "content": content,
            "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": in_tokens, "output_tokens": 10,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}


# ---------------------------------------------------------------- OpenAI Chat Completions

def chat_events(turn, ti, model, in_tokens):
    """The Chat Completions stream of a turn: a list of data payloads (then [DONE])."""
    cid = f"chatcmpl-mock-{ti}"

    def chunk(delta, finish=None):
        return {"id": cid, "object": "chat.completion.chunk", "created": 0, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    ev = [chunk({"role": "assistant", "content": ""})]
    out_tokens = 0
    for piece in chunks(turn.get("reasoning", "")):
        ev.append(chunk({"reasoning_content": piece}))
        out_tokens += tokens_of(piece)
    for piece in chunks(turn.get("text", "")):
        ev.append(chunk({"content": piece}))
        out_tokens += tokens_of(piece)
    calls = turn.get("tool_calls", [])
    for ci, call in enumerate(calls):
        a = args_json(call)
        ev.append(chunk({"tool_calls": [{"index": ci, "id": call_id(ti, ci, call, "call_mock_"),
                                         "type": "function",
                                         "function": {"name": call["name"], "arguments": ""}}]}))
        half = len(a) // 2
        for piece in (a[:half], a[half:]):
            if piece:
                ev.append(chunk({"tool_calls": [{"index": ci, "function": {"arguments": piece}}]}))
        out_tokens += tokens_of(a)
    ev.append(chunk({}, "tool_calls" if calls else "stop"))
    ev.append({"id": cid, "object": "chat.completion.chunk", "created": 0, "model": model,
               "choices": [], "usage": {"prompt_tokens": in_tokens,
                                        "completion_tokens": max(1, out_tokens),
                                        "total_tokens": in_tokens + max(1, out_tokens)}})
    return ev


def chat_message(turn, ti, model, in_tokens):
    msg = {"role": "assistant", "content": turn.get("text") or None}
    if turn.get("reasoning"):
        msg["reasoning_content"] = turn["reasoning"]
    calls = turn.get("tool_calls", [])
    if calls:
        msg["tool_calls"] = [{"id": call_id(ti, ci, c, "call_mock_"), "type": "function",
                              "function": {"name": c["name"], "arguments": args_json(c)}}
                             for ci, c in enumerate(calls)]
    return {"id": f"chatcmpl-mock-{ti}", "object": "chat.completion", "created": 0,
            "model": model, "choices": [{"index": 0, "message": msg,
                                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": in_tokens, "completion_tokens": 10,
                      "total_tokens": in_tokens + 10}}


# ---------------------------------------------------------------- OpenAI Responses

def responses_items(turn, ti):
    """The output items of a turn, complete."""
    tag = ti
    items = []
    if turn.get("reasoning"):
        items.append({"id": f"rs_mock_{tag}", "type": "reasoning",
                      "summary": [{"type": "summary_text", "text": turn["reasoning"]}],
                      "encrypted_content": None})
    if turn.get("text"):
        items.append({"id": f"msg_mock_{tag}", "type": "message", "status": "completed",
                      "role": "assistant",
                      "content": [{"type": "output_text", "text": turn["text"],
                                   "annotations": []}]})
    for ci, call in enumerate(turn.get("tool_calls", [])):
        cid = call_id(ti, ci, call, "call_mock_")
        if call.get("custom"):
            items.append({"id": f"ctc_mock_{tag}_{ci}", "type": "custom_tool_call",
                          "status": "completed", "call_id": cid, "name": call["name"],
                          "input": call.get("input", "")})
        else:
            items.append({"id": f"fc_mock_{tag}_{ci}", "type": "function_call",
                          "status": "completed", "call_id": cid, "name": call["name"],
                          "arguments": args_json(call)})
    return items


def responses_usage(in_tokens, out_tokens):
    return {"input_tokens": in_tokens, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": out_tokens, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": in_tokens + out_tokens}


def responses_object(turn, ti, model, in_tokens, status, output):
    return {"id": f"resp_mock_{ti}", "object": "response",
            "created_at": 0, "status": status, "model": model, "output": output,
            "usage": responses_usage(in_tokens, 10) if status == "completed" else None}


def responses_events(turn, ti, model, in_tokens):
    """The Responses stream of a turn: a list of (event type, data)."""
    ev = []

    def emit(kind, **fields):
        data = {"type": kind, "sequence_number": len(ev)}
        data.update(fields)
        ev.append((kind, data))

    emit("response.created", response=responses_object(turn, ti, model, in_tokens, "in_progress", []))
    emit("response.in_progress", response=responses_object(turn, ti, model, in_tokens, "in_progress", []))
    items = responses_items(turn, ti)
    for oi, item in enumerate(items):
        iid = item["id"]
        t = item["type"]
        if t == "reasoning":
            emit("response.output_item.added", output_index=oi, item=dict(item, summary=[]))
            text = item["summary"][0]["text"]
            emit("response.reasoning_summary_part.added", item_id=iid, output_index=oi,
                 summary_index=0, part={"type": "summary_text", "text": ""})
            for piece in chunks(text):
                emit("response.reasoning_summary_text.delta", item_id=iid, output_index=oi,
                     summary_index=0, delta=piece)
            emit("response.reasoning_summary_text.done", item_id=iid, output_index=oi,
                 summary_index=0, text=text)
            emit("response.reasoning_summary_part.done", item_id=iid, output_index=oi,
                 summary_index=0, part={"type": "summary_text", "text": text})
        elif t == "message":
            emit("response.output_item.added", output_index=oi,
                 item=dict(item, status="in_progress", content=[]))
            text = item["content"][0]["text"]
            emit("response.content_part.added", item_id=iid, output_index=oi, content_index=0,
                 part={"type": "output_text", "text": "", "annotations": []})
            for piece in chunks(text):
                emit("response.output_text.delta", item_id=iid, output_index=oi,
                     content_index=0, delta=piece)
            emit("response.output_text.done", item_id=iid, output_index=oi, content_index=0,
                 text=text)
            emit("response.content_part.done", item_id=iid, output_index=oi, content_index=0,
                 part={"type": "output_text", "text": text, "annotations": []})
        elif t == "function_call":
            emit("response.output_item.added", output_index=oi,
                 item=dict(item, status="in_progress", arguments=""))
            a = item["arguments"]
            half = len(a) // 2
            for piece in (a[:half], a[half:]):
                if piece:
                    emit("response.function_call_arguments.delta", item_id=iid,
                         output_index=oi, delta=piece)
            emit("response.function_call_arguments.done", item_id=iid, output_index=oi,
                 arguments=a)
        else:  # custom_tool_call
            emit("response.output_item.added", output_index=oi,
                 item=dict(item, status="in_progress", input=""))
            emit("response.custom_tool_call_input.delta", item_id=iid, output_index=oi,
                 delta=item["input"])
            emit("response.custom_tool_call_input.done", item_id=iid, output_index=oi,
                 input=item["input"])
        emit("response.output_item.done", output_index=oi, item=item)
    out_tokens = sum(tokens_of(json.dumps(i)) for i in items) or 1
    done = responses_object(turn, ti, model, in_tokens, "completed", items)
    done["usage"] = responses_usage(in_tokens, out_tokens)
    emit("response.completed", response=done)
    return ev


# ---------------------------------------------------------------- HTTP

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-model/1"
    # Headers and body go out in two writes: without TCP_NODELAY, Nagle and the
    # client's delayed ACK add ~40 ms to every response on a kept-alive connection.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):  # quiet: the requests log is the record
        pass

    def record(self, kind, turn, body):
        """Numbers the request; its log line is written once the response is out
        (`timed`), with the receive time and the serve time."""
        srv = self.server
        with srv.log_lock:
            srv.script.n += 1
            self.pending = {"n": srv.script.n, "method": self.command, "path": self.path,
                            "kind": kind, "turn": turn, "t_ns": self.t_recv, "body": body}

    def timed(self, handler):
        """Runs a do_* handler between the receive timestamp and the log line."""
        self.t_recv = time.monotonic_ns()
        self.pending = None
        try:
            handler()
        finally:
            entry = self.pending
            srv = self.server
            if entry is not None and srv.requests_log:
                # "body" last: the timing fields stay at the start of the line.
                body = entry.pop("body")
                entry["serve_ns"] = time.monotonic_ns() - self.t_recv
                entry["body"] = body
                with srv.log_lock:
                    srv.requests_log.write(json.dumps(entry) + "\n")
                    srv.requests_log.flush()

    def do_HEAD(self):
        self.timed(self.head)

    def do_GET(self):
        self.timed(self.get)

    def do_POST(self):
        self.timed(self.post)

    def send_json(self, status, value):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_sse(self, events, done_marker=False):
        """events: (name or None, data) pairs."""
        parts = []
        for name, data in events:
            if name:
                parts.append(f"event: {name}\n")
            parts.append(f"data: {json.dumps(data)}\n\n")
        if done_marker:
            parts.append("data: [DONE]\n\n")
        payload = "".join(parts).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def send_error_turn(self, path, err):
        """An HTTP error in the protocol's own error shape."""
        status = int(err.get("status", 500))
        message = err.get("message", "mock-model: scripted error")
        if path == "/messages":
            kind = {400: "invalid_request_error", 401: "authentication_error",
                    429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
            self.send_json(status, {"type": "error", "error": {"type": kind, "message": message}})
        else:
            kind = {400: "invalid_request_error", 429: "rate_limit_exceeded"}.get(status, "server_error")
            self.send_json(status, {"error": {"message": message, "type": kind, "code": None,
                                              "param": None}})

    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    break
                parts.append(self.rfile.read(size))
                self.rfile.readline()  # the CRLF after each chunk
            raw = b"".join(parts)
        else:
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n) if n else b""
        encoding = (self.headers.get("Content-Encoding") or "identity").lower()
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
        elif encoding != "identity":
            raw = f"(mock-model: body in the unsupported encoding {encoding})".encode()
        text = raw.decode("utf-8", "replace")
        try:
            return json.loads(text) if text else None, text
        except ValueError:
            return text, text

    def route(self):
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.startswith("/v1/"):
            path = path[3:]
        return path

    def head(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def get(self):
        path = self.route()
        model = self.server.model
        if path == "/_mock/status":
            self.send_json(200, self.server.script.status())
            return
        if path in ("", "/health"):
            self.record("probe", None, None)
            self.send_json(200, {"ok": True})
            return
        if path == "/models" or path.startswith("/models/"):
            self.record("probe", None, None)
            entry = {"id": model, "object": "model", "created": 0, "owned_by": "mock",
                     "type": "model", "display_name": model, "created_at": "2026-01-01T00:00:00Z"}
            if path.startswith("/models/"):
                self.send_json(200, entry)
            else:
                self.send_json(200, {"object": "list", "data": [entry], "has_more": False,
                                     "first_id": model, "last_id": model})
            return
        self.record("unknown", None, None)
        self.send_json(404, {"error": {"message": f"mock-model: no route GET {self.path}"}})

    def post(self):
        path = self.route()
        body, raw = self.read_body()
        if path == "/_mock/script":
            try:
                new = Script(body if isinstance(body, (list, dict)) else json.loads(raw))
            except (ValueError, AttributeError) as e:
                self.send_json(400, {"error": {"message": f"mock-model: bad script: {e}"}})
                return
            new.n = self.server.script.n
            new.serial = self.server.script.serial
            self.server.script = new
            self.send_json(200, {"ok": True})
            return
        if path == "/messages/count_tokens":
            self.record("probe", None, body)
            self.send_json(200, {"input_tokens": tokens_of(raw)})
            return
        if path not in ("/messages", "/chat/completions", "/responses"):
            self.record("unknown", None, body)
            self.send_json(404, {"error": {"message": f"mock-model: no route POST {self.path}"}})
            return
        kind, index, turn = self.server.script.take(body, raw)
        self.record(kind, index, body)
        ti = turn["_serial"]  # ids are numbered by the server's serial, never repeated
        if "error" in turn:
            self.send_error_turn(path, turn["error"])
            return
        stream = isinstance(body, dict) and body.get("stream", False)
        model = (body.get("model") if isinstance(body, dict) else None) or self.server.model
        in_tokens = tokens_of(raw)
        if path == "/messages":
            if stream:
                self.send_sse(anthropic_events(turn, ti, model, in_tokens))
            else:
                self.send_json(200, anthropic_message(turn, ti, model, in_tokens))
        elif path == "/chat/completions":
            if stream:
                self.send_sse([(None, d) for d in chat_events(turn, ti, model, in_tokens)],
                              done_marker=True)
            else:
                self.send_json(200, chat_message(turn, ti, model, in_tokens))
        else:
            if stream:
                self.send_sse(responses_events(turn, ti, model, in_tokens))
            else:
                self.send_json(200, responses_object(turn, ti, model, in_tokens, "completed",
                                                     responses_items(turn, ti)))


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that closes its keep-alive connection is no error worth a traceback.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description="Scripted mock model server (see the file header).")
    ap.add_argument("--script", required=True, help="the script: JSON, a list of turns or "
                    "{turns, side, default_text}")
    ap.add_argument("--requests-log", help="append every request as a JSON line here")
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    ap.add_argument("--port-file", help="also write the port number to this file")
    ap.add_argument("--model", default="mock-model", help="model name of the models list")
    a = ap.parse_args()
    try:
        with open(a.script, encoding="utf-8") as f:
            script = Script(json.load(f))
    except (OSError, ValueError) as e:
        sys.exit(f"mock-model: cannot read the script {a.script}: {e}")
    srv = Server(("127.0.0.1", a.port), Handler)
    srv.script = script
    srv.model = a.model
    srv.log_lock = threading.Lock()
    srv.requests_log = open(a.requests_log, "a", encoding="utf-8") if a.requests_log else None
    port = srv.server_address[1]
    if a.port_file:
        with open(a.port_file, "w") as f:
            f.write(f"{port}\n")
    print(f"PORT {port}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
