//! Anthropic Messages streaming (`POST {base}/v1/messages`, `stream: true`).
//!
//! - [`AnthropicMapper`]: sans-IO, one SSE event in, normalized events out.
//! - [`build_request`]: the JSON body for a [`ModelRequest`].
//! - [`AnthropicProvider`]: the [`Provider`] over real HTTP.
//!
//! Mapping (per the Messages streaming reference): `message_start` opens a message
//! and carries its first `usage`; each content block is `content_block_start`, deltas,
//! `content_block_stop`. `text` blocks stream `text_delta`; `thinking` blocks stream
//! `thinking_delta` then one `signature_delta` (the signature that must accompany the
//! thinking when it is sent back); a `redacted_thinking` block carries its encrypted
//! `data` whole; every reasoning block after the first of a message is announced
//! (`reasoning_block_start`) so that each keeps its own text and signature and goes
//! back unchanged, in order; `tool_use` blocks (client tools, the only ones xcsh
//! declares) stream their input as `input_json_delta` fragments. `message_delta`
//! carries the `stop_reason` and the cumulative `usage`, merged with `message_start`'s
//! (fields it has win); when `usage.iterations` is present (compaction, advisor,
//! fallback), the step's usage is the sum of the iterations, which is what was
//! billed. `error` events are API errors; `ping`, server-side tool blocks
//! (`server_tool_use`, `*_tool_result`, `mcp_tool_use`, …), `citations_delta` and
//! anything unknown are passed over as `skipped`.
//!
//! A recording may hold several messages in a row (a multi-request exchange): each
//! `message_start` after a `message_stop` opens the next one, tool calls keep
//! counting, usage adds up. A `message_start` before the open message stopped is a
//! restart (a provider or proxy started over): `restarted`, and the partial message
//! is discarded.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::fields::Reader;
use super::http::{self, ANTHROPIC_VERSION, ConfigError, HttpConfig, summary_text};
use super::sse::{StreamMapper, parse_payload};
use super::{BoxFuture, ModelRequest, Provider, StreamSink};
use crate::machine::{CallId, FinishReason, Message, ProviderError, StreamEvent, Usage};

#[derive(Debug)]
enum Block {
    Text,
    Thinking,
    /// A `redacted_thinking` block: its `data` came whole with its start.
    RedactedThinking,
    ToolUse {
        index: u32,
        /// The `input` of `content_block_start`, used when no fragment arrives.
        start_input: Value,
        fragments: bool,
    },
    /// A block the adapter does not use, by its type.
    Skipped(String),
}

/// Usage counters of one message, as the API names them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct MessageUsage {
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
}

impl MessageUsage {
    /// Fields present in `usage` (at `path`) replace ours; `iterations`, when present,
    /// is summed.
    fn merge(&mut self, usage: &Value, path: &str, r: Reader) -> Result<(), ProviderError> {
        let field =
            |v: &Value, at: &str, name: &str| r.uint(v.get(name), || format!("{at}.{name}"));
        if let Some(n) = field(usage, path, "input_tokens")? {
            self.input = n;
        }
        if let Some(n) = field(usage, path, "output_tokens")? {
            self.output = n;
        }
        if let Some(n) = field(usage, path, "cache_read_input_tokens")? {
            self.cache_read = n;
        }
        if let Some(n) = field(usage, path, "cache_creation_input_tokens")? {
            self.cache_write = n;
        }
        if let Some(iterations) =
            r.array(usage.get("iterations"), || format!("{path}.iterations"))?
            && !iterations.is_empty()
        {
            let mut sum = MessageUsage::default();
            for (i, it) in iterations.iter().enumerate() {
                let at = format!("{path}.iterations[{i}]");
                let n = |name: &str| field(it, &at, name).map(|n| n.unwrap_or(0));
                sum.input += n("input_tokens")?;
                sum.output += n("output_tokens")?;
                sum.cache_read += n("cache_read_input_tokens")?;
                sum.cache_write += n("cache_creation_input_tokens")?;
            }
            *self = sum;
        }
        Ok(())
    }

    fn to_usage(self) -> Usage {
        Usage {
            input_tokens: self.input,
            output_tokens: self.output,
            cache_read_tokens: self.cache_read,
            cache_write_tokens: self.cache_write,
            estimated: false,
        }
    }
}

