//! One response body, bytes in, normalized events out: the SSE parser, a protocol's
//! mapper, and the limits the client keeps itself, whatever the provider sends.
//! Sans-IO; the HTTP driver (`http::stream_sse`) and the regression suite
//! (`regress`) both read bodies through it, so they agree byte for byte.
//!
//! The limits (SPEC §19.6), which keep memory and every step entry bounded:
//!
//! - **Output**: the step's output (the bytes of text, reasoning and tool-call
//!   arguments) is estimated at 4 bytes per token; once it passes
//!   [`output_budget`] (twice `max_output_tokens`, plus 1024 tokens) the client
//!   stops reading: the delta that crossed is cut to the budget, then
//!   `output_limit_exceeded` and `finish` `length` end the stream.
//! - **One event**: an SSE event still growing past [`MAX_EVENT_BYTES`] (plus the
//!   output budget) is a `malformed` error.
//! - **Everything else**: events that are not output (signatures, skipped events,
//!   restarts, usage, ...) count [`EVENT_OVERHEAD`] bytes each plus their strings;
//!   past [`MAX_OTHER_BYTES`] the stream is a `malformed` error. A skipped event's
//!   type is cut to [`MAX_SKIPPED_TYPE`] bytes.
//! - **Errors**: a provider error's message is cut to [`MAX_ERROR_CHARS`]
//!   characters, saying how much was cut ([`bounded`]).
//!
//! A body that is JSON where a stream was asked for ([`looks_like_json`]) is never
//! decoded: [`not_a_stream`] says what arrived.

use serde_json::Value;

use super::errors::error_message;
use super::sse::{SseParser, StreamMapper, malformed};
use xcsh_machine::{FinishReason, ProviderError, ProviderErrorKind, StreamEvent};

/// The most an SSE event may grow to, beyond the output budget.
pub const MAX_EVENT_BYTES: usize = 16 << 20;
/// The most the events that are not output may add up to in one stream.
pub const MAX_OTHER_BYTES: u64 = 8 << 20;
/// What one event that is not output counts besides its strings.
pub const EVENT_OVERHEAD: u64 = 32;
/// The longest type kept of a skipped event.
pub const MAX_SKIPPED_TYPE: usize = 200;
/// The longest provider error message kept.
pub const MAX_ERROR_CHARS: usize = 2000;

/// The output bytes after which a stream is cut: 4 bytes per token for twice the
/// limit plus 1024 tokens (`4 × (2 × max_output_tokens + 1024)`).
pub fn output_budget(max_output_tokens: u32) -> u64 {
    4 * (2 * u64::from(max_output_tokens) + 1024)
}

/// Whether to read on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    More,
    /// The client ended the stream (its output passed the budget): stop reading.
    Stop,
}

/// The state of one body being decoded.
pub struct Decoder<'m> {
    parser: SseParser,
    mapper: &'m mut dyn StreamMapper,
    max_output_tokens: Option<u32>,
    /// Output bytes so far (text, reasoning, tool-call arguments).
    output: u64,
    /// What the other events count so far.
    other: u64,
    bytes: usize,
    events: usize,
}

