//! OpenAI Chat Completions streaming (`POST {base}/chat/completions`, `stream: true`),
//! the protocol also spoken by Ollama, llama.cpp, vLLM, LM Studio, DeepSeek, Mistral,
//! xAI and OpenRouter.
//!
//! - [`OpenAiMapper`]: sans-IO, one SSE `data:` payload in, normalized events out.
//! - [`build_request`]: the JSON body for a [`ModelRequest`].
//! - [`OpenAiProvider`]: the [`Provider`] over real HTTP.
//!
//! Mapping (per the Chat Completions streaming reference): each chunk's
//! `choices[0].delta` carries `content` (text), `reasoning_content` / `reasoning`
//! (the reasoning extension of DeepSeek, xAI, OpenRouter, vLLM, Ollama), `refusal`,
//! and `tool_calls` fragments keyed by `index` (the first fragment of a call has its
//! `id` and `function.name`, later ones append to `function.arguments`). Mistral
//! sends `content` as an array of typed parts (`text`, `thinking`) and tool calls
//! without `index`. `finish_reason` ends the choice (its tool calls end there); with
//! `stream_options.include_usage` a last chunk with empty `choices` carries `usage`;
//! `data: [DONE]` ends the stream. The normalized `finish` is sent last, after the
//! usage, when `[DONE]` arrives (or the stream ends). A refusal is an API error with
//! the refusal text; a chunk with an `error` object is an API error.
//!
//! A message that starts over inside the stream (a provider or proxy retried
//! upstream) shows as a chunk that opens a message (`delta.role`) under a new `id`,
//! or a `delta.role` after content that came without one: `restarted`, and the
//! partial message is forgotten.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::fields::Reader;
use super::http::{self, ConfigError, HttpConfig, summary_text};
use super::sse::{StreamMapper, malformed, parse_payload};
use super::{BoxFuture, ModelRequest, Provider, StreamSink};
use crate::machine::{
    CallId, FinishReason, Message, ProviderError, ProviderErrorKind, StreamEvent, Usage,
};

/// What a chunk is called in errors.
const CHUNK: &str = "a Chat Completions chunk";

/// One tool call being assembled from `delta.tool_calls` fragments.
#[derive(Debug)]
struct ChatCall {
    /// The provider's `index` (absent with Mistral).
    provider_index: Option<u64>,
    provider_id: Option<String>,
    /// Our index: dense, in order of first appearance.
    index: u32,
    started: bool,
    ended: bool,
    name: String,
    /// Argument fragments that arrived before the call's name.
    pending: String,
}

/// Maps Chat Completions chunks to normalized events.
#[derive(Debug, Default)]
pub struct OpenAiMapper {
    calls: Vec<ChatCall>,
    refusal: String,
    /// A `finish_reason` arrived; the normalized `finish` waits for the usage.
    pending_finish: Option<FinishReason>,
    saw_finish_reason: bool,
    done: bool,
    /// The `id` of the message being streamed (the first non-empty one).
    message_id: Option<String>,
    /// The message has output (text, reasoning, a refusal or tool-call fragments).
    has_output: bool,
    /// Some of that output came in a chunk without `delta.role`: from then on a
    /// `role` announces a new message (servers such as Ollama repeat `role` on
    /// every chunk, which is no restart).
    unroled_output: bool,
}

impl OpenAiMapper {
    pub fn new() -> OpenAiMapper {
        OpenAiMapper::default()
    }