/// Maps Messages stream events to normalized events.
#[derive(Debug, Default)]
pub struct AnthropicMapper {
    /// Content blocks of the current message, by their `index`.
    blocks: HashMap<u64, Block>,
    next_call: u32,
    /// Usage of the messages already stopped, summed.
    done_usage: Usage,
    message: MessageUsage,
    /// The current message emitted a `finish`.
    finished: bool,
    /// `stop_reason` from `message_start` (messages that arrive complete).
    start_stop_reason: Option<String>,
    open: bool,
    stopped: bool,
    /// The `id` of the open message, for the restart notice.
    message_id: Option<String>,
    /// Reasoning blocks (`thinking`, `redacted_thinking`) of the open message so far.
    reasoning_blocks: u32,
}

impl AnthropicMapper {
    pub fn new() -> AnthropicMapper {
        AnthropicMapper::default()
    }

    /// One SSE event; the payload's `type` decides (the SSE `event:` names the same).
    pub fn on_event(
        &mut self,
        event_type: Option<&str>,
        data: &str,
    ) -> Result<Vec<StreamEvent>, ProviderError> {
        let payload = parse_payload(data, "an Anthropic stream event")?;
        let kind = Reader::new("an Anthropic stream event")
            .str(payload.get("type"), || "type".into())?
            .or(event_type)
            .unwrap_or("")
            .to_string();
        let what = format!("an Anthropic {kind} event");
        let r = Reader::new(&what);
        let mut out = Vec::new();
        match kind.as_str() {
            "message_start" => self.message_start(&payload, r, &mut out)?,
            "content_block_start" => self.block_start(&payload, r, &mut out)?,
            "content_block_delta" => self.block_delta(&payload, r, &mut out)?,
            "content_block_stop" => self.block_stop(&payload, r, &mut out)?,
            "message_delta" => self.message_delta(&payload, r, &mut out)?,
            "message_stop" => self.message_stop(&mut out),
            "error" => {
                return Err(ProviderError {
                    kind: http::api_error_kind(&payload),
                    message: http::error_message(&payload)
                        .unwrap_or_else(|| "the stream reported an error".into()),
                });
            }
            // `ping` and event types newer than this adapter.
            other => out.push(skipped(if other.is_empty() { "(untyped)" } else { other })),
        }
        Ok(out)
    }