impl<'m> Decoder<'m> {
    /// A decoder feeding `mapper`; `max_output_tokens` is the request's limit
    /// (`None`: no output limit, as for the recorded streams).
    pub fn new(mapper: &'m mut dyn StreamMapper, max_output_tokens: Option<u32>) -> Decoder<'m> {
        Decoder {
            parser: SseParser::new(),
            mapper,
            max_output_tokens,
            output: 0,
            other: 0,
            bytes: 0,
            events: 0,
        }
    }

    /// Body bytes so far.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// SSE events so far.
    pub fn events(&self) -> usize {
        self.events
    }

    fn max_event_bytes(&self) -> usize {
        let budget = self.max_output_tokens.map_or(0, output_budget);
        MAX_EVENT_BYTES.saturating_add(usize::try_from(budget).unwrap_or(usize::MAX))
    }

    /// Feeds the next chunk; what it maps is appended to `out`, also when it fails.
    pub fn push(
        &mut self,
        chunk: &[u8],
        out: &mut Vec<StreamEvent>,
    ) -> Result<Flow, ProviderError> {
        self.bytes += chunk.len();
        for event in self.parser.push(chunk) {
            self.events += 1;
            let mapped = self
                .mapper
                .on_event(event.event.as_deref(), &event.data)
                .map_err(bounded)?;
            if self.admit(mapped, out)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        let pending = self.parser.pending_len();
        if pending > self.max_event_bytes() {
            return Err(malformed(format!(
                "an SSE event grew past {} bytes without ending (after {} bytes and {} events): the client stopped reading",
                self.max_event_bytes(),
                self.bytes,
                self.events
            )));
        }
        Ok(Flow::More)
    }

    /// The body ended (the connection closed): an event still open is delivered,
    /// unless the stream was cut inside it (then the cut is the error, not the
    /// truncated payload); a body that ends before the protocol's end marker broke
    /// off.
    pub fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        for event in self.parser.finish() {
            self.events += 1;
            match self.mapper.on_event(event.event.as_deref(), &event.data) {
                Ok(mapped) => {
                    if self.admit(mapped, out)? == Flow::Stop {
                        return Ok(());
                    }
                }
                Err(_) if !self.mapper.is_complete() => {
                    return Err(
                        self.disconnected("the connection closed inside an unfinished event")
                    );
                }
                Err(e) => return Err(bounded(e)),
            }
        }
        let mapped = self.mapper.finish();
        if self.admit(mapped, out)? == Flow::Stop {
            return Ok(());
        }
        if !self.mapper.is_complete() {
            return Err(self.disconnected("the connection closed before the response was complete"));
        }
        Ok(())
    }

    /// `disconnected` `the stream broke off after B bytes and E events: DETAIL`.
    pub fn disconnected(&self, detail: &str) -> ProviderError {
        disconnected(self.bytes, self.events, detail)
    }

    /// Passes `mapped` on to `out` within the limits.
    fn admit(
        &mut self,
        mapped: Vec<StreamEvent>,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Flow, ProviderError> {
        for mut event in mapped {
            let output = match &mut event {
                StreamEvent::TextDelta { text } | StreamEvent::ReasoningDelta { text } => {
                    Some(text)
                }
                StreamEvent::ToolCallDelta { arguments, .. } => Some(arguments),
                StreamEvent::Skipped { event_type } => {
                    clip_in_place(event_type, MAX_SKIPPED_TYPE);
                    None
                }
                StreamEvent::ReasoningSignature { .. }
                | StreamEvent::ReasoningBlockStart {}
                | StreamEvent::ReasoningRedacted { .. }
                | StreamEvent::ToolCallStart { .. }
                | StreamEvent::ToolCallEnd { .. }
                | StreamEvent::Usage { .. }
                | StreamEvent::Finish { .. }
                | StreamEvent::Retrying { .. }
                | StreamEvent::Restarted { .. }
                | StreamEvent::OutputLimitExceeded { .. } => None,
            };
            match output {
                Some(text) => {
                    let len = text.len() as u64;
                    if let Some(max) = self.max_output_tokens {
                        let budget = output_budget(max);
                        if self.output + len > budget {
                            let keep = usize::try_from(budget - self.output).unwrap_or(usize::MAX);
                            clip_at_boundary(text, keep);
                            self.output += len;
                            if !text.is_empty() {
                                out.push(event);
                            }
                            out.push(StreamEvent::OutputLimitExceeded {
                                max_output_tokens: max,
                                output_bytes: self.output,
                            });
                            out.push(StreamEvent::Finish {
                                reason: FinishReason::Length,
                            });
                            return Ok(Flow::Stop);
                        }
                    }
                    self.output += len;
                }
                None => {
                    self.other += EVENT_OVERHEAD + strings_len(&event);
                    if self.other > MAX_OTHER_BYTES {
                        return Err(malformed(format!(
                            "the stream sent more than {MAX_OTHER_BYTES} bytes of events that are not output (after {} bytes and {} events; the last: {}): the client stopped reading",
                            self.bytes,
                            self.events,
                            event.kind()
                        )));
                    }
                }
            }
            out.push(event);
        }
        Ok(Flow::More)
    }
}

/// The bytes of the strings an event carries (what it adds to a log line).
fn strings_len(event: &StreamEvent) -> u64 {
    let n = match event {
        StreamEvent::TextDelta { text } | StreamEvent::ReasoningDelta { text } => text.len(),
        StreamEvent::ToolCallDelta { arguments, .. } => arguments.len(),
        StreamEvent::ReasoningSignature { signature } => signature.len(),
        StreamEvent::ReasoningRedacted { data } => data.len(),
        StreamEvent::ToolCallStart { id, name, .. } => id.0.len() + name.len(),
        StreamEvent::Skipped { event_type } => event_type.len(),
        StreamEvent::Retrying { reason, .. } | StreamEvent::Restarted { reason } => reason.len(),
        StreamEvent::ReasoningBlockStart {}
        | StreamEvent::ToolCallEnd { .. }
        | StreamEvent::Usage { .. }
        | StreamEvent::Finish { .. }
        | StreamEvent::OutputLimitExceeded { .. } => 0,
    };
    n as u64
}

/// Cuts `text` to at most `max` bytes, at a character boundary.
fn clip_at_boundary(text: &mut String, max: usize) {
    if text.len() <= max {
        return;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
}

/// Cuts `text` to at most `max` bytes and says how many were cut.
fn clip_in_place(text: &mut String, max: usize) {
    if text.len() <= max {
        return;
    }
    let total = text.len();
    clip_at_boundary(text, max);
    let cut = total - text.len();
    text.push_str(&format!("… [{cut} more bytes cut]"));
}

/// A provider error whose message is at most [`MAX_ERROR_CHARS`] characters, then
/// `… [N more bytes cut]`.
pub fn bounded(mut error: ProviderError) -> ProviderError {
    error.message = bounded_text(error.message);
    error
}

/// `text` cut to at most [`MAX_ERROR_CHARS`] characters, then `… [N more bytes cut]`.
pub fn bounded_text(mut text: String) -> String {
    if let Some((at, _)) = text.char_indices().nth(MAX_ERROR_CHARS) {
        let cut = text.len() - at;
        text.truncate(at);
        text.push_str(&format!("… [{cut} more bytes cut]"));
    }
    text
}

/// A 2xx body that is not an event stream: the content type says JSON, or (none or
/// another) the body starts with `{` or `[`, which no SSE line does.
pub fn looks_like_json(content_type: Option<&str>, first: &[u8]) -> bool {
    let base = content_type
        .and_then(|c| c.split(';').next())
        .map(|c| c.trim().to_ascii_lowercase());
    match base.as_deref() {
        Some("text/event-stream") => false,
        Some(c) if c == "application/json" || c.ends_with("+json") => true,
        Some(_) | None => first
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|b| matches!(b, b'{' | b'[')),
    }
}

/// How much of a JSON body that came instead of a stream is shown.
const NOT_A_STREAM_SHOWN: usize = 200;

/// The error for a JSON body where an SSE stream was asked for (a server or proxy
/// that ignored `stream: true`): the provider's error when it is one, else what
/// arrived (`truncated`: the body was longer than what was read).
pub fn not_a_stream(
    status: u16,
    content_type: Option<&str>,
    body: &[u8],
    truncated: bool,
) -> ProviderError {
    let text = String::from_utf8_lossy(body);
    if let Some(message) = serde_json::from_str::<Value>(text.trim())
        .ok()
        .and_then(|v| error_message(&v))
    {
        return ProviderError {
            kind: ProviderErrorKind::Api,
            message: format!(
                "HTTP {status} with a JSON error body instead of an SSE stream: {message}"
            ),
        };
    }
    let shown = text.trim();
    let mut excerpt: String = shown.chars().take(NOT_A_STREAM_SHOWN).collect();
    if excerpt.len() < shown.len() {
        let more = if truncated { "more than " } else { "" };
        excerpt.push_str(&format!("… ({more}{} bytes in all)", body.len()));
    }
    let what = match content_type {
        Some(c) => format!("content-type {c}"),
        None => "no content-type".to_string(),
    };
    ProviderError {
        kind: ProviderErrorKind::Malformed,
        message: format!(
            "expected an SSE stream (text/event-stream), got a JSON body ({what}): {excerpt}"
        ),
    }
}

/// `disconnected` `the stream broke off after B bytes and E events: DETAIL`.
pub fn disconnected(bytes: usize, events: usize, detail: &str) -> ProviderError {
    ProviderError {
        kind: ProviderErrorKind::Disconnected,
        message: format!("the stream broke off after {bytes} bytes and {events} events: {detail}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::AnthropicMapper;
    use crate::openai::OpenAiMapper;
    use crate::testing::assemble;

    fn chat_text(text: &str) -> Vec<u8> {
        let chunk = serde_json::json!({"choices": [{"index": 0, "delta": {"content": text}}]});
        format!("data: {chunk}\n\n").into_bytes()
    }

    #[test]
    fn a_stream_far_past_its_output_limit_is_cut_at_the_budget_and_ends_length() {
        let mut mapper = OpenAiMapper::default();
        let mut decoder = Decoder::new(&mut mapper, Some(100));
        // "é" is two bytes: the budget (4 × (2 × 100 + 1024) = 4896 bytes) falls
        // inside one of them.
        let chunk = chat_text(&format!("a{}", "é".repeat(500)));
        let mut out = Vec::new();
        let mut flow = Flow::More;
        let mut chunks = 0;
        while flow == Flow::More {
            flow = decoder.push(&chunk, &mut out).unwrap();
            chunks += 1;
            assert!(chunks < 100, "never cut");
        }
        assert_eq!(chunks, 5);
        let text = assemble(&out).text;
        assert_eq!(text.len(), 4895);
        assert_eq!(
            out[out.len() - 2..],
            [
                StreamEvent::OutputLimitExceeded {
                    max_output_tokens: 100,
                    output_bytes: 5 * 1001,
                },
                StreamEvent::Finish {
                    reason: FinishReason::Length
                },
            ]
        );
    }

    #[test]
    fn without_a_limit_nothing_is_cut() {
        let mut mapper = OpenAiMapper::default();
        let mut decoder = Decoder::new(&mut mapper, None);
        let mut out = Vec::new();
        for _ in 0..100 {
            assert_eq!(
                decoder.push(&chat_text(&"x".repeat(1000)), &mut out),
                Ok(Flow::More)
            );
        }
        assert_eq!(assemble(&out).text.len(), 100_000);
    }

    #[test]
    fn one_event_that_never_ends_is_an_error_not_a_buffer() {
        let mut mapper = OpenAiMapper::default();
        let mut decoder = Decoder::new(&mut mapper, Some(10));
        let mut out = Vec::new();
        assert_eq!(
            decoder.push(b"data: {\"choices\":\"", &mut out),
            Ok(Flow::More)
        );
        let chunk = vec![b'x'; 1 << 20];
        let err = loop {
            match decoder.push(&chunk, &mut out) {
                Ok(Flow::More) => assert!(decoder.bytes() < 64 << 20, "never stopped"),
                Ok(Flow::Stop) => panic!("cut as output"),
                Err(e) => break e,
            }
        };
        assert_eq!(err.kind, ProviderErrorKind::Malformed);
        let limit = MAX_EVENT_BYTES + 4 * (2 * 10 + 1024);
        assert_eq!(
            err.message,
            format!(
                "an SSE event grew past {limit} bytes without ending (after {} bytes and 0 events): the client stopped reading",
                decoder.bytes()
            )
        );
        assert!(decoder.bytes() < limit + (2 << 20));
        assert!(out.is_empty());
    }

    #[test]
    fn endless_events_that_are_not_output_are_bounded() {
        let mut mapper = AnthropicMapper::default();
        let mut decoder = Decoder::new(&mut mapper, Some(8192));
        let mut out = Vec::new();
        let ping = "event: ping\ndata: {\"type\":\"ping\"}\n\n".repeat(1000);
        let err = loop {
            match decoder.push(ping.as_bytes(), &mut out) {
                Ok(Flow::More) => assert!(decoder.events() < 1_000_000, "never stopped"),
                Ok(Flow::Stop) => panic!("cut as output"),
                Err(e) => break e,
            }
        };
        assert_eq!(err.kind, ProviderErrorKind::Malformed);
        assert!(
            err.message.starts_with(
                "the stream sent more than 8388608 bytes of events that are not output (after "
            ) && err
                .message
                .ends_with("; the last: skipped): the client stopped reading"),
            "{}",
            err.message
        );
        // Each ping counts 32 + 4 bytes.
        assert_eq!(out.len() as u64, MAX_OTHER_BYTES / 36);
    }

    #[test]
    fn long_error_messages_and_skipped_types_are_cut_and_say_how_much() {
        let long = "e".repeat(MAX_ERROR_CHARS + 500);
        let error = bounded(ProviderError {
            kind: ProviderErrorKind::Api,
            message: long,
        });
        assert_eq!(
            error.message,
            format!("{}… [500 more bytes cut]", "e".repeat(MAX_ERROR_CHARS))
        );
        let mut mapper = AnthropicMapper::default();
        let mut decoder = Decoder::new(&mut mapper, None);
        let mut out = Vec::new();
        let kind = "t".repeat(300);
        let sse = format!("data: {{\"type\":\"{kind}\"}}\n\n");
        decoder.push(sse.as_bytes(), &mut out).unwrap();
        assert_eq!(
            out,
            vec![StreamEvent::Skipped {
                event_type: format!("{}… [100 more bytes cut]", "t".repeat(200))
            }]
        );
        let sse = format!(
            "data: {{\"type\":\"error\",\"error\":{{\"message\":\"{}\"}}}}\n\n",
            "m".repeat(5000)
        );
        let err = decoder.push(sse.as_bytes(), &mut out).unwrap_err();
        assert!(
            err.message.ends_with("… [3000 more bytes cut]"),
            "{}",
            err.message
        );
    }
}
