//! OpenAI Responses API streaming (`POST {base}/responses`, `stream: true`).
//!
//! - [`ResponsesMapper`]: sans-IO, one SSE event in, normalized events out.
//! - [`wire::body`]: the JSON body for a [`ModelRequest`].
//! - [`ResponsesProvider`]: the [`Provider`] over real HTTP.
//!
//! Mapping (per the Responses streaming reference): `response.created` opens a
//! response; output items open with `response.output_item.added` and close with
//! `response.output_item.done`. `message` items stream `response.output_text.delta`
//! (text) or `response.refusal.delta` (a refusal: an API error with its text);
//! `reasoning` items stream `response.reasoning_summary_text.delta` (and
//! `response.reasoning_text.delta` where the raw reasoning is shown) and end with
//! their `encrypted_content`, sent on as the reasoning signature; `function_call`
//! items (the only tools xcsh declares) stream `response.function_call_arguments.delta`.
//! `response.completed` carries the usage; the finish is `tool_calls` when the
//! response holds function calls, `stop` otherwise. `response.incomplete` finishes
//! `length` (`max_output_tokens`) or `content_filter`; `response.failed` and `error`
//! are API errors. Built-in and hosted tools (web search, file search, code
//! interpreter, image generation, MCP, shell, apply_patch, custom tools, tool search),
//! annotations and unknown events are passed over as `skipped`.
//!
//! The signature of a reasoning item is the compact JSON
//! `{"id":"rs_…","encrypted_content":"…"}`: the Responses API needs both to take the
//! item back, and several items of one step concatenate into a parseable sequence.
//!
//! A recording may hold several responses in a row (a multi-request exchange): each
//! `response.created` after a finished response opens the next one, tool calls keep
//! counting, usage adds up. A `response.created` while a response is open is a
//! restart (a provider or proxy started over): `restarted`, and the partial response
//! is discarded.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::ModelRequest;
use super::fields::{Reader, TypedMapper};
use super::http::{self, HttpConfig, summary_text};
use super::sse::{OpenMessage, skip_unknown, skipped};
use xcsh_machine::{CallId, FinishReason, ProviderError, ProviderErrorKind, StreamEvent, Usage};

#[derive(Debug)]
enum Item {
    Message,
    Reasoning,
    FunctionCall {
        index: u32,
        ended: bool,
    },
    /// An item the adapter does not use, by its type.
    Skipped(String),
}

/// Which streamed text of an item: output text and raw reasoning by content index,
/// reasoning summary by summary index, function arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Part {
    Text(u64),
    Summary(u64),
    ReasoningText(u64),
    Arguments,
}

/// Maps Responses stream events to normalized events.
///
/// The `.done` events (`response.output_text.done`, `…reasoning_summary_text.done`,
/// `…function_call_arguments.done`, `response.output_item.done`) carry the final
/// text of what the deltas streamed. When the deltas streamed only a beginning of it,
/// the rest is sent as one more delta; when they disagree with it (deltas cannot be
/// taken back), a `skipped` event records the disagreement.
#[derive(Debug, Default)]
pub struct ResponsesMapper {
    /// The response a `response.created` opened, until it finishes.
    current: OpenMessage,
    /// The events mapped from the event at hand.
    out: Vec<StreamEvent>,
    /// Output items of the current response, by `output_index`.
    items: HashMap<u64, Item>,
    /// What was streamed of each part, by (`output_index`, part).
    streamed: HashMap<(u64, Part), String>,
    next_call: u32,
    /// The current response has function calls.
    has_calls: bool,
    /// Usage of the responses already finished, summed.
    done_usage: Usage,
    refusal: String,
    terminal: bool,
}

impl TypedMapper for ResponsesMapper {
    const EVENTS: &'static str = "a Responses";