    /// The stream ended. Nothing is held back: events go out as they arrive.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        Vec::new()
    }

    /// `message_stop` closed the last message.
    pub fn is_complete(&self) -> bool {
        self.stopped && !self.open
    }

    fn usage_now(&self) -> Usage {
        let mut total = self.done_usage;
        total.add(&self.message.to_usage());
        total
    }

    fn message_start(
        &mut self,
        payload: &Value,
        r: Reader,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let message = r.object(payload.get("message"), || "message".into())?;
        let field = |key: &str| match message {
            Some(m) => r.str(m.get(key), || format!("message.{key}")),
            None => Ok(None),
        };
        let id = field("id")?.map(str::to_string);
        let start_stop_reason = field("stop_reason")?.map(str::to_string);
        if self.open {
            // A message started over before the last one stopped (a provider or a
            // proxy retried upstream): the partial message is discarded, and so are
            // its tool-call indices.
            let new = id.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
            let old = self.message_id.as_deref().unwrap_or("the open message");
            out.push(StreamEvent::Restarted {
                reason: format!("message_start{new} before message_stop of {old}"),
            });
            self.next_call = 0;
        }
        self.message_id = id;
        self.reasoning_blocks = 0;
        self.blocks.clear();
        self.message = MessageUsage::default();
        self.finished = false;
        self.open = true;
        self.stopped = false;
        self.start_stop_reason = start_stop_reason;
        let Some(message) = message else {
            return Ok(());
        };
        if let Some(usage) = r.object(message.get("usage"), || "message.usage".into())? {
            self.message.merge(usage, "message.usage", r)?;
        }
        // A message may arrive with its content already in place (e.g. tool calls
        // made from inside code execution): map it as if it had streamed.
        let content = r.array(message.get("content"), || "message.content".into())?;
        for (n, block) in content.into_iter().flatten().enumerate() {
            let at = |key: &str| format!("message.content[{n}].{key}");
            let kind = r.str(block.get("type"), || at("type"))?.unwrap_or("");
            match kind {
                "text" => {
                    if let Some(text) = r.str(block.get("text"), || at("text"))?
                        && !text.is_empty()
                    {
                        out.push(StreamEvent::TextDelta {
                            text: text.to_string(),
                        });
                    }
                }
                "tool_use" => {
                    let start =
                        tool_start(self.next_call, block, r, &format!("message.content[{n}]"))?;
                    let index = self.take_call_index();
                    out.push(start);
                    out.push(StreamEvent::ToolCallDelta {
                        index,
                        arguments: input_text(block.get("input")),
                    });
                    out.push(StreamEvent::ToolCallEnd { index });
                }
                other => out.push(skipped(&format!("message_start:{other}"))),
            }
        }
        if self.message != MessageUsage::default() {
            out.push(StreamEvent::Usage {
                usage: self.usage_now(),
            });
        }
        Ok(())
    }

    fn take_call_index(&mut self) -> u32 {
        let index = self.next_call;
        self.next_call += 1;
        index
    }

    /// The block `index` of an event (0 when absent).
    fn block_index(payload: &Value, r: Reader) -> Result<u64, ProviderError> {
        Ok(r.uint(payload.get("index"), || "index".into())?
            .unwrap_or(0))
    }

    fn block_start(
        &mut self,
        payload: &Value,
        r: Reader,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let index = Self::block_index(payload, r)?;
        let block = r.member(payload, "content_block")?;
        let text = |key: &str| r.text(block, "content_block", key);
        let kind = text("type")?;
        let state = match kind {
            "text" => {
                let text = text("text")?;
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta {
                        text: text.to_string(),
                    });
                }
                Block::Text
            }
            "thinking" => {
                let (thinking, signature) = (text("thinking")?, text("signature")?);
                self.reasoning_block(out);
                if !thinking.is_empty() {
                    out.push(StreamEvent::ReasoningDelta {
                        text: thinking.to_string(),
                    });
                }
                if !signature.is_empty() {
                    out.push(StreamEvent::ReasoningSignature {
                        signature: signature.to_string(),
                    });
                }
                Block::Thinking
            }
            "redacted_thinking" => {
                let data = text("data")?;
                self.reasoning_block(out);
                out.push(StreamEvent::ReasoningRedacted {
                    data: data.to_string(),
                });
                Block::RedactedThinking
            }
            "tool_use" => {
                let start = tool_start(self.next_call, block, r, "content_block")?;
                let call = self.take_call_index();
                out.push(start);
                Block::ToolUse {
                    index: call,
                    start_input: block.get("input").cloned().unwrap_or(Value::Null),
                    fragments: false,
                }
            }
            other => {
                let name = if other.is_empty() { "(untyped)" } else { other };
                out.push(skipped(&format!("content_block_start:{name}")));
                Block::Skipped(name.to_string())
            }
        };
        self.blocks.insert(index, state);
        Ok(())
    }

    /// A reasoning block begins: every one after the first of its message is
    /// announced, so that each keeps its own text and signature.
    fn reasoning_block(&mut self, out: &mut Vec<StreamEvent>) {
        if self.reasoning_blocks > 0 {
            out.push(StreamEvent::ReasoningBlockStart {});
        }
        self.reasoning_blocks += 1;
    }

    fn block_delta(
        &mut self,
        payload: &Value,
        r: Reader,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let index = Self::block_index(payload, r)?;
        let delta = r.member(payload, "delta")?;
        let text = |key: &str| r.text(delta, "delta", key);
        let kind = text("type")?;
        match (self.blocks.get_mut(&index), kind) {
            (Some(Block::Skipped(name)), _) => {
                out.push(skipped(&format!("content_block_delta:{name}")));
            }
            (Some(Block::RedactedThinking), _) => {
                out.push(skipped("content_block_delta:redacted_thinking"));
            }
            (_, "text_delta") => {
                let text = text("text")?;
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta {
                        text: text.to_string(),
                    });
                }
            }
            (_, "thinking_delta") => {
                let text = text("thinking")?;
                if !text.is_empty() {
                    out.push(StreamEvent::ReasoningDelta {
                        text: text.to_string(),
                    });
                }
            }
            (_, "signature_delta") => {
                let signature = text("signature")?;
                if !signature.is_empty() {
                    out.push(StreamEvent::ReasoningSignature {
                        signature: signature.to_string(),
                    });
                }
            }
            (
                Some(Block::ToolUse {
                    index, fragments, ..
                }),
                "input_json_delta",
            ) => {
                let part = text("partial_json")?;
                if !part.is_empty() {
                    *fragments = true;
                    out.push(StreamEvent::ToolCallDelta {
                        index: *index,
                        arguments: part.to_string(),
                    });
                }
            }
            (_, other) => {
                let name = if other.is_empty() { "(untyped)" } else { other };
                out.push(skipped(&format!("content_block_delta:{name}")));
            }
        }
        Ok(())
    }

    fn block_stop(
        &mut self,
        payload: &Value,
        r: Reader,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let index = Self::block_index(payload, r)?;
        match self.blocks.get(&index) {
            Some(Block::ToolUse {
                index,
                start_input,
                fragments,
            }) => {
                if !fragments {
                    out.push(StreamEvent::ToolCallDelta {
                        index: *index,
                        arguments: input_text(Some(start_input)),
                    });
                }
                out.push(StreamEvent::ToolCallEnd { index: *index });
            }
            Some(Block::Skipped(name)) => {
                out.push(skipped(&format!("content_block_stop:{name}")));
            }
            Some(Block::Text | Block::Thinking | Block::RedactedThinking) => {}
            None => out.push(skipped("content_block_stop:(unknown block)")),
        }
        Ok(())
    }

    fn message_delta(
        &mut self,
        payload: &Value,
        r: Reader,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let delta = r.object(payload.get("delta"), || "delta".into())?;
        let reason = match delta {
            Some(d) => r.str(d.get("stop_reason"), || "delta.stop_reason".into())?,
            None => None,
        };
        if let Some(usage) = r.object(payload.get("usage"), || "usage".into())? {
            self.message.merge(usage, "usage", r)?;
            out.push(StreamEvent::Usage {
                usage: self.usage_now(),
            });
        }
        if let Some(reason) = reason {
            self.finished = true;
            out.push(StreamEvent::Finish {
                reason: stop_reason(reason),
            });
        }
        Ok(())
    }

    fn message_stop(&mut self, out: &mut Vec<StreamEvent>) {
        if !self.finished
            && let Some(reason) = self.start_stop_reason.take()
        {
            out.push(StreamEvent::Finish {
                reason: stop_reason(&reason),
            });
        }
        self.done_usage = self.usage_now();
        self.message = MessageUsage::default();
        self.blocks.clear();
        self.open = false;
        self.stopped = true;
    }
}