    /// One SSE event: `data` is the payload (`[DONE]` included).
    pub fn on_event(
        &mut self,
        event_type: Option<&str>,
        data: &str,
    ) -> Result<Vec<StreamEvent>, ProviderError> {
        let mut out = Vec::new();
        if data.trim() == "[DONE]" {
            if self.done {
                out.push(skipped("[DONE]"));
                return Ok(out);
            }
            self.done = true;
            self.close_calls(&mut out);
            if let Some(reason) = self.pending_finish.take() {
                out.push(StreamEvent::Finish { reason });
            }
            return Ok(out);
        }
        let chunk = parse_payload(data, "Chat Completions chunk")?;
        if event_type == Some("error") || chunk.get("error").is_some_and(|e| !e.is_null()) {
            return Err(api_error(&chunk));
        }
        if self.done {
            out.push(skipped("chunk after [DONE]"));
            return Ok(out);
        }
        let Some(object) = chunk.as_object() else {
            return Err(malformed(format!(
                "a Chat Completions chunk is not a JSON object: {}",
                short(data)
            )));
        };
        let r = Reader::new(CHUNK);
        if let Some(id) = r.str(object.get("id"), || "id".into())?
            && !id.is_empty()
        {
            // A new id restarts the message only on a chunk that opens one (its
            // delta has `role`, as the first chunk of every message has): servers
            // whose ids drift mid-stream, or that give the usage chunk an id of its
            // own, do not lose what they streamed.
            let opens = object
                .get("choices")
                .and_then(Value::as_array)
                .and_then(|c| c.first())
                .filter(|c| c.get("index").is_none_or(|i| i.as_u64() == Some(0)))
                .and_then(|c| c.get("delta"))
                .and_then(|d| d.get("role"))
                .is_some_and(|role| !role.is_null());
            match &self.message_id {
                Some(old) if old != id && self.has_output && opens => {
                    let reason =
                        format!("a chunk with the new id {id} (the message so far was {old})");
                    self.restart(reason, &mut out);
                }
                _ => {}
            }
            if self.message_id.as_deref() != Some(id) {
                self.message_id = Some(id.to_string());
            }
        }
        let choices = r.array(object.get("choices"), || "choices".into())?;
        for (pos, choice) in choices.into_iter().flatten().enumerate() {
            let index = r
                .uint(choice.get("index"), || format!("choices[{pos}].index"))?
                .unwrap_or(pos as u64);
            if index != 0 {
                // xcsh never asks for n > 1; a second choice is passed over.
                out.push(skipped(&format!("choices[{index}]")));
                continue;
            }
            if let Some(delta) =
                r.object(choice.get("delta"), || format!("choices[{pos}].delta"))?
            {
                let role = delta.get("role").is_some_and(|r| !r.is_null());
                if role && self.has_output && self.unroled_output {
                    self.restart(
                        "a chunk with delta.role after the message's content".into(),
                        &mut out,
                    );
                }
                let before = (out.len(), self.refusal.len());
                self.on_delta(delta, pos, &mut out)?;
                let produced = self.refusal.len() > before.1
                    || out[before.0..].iter().any(|e| {
                        matches!(
                            e,
                            StreamEvent::TextDelta { .. }
                                | StreamEvent::ReasoningDelta { .. }
                                | StreamEvent::ToolCallStart { .. }
                                | StreamEvent::ToolCallDelta { .. }
                        )
                    })
                    || self.calls.iter().any(|c| !c.pending.is_empty());
                if produced {
                    self.has_output = true;
                    self.unroled_output |= !role;
                }
            }
            if let Some(reason) = r.str(choice.get("finish_reason"), || {
                format!("choices[{pos}].finish_reason")
            })? {
                self.saw_finish_reason = true;
                self.close_calls(&mut out);
                if !self.refusal.is_empty() {
                    return Err(ProviderError {
                        kind: ProviderErrorKind::Api,
                        message: format!("the model refused: {}", self.refusal),
                    });
                }
                self.pending_finish = Some(finish_reason(reason));
            }
        }
        if let Some(usage) = r.object(object.get("usage"), || "usage".into())? {
            out.push(StreamEvent::Usage {
                usage: chat_usage(usage)?,
            });
        }
        let empty = choices.is_none_or(Vec::is_empty);
        if empty && object.contains_key("prompt_filter_results") {
            out.push(skipped("prompt_filter_results"));
        }
        Ok(out)
    }

    /// The stream ended: a `finish` still waiting is sent.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        if self.saw_finish_reason {
            self.close_calls(&mut out);
        }
        if let Some(reason) = self.pending_finish.take() {
            out.push(StreamEvent::Finish { reason });
        }
        out
    }

    /// The response is complete: `[DONE]` or a `finish_reason` arrived.
    pub fn is_complete(&self) -> bool {
        self.done || self.saw_finish_reason
    }

    /// The provider started the message over: what the mapper holds of the partial
    /// one goes, and a `restarted` event tells the assembler to discard it too.
    fn restart(&mut self, reason: String, out: &mut Vec<StreamEvent>) {
        out.push(StreamEvent::Restarted { reason });
        self.calls.clear();
        self.refusal.clear();
        self.pending_finish = None;
        self.saw_finish_reason = false;
        self.has_output = false;
        self.unroled_output = false;
    }

    /// `choices[pos].delta`.
    fn on_delta(
        &mut self,
        delta: &Value,
        pos: usize,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let r = Reader::new(CHUNK);
        let at = |key: &str| format!("choices[{pos}].delta.{key}");
        for key in ["reasoning_content", "reasoning"] {
            if let Some(text) = r.str(delta.get(key), || at(key))? {
                if !text.is_empty() {
                    out.push(StreamEvent::ReasoningDelta {
                        text: text.to_string(),
                    });
                }
                break;
            }
        }
        match delta.get("content") {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => {
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta { text: text.clone() })
                }
            }
            Some(Value::Array(parts)) => {
                for (n, part) in parts.iter().enumerate() {
                    content_part(part, &|| at(&format!("content[{n}]")), out)?;
                }
            }
            Some(other) => {
                return Err(r.wrong(
                    &at("content"),
                    other,
                    "a string, an array of content parts or null",
                ));
            }
        }
        if let Some(refusal) = r.str(delta.get("refusal"), || at("refusal"))? {
            self.refusal.push_str(refusal);
        }
        if let Some(calls) = r.array(delta.get("tool_calls"), || at("tool_calls"))? {
            for (n, call) in calls.iter().enumerate() {
                self.on_tool_call(call, &|| at(&format!("tool_calls[{n}]")), out)?;
            }
        }
        Ok(())
    }

    /// One `delta.tool_calls[]` fragment; `path` names it in errors.
    fn on_tool_call(
        &mut self,
        call: &Value,
        path: &dyn Fn() -> String,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let r = Reader::new(CHUNK);
        let at = |key: &str| format!("{}.{key}", path());
        let provider_index = r.uint(call.get("index"), || at("index"))?;
        let id = r
            .str(call.get("id"), || at("id"))?
            .filter(|s| !s.is_empty());
        let function = r.object(call.get("function"), || at("function"))?;
        let field = |key: &str| match function {
            Some(f) => r.str(f.get(key), || at(&format!("function.{key}"))),
            None => Ok(None),
        };
        let name = field("name")?.filter(|s| !s.is_empty());
        let arguments = field("arguments")?.unwrap_or("");

        let found = match provider_index {
            Some(pi) => self.calls.iter().position(|c| c.provider_index == Some(pi)),
            // Without `index` (Mistral): a new id is a new call, no id continues
            // the last one.
            None => match id {
                Some(id) => self
                    .calls
                    .iter()
                    .position(|c| c.provider_id.as_deref() == Some(id)),
                None => self.calls.len().checked_sub(1),
            },
        };
        let pos = match found {
            Some(pos) => pos,
            None => {
                let index = u32::try_from(self.calls.len()).unwrap_or(u32::MAX);
                self.calls.push(ChatCall {
                    provider_index,
                    provider_id: id.map(str::to_string),
                    index,
                    started: false,
                    ended: false,
                    name: String::new(),
                    pending: String::new(),
                });
                self.calls.len() - 1
            }
        };
        let c = &mut self.calls[pos];
        if c.provider_id.is_none() {
            c.provider_id = id.map(str::to_string);
        }
        if let Some(name) = name
            && c.name.is_empty()
        {
            c.name = name.to_string();
        }
        if !c.started && !c.name.is_empty() {
            start_call(c, out);
        }
        if !arguments.is_empty() {
            if c.started {
                out.push(StreamEvent::ToolCallDelta {
                    index: c.index,
                    arguments: arguments.to_string(),
                });
            } else {
                c.pending.push_str(arguments);
            }
        }
        Ok(())
    }

    fn close_calls(&mut self, out: &mut Vec<StreamEvent>) {
        for c in &mut self.calls {
            if c.ended {
                continue;
            }
            if !c.started {
                start_call(c, out);
            }
            c.ended = true;
            out.push(StreamEvent::ToolCallEnd { index: c.index });
        }
    }
}