    /// One event; the payload's `type` decides (the SSE `event:` names the same).
    fn on_typed(&mut self, kind: &str, payload: &Value, r: Reader) -> Result<bool, ProviderError> {
        let output_index = r.uint(payload.get("output_index"), || "output_index".into())?;
        let sub = |key: &str| {
            r.uint(payload.get(key), || key.to_string())
                .map(|n| n.unwrap_or(0))
        };
        let text = |key: &str| {
            r.str(payload.get(key), || key.to_string())
                .map(|t| t.unwrap_or(""))
        };
        let response = r.object(payload.get("response"), || "response".into())?;
        match kind {
            "response.created" => {
                let id = match response {
                    Some(resp) => r.str(resp.get("id"), || "response.id".into())?,
                    None => None,
                }
                .map(str::to_string);
                let restart = self.current.start(id, "the open response", |new, old| {
                    format!("response.created{new} before {old} completed")
                });
                if let Some(restart) = restart {
                    // A response started over before the last one finished (a
                    // provider or a proxy retried upstream): the partial one is
                    // discarded, and so are its tool-call indices.
                    self.out.push(restart);
                    self.next_call = 0;
                }
                self.items.clear();
                self.streamed.clear();
                self.has_calls = false;
                self.refusal.clear();
                self.terminal = false;
            }
            "response.in_progress" | "response.queued" => {}
            "response.output_item.added" => {
                let item = r.member(payload, "item")?;
                self.item_added(item, output_index.unwrap_or(u64::MAX), r)?;
            }
            "response.output_item.done" => {
                let item = r.member(payload, "item")?;
                self.item_done(item, output_index.unwrap_or(u64::MAX), r)?;
            }
            "response.content_part.added" | "response.content_part.done" => {
                let part = match r.object(payload.get("part"), || "part".into())? {
                    Some(part) => r.str(part.get("type"), || "part.type".into())?,
                    None => None,
                }
                .unwrap_or("");
                if !matches!(part, "output_text" | "refusal" | "reasoning_text") {
                    self.out.push(skipped(&format!("{kind}:{part}")));
                }
            }
            "response.output_text.delta"
            | "response.output_text.done"
            | "response.reasoning_summary_text.delta"
            | "response.reasoning_summary_text.done"
            | "response.reasoning_text.delta"
            | "response.reasoning_text.done" => {
                // `response.<part>.<delta|done>`: the part, by the index field it has.
                let part = match kind.split('.').nth(1) {
                    Some("output_text") => Part::Text(sub("content_index")?),
                    Some("reasoning_summary_text") => Part::Summary(sub("summary_index")?),
                    _ => Part::ReasoningText(sub("content_index")?),
                };
                if kind.ends_with(".done") {
                    self.reconcile(output_index, part, text("text")?, kind);
                } else {
                    self.delta(output_index, part, text("delta")?);
                }
            }
            "response.function_call_arguments.delta" => {
                if self.is_call(output_index) {
                    self.delta(output_index, Part::Arguments, text("delta")?);
                } else {
                    self.out.push(skipped(kind));
                }
            }
            "response.function_call_arguments.done" => {
                if self.is_call(output_index) {
                    self.reconcile(output_index, Part::Arguments, text("arguments")?, kind);
                } else {
                    self.out.push(skipped(kind));
                }
            }
            "response.refusal.delta" => self.refusal.push_str(text("delta")?),
            "response.refusal.done" => {
                let refusal = match text("refusal")? {
                    "" => std::mem::take(&mut self.refusal),
                    full => full.to_string(),
                };
                return Err(refused(&refusal));
            }
            // Structure of the items above: nothing to add.
            "response.reasoning_summary_part.added" | "response.reasoning_summary_part.done" => {}
            "response.completed" => {
                self.finish_response(response, r)?;
                self.out.push(StreamEvent::Finish {
                    reason: if self.has_calls {
                        FinishReason::ToolCalls
                    } else {
                        FinishReason::Stop
                    },
                });
            }
            "response.incomplete" => {
                self.finish_response(response, r)?;
                let details = r.object(
                    response.and_then(|resp| resp.get("incomplete_details")),
                    || "response.incomplete_details".into(),
                )?;
                let reason = r
                    .str(details.and_then(|d| d.get("reason")), || {
                        "response.incomplete_details.reason".into()
                    })?
                    .unwrap_or("");
                let reason = match reason {
                    "max_output_tokens" => FinishReason::Length,
                    "content_filter" => FinishReason::ContentFilter,
                    other => {
                        return Err(ProviderError {
                            kind: ProviderErrorKind::Api,
                            message: format!(
                                "the response is incomplete: {}",
                                if other.is_empty() {
                                    "no reason given"
                                } else {
                                    other
                                }
                            ),
                        });
                    }
                };
                self.out.push(StreamEvent::Finish { reason });
            }
            "response.failed" => {
                let error = response.and_then(|resp| resp.get("error"));
                return Err(ProviderError {
                    kind: error.map_or(ProviderErrorKind::Api, http::api_error_kind),
                    message: error
                        .and_then(http::error_message)
                        .unwrap_or_else(|| "the response failed".into()),
                });
            }
            // `error` (the caller turns it into the API error), hosted tools' progress,
            // annotations, and events newer than this adapter.
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn events(&mut self) -> &mut Vec<StreamEvent> {
        &mut self.out
    }

    /// `response.completed` / `response.incomplete` closed the last response.
    fn ended(&self) -> bool {
        self.terminal
    }
}

impl ResponsesMapper {
    fn is_call(&self, output_index: Option<u64>) -> bool {
        output_index
            .and_then(|i| self.items.get(&i))
            .is_some_and(|item| matches!(item, Item::FunctionCall { .. }))
    }

    /// The normalized delta of a part.
    fn part_event(&self, output_index: u64, part: Part, text: &str) -> Option<StreamEvent> {
        let text = text.to_string();
        match part {
            Part::Text(_) => Some(StreamEvent::TextDelta { text }),
            Part::Summary(_) | Part::ReasoningText(_) => Some(StreamEvent::ReasoningDelta { text }),
            Part::Arguments => match self.items.get(&output_index) {
                Some(Item::FunctionCall { index, .. }) => Some(StreamEvent::ToolCallDelta {
                    index: *index,
                    arguments: text,
                }),
                _ => None,
            },
        }
    }

    fn delta(&mut self, output_index: Option<u64>, part: Part, text: &str) {
        if text.is_empty() {
            return;
        }
        let oi = output_index.unwrap_or(u64::MAX);
        self.streamed.entry((oi, part)).or_default().push_str(text);
        let event = self.part_event(oi, part, text);
        self.out.extend(event);
    }

    /// `full` is the final text of a part: send what the deltas left out, or record
    /// that they disagree.
    fn reconcile(&mut self, output_index: Option<u64>, part: Part, full: &str, event: &str) {
        let oi = output_index.unwrap_or(u64::MAX);
        let streamed = self.streamed.entry((oi, part)).or_default();
        if streamed == full {
            return;
        }
        if let Some(rest) = full.strip_prefix(streamed.as_str()) {
            let rest = rest.to_string();
            streamed.push_str(&rest);
            let event = self.part_event(oi, part, &rest);
            self.out.extend(event);
        } else {
            *streamed = full.to_string();
            self.out.push(skipped(&format!(
                "{event} (its final text differs from the streamed deltas)"
            )));
        }
    }

    /// `response.output_item.added`: `item`, at output index `oi`.
    fn item_added(&mut self, item: &Value, oi: u64, r: Reader) -> Result<(), ProviderError> {
        let text = |key: &str| r.text(item, "item", key);
        let kind = text("type")?;
        let state = match kind {
            "message" => Item::Message,
            "reasoning" => Item::Reasoning,
            "function_call" => {
                let start = call_start(self.next_call, item, r)?;
                let index = self.next_call;
                self.next_call += 1;
                self.has_calls = true;
                self.out.push(start);
                Item::FunctionCall {
                    index,
                    ended: false,
                }
            }
            other => {
                let name = skip_unknown(&mut self.out, "response.output_item.added", other);
                Item::Skipped(name)
            }
        };
        self.items.insert(oi, state);
        if kind == "function_call" {
            let arguments = text("arguments")?;
            self.delta(Some(oi), Part::Arguments, arguments);
        }
        Ok(())
    }

    /// `response.output_item.done`: `item`, at output index `oi`.
    fn item_done(&mut self, item: &Value, oi: u64, r: Reader) -> Result<(), ProviderError> {
        let text = |key: &str| r.text(item, "item", key);
        let kind = text("type")?;
        // An item that was never announced is taken as announced now.
        if !self.items.contains_key(&oi) {
            let before = self.out.len();
            self.item_added(item, oi, r)?;
            let announced = self.out.split_off(before);
            self.out.extend(
                announced
                    .into_iter()
                    .filter(|e| !matches!(e, StreamEvent::Skipped { .. })),
            );
        }
        let event = "response.output_item.done";
        // The `field` texts of the parts of `item.key`.
        let texts = |key: &str, field: &str| -> Result<Vec<(u64, String)>, ProviderError> {
            let parts = r.array(item.get(key), || format!("item.{key}"))?;
            let mut found = Vec::new();
            for (i, p) in parts.into_iter().flatten().enumerate() {
                if let Some(t) = r.str(p.get(field), || format!("item.{key}[{i}].{field}"))? {
                    found.push((i as u64, t.to_string()));
                }
            }
            Ok(found)
        };
        match self.items.get(&oi) {
            Some(Item::FunctionCall { .. }) => {
                let arguments = text("arguments")?;
                if !arguments.is_empty() {
                    self.reconcile(Some(oi), Part::Arguments, arguments, event);
                }
                if let Some(Item::FunctionCall { index, ended }) = self.items.get_mut(&oi)
                    && !*ended
                {
                    *ended = true;
                    self.out.push(StreamEvent::ToolCallEnd { index: *index });
                }
            }
            Some(Item::Reasoning) => {
                for (i, t) in texts("summary", "text")? {
                    self.reconcile(Some(oi), Part::Summary(i), &t, event);
                }
                for (i, t) in texts("content", "text")? {
                    self.reconcile(Some(oi), Part::ReasoningText(i), &t, event);
                }
                let enc = text("encrypted_content")?;
                if !enc.is_empty() {
                    let id = text("id")?;
                    self.out.push(StreamEvent::ReasoningSignature {
                        signature: signature(id, enc),
                    });
                }
            }
            Some(Item::Message) => {
                let content = r.array(item.get("content"), || "item.content".into())?;
                for (i, part) in content.into_iter().flatten().enumerate() {
                    let field = |key: &str| {
                        r.str(part.get(key), || format!("item.content[{i}].{key}"))
                            .map(|t| t.unwrap_or(""))
                    };
                    match field("type")? {
                        "refusal" => return Err(refused(field("refusal")?)),
                        "output_text" => {
                            let t = field("text")?;
                            self.reconcile(Some(oi), Part::Text(i as u64), t, event);
                        }
                        _ => {}
                    }
                }
            }
            Some(Item::Skipped(name)) => {
                self.out
                    .push(skipped(&format!("response.output_item.done:{name}")));
            }
            None => self
                .out
                .push(skipped(&format!("response.output_item.done:{kind}"))),
        }
        Ok(())
    }

    /// `response.completed` / `response.incomplete`: its `response.usage`.
    fn finish_response(
        &mut self,
        response: Option<&Value>,
        r: Reader,
    ) -> Result<(), ProviderError> {
        let usage = match response {
            Some(resp) => r.object(resp.get("usage"), || "response.usage".into())?,
            None => None,
        };
        if let Some(usage) = usage {
            self.done_usage.add(&responses_usage(usage, r)?);
            self.out.push(StreamEvent::Usage {
                usage: self.done_usage,
            });
        }
        self.terminal = true;
        self.current.open = false;
        Ok(())
    }
}

fn call_start(index: u32, item: &Value, r: Reader) -> Result<StreamEvent, ProviderError> {
    let s = |key: &str| {
        r.str(item.get(key), || format!("item.{key}"))
            .map(|t| t.unwrap_or(""))
    };
    let id = match s("call_id")? {
        "" => s("id")?,
        call_id => call_id,
    };
    Ok(StreamEvent::ToolCallStart {
        index,
        id: CallId(id.to_string()),
        name: s("name")?.to_string(),
    })
}

/// `{"id":…,"encrypted_content":…}`, keys in that order whatever serde_json's map.
fn signature(id: &str, encrypted_content: &str) -> String {
    format!(
        "{{\"id\":{},\"encrypted_content\":{}}}",
        Value::String(id.to_string()),
        Value::String(encrypted_content.to_string())
    )
}

fn refused(text: &str) -> ProviderError {
    ProviderError {
        kind: ProviderErrorKind::Api,
        message: format!("the model refused: {text}"),
    }
}

/// `usage` of a response. `input_tokens` includes the cached tokens
/// (`input_tokens_details.cached_tokens`) and those written to the cache
/// (`cache_write_tokens`, where reported); the normalized usage keeps them apart.
/// `output_tokens` includes the reasoning tokens.
pub fn responses_usage(usage: &Value, r: Reader) -> Result<Usage, ProviderError> {
    let n = |v: &Value, path: &str, key: &str| {
        r.uint(v.get(key), || format!("{path}.{key}"))
            .map(|n| n.unwrap_or(0))
    };
    let details = r.object(usage.get("input_tokens_details"), || {
        "response.usage.input_tokens_details".into()
    })?;
    let detail = |key: &str| match details {
        Some(d) => n(d, "response.usage.input_tokens_details", key),
        None => Ok(0),
    };
    let input = n(usage, "response.usage", "input_tokens")?;
    let cached = detail("cached_tokens")?.min(input);
    let written = detail("cache_write_tokens")?.min(input - cached);
    Ok(Usage {
        input_tokens: input - cached - written,
        output_tokens: n(usage, "response.usage", "output_tokens")?,
        cache_read_tokens: cached,
        cache_write_tokens: written,
        estimated: false,
    })
}

/// The reasoning items held in a signature (see the module doc); anything that is
/// not such a sequence (e.g. another provider's signature) yields none.
fn reasoning_items(signature: &str) -> Vec<(String, String)> {
    let mut items = Vec::new();
    for value in serde_json::Deserializer::from_str(signature).into_iter::<Value>() {
        let Ok(value) = value else {
            return Vec::new();
        };
        let id = value.get("id").and_then(Value::as_str);
        let enc = value.get("encrypted_content").and_then(Value::as_str);
        match (id, enc) {
            (Some(id), Some(enc)) if !id.is_empty() => {
                items.push((id.to_string(), enc.to_string()))
            }
            _ => return Vec::new(),
        }
    }
    items
}

pub mod wire;

/// The Responses wire protocol.
#[derive(Debug, Clone, Copy)]
pub struct Responses {
    /// Ask for `reasoning.encrypted_content`. On by default for the reasoning models
    /// ([`reasoning_model`]); models without reasoning reject the request with it
    /// ("Encrypted content is not supported with this model").
    pub encrypted_reasoning: bool,
}

impl http::Wire for Responses {
    const NAME: &'static str = "openai-responses";
    const PATH: &'static str = "responses";
    type Mapper = ResponsesMapper;

    fn for_config(config: &HttpConfig) -> Responses {
        Responses {
            encrypted_reasoning: reasoning_model(&config.model),
        }
    }
    fn body<'a>(&self, model: &'a str, request: &'a ModelRequest) -> impl Serialize + 'a {
        wire::body(model, request, self.encrypted_reasoning)
    }
}

/// The Responses provider.
pub type ResponsesProvider = http::HttpProvider<Responses>;

/// OpenAI's reasoning models (o-series, gpt-5, codex), by name, with or without a
/// routing prefix such as `openai/`.
pub fn reasoning_model(model: &str) -> bool {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    ["o1", "o3", "o4", "gpt-5"]
        .iter()
        .any(|p| name.starts_with(p))
        || name.contains("codex")
}

#[cfg(test)]
mod tests;