/// The `tool_call_start` of a `tool_use` block at `path`.
fn tool_start(
    index: u32,
    block: &Value,
    r: Reader,
    path: &str,
) -> Result<StreamEvent, ProviderError> {
    let s = |key: &str| {
        r.str(block.get(key), || format!("{path}.{key}"))
            .map(|v| v.unwrap_or("").to_string())
    };
    Ok(StreamEvent::ToolCallStart {
        index,
        id: CallId(s("id")?),
        name: s("name")?,
    })
}

/// A complete `input` value as argument text (`{}` when absent).
fn input_text(input: Option<&Value>) -> String {
    match input {
        None | Some(Value::Null) => "{}".to_string(),
        Some(v) => v.to_string(),
    }
}

fn skipped(event_type: &str) -> StreamEvent {
    StreamEvent::Skipped {
        event_type: event_type.to_string(),
    }
}

/// The documented `stop_reason` values.
pub fn stop_reason(reason: &str) -> FinishReason {
    match reason {
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        // "end_turn", "stop_sequence", "pause_turn" (a server-tool loop paused; no
        // client call is pending) and anything newer: the model stopped.
        _ => FinishReason::Stop,
    }
}

impl StreamMapper for AnthropicMapper {
    fn on_event(
        &mut self,
        event_type: Option<&str>,
        data: &str,
    ) -> Result<Vec<StreamEvent>, ProviderError> {
        AnthropicMapper::on_event(self, event_type, data)
    }
    fn finish(&mut self) -> Vec<StreamEvent> {
        AnthropicMapper::finish(self)
    }
    fn is_complete(&self) -> bool {
        AnthropicMapper::is_complete(self)
    }
}

/// The request body. Consecutive messages of one role are merged (the API wants
/// them alternating): tool results and a following user message share one user
/// turn, tool results first. An assistant turn carries its thinking (with its
/// signature; thinking without one cannot be sent back and is dropped), text and
/// `tool_use` blocks.
pub fn build_request(model: &str, request: &ModelRequest) -> Value {
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, blocks: Vec<Value>| {
        if blocks.is_empty() {
            return;
        }
        match turns.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    };
    for message in &request.messages {
        match message {
            Message::User { text, .. } => push("user", text_block(text)),
            Message::Summary { text } => push("user", text_block(&summary_text(text))),
            Message::Assistant {
                text,
                reasoning,
                reasoning_signature,
                reasoning_blocks,
                tool_calls,
            } => {
                let mut blocks = Vec::new();
                if reasoning_blocks.is_empty() {
                    if !reasoning_signature.is_empty() {
                        blocks.push(thinking_block(reasoning, reasoning_signature));
                    }
                } else {
                    // Each block as it came, in order: a redacted block as its data,
                    // a thinking block with its own signature (one without a
                    // signature cannot be sent back).
                    for block in reasoning_blocks {
                        if !block.redacted.is_empty() {
                            blocks.push(json!({
                                "type": "redacted_thinking",
                                "data": block.redacted,
                            }));
                        } else if !block.signature.is_empty() {
                            blocks.push(thinking_block(&block.text, &block.signature));
                        }
                    }
                }
                blocks.extend(text_block(text));
                for call in tool_calls {
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id.0,
                        "name": call.name,
                        "input": tool_input(&call.arguments),
                    }));
                }
                push("assistant", blocks);
            }
            Message::ToolResult {
                call_id,
                is_error,
                content,
                ..
            } => {
                let mut block = json!({
                    "type": "tool_result",
                    "tool_use_id": call_id.0,
                    "content": content,
                });
                if *is_error {
                    block["is_error"] = Value::Bool(true);
                }
                push("user", vec![block]);
            }
        }
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = json!({
        "model": model,
        "max_tokens": request.max_output_tokens,
        "messages": messages,
        "stream": true,
    });
    if !request.system.is_empty() {
        body["system"] = Value::String(request.system.clone());
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.parameters,
                })
            })
            .collect();
    }
    body
}