fn start_call(c: &mut ChatCall, out: &mut Vec<StreamEvent>) {
    c.started = true;
    let id = c
        .provider_id
        .clone()
        .unwrap_or_else(|| format!("call_{}", c.index));
    out.push(StreamEvent::ToolCallStart {
        index: c.index,
        id: CallId(id),
        name: c.name.clone(),
    });
    if !c.pending.is_empty() {
        out.push(StreamEvent::ToolCallDelta {
            index: c.index,
            arguments: std::mem::take(&mut c.pending),
        });
    }
}

/// One part of an array-valued `content` (Mistral): `text`, or `thinking` whose
/// `thinking` is a string or itself an array of text parts; `path` names it.
fn content_part(
    part: &Value,
    path: &dyn Fn() -> String,
    out: &mut Vec<StreamEvent>,
) -> Result<(), ProviderError> {
    let r = Reader::new(CHUNK);
    let at = |key: &str| format!("{}.{key}", path());
    let kind = r.str(part.get("type"), || at("type"))?.unwrap_or("");
    match kind {
        "text" => {
            if let Some(text) = r.str(part.get("text"), || at("text"))?
                && !text.is_empty()
            {
                out.push(StreamEvent::TextDelta {
                    text: text.to_string(),
                });
            }
        }
        "thinking" => match part.get("thinking") {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => {
                if !text.is_empty() {
                    out.push(StreamEvent::ReasoningDelta { text: text.clone() })
                }
            }
            Some(Value::Array(inner)) => {
                for (n, p) in inner.iter().enumerate() {
                    if let Some(text) =
                        r.str(p.get("text"), || at(&format!("thinking[{n}].text")))?
                        && !text.is_empty()
                    {
                        out.push(StreamEvent::ReasoningDelta {
                            text: text.to_string(),
                        });
                    }
                }
            }
            Some(other) => {
                return Err(r.wrong(&at("thinking"), other, "a string or an array of parts"));
            }
        },
        other => out.push(skipped(&format!("content part {other}"))),
    }
    Ok(())
}

fn skipped(event_type: &str) -> StreamEvent {
    StreamEvent::Skipped {
        event_type: event_type.to_string(),
    }
}

fn short(data: &str) -> String {
    let mut s: String = data.chars().take(200).collect();
    if s.len() < data.len() {
        s.push('…');
    }
    s
}

/// `{"error": {"message": …, "code": …}}` (OpenAI, OpenRouter) or a bare message.
fn api_error(chunk: &Value) -> ProviderError {
    let error = chunk.get("error").unwrap_or(chunk);
    ProviderError {
        kind: http::api_error_kind(error),
        message: http::error_message(error).unwrap_or_else(|| short(&chunk.to_string())),
    }
}

