// check-mock-model.mjs: checks scripts/mock-model.py with the official SDKs' own stream
// parsers (openai, @anthropic-ai/sdk): each protocol, streamed and not, a turn with
// reasoning, text and two tool calls, then a text turn, then a side rule or the
// exhausted-script answer (Responses: also a freeform custom tool call; Messages: also
// count_tokens and the models list). Exits non-zero on the first difference.
//
// Usage: NODE_PATH=DIR node scripts/check-mock-model.mjs http://127.0.0.1:PORT
// where DIR is a node_modules holding `openai` and `@anthropic-ai/sdk` (the pi install of
// scripts/make-import-samples.sh has both: ~/.cache/xcsh-agents/pi/node_modules); the
// mock must have been started with any script: this loads its own (POST /_mock/script).
import { createRequire } from "node:module";
import assert from "node:assert/strict";

const require = createRequire(process.env.NODE_PATH.replace(/\/?$/, "/") + "x.js");
const OpenAI = require("openai").default ?? require("openai");
const AnthropicModule = require("@anthropic-ai/sdk");
const Anthropic = AnthropicModule.default ?? AnthropicModule;

const base = process.argv[2];
const script = {
  turns: [
    {
      reasoning: "first think",
      text: "Two calls.",
      tool_calls: [
        { name: "bash", arguments: { command: "ls" } },
        { name: "read", arguments: { path: "a.txt" } },
      ],
    },
    { expect: "tool-output-7", text: "Done here." },
  ],
  side: [{ contains: "make a title", text: "A title" }],
};
const load = async () => {
  const r = await fetch(`${base}/_mock/script`, { method: "POST", body: JSON.stringify(script) });
  assert.equal(r.status, 200);
};
const status = async () => (await fetch(`${base}/_mock/status`)).json();

const openai = new OpenAI({ apiKey: "dummy", baseURL: `${base}/v1` });
const anthropic = new Anthropic({ apiKey: "dummy", baseURL: base });
const tools = [{ type: "function", function: { name: "bash", parameters: { type: "object" } } }];

async function chat(stream) {
  await load();
  const ask = (content) => ({ model: "m", messages: [{ role: "user", content }], tools, stream });
  let msg;
  if (stream) {
    const s = openai.chat.completions.stream(ask("go"));
    const final = await s.finalChatCompletion();
    msg = final.choices[0];
  } else {
    msg = (await openai.chat.completions.create(ask("go"))).choices[0];
  }
  assert.equal(msg.finish_reason, "tool_calls");
  assert.equal(msg.message.content, "Two calls.");
  assert.deepEqual(msg.message.tool_calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]),
    [["bash", { command: "ls" }], ["read", { path: "a.txt" }]]);
  assert.equal(new Set(msg.message.tool_calls.map((c) => c.id)).size, 2);
  const second = await openai.chat.completions.create({ ...ask("tool-output-7"), stream: false });
  assert.equal(second.choices[0].message.content, "Done here.");
  const side = await openai.chat.completions.create({ ...ask("make a title"), stream: false });
  assert.equal(side.choices[0].message.content, "A title");
  const st = await status();
  assert.equal(st.turns_left, 0);
  assert.deepEqual(st.expect_misses, []);
}

async function responses(stream) {
  await load();
  const rtools = [{ type: "function", name: "bash", parameters: { type: "object" } }];
  const ask = (input) => ({ model: "m", input, tools: rtools });
  let out;
  if (stream) {
    const s = openai.responses.stream(ask("go"));
    out = await s.finalResponse();
  } else {
    out = await openai.responses.create(ask("go"));
  }
  assert.equal(out.status, "completed");
  assert.deepEqual(out.output.map((i) => i.type), ["reasoning", "message", "function_call", "function_call"]);
  assert.equal(out.output[0].summary[0].text, "first think");
  const text = out.output.filter((i) => i.type === "message")
    .flatMap((i) => i.content.map((c) => c.text)).join("");
  assert.equal(text, "Two calls.");
  assert.deepEqual(JSON.parse(out.output[3].arguments), { path: "a.txt" });
  const second = await openai.responses.create(ask("tool-output-7"));
  assert.equal(second.output_text, "Done here.");
  const exhausted = await openai.responses.create(ask("more"));
  assert.equal(exhausted.output_text, "(mock script exhausted)");
  const st = await status();
  assert.equal(st.exhausted_requests, 1);
  // A freeform (custom) tool call, as Codex's apply_patch grammar tool is.
  const custom = { turns: [{ tool_calls: [{ name: "apply_patch", custom: true, input: "*** Begin Patch\n" }] }] };
  await fetch(`${base}/_mock/script`, { method: "POST", body: JSON.stringify(custom) });
  const c = stream ? await openai.responses.stream(ask("patch")).finalResponse()
    : await openai.responses.create(ask("patch"));
  assert.deepEqual(c.output.map((i) => [i.type, i.name, i.input]),
    [["custom_tool_call", "apply_patch", "*** Begin Patch\n"]]);
}

async function messages(stream) {
  await load();
  const ask = (content) => ({
    model: "claude-x", max_tokens: 100, messages: [{ role: "user", content }],
    tools: [{ name: "bash", input_schema: { type: "object" } }],
  });
  const out = stream
    ? await anthropic.messages.stream(ask("go")).finalMessage()
    : await anthropic.messages.create(ask("go"));
  assert.equal(out.stop_reason, "tool_use");
  assert.deepEqual(out.content.map((b) => b.type), ["thinking", "text", "tool_use", "tool_use"]);
  assert.equal(out.content[0].thinking, "first think");
  assert.ok(out.content[0].signature);
  assert.deepEqual(out.content[3].input, { path: "a.txt" });
  const second = await anthropic.messages.create(ask("tool-output-7"));
  assert.equal(second.content[0].text, "Done here.");
  const tokens = await anthropic.messages.countTokens({ model: "claude-x", messages: [{ role: "user", content: "hi" }] });
  assert.ok(tokens.input_tokens > 0);
  const models = await anthropic.models.list();
  assert.ok(models.data.length === 1);
}

// A scripted error: status 400 (the SDKs do not retry it), in each protocol's shape.
async function errors() {
  const err = { turns: [{ error: { status: 400, message: "scripted" } }] };
  const expectError = async (call) => {
    await fetch(`${base}/_mock/script`, { method: "POST", body: JSON.stringify(err) });
    await assert.rejects(call, (e) => e.status === 400 && /scripted/.test(e.message));
  };
  await expectError(() => openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] }));
  await expectError(() => openai.responses.create({ model: "m", input: "x" }));
  await expectError(() => anthropic.messages.create({ model: "c", max_tokens: 5, messages: [{ role: "user", content: "x" }] }));
  // A gzip-compressed request body.
  await load();
  const { gzipSync } = await import("node:zlib");
  const r = await fetch(`${base}/v1/chat/completions`, {
    method: "POST", headers: { "Content-Encoding": "gzip", "Content-Type": "application/json" },
    body: gzipSync(JSON.stringify({ model: "m", messages: [] })),
  });
  assert.equal((await r.json()).choices[0].message.content, "Two calls.");
  console.log("check-mock-model: errors, gzip body: ok");
}

for (const [name, f] of [["chat", chat], ["responses", responses], ["messages", messages]]) {
  for (const stream of [true, false]) {
    await f(stream);
    console.log(`check-mock-model: ${name} ${stream ? "streamed" : "whole"}: ok`);
  }
}
await errors();