fn thinking_block(thinking: &str, signature: &str) -> Value {
    json!({
        "type": "thinking",
        "thinking": thinking,
        "signature": signature,
    })
}

/// The API rejects empty text blocks: empty text is no block.
fn text_block(text: &str) -> Vec<Value> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "text", "text": text})]
    }
}

/// `tool_use.input` must be an object: the arguments when they are one, otherwise
/// (the model produced invalid JSON, which was returned to it as an error) the raw
/// text under `_invalid_arguments`, so that the model still sees what it sent.
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({ "_invalid_arguments": arguments }),
    }
}

/// The Messages provider.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    config: Arc<HttpConfig>,
    client: reqwest::Client,
}

impl AnthropicProvider {
    pub fn new(config: HttpConfig) -> Result<AnthropicProvider, ConfigError> {
        Ok(AnthropicProvider {
            client: http::client()?,
            config: Arc::new(config),
        })
    }

    pub fn config(&self) -> &HttpConfig {
        &self.config
    }
}

impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn render_request(&self, request: &ModelRequest) -> Value {
        build_request(&self.config.model, request)
    }

    fn model(&self) -> &str {
        &self.config.model
    }

    fn stream(
        &self,
        request: ModelRequest,
        sink: StreamSink,
        cancel: CancellationToken,
    ) -> BoxFuture<Result<(), ProviderError>> {
        http::post_stream(
            self.client.clone(),
            Arc::clone(&self.config),
            http::Endpoint {
                path: "v1/messages",
                headers: vec![(
                    "anthropic-version".to_string(),
                    ANTHROPIC_VERSION.to_string(),
                )],
                auth: |key| ("x-api-key".to_string(), key.to_string()),
            },
            build_request(&self.config.model, &request),
            request.max_output_tokens,
            AnthropicMapper::new(),
            sink,
            cancel,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{Assembler, ProviderErrorKind, ReasoningBlock, ToolCall, UserOrigin};
    use crate::ports::ToolSpec;
    use expect_test::expect;

    fn run(lines: &[&str]) -> (Vec<StreamEvent>, Option<ProviderError>) {
        let mut m = AnthropicMapper::new();
        let mut events = Vec::new();
        for line in lines {
            let kind = serde_json::from_str::<Value>(line)
                .ok()
                .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_string));
            match m.on_event(kind.as_deref(), line) {
                Ok(e) => events.extend(e),
                Err(e) => return (events, Some(e)),
            }
        }
        events.extend(m.finish());
        (events, None)
    }

    fn render(events: &[StreamEvent]) -> String {
        events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn text_with_merged_usage() {
        let (events, err) = run(&[
            r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_read_input_tokens":100,"cache_creation_input_tokens":7,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"!"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        assert!(err.is_none());
        expect![[r#"
            {"kind":"usage","usage":{"input_tokens":25,"output_tokens":1,"cache_read_tokens":100,"cache_write_tokens":7}}
            {"kind":"skipped","event_type":"ping"}
            {"kind":"text_delta","text":"Hello"}
            {"kind":"text_delta","text":"!"}
            {"kind":"usage","usage":{"input_tokens":25,"output_tokens":15,"cache_read_tokens":100,"cache_write_tokens":7}}
            {"kind":"finish","reason":"stop"}"#]]
        .assert_eq(&render(&events));
    }

    #[test]
    fn thinking_with_signature_then_parallel_tool_uses() {
        let (events, err) = run(&[
            r#"{"type":"message_start","message":{"id":"m","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Two files."}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAh"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_a","name":"read","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"}"}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_b","name":"list","input":{}}}"#,
            r#"{"type":"content_block_stop","index":2}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":40}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        assert!(err.is_none());
        let mut a = Assembler::default();
        events.iter().for_each(|e| a.push(e));
        let a = a.finish();
        assert_eq!(a.reasoning, "Two files.");
        assert_eq!(a.reasoning_signature, "EqQBCgIYAh");
        assert_eq!(
            a.tool_calls,
            vec![
                ToolCall {
                    id: CallId("toolu_a".into()),
                    name: "read".into(),
                    arguments: r#"{"path": "a"}"#.into()
                },
                ToolCall {
                    id: CallId("toolu_b".into()),
                    name: "list".into(),
                    arguments: "{}".into()
                },
            ]
        );
        assert_eq!(a.finish, Some(FinishReason::ToolCalls));
        assert_eq!(
            a.usage,
            Usage {
                input_tokens: 10,
                output_tokens: 40,
                ..Usage::default()
            }
        );
    }

    #[test]
    fn server_tools_are_skipped_not_called() {
        let (events, err) = run(&[
            r#"{"type":"message_start","message":{"content":[],"usage":{"input_tokens":1,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"x\"}"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location"}}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Found."}}"#,
            r#"{"type":"content_block_stop","index":2}"#,
            r#"{"type":"brand_new_event"}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        assert!(err.is_none());
        expect![[r#"
            {"kind":"usage","usage":{"input_tokens":1,"output_tokens":1}}
            {"kind":"skipped","event_type":"content_block_start:server_tool_use"}
            {"kind":"skipped","event_type":"content_block_delta:server_tool_use"}
            {"kind":"skipped","event_type":"content_block_stop:server_tool_use"}
            {"kind":"skipped","event_type":"content_block_start:web_search_tool_result"}
            {"kind":"skipped","event_type":"content_block_stop:web_search_tool_result"}
            {"kind":"skipped","event_type":"content_block_delta:citations_delta"}
            {"kind":"text_delta","text":"Found."}
            {"kind":"skipped","event_type":"brand_new_event"}
            {"kind":"usage","usage":{"input_tokens":1,"output_tokens":3}}
            {"kind":"finish","reason":"stop"}"#]]
        .assert_eq(&render(&events));
    }

    #[test]
    fn error_event_and_stop_reasons() {
        let (events, err) = run(&[
            r#"{"type":"message_start","message":{"content":[],"usage":{"input_tokens":1,"output_tokens":1}}}"#,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ]);
        assert_eq!(events.len(), 1);
        assert_eq!(
            err,
            Some(ProviderError {
                kind: ProviderErrorKind::Api,
                message: "Overloaded (overloaded_error)".into()
            })
        );
        assert_eq!(stop_reason("max_tokens"), FinishReason::Length);
        assert_eq!(stop_reason("refusal"), FinishReason::ContentFilter);
        assert_eq!(stop_reason("stop_sequence"), FinishReason::Stop);
        let (_, err) = run(&["not json"]);
        assert_eq!(err.map(|e| e.kind), Some(ProviderErrorKind::Malformed));
    }

    #[test]
    fn iterations_are_summed_and_messages_add_up() {
        let (events, _) = run(&[
            r#"{"type":"message_start","message":{"content":[],"usage":{"input_tokens":100,"output_tokens":1}}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"input_tokens":100,"output_tokens":20}}"#,
            r#"{"type":"message_stop"}"#,
            r#"{"type":"message_start","message":{"content":[],"usage":{"input_tokens":50,"output_tokens":1}}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":5,"output_tokens":7,"iterations":[{"type":"compaction","input_tokens":50,"output_tokens":4},{"type":"message","input_tokens":5,"output_tokens":7}]}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        let mut a = Assembler::default();
        events.iter().for_each(|e| a.push(e));
        assert_eq!(
            a.finish().usage,
            Usage {
                input_tokens: 155,
                output_tokens: 31,
                ..Usage::default()
            }
        );
    }

    /// Folds events into the assembled message, as the machine does.
    fn assemble(events: &[StreamEvent]) -> crate::machine::Assembled {
        let mut a = Assembler::default();
        events.iter().for_each(|e| a.push(e));
        a.finish()
    }

    #[test]
    fn a_restarted_anthropic_stream_keeps_only_the_second_message() {
        let (events, err) = run(&[
            r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":30,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"First try."}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG_A"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_a","name":"read","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a"}}"#,
            r#"{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"usage":{"input_tokens":30,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Second try."}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG_B"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_b","name":"read","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"b.txt\"}"}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":12}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        assert!(err.is_none(), "{err:?}");
        let a = assemble(&events);
        assert_eq!(
            (a.reasoning.as_str(), a.reasoning_signature.as_str()),
            ("Second try.", "SIG_B")
        );
        assert_eq!(
            a.tool_calls,
            vec![ToolCall {
                id: CallId("toolu_b".into()),
                name: "read".into(),
                arguments: r#"{"path": "b.txt"}"#.into()
            }]
        );
        assert_eq!(a.finish, Some(FinishReason::ToolCalls));
        assert_eq!(
            a.usage,
            Usage {
                input_tokens: 30,
                output_tokens: 12,
                ..Usage::default()
            }
        );
        assert_eq!(
            events
                .iter()
                .filter(|e| matches!(e, StreamEvent::Restarted { .. }))
                .collect::<Vec<_>>(),
            vec![&StreamEvent::Restarted {
                reason: "message_start (msg_2) before message_stop of msg_1".into()
            }]
        );
    }

    #[test]
    fn several_thinking_blocks_keep_their_own_text_and_signature() {
        let (events, err) = run(&[
            r#"{"type":"message_start","message":{"id":"msg_1","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"One."}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG_1"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgB"}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"thinking_delta","thinking":"Two."}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"signature_delta","signature":"SIG_2"}}"#,
            r#"{"type":"content_block_stop","index":2}"#,
            r#"{"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"Done."}}"#,
            r#"{"type":"content_block_stop","index":3}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        assert!(err.is_none(), "{err:?}");
        let a = assemble(&events);
        let block = |text: &str, signature: &str, redacted: &str| ReasoningBlock {
            text: text.into(),
            signature: signature.into(),
            redacted: redacted.into(),
        };
        assert_eq!(
            a.reasoning_blocks,
            vec![
                block("One.", "SIG_1", ""),
                block("", "", "EmwKAhgB"),
                block("Two.", "SIG_2", ""),
            ]
        );
        assert_eq!(
            (a.reasoning.as_str(), a.reasoning_signature.as_str()),
            ("One.\n\nTwo.", "")
        );
        // Sent back unchanged and in order, before the text.
        let mut request = crate::provider::openai::tests::sample_request();
        request.messages = vec![Message::Assistant {
            text: a.text,
            reasoning: a.reasoning,
            reasoning_signature: a.reasoning_signature,
            reasoning_blocks: a.reasoning_blocks,
            tool_calls: a.tool_calls,
        }];
        assert_eq!(
            build_request("claude", &request)["messages"][0]["content"],
            json!([
                {"type": "thinking", "thinking": "One.", "signature": "SIG_1"},
                {"type": "redacted_thinking", "data": "EmwKAhgB"},
                {"type": "thinking", "thinking": "Two.", "signature": "SIG_2"},
                {"type": "text", "text": "Done."},
            ])
        );
    }

    #[test]
    fn one_thinking_block_assembles_as_before() {
        let (events, _) = run(&[
            r#"{"type":"message_start","message":{"content":[]}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Only."}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        let a = assemble(&events);
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"reasoning":"Only.","reasoning_signature":"SIG","usage":{"input_tokens":0,"output_tokens":0},"finish":null}"#
        );
    }

    #[test]
    fn every_wrong_type_in_an_anthropic_event_is_an_error_never_a_silent_drop() {
        let start = r#"{"type":"message_start","message":{"id":"m","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}"#;
        let text =
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#;
        let tool = r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"read","input":{}}}"#;
        let cases = [
            (
                vec![
                    start,
                    text,
                    r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":5}}"#,
                ],
                "an Anthropic content_block_delta event: delta.text is a number (5), expected a string",
            ),
            (
                vec![
                    start,
                    r#"{"type":"content_block_start","index":-1,"content_block":{"type":"text","text":""}}"#,
                ],
                "an Anthropic content_block_start event: index is a number (-1), expected a non-negative integer",
            ),
            (
                vec![
                    start,
                    r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":7,"input":{}}}"#,
                ],
                "an Anthropic content_block_start event: content_block.name is a number (7), expected a string",
            ),
            (
                vec![
                    start,
                    tool,
                    r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":{"a":1}}}"#,
                ],
                r#"an Anthropic content_block_delta event: delta.partial_json is an object ({"a":1}), expected a string"#,
            ),
            (
                vec![
                    start,
                    r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":3}}"#,
                ],
                "an Anthropic content_block_start event: content_block.signature is a number (3), expected a string",
            ),
            (
                vec![
                    start,
                    r#"{"type":"message_delta","delta":{"stop_reason":1},"usage":{"output_tokens":2}}"#,
                ],
                "an Anthropic message_delta event: delta.stop_reason is a number (1), expected a string",
            ),
            (
                vec![
                    start,
                    r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":"12"}}"#,
                ],
                r#"an Anthropic message_delta event: usage.output_tokens is a string ("12"), expected a non-negative integer"#,
            ),
            (
                vec![r#"{"type":"message_start","message":{"content":{"type":"text"}}}"#],
                r#"an Anthropic message_start event: message.content is an object ({"type":"text"}), expected an array"#,
            ),
            (
                vec![r#"{"type":7}"#],
                "an Anthropic stream event: type is a number (7), expected a string",
            ),
        ];
        for (lines, message) in cases {
            assert_eq!(
                run(&lines).1.map(|e| (e.kind, e.message)),
                Some((ProviderErrorKind::Malformed, message.to_string())),
                "{lines:?}"
            );
        }
    }

    #[test]
    fn completeness_needs_message_stop() {
        let mut m = AnthropicMapper::new();
        m.on_event(None, r#"{"type":"message_start","message":{"content":[]}}"#)
            .unwrap();
        assert!(!m.is_complete());
        m.on_event(None, r#"{"type":"message_stop"}"#).unwrap();
        assert!(m.is_complete());
    }

    #[test]
    fn request_renders_every_message_kind() {
        let mut request = crate::provider::openai::tests::sample_request();
        request.messages.push(Message::User {
            origin: UserOrigin::FollowUp,
            text: "thanks".into(),
        });
        request.messages.push(Message::Assistant {
            text: String::new(),
            reasoning: String::new(),
            reasoning_signature: String::new(),
            reasoning_blocks: vec![],
            tool_calls: vec![ToolCall {
                id: CallId("toolu_x".into()),
                name: "read".into(),
                arguments: "{not json".into(),
            }],
        });
        request.tools.push(ToolSpec {
            name: "list".into(),
            description: "List a directory".into(),
            parameters: json!({"type":"object"}),
        });
        let body = build_request("claude-test", &request);
        expect![[r#"
            {
              "max_tokens": 1024,
              "messages": [
                {
                  "content": [
                    {
                      "text": "[Summary of the earlier conversation]\nEarlier we listed files.",
                      "type": "text"
                    },
                    {
                      "text": "read a.txt",
                      "type": "text"
                    }
                  ],
                  "role": "user"
                },
                {
                  "content": [
                    {
                      "signature": "sig",
                      "thinking": "The user wants a.txt.",
                      "type": "thinking"
                    },
                    {
                      "text": "Reading.",
                      "type": "text"
                    },
                    {
                      "id": "call_1",
                      "input": {
                        "path": "a.txt"
                      },
                      "name": "read",
                      "type": "tool_use"
                    }
                  ],
                  "role": "assistant"
                },
                {
                  "content": [
                    {
                      "content": "hello",
                      "tool_use_id": "call_1",
                      "type": "tool_result"
                    },
                    {
                      "text": "also b",
                      "type": "text"
                    }
                  ],
                  "role": "user"
                },
                {
                  "content": [
                    {
                      "id": "call_2",
                      "input": {
                        "path": "b.txt"
                      },
                      "name": "read",
                      "type": "tool_use"
                    }
                  ],
                  "role": "assistant"
                },
                {
                  "content": [
                    {
                      "content": "error: no such file",
                      "is_error": true,
                      "tool_use_id": "call_2",
                      "type": "tool_result"
                    }
                  ],
                  "role": "user"
                },
                {
                  "content": [
                    {
                      "text": "Done.",
                      "type": "text"
                    }
                  ],
                  "role": "assistant"
                },
                {
                  "content": [
                    {
                      "text": "thanks",
                      "type": "text"
                    }
                  ],
                  "role": "user"
                },
                {
                  "content": [
                    {
                      "id": "toolu_x",
                      "input": {
                        "_invalid_arguments": "{not json"
                      },
                      "name": "read",
                      "type": "tool_use"
                    }
                  ],
                  "role": "assistant"
                }
              ],
              "model": "claude-test",
              "stream": true,
              "system": "You are terse.",
              "tools": [
                {
                  "description": "Read a file",
                  "input_schema": {
                    "properties": {
                      "path": {
                        "type": "string"
                      }
                    },
                    "required": [
                      "path"
                    ],
                    "type": "object"
                  },
                  "name": "read"
                },
                {
                  "description": "List a directory",
                  "input_schema": {
                    "type": "object"
                  },
                  "name": "list"
                }
              ]
            }"#]]
        .assert_eq(&serde_json::to_string_pretty(&body).unwrap());
    }
}