/// The documented `finish_reason` values, plus those of compatible servers.
pub fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" | "model_length" | "max_tokens" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        "error" | "insufficient_system_resource" => FinishReason::Error,
        // "stop", "eos", "end_turn" and anything unknown: the model stopped.
        _ => FinishReason::Stop,
    }
}

/// `usage` of a chunk. `prompt_tokens` includes the cached prompt tokens
/// (`prompt_tokens_details.cached_tokens`, DeepSeek's `prompt_cache_hit_tokens`);
/// the normalized usage keeps them apart. `completion_tokens` includes reasoning
/// tokens for OpenAI; xAI reports them outside it (then `total_tokens` exceeds
/// prompt + completion), so output is `total - prompt` when that is larger.
pub fn chat_usage(usage: &Value) -> Result<Usage, ProviderError> {
    let r = Reader::new(CHUNK);
    let n = |key: &str| r.uint(usage.get(key), || format!("usage.{key}"));
    let prompt = n("prompt_tokens")?.unwrap_or(0);
    let completion = n("completion_tokens")?.unwrap_or(0);
    let total = n("total_tokens")?.unwrap_or(0);
    let details = r.object(usage.get("prompt_tokens_details"), || {
        "usage.prompt_tokens_details".into()
    })?;
    let cached = match details {
        Some(d) => r.uint(d.get("cached_tokens"), || {
            "usage.prompt_tokens_details.cached_tokens".into()
        })?,
        None => None,
    };
    let cached = match cached {
        Some(c) => c,
        None => n("prompt_cache_hit_tokens")?.unwrap_or(0),
    }
    .min(prompt);
    Ok(Usage {
        input_tokens: prompt - cached,
        output_tokens: completion.max(total.saturating_sub(prompt)),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
        estimated: false,
    })
}

impl StreamMapper for OpenAiMapper {
    fn on_event(
        &mut self,
        event_type: Option<&str>,
        data: &str,
    ) -> Result<Vec<StreamEvent>, ProviderError> {
        OpenAiMapper::on_event(self, event_type, data)
    }
    fn finish(&mut self) -> Vec<StreamEvent> {
        OpenAiMapper::finish(self)
    }
    fn is_complete(&self) -> bool {
        OpenAiMapper::is_complete(self)
    }
}

/// The request body: system prompt first, messages in order, tools as functions.
/// Reasoning is not sent back: Chat Completions has no field for it.
pub fn build_request(model: &str, request: &ModelRequest) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        match message {
            Message::User { text, .. } => messages.push(json!({"role": "user", "content": text})),
            Message::Summary { text } => {
                messages.push(json!({"role": "user", "content": summary_text(text)}))
            }
            Message::Assistant {
                text, tool_calls, ..
            } => {
                let mut m = json!({"role": "assistant", "content": text});
                if !tool_calls.is_empty() {
                    if text.is_empty() {
                        m["content"] = Value::Null;
                    }
                    m["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            json!({
                                "id": c.id.0,
                                "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments},
                            })
                        })
                        .collect();
                }
                messages.push(m);
            }
            Message::ToolResult {
                call_id, content, ..
            } => messages.push(json!({
                "role": "tool",
                "tool_call_id": call_id.0,
                "content": content,
            })),
        }
    }
    let mut body = json!({
        "model": model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_completion_tokens": request.max_output_tokens,
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                })
            })
            .collect();
    }
    body
}

/// [`build_request`] serialized straight to JSON text, byte for byte what
/// `build_request(..).to_string()` gives (keys in the same sorted order), without
/// building the [`Value`] tree on the way: the body of every step is the whole
/// context, so this is on each step's path. `legacy_max_tokens` names the limit
/// `max_tokens` instead of `max_completion_tokens`.
pub fn request_text(model: &str, request: &ModelRequest, legacy_max_tokens: bool) -> String {
    let (max_completion_tokens, max_tokens) = if legacy_max_tokens {
        (None, Some(request.max_output_tokens))
    } else {
        (Some(request.max_output_tokens), None)
    };
    let body = wire::Body {
        max_completion_tokens,
        max_tokens,
        messages: wire::Messages(request),
        model,
        stream: true,
        stream_options: wire::StreamOptions {
            include_usage: true,
        },
        tools: request
            .tools
            .iter()
            .map(|t| wire::Tool {
                function: wire::ToolFunction {
                    description: &t.description,
                    name: &t.name,
                    parameters: &t.parameters,
                },
                kind: "function",
            })
            .collect(),
    };
    // Serializing these borrowed structs into a `Vec` cannot fail: every key is a
    // string and every value a string, number, bool, null or a `Value`.
    serde_json::to_string(&body).unwrap_or_else(|_| build_request(model, request).to_string())
}

mod wire;

/// The Chat Completions provider.
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    config: Arc<HttpConfig>,
    client: reqwest::Client,
    /// Send `max_tokens` instead of `max_completion_tokens`: the field every
    /// compatible server knows (OpenAI's reasoning models take only the newer one).
    /// On by default for any base URL but OpenAI's and Azure OpenAI's.
    pub legacy_max_tokens: bool,
}

