//! OpenAI Chat Completions streaming (`POST {base}/chat/completions`, `stream: true`),
//! the protocol also spoken by Ollama, llama.cpp, vLLM, LM Studio, DeepSeek, Mistral,
//! xAI and OpenRouter.
//!
//! - [`OpenAiMapper`]: sans-IO, one SSE `data:` payload in, normalized events out.
//! - [`wire::body`]: the JSON body for a [`ModelRequest`].
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

use serde::Serialize;
use serde_json::Value;

use super::ModelRequest;
use super::fields::Reader;
use super::http::{self, HttpConfig, summary_text};
use super::sse::{StreamMapper, malformed, parse_payload, push_text, skipped};
use xcsh_machine::{CallId, FinishReason, ProviderError, ProviderErrorKind, StreamEvent, Usage};

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

impl StreamMapper for OpenAiMapper {
    /// One SSE event: `data` is the payload (`[DONE]` included).
    fn on_event(
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
    fn finish(&mut self) -> Vec<StreamEvent> {
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
    fn is_complete(&self) -> bool {
        self.done || self.saw_finish_reason
    }
}

impl OpenAiMapper {
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
                push_text(out, text, |text| StreamEvent::ReasoningDelta { text });
                break;
            }
        }
        match delta.get("content") {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => {
                push_text(out, text, |text| StreamEvent::TextDelta { text })
            }
            Some(Value::Array(parts)) => {
                for (n, part) in parts.iter().enumerate() {
                    content_part(part, &|key| at(&format!("content[{n}].{key}")), out)?;
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
                self.on_tool_call(call, &|key| at(&format!("tool_calls[{n}].{key}")), out)?;
            }
        }
        Ok(())
    }

    /// One `delta.tool_calls[]` fragment; `at` names its fields in errors.
    fn on_tool_call(
        &mut self,
        call: &Value,
        at: &dyn Fn(&str) -> String,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let r = Reader::new(CHUNK);
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
/// `thinking` is a string or itself an array of text parts; `at` names its fields.
fn content_part(
    part: &Value,
    at: &dyn Fn(&str) -> String,
    out: &mut Vec<StreamEvent>,
) -> Result<(), ProviderError> {
    let r = Reader::new(CHUNK);
    let kind = r.str(part.get("type"), || at("type"))?.unwrap_or("");
    match kind {
        "text" => {
            if let Some(text) = r.str(part.get("text"), || at("text"))? {
                push_text(out, text, |text| StreamEvent::TextDelta { text });
            }
        }
        "thinking" => match part.get("thinking") {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => {
                push_text(out, text, |text| StreamEvent::ReasoningDelta { text })
            }
            Some(Value::Array(inner)) => {
                for (n, p) in inner.iter().enumerate() {
                    if let Some(text) =
                        r.str(p.get("text"), || at(&format!("thinking[{n}].text")))?
                    {
                        push_text(out, text, |text| StreamEvent::ReasoningDelta { text });
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
    let cached = r.uint(details.and_then(|d| d.get("cached_tokens")), || {
        "usage.prompt_tokens_details.cached_tokens".into()
    })?;
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

pub mod wire;

/// The Chat Completions wire protocol.
#[derive(Debug, Clone, Copy)]
pub struct ChatCompletions {
    /// Send `max_tokens` instead of `max_completion_tokens`: the field every
    /// compatible server knows (OpenAI's reasoning models take only the newer one).
    /// On by default for any base URL but OpenAI's and Azure OpenAI's.
    pub legacy_max_tokens: bool,
}

impl http::Wire for ChatCompletions {
    const NAME: &'static str = "openai";
    const PATH: &'static str = "chat/completions";
    type Mapper = OpenAiMapper;

    fn for_config(config: &HttpConfig) -> ChatCompletions {
        ChatCompletions {
            legacy_max_tokens: !(config.base_url.contains("api.openai.com")
                || config.base_url.contains("openai.azure.com")),
        }
    }
    fn body<'a>(&self, model: &'a str, request: &'a ModelRequest) -> impl Serialize + 'a {
        wire::body(model, request, self.legacy_max_tokens)
    }
}

/// The Chat Completions provider.
pub type OpenAiProvider = http::HttpProvider<ChatCompletions>;

#[cfg(test)]
pub(crate) mod tests;
