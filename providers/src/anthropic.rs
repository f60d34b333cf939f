//! Anthropic Messages streaming (`POST {base}/v1/messages`, `stream: true`).
//!
//! - [`AnthropicMapper`]: sans-IO, one SSE event in, normalized events out.
//! - [`wire::body`]: the JSON body for a [`ModelRequest`].
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

use serde::Serialize;
use serde_json::Value;

use super::ModelRequest;
use super::fields::{Reader, TypedMapper};
use super::http::{self, ANTHROPIC_VERSION, HttpConfig, summary_text};
use super::sse::{OpenMessage, push_text, skip_unknown, skipped};
use xcsh_machine::{CallId, FinishReason, ProviderError, StreamEvent, Usage};

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
    /// The message open (a restart notice needs its id).
    current: OpenMessage,
    /// The events mapped from the event at hand.
    out: Vec<StreamEvent>,
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
    stopped: bool,
    /// Reasoning blocks (`thinking`, `redacted_thinking`) of the open message so far.
    reasoning_blocks: u32,
}

impl TypedMapper for AnthropicMapper {
    const EVENTS: &'static str = "an Anthropic";

    /// One event; the payload's `type` decides (the SSE `event:` names the same).
    fn on_typed(&mut self, kind: &str, payload: &Value, r: Reader) -> Result<bool, ProviderError> {
        match kind {
            "message_start" => self.message_start(payload, r)?,
            "content_block_start" => self.block_start(payload, r)?,
            "content_block_delta" => self.block_delta(payload, r)?,
            "content_block_stop" => self.block_stop(payload, r)?,
            "message_delta" => self.message_delta(payload, r)?,
            "message_stop" => self.message_stop(),
            // `error` (the caller turns it into the API error), `ping`, and event types
            // newer than this adapter.
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn events(&mut self) -> &mut Vec<StreamEvent> {
        &mut self.out
    }

    /// `message_stop` closed the last message.
    fn ended(&self) -> bool {
        self.stopped && !self.current.open
    }
}

impl AnthropicMapper {
    fn usage_now(&self) -> Usage {
        let mut total = self.done_usage;
        total.add(&self.message.to_usage());
        total
    }

    fn message_start(&mut self, payload: &Value, r: Reader) -> Result<(), ProviderError> {
        let message = r.object(payload.get("message"), || "message".into())?;
        let field = |key: &str| match message {
            Some(m) => r.str(m.get(key), || format!("message.{key}")),
            None => Ok(None),
        };
        let id = field("id")?.map(str::to_string);
        let start_stop_reason = field("stop_reason")?.map(str::to_string);
        let restart = self.current.start(id, "the open message", |new, old| {
            format!("message_start{new} before message_stop of {old}")
        });
        if let Some(restart) = restart {
            // A message started over before the last one stopped (a provider or a
            // proxy retried upstream): the partial message is discarded, and so are
            // its tool-call indices.
            self.out.push(restart);
            self.next_call = 0;
        }
        self.reasoning_blocks = 0;
        self.blocks.clear();
        self.message = MessageUsage::default();
        self.finished = false;
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
                    if let Some(text) = r.str(block.get("text"), || at("text"))? {
                        push_text(&mut self.out, text, |text| StreamEvent::TextDelta { text });
                    }
                }
                "tool_use" => {
                    let start =
                        tool_start(self.next_call, block, r, &format!("message.content[{n}]"))?;
                    let index = self.take_call_index();
                    self.out.push(start);
                    self.out.push(StreamEvent::ToolCallDelta {
                        index,
                        arguments: input_text(block.get("input")),
                    });
                    self.out.push(StreamEvent::ToolCallEnd { index });
                }
                other => self.out.push(skipped(&format!("message_start:{other}"))),
            }
        }
        if self.message != MessageUsage::default() {
            self.out.push(StreamEvent::Usage {
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

    fn block_start(&mut self, payload: &Value, r: Reader) -> Result<(), ProviderError> {
        let index = Self::block_index(payload, r)?;
        let block = r.member(payload, "content_block")?;
        let text = |key: &str| r.text(block, "content_block", key);
        let kind = text("type")?;
        let state = match kind {
            "text" => {
                let text = text("text")?;
                push_text(&mut self.out, text, |text| StreamEvent::TextDelta { text });
                Block::Text
            }
            "thinking" => {
                let (thinking, signature) = (text("thinking")?, text("signature")?);
                self.reasoning_block();
                push_text(&mut self.out, thinking, |text| {
                    StreamEvent::ReasoningDelta { text }
                });
                push_text(&mut self.out, signature, |signature| {
                    StreamEvent::ReasoningSignature { signature }
                });
                Block::Thinking
            }
            "redacted_thinking" => {
                let data = text("data")?;
                self.reasoning_block();
                self.out.push(StreamEvent::ReasoningRedacted {
                    data: data.to_string(),
                });
                Block::RedactedThinking
            }
            "tool_use" => {
                let start = tool_start(self.next_call, block, r, "content_block")?;
                let call = self.take_call_index();
                self.out.push(start);
                Block::ToolUse {
                    index: call,
                    start_input: block.get("input").cloned().unwrap_or(Value::Null),
                    fragments: false,
                }
            }
            other => {
                let name = skip_unknown(&mut self.out, "content_block_start", other);
                Block::Skipped(name)
            }
        };
        self.blocks.insert(index, state);
        Ok(())
    }

    /// A reasoning block begins: every one after the first of its message is
    /// announced, so that each keeps its own text and signature.
    fn reasoning_block(&mut self) {
        if self.reasoning_blocks > 0 {
            self.out.push(StreamEvent::ReasoningBlockStart {});
        }
        self.reasoning_blocks += 1;
    }

    fn block_delta(&mut self, payload: &Value, r: Reader) -> Result<(), ProviderError> {
        let index = Self::block_index(payload, r)?;
        let delta = r.member(payload, "delta")?;
        let text = |key: &str| r.text(delta, "delta", key);
        let kind = text("type")?;
        match (self.blocks.get_mut(&index), kind) {
            (Some(Block::Skipped(name)), _) => {
                self.out
                    .push(skipped(&format!("content_block_delta:{name}")));
            }
            (Some(Block::RedactedThinking), _) => {
                self.out
                    .push(skipped("content_block_delta:redacted_thinking"));
            }
            (_, "text_delta") => {
                let text = text("text")?;
                push_text(&mut self.out, text, |text| StreamEvent::TextDelta { text });
            }
            (_, "thinking_delta") => {
                let text = text("thinking")?;
                push_text(&mut self.out, text, |text| StreamEvent::ReasoningDelta {
                    text,
                });
            }
            (_, "signature_delta") => {
                let signature = text("signature")?;
                push_text(&mut self.out, signature, |signature| {
                    StreamEvent::ReasoningSignature { signature }
                });
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
                    self.out.push(StreamEvent::ToolCallDelta {
                        index: *index,
                        arguments: part.to_string(),
                    });
                }
            }
            (_, other) => {
                skip_unknown(&mut self.out, "content_block_delta", other);
            }
        }
        Ok(())
    }

    fn block_stop(&mut self, payload: &Value, r: Reader) -> Result<(), ProviderError> {
        let index = Self::block_index(payload, r)?;
        match self.blocks.get(&index) {
            Some(Block::ToolUse {
                index,
                start_input,
                fragments,
            }) => {
                if !fragments {
                    self.out.push(StreamEvent::ToolCallDelta {
                        index: *index,
                        arguments: input_text(Some(start_input)),
                    });
                }
                self.out.push(StreamEvent::ToolCallEnd { index: *index });
            }
            Some(Block::Skipped(name)) => {
                self.out
                    .push(skipped(&format!("content_block_stop:{name}")));
            }
            Some(Block::Text | Block::Thinking | Block::RedactedThinking) => {}
            None => self.out.push(skipped("content_block_stop:(unknown block)")),
        }
        Ok(())
    }

    fn message_delta(&mut self, payload: &Value, r: Reader) -> Result<(), ProviderError> {
        let delta = r.object(payload.get("delta"), || "delta".into())?;
        let reason = match delta {
            Some(d) => r.str(d.get("stop_reason"), || "delta.stop_reason".into())?,
            None => None,
        };
        if let Some(usage) = r.object(payload.get("usage"), || "usage".into())? {
            self.message.merge(usage, "usage", r)?;
            self.out.push(StreamEvent::Usage {
                usage: self.usage_now(),
            });
        }
        if let Some(reason) = reason {
            self.finished = true;
            self.out.push(StreamEvent::Finish {
                reason: stop_reason(reason),
            });
        }
        Ok(())
    }

    fn message_stop(&mut self) {
        if !self.finished
            && let Some(reason) = self.start_stop_reason.take()
        {
            self.out.push(StreamEvent::Finish {
                reason: stop_reason(&reason),
            });
        }
        self.done_usage = self.usage_now();
        self.message = MessageUsage::default();
        self.blocks.clear();
        self.current.open = false;
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

pub mod wire;

/// The Messages wire protocol.
#[derive(Debug, Clone, Copy)]
pub struct Messages;

impl http::Wire for Messages {
    const NAME: &'static str = "anthropic";
    const PATH: &'static str = "v1/messages";
    type Mapper = AnthropicMapper;

    fn for_config(_: &HttpConfig) -> Messages {
        Messages
    }
    fn body<'a>(&self, model: &'a str, request: &'a ModelRequest) -> impl Serialize + 'a {
        wire::body(model, request)
    }
    fn headers() -> Vec<(String, String)> {
        vec![(
            "anthropic-version".to_string(),
            ANTHROPIC_VERSION.to_string(),
        )]
    }
    fn auth(key: &str) -> (String, String) {
        ("x-api-key".to_string(), key.to_string())
    }
}

/// The Messages provider.
pub type AnthropicProvider = http::HttpProvider<Messages>;

#[cfg(test)]
mod tests;