impl OpenAiProvider {
    pub fn new(config: HttpConfig) -> Result<OpenAiProvider, ConfigError> {
        let legacy_max_tokens = !(config.base_url.contains("api.openai.com")
            || config.base_url.contains("openai.azure.com"));
        Ok(OpenAiProvider {
            client: http::client()?,
            config: Arc::new(config),
            legacy_max_tokens,
        })
    }

    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// The body this provider sends for `request`.
    pub fn body(&self, request: &ModelRequest) -> Value {
        let mut body = build_request(&self.config.model, request);
        if self.legacy_max_tokens
            && let Some(obj) = body.as_object_mut()
            && let Some(v) = obj.remove("max_completion_tokens")
        {
            obj.insert("max_tokens".into(), v);
        }
        body
    }

    /// [`OpenAiProvider::body`] as the JSON text that is sent (the same bytes as
    /// its `to_string()`), written without building a [`Value`] first.
    pub fn body_text(&self, request: &ModelRequest) -> String {
        request_text(&self.config.model, request, self.legacy_max_tokens)
    }
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        "openai"
    }

    fn render_request(&self, request: &ModelRequest) -> Value {
        self.body(request)
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
        http::post_stream_text(
            self.client.clone(),
            Arc::clone(&self.config),
            http::Endpoint {
                path: "chat/completions",
                headers: Vec::new(),
                auth: http::bearer,
            },
            self.body_text(&request),
            request.max_output_tokens,
            OpenAiMapper::new(),
            sink,
            cancel,
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::machine::{Assembler, ToolCall, UserOrigin};
    use crate::ports::ToolSpec;
    use expect_test::expect;

    fn run(lines: &[&str]) -> (Vec<StreamEvent>, Option<ProviderError>) {
        let mut m = OpenAiMapper::new();
        let mut events = Vec::new();
        for line in lines {
            match m.on_event(None, line) {
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
    fn text_then_usage_then_finish() {
        let (events, err) = run(&[
            r#"{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
            r#"{"id":"c1","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}"#,
            r#"{"id":"c1","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}"#,
            r#"{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"id":"c1","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":2,"total_tokens":22,"prompt_tokens_details":{"cached_tokens":8}}}"#,
            "[DONE]",
        ]);
        assert!(err.is_none());
        expect![[r#"
            {"kind":"text_delta","text":"Hel"}
            {"kind":"text_delta","text":"lo"}
            {"kind":"usage","usage":{"input_tokens":12,"output_tokens":2,"cache_read_tokens":8}}
            {"kind":"finish","reason":"stop"}"#]]
        .assert_eq(&render(&events));
    }

    #[test]
    fn parallel_tool_calls_with_fragmented_arguments() {
        let (events, err) = run(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"list","arguments":"{\"dir"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\":\".\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}"#,
            "[DONE]",
        ]);
        assert!(err.is_none());
        let mut a = Assembler::default();
        events.iter().for_each(|e| a.push(e));
        let a = a.finish();
        assert_eq!(
            a.tool_calls,
            vec![
                ToolCall {
                    id: CallId("call_a".into()),
                    name: "read".into(),
                    arguments: r#"{"path":"a"}"#.into()
                },
                ToolCall {
                    id: CallId("call_b".into()),
                    name: "list".into(),
                    arguments: r#"{"dir":"."}"#.into()
                },
            ]
        );
        assert_eq!(a.finish, Some(FinishReason::ToolCalls));
        expect![[r#"
            {"kind":"tool_call_start","index":0,"id":"call_a","name":"read"}
            {"kind":"tool_call_delta","index":0,"arguments":"{\"pa"}
            {"kind":"tool_call_start","index":1,"id":"call_b","name":"list"}
            {"kind":"tool_call_delta","index":1,"arguments":"{\"dir"}
            {"kind":"tool_call_delta","index":0,"arguments":"th\":\"a\"}"}
            {"kind":"tool_call_delta","index":1,"arguments":"\":\".\"}"}
            {"kind":"tool_call_end","index":0}
            {"kind":"tool_call_end","index":1}
            {"kind":"usage","usage":{"input_tokens":5,"output_tokens":9}}
            {"kind":"finish","reason":"tool_calls"}"#]]
        .assert_eq(&render(&events));
    }

    #[test]
    fn mistral_calls_without_index_and_array_content() {
        let (events, _) = run(&[
            r#"{"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"hmm"}]}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"ok"}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"A","function":{"name":"f","arguments":"{}"}},{"id":"B","function":{"name":"g","arguments":"{\"x\":1}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"total_tokens":7,"completion_tokens":4}}"#,
        ]);
        expect![[r#"
            {"kind":"reasoning_delta","text":"hmm"}
            {"kind":"text_delta","text":"ok"}
            {"kind":"tool_call_start","index":0,"id":"A","name":"f"}
            {"kind":"tool_call_delta","index":0,"arguments":"{}"}
            {"kind":"tool_call_start","index":1,"id":"B","name":"g"}
            {"kind":"tool_call_delta","index":1,"arguments":"{\"x\":1}"}
            {"kind":"tool_call_end","index":0}
            {"kind":"tool_call_end","index":1}
            {"kind":"usage","usage":{"input_tokens":3,"output_tokens":4}}
            {"kind":"finish","reason":"tool_calls"}"#]]
        .assert_eq(&render(&events));
    }

    #[test]
    fn reasoning_content_and_xai_usage() {
        let (events, _) = run(&[
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"think","role":"assistant"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":303,"prompt_tokens_details":{"cached_tokens":11},"completion_tokens_details":{"reasoning_tokens":290}}}"#,
            "[DONE]",
        ]);
        expect![[r#"
            {"kind":"reasoning_delta","text":"think"}
            {"kind":"text_delta","text":"Hi"}
            {"kind":"usage","usage":{"input_tokens":1,"output_tokens":291,"cache_read_tokens":11}}
            {"kind":"finish","reason":"length"}"#]]
        .assert_eq(&render(&events));
    }

    #[test]
    fn refusal_and_error_chunks_are_api_errors() {
        let (_, err) = run(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":"I can't "}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"refusal":"help with that."}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        ]);
        assert_eq!(
            err,
            Some(ProviderError {
                kind: ProviderErrorKind::Api,
                message: "the model refused: I can't help with that.".into()
            })
        );
        let (events, err) = run(&[
            r#"{"choices":[{"index":0,"delta":{"content":"par"}}]}"#,
            r#"{"error":{"message":"Provider returned error","code":502}}"#,
        ]);
        assert_eq!(events.len(), 1);
        assert_eq!(
            err.map(|e| (e.kind, e.message)),
            Some((
                ProviderErrorKind::Api,
                "Provider returned error (502)".to_string()
            ))
        );
        let (_, err) = run(&["{not json"]);
        assert_eq!(err.map(|e| e.kind), Some(ProviderErrorKind::Malformed));
    }

    #[test]
    fn unknown_things_are_skipped() {
        let (events, err) = run(&[
            r#"{"choices":[],"prompt_filter_results":[{"prompt_index":0}]}"#,
            r#"{"choices":[{"index":1,"delta":{"content":"other choice"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":[{"type":"image_url","image_url":"x"}]},"finish_reason":"stop"}]}"#,
            "[DONE]",
            "[DONE]",
        ]);
        assert!(err.is_none());
        expect![[r#"
            {"kind":"skipped","event_type":"prompt_filter_results"}
            {"kind":"skipped","event_type":"choices[1]"}
            {"kind":"skipped","event_type":"content part image_url"}
            {"kind":"finish","reason":"stop"}
            {"kind":"skipped","event_type":"[DONE]"}"#]]
        .assert_eq(&render(&events));
    }

    fn assemble(events: &[StreamEvent]) -> crate::machine::Assembled {
        let mut a = Assembler::default();
        events.iter().for_each(|e| a.push(e));
        a.finish()
    }

    fn restarts(events: &[StreamEvent]) -> Vec<&StreamEvent> {
        events
            .iter()
            .filter(|e| matches!(e, StreamEvent::Restarted { .. }))
            .collect()
    }

    #[test]
    fn a_chat_stream_restarted_with_a_new_id_keeps_only_the_second_message() {
        let (events, err) = run(&[
            r#"{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":"Hmm, "}}]}"#,
            r#"{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"Let me re"}}]}"#,
            r#"{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":"{\"pa"}}]}}]}"#,
            r#"{"id":"chatcmpl-2","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
            r#"{"id":"chatcmpl-2","choices":[{"index":0,"delta":{"content":"Reading b."}}]}"#,
            r#"{"id":"chatcmpl-2","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"read","arguments":"{\"path\":\"b.txt\"}"}}]}}]}"#,
            r#"{"id":"chatcmpl-2","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"id":"chatcmpl-2","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":7,"total_tokens":16}}"#,
            "[DONE]",
        ]);
        assert!(err.is_none(), "{err:?}");
        let a = assemble(&events);
        assert_eq!((a.text.as_str(), a.reasoning.as_str()), ("Reading b.", ""));
        assert_eq!(
            a.tool_calls,
            vec![ToolCall {
                id: CallId("call_b".into()),
                name: "read".into(),
                arguments: r#"{"path":"b.txt"}"#.into()
            }]
        );
        assert_eq!(a.finish, Some(FinishReason::ToolCalls));
        assert_eq!(
            restarts(&events),
            vec![&StreamEvent::Restarted {
                reason: "a chunk with the new id chatcmpl-2 (the message so far was chatcmpl-1)"
                    .into()
            }]
        );
    }

    #[test]
    fn a_new_id_on_a_chunk_that_opens_no_message_is_no_restart() {
        let (events, err) = run(&[
            r#"{"id":"gen-1","choices":[{"index":0,"delta":{"role":"assistant","content":"Kept"}}]}"#,
            r#"{"id":"gen-2","choices":[{"index":0,"delta":{"content":" whole."}}]}"#,
            r#"{"id":"gen-2","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"id":"usage-3","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}"#,
            "[DONE]",
        ]);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(assemble(&events).text, "Kept whole.");
        assert_eq!(restarts(&events), Vec::<&StreamEvent>::new());
    }

    #[test]
    fn a_repeated_role_after_content_restarts_the_chat_message() {
        let (events, err) = run(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Half a sen"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"A whole"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":" sentence."}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(assemble(&events).text, "A whole sentence.");
        assert_eq!(
            restarts(&events),
            vec![&StreamEvent::Restarted {
                reason: "a chunk with delta.role after the message's content".into()
            }]
        );
    }

    #[test]
    fn a_role_on_every_chunk_is_not_a_restart() {
        // Ollama's compatible endpoint sends `role` with every delta.
        let (events, err) = run(&[
            r#"{"id":"chatcmpl-7","choices":[{"index":0,"delta":{"role":"assistant","content":"One"}}]}"#,
            r#"{"id":"chatcmpl-7","choices":[{"index":0,"delta":{"role":"assistant","content":" two"}}]}"#,
            r#"{"id":"chatcmpl-7","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(assemble(&events).text, "One two");
        assert_eq!(restarts(&events), Vec::<&StreamEvent>::new());
    }

    fn malformed_message(lines: &[&str]) -> Option<(ProviderErrorKind, String)> {
        run(lines).1.map(|e| (e.kind, e.message))
    }

    #[test]
    fn a_numeric_content_is_an_error_that_names_it() {
        assert_eq!(
            malformed_message(&[r#"{"choices":[{"index":0,"delta":{"content":42}}]}"#]),
            Some((
                ProviderErrorKind::Malformed,
                "a Chat Completions chunk: choices[0].delta.content is a number (42), expected a string, an array of content parts or null".into()
            ))
        );
    }

    #[test]
    fn a_negative_tool_call_index_is_an_error_that_names_it() {
        assert_eq!(
            malformed_message(&[
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"id":"call_1","type":"function","function":{"name":"read","arguments":"{}"}}]}}]}"#
            ]),
            Some((
                ProviderErrorKind::Malformed,
                "a Chat Completions chunk: choices[0].delta.tool_calls[0].index is a number (-1), expected a non-negative integer".into()
            ))
        );
    }

    #[test]
    fn every_wrong_type_in_a_chat_chunk_is_an_error_never_a_silent_drop() {
        let cases = [
            (
                r#"{"choices":{"index":0}}"#,
                r#"choices is an object ({"index":0}), expected an array"#,
            ),
            (
                r#"{"choices":[{"index":"0","delta":{}}]}"#,
                r#"choices[0].index is a string ("0"), expected a non-negative integer"#,
            ),
            (
                r#"{"choices":[{"index":0,"delta":"hi"}]}"#,
                r#"choices[0].delta is a string ("hi"), expected an object"#,
            ),
            (
                r#"{"choices":[{"index":0,"delta":{"reasoning_content":["a"]}}]}"#,
                r#"choices[0].delta.reasoning_content is an array (["a"]), expected a string"#,
            ),
            (
                r#"{"choices":[{"index":0,"delta":{"refusal":true}}]}"#,
                "choices[0].delta.refusal is a boolean (true), expected a string",
            ),
            (
                r#"{"choices":[{"index":0,"delta":{"tool_calls":{"index":0}}}]}"#,
                r#"choices[0].delta.tool_calls is an object ({"index":0}), expected an array"#,
            ),
            (
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":{"a":1}}}]}}]}"#,
                r#"choices[0].delta.tool_calls[0].function.arguments is an object ({"a":1}), expected a string"#,
            ),
            (
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":7,"function":{"name":"f"}}]}}]}"#,
                "choices[0].delta.tool_calls[0].id is a number (7), expected a string",
            ),
            (
                r#"{"choices":[{"index":0,"delta":{},"finish_reason":1}]}"#,
                "choices[0].finish_reason is a number (1), expected a string",
            ),
            (
                r#"{"choices":[],"usage":{"prompt_tokens":"12","completion_tokens":3}}"#,
                r#"usage.prompt_tokens is a string ("12"), expected a non-negative integer"#,
            ),
            (
                r#"{"choices":[],"usage":12}"#,
                "usage is a number (12), expected an object",
            ),
            (
                r#"{"id":5,"choices":[]}"#,
                "id is a number (5), expected a string",
            ),
            (
                r#"{"choices":[{"index":0,"delta":{"content":[{"type":"text","text":3}]}}]}"#,
                "choices[0].delta.content[0].text is a number (3), expected a string",
            ),
        ];
        for (line, message) in cases {
            assert_eq!(
                malformed_message(&[line]),
                Some((
                    ProviderErrorKind::Malformed,
                    format!("a Chat Completions chunk: {message}")
                )),
                "{line}"
            );
        }
    }

    #[test]
    fn completeness() {
        let mut m = OpenAiMapper::new();
        m.on_event(None, r#"{"choices":[{"index":0,"delta":{"content":"a"}}]}"#)
            .unwrap();
        assert!(!m.is_complete());
        m.on_event(None, "[DONE]").unwrap();
        assert!(m.is_complete());
    }

    pub(crate) fn sample_request() -> ModelRequest {
        ModelRequest {
            system: "You are terse.".into(),
            messages: vec![
                Message::Summary {
                    text: "Earlier we listed files.".into(),
                },
                Message::User {
                    origin: UserOrigin::Prompt,
                    text: "read a.txt".into(),
                },
                Message::Assistant {
                    text: "Reading.".into(),
                    reasoning: "The user wants a.txt.".into(),
                    reasoning_signature: "sig".into(),
                    reasoning_blocks: vec![],
                    tool_calls: vec![ToolCall {
                        id: CallId("call_1".into()),
                        name: "read".into(),
                        arguments: r#"{"path":"a.txt"}"#.into(),
                    }],
                },
                Message::ToolResult {
                    call_id: CallId("call_1".into()),
                    name: "read".into(),
                    is_error: false,
                    content: "hello".into(),
                },
                Message::User {
                    origin: UserOrigin::Steer,
                    text: "also b".into(),
                },
                Message::Assistant {
                    text: String::new(),
                    reasoning: String::new(),
                    reasoning_signature: String::new(),
                    reasoning_blocks: vec![],
                    tool_calls: vec![ToolCall {
                        id: CallId("call_2".into()),
                        name: "read".into(),
                        arguments: r#"{"path":"b.txt"}"#.into(),
                    }],
                },
                Message::ToolResult {
                    call_id: CallId("call_2".into()),
                    name: "read".into(),
                    is_error: true,
                    content: "error: no such file".into(),
                },
                Message::Assistant {
                    text: "Done.".into(),
                    reasoning: String::new(),
                    reasoning_signature: String::new(),
                    reasoning_blocks: vec![],
                    tool_calls: vec![],
                },
            ],
            tools: vec![ToolSpec {
                name: "read".into(),
                description: "Read a file".into(),
                parameters: json!({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}),
            }],
            max_output_tokens: 1024,
        }
    }

    #[test]
    fn request_renders_every_message_kind() {
        let body = build_request("gpt-test", &sample_request());
        expect![[r#"
            {
              "max_completion_tokens": 1024,
              "messages": [
                {
                  "content": "You are terse.",
                  "role": "system"
                },
                {
                  "content": "[Summary of the earlier conversation]\nEarlier we listed files.",
                  "role": "user"
                },
                {
                  "content": "read a.txt",
                  "role": "user"
                },
                {
                  "content": "Reading.",
                  "role": "assistant",
                  "tool_calls": [
                    {
                      "function": {
                        "arguments": "{\"path\":\"a.txt\"}",
                        "name": "read"
                      },
                      "id": "call_1",
                      "type": "function"
                    }
                  ]
                },
                {
                  "content": "hello",
                  "role": "tool",
                  "tool_call_id": "call_1"
                },
                {
                  "content": "also b",
                  "role": "user"
                },
                {
                  "content": null,
                  "role": "assistant",
                  "tool_calls": [
                    {
                      "function": {
                        "arguments": "{\"path\":\"b.txt\"}",
                        "name": "read"
                      },
                      "id": "call_2",
                      "type": "function"
                    }
                  ]
                },
                {
                  "content": "error: no such file",
                  "role": "tool",
                  "tool_call_id": "call_2"
                },
                {
                  "content": "Done.",
                  "role": "assistant"
                }
              ],
              "model": "gpt-test",
              "stream": true,
              "stream_options": {
                "include_usage": true
              },
              "tools": [
                {
                  "function": {
                    "description": "Read a file",
                    "name": "read",
                    "parameters": {
                      "properties": {
                        "path": {
                          "type": "string"
                        }
                      },
                      "required": [
                        "path"
                      ],
                      "type": "object"
                    }
                  },
                  "type": "function"
                }
              ]
            }"#]]
        .assert_eq(&serde_json::to_string_pretty(&body).unwrap());
    }

    #[test]
    fn the_body_text_is_the_body_value_serialized() {
        let mut requests = vec![sample_request()];
        let mut bare = sample_request();
        bare.system = String::new();
        bare.tools.clear();
        bare.messages.push(Message::User {
            origin: UserOrigin::Prompt,
            text: "quotes \" and \\ and \u{1} and é and \n".into(),
        });
        requests.push(bare);
        requests.push(ModelRequest {
            system: String::new(),
            messages: Vec::new(),
            tools: Vec::new(),
            max_output_tokens: 0,
        });
        for request in &requests {
            for legacy in [false, true] {
                let config = HttpConfig::new("http://127.0.0.1:1/v1", None, "m\"odel");
                let mut p = OpenAiProvider::new(config).expect("a provider");
                p.legacy_max_tokens = legacy;
                assert_eq!(p.body_text(request), p.body(request).to_string());
            }
        }
    }

    #[test]
    fn compatible_servers_get_max_tokens() {
        let config = HttpConfig::new("http://127.0.0.1:1/v1", None, "m");
        let p = OpenAiProvider::new(config).unwrap();
        let body = p.body(&sample_request());
        assert_eq!(body["max_tokens"], 1024);
        assert!(body.get("max_completion_tokens").is_none());
        let config = HttpConfig::new("https://api.openai.com/v1", Some("k".into()), "m");
        let p = OpenAiProvider::new(config).unwrap();
        assert_eq!(p.body(&sample_request())["max_completion_tokens"], 1024);
    }
}
