//! Shared HTTP behavior of the wire-protocol providers: configuration from flags and
//! the environment, and one streamed request driven through the SSE parser and a
//! protocol's mapper into the [`StreamSink`].
//!
//! - **Retries** only before the first byte of the body: on a connect error, on
//!   408/409/429/5xx, and on a connection that closes before any byte. At most
//!   `max_attempts` attempts; the delay is exponential (`retry_base` × 2^(n-1), capped
//!   at 30 s) with jitter derived from a hash of the attempt, the clock and the URL
//!   (no random number generator), or exactly the server's `retry-after` /
//!   `retry-after-ms` when it sends one (a wait longer than `max_retry_wait` is not
//!   waited for: the request fails at once and says so). Each retry is announced
//!   with [`StreamEvent::Retrying`] (`attempt` is the attempt about to be made: 2 for the
//!   first retry; `delay_ms` the wait before it).
//! - **Errors**: a non-retryable 4xx with a JSON error body is `api` with the
//!   provider's message; retries exhausted is `http`; no byte for `idle_timeout`
//!   while waiting or streaming is `idle_timeout`; a connection that breaks or ends
//!   before the protocol's end marker is `disconnected`, saying how many bytes and
//!   events arrived.
//! - **Cancel** is honored at every wait: between chunks, while connecting, while
//!   sleeping before a retry.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::StreamSink;
use super::cassette::{self, BodyEnd, Chunk, Exchange, Next, Playback, Tape};
use super::decode::{
    Decoder, Flow, bounded, bounded_text, disconnected, looks_like_json, not_a_stream,
};
use super::sse::StreamMapper;
use xcsh_machine::{ProviderError, ProviderErrorKind, StreamEvent};

mod config;
mod provider;

pub use super::errors::*;
pub use config::*;
pub use provider::{HttpProvider, Wire};

/// Longest exponential backoff step.
const BACKOFF_CAP: Duration = Duration::from_secs(30);
/// How much of an error body is read and shown.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// One request: URL, extra headers, JSON body (serialized), and the output limit the
/// body asks for (the client enforces it too: §19.6). `Debug` never shows the value of
/// a header that carries a credential ([`is_secret_header`]).
#[derive(Clone)]
pub struct HttpRequest {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub max_output_tokens: Option<u32>,
}

/// Headers whose value is a credential: never shown by a `Debug` print.
pub fn is_secret_header(name: &str) -> bool {
    const SECRET: [&str; 5] = [
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "cookie",
    ];
    SECRET.iter().any(|s| s.eq_ignore_ascii_case(name))
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(name, value)| {
                let shown = if is_secret_header(name) {
                    "<redacted>"
                } else {
                    value.as_str()
                };
                (name.as_str(), shown)
            })
            .collect();
        f.debug_struct("HttpRequest")
            .field("url", &self.url)
            .field("headers", &headers)
            .field("body", &self.body)
            .field("max_output_tokens", &self.max_output_tokens)
            .finish()
    }
}

/// The error of a provider call the user cancelled (the faux provider's too).
pub(crate) fn cancelled() -> ProviderError {
    ProviderError {
        kind: ProviderErrorKind::Disconnected,
        message: "cancelled".into(),
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        let text = inner.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        source = inner.source();
    }
    s
}

/// What one attempt came to.
enum Attempt {
    /// A 2xx response whose first body bytes arrived: from here on, no retry.
    Streaming(reqwest::Response, Vec<u8>),
    /// Failed before any byte of the body; may be tried again.
    Retry {
        reason: String,
        retry_after: Option<Duration>,
        error: ProviderError,
    },
    Fail(ProviderError),
}

/// Sends `request` (retrying before the first byte), then streams the body through
/// an SSE parser and `mapper` into `sink`, within the client's own limits
/// ([`super::decode`]). With a cassette `tape` in `config` the exchange is
/// recorded, or served from the cassette instead of the network. An error's
/// message is at most [`super::decode::MAX_ERROR_CHARS`] characters.
pub async fn stream_sse(
    client: &reqwest::Client,
    config: &HttpConfig,
    request: HttpRequest,
    mapper: &mut dyn StreamMapper,
    sink: &StreamSink,
    cancel: &CancellationToken,
) -> Result<(), ProviderError> {
    let exchange = async {
        let body = request.body.as_str();
        if let Some(Tape::Play(tape)) = &config.tape {
            let path = url_path(&request.url);
            let recorded = tape.redactor.redact(body);
            let recorded = serde_json::from_str(&recorded).unwrap_or(Value::String(recorded));
            let exchange = tape.take(&path, &recorded)?;
            for r in exchange.retries {
                if !sink.send(StreamEvent::Retrying {
                    attempt: r.attempt,
                    reason: r.reason,
                    delay_ms: r.delay_ms,
                }) {
                    return Err(stopped_listening());
                }
            }
            return match exchange.response {
                cassette::Response::Error { error } => Err(error),
                cassette::Response::Stream { chunks, end, .. } => {
                    let mut source = Source::Tape(Playback::new(chunks, end, tape.pace));
                    stream_body(&mut source, config, &request, mapper, sink, cancel).await
                }
            };
        }
        let recorder = match &config.tape {
            Some(Tape::Record(w)) => Some(w),
            Some(Tape::Play(_)) | None => None,
        };
        let record = |retries: Vec<cassette::Retry>, response: cassette::Response| {
            if let Some(w) = recorder {
                let redacted = w.redactor.redact(body);
                let exchange = Exchange {
                    path: url_path(&request.url),
                    body: serde_json::from_str(&redacted).unwrap_or(Value::String(redacted)),
                    retries,
                    response,
                };
                if let Err(e) = w.write(&exchange) {
                    return Err(ProviderError {
                        kind: ProviderErrorKind::Http,
                        message: format!("cannot record the exchange: {e}"),
                    });
                }
            }
            Ok(())
        };
        // An error that ends the exchange, recorded as its response.
        let fail = |retries, error: ProviderError| -> Result<(), ProviderError> {
            record(
                retries,
                cassette::Response::Error {
                    error: error.clone(),
                },
            )?;
            Err(error)
        };
        let max_attempts = config.max_attempts.max(1);
        let mut attempt = 1;
        let mut retries = Vec::new();
        loop {
            let started = std::time::Instant::now();
            match attempt_once(client, config, &request, body, cancel).await {
                Attempt::Fail(e) => return fail(retries, e),
                Attempt::Streaming(response, first) => {
                    let mut source = Source::Live {
                        response,
                        first: Some(first),
                        started,
                        tap: recorder.map(|_| (Vec::new(), None)),
                    };
                    let result =
                        stream_body(&mut source, config, &request, mapper, sink, cancel).await;
                    if let Source::Live {
                        tap: Some((chunks, end)),
                        ..
                    } = source
                    {
                        let end = end.unwrap_or(BodyEnd::Broken {
                            detail: "the client stopped reading".into(),
                        });
                        record(
                            retries,
                            cassette::Response::Stream {
                                status: 200,
                                chunks,
                                end,
                            },
                        )?;
                    }
                    return result;
                }
                Attempt::Retry {
                    reason,
                    retry_after,
                    mut error,
                } => {
                    let reason = bounded_text(reason);
                    if attempt >= max_attempts {
                        error.message = format!("{} (after {attempt} attempts)", error.message);
                        return fail(retries, error);
                    }
                    let delay = match retry_after {
                        Some(wait) if wait > config.max_retry_wait => {
                            error.message = format!(
                                "{} (the server asked to retry after {} s, longer than the {} s this client waits)",
                                error.message,
                                wait.as_secs(),
                                config.max_retry_wait.as_secs()
                            );
                            return fail(retries, error);
                        }
                        Some(wait) => wait,
                        None => backoff(config.retry_base, attempt, &request.url),
                    };
                    attempt += 1;
                    let delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
                    retries.push(cassette::Retry {
                        attempt,
                        reason: reason.clone(),
                        delay_ms,
                    });
                    if !sink.send(StreamEvent::Retrying {
                        attempt,
                        reason,
                        delay_ms,
                    }) {
                        return Err(stopped_listening());
                    }
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {}
                        () = cancel.cancelled() => return Err(cancelled()),
                    }
                }
            }
        }
    };
    exchange.await.map_err(bounded)
}

/// A request body as `--show-context` shows it ([`super::Provider::render_request`]):
/// the value of the very body [`HttpProvider`] sends.
pub fn shown_body(body: &impl Serialize) -> Value {
    serde_json::to_value(body).unwrap_or_else(|e| Value::String(unserializable(e).message))
}

/// A body that does not serialize. Never met: the bodies are borrowed structs of
/// strings, numbers, booleans and `Value`s, whose keys are strings.
fn unserializable(e: serde_json::Error) -> ProviderError {
    ProviderError {
        kind: ProviderErrorKind::Http,
        message: format!("the request body could not be serialized: {e}"),
    }
}

/// The path of a URL (`/v1/chat/completions`), which cassettes match on.
fn url_path(url: &str) -> String {
    reqwest::Url::parse(url)
        .map(|u| u.path().to_string())
        .unwrap_or_else(|_| url.to_string())
}

/// Where body bytes come from: the network (optionally tapped for a cassette), or
/// a cassette.
enum Source {
    Live {
        response: reqwest::Response,
        first: Option<Vec<u8>>,
        started: std::time::Instant,
        /// The chunks seen and how the body ended, when recording.
        tap: Option<(Vec<Chunk>, Option<BodyEnd>)>,
    },
    Tape(Playback),
}

impl Source {
    async fn next(&mut self, config: &HttpConfig, cancel: &CancellationToken) -> Option<Next> {
        match self {
            Source::Tape(playback) => tokio::select! {
                next = playback.next() => Some(next),
                () = cancel.cancelled() => None,
            },
            Source::Live {
                response,
                first,
                started,
                tap,
            } => {
                let next = match first.take() {
                    Some(bytes) => Next::Bytes(bytes),
                    None => {
                        let read = tokio::select! {
                            r = tokio::time::timeout(config.idle_timeout, response.chunk()) => r,
                            () = cancel.cancelled() => return None,
                        };
                        match read {
                            Err(_) => Next::Idle,
                            Ok(Ok(Some(data))) => Next::Bytes(data.to_vec()),
                            Ok(Ok(None)) => Next::End,
                            Ok(Err(e)) => Next::Broken(error_chain(&e)),
                        }
                    }
                };
                if let Some((chunks, end)) = tap {
                    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                    match &next {
                        Next::Bytes(b) => chunks.push(Chunk::new(ms, b)),
                        Next::End => *end = Some(BodyEnd::Complete),
                        Next::Broken(detail) => {
                            *end = Some(BodyEnd::Broken {
                                detail: detail.clone(),
                            })
                        }
                        Next::Idle => *end = Some(BodyEnd::Idle),
                    }
                }
                Some(next)
            }
        }
    }
}

/// Exponential backoff with "equal jitter": half the step fixed, half jittered.
pub fn backoff(base: Duration, attempt: u32, salt: &str) -> Duration {
    let step = base
        .saturating_mul(
            1u32.checked_shl(attempt.saturating_sub(1))
                .unwrap_or(u32::MAX),
        )
        .min(BACKOFF_CAP);
    let half = step / 2;
    half + half.mul_f64(jitter(attempt, salt))
}

/// A number in [0, 1) derived from the attempt, the clock and a salt: different
/// clients and attempts spread out without a random number generator.
fn jitter(attempt: u32, salt: &str) -> f64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut hasher = blake3::Hasher::new();
    hasher.update(&attempt.to_le_bytes());
    hasher.update(&nanos.to_le_bytes());
    hasher.update(salt.as_bytes());
    let hash = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash.as_bytes()[..8]);
    (u64::from_le_bytes(first) >> 11) as f64 / (1u64 << 53) as f64
}

fn retryable_status(status: reqwest::StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 409 | 429) || status.is_server_error()
}

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds; an HTTP date is ignored.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let secs = get("retry-after")?.trim().parse::<f64>().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e9)))
}

async fn attempt_once(
    client: &reqwest::Client,
    config: &HttpConfig,
    request: &HttpRequest,
    body: &str,
    cancel: &CancellationToken,
) -> Attempt {
    let mut builder = client
        .post(&request.url)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .body(body.to_string());
    for (name, value) in &request.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let sent = tokio::select! {
        r = tokio::time::timeout(config.idle_timeout, builder.send()) => r,
        () = cancel.cancelled() => return Attempt::Fail(cancelled()),
    };
    let mut response = match sent {
        Err(_) => {
            return Attempt::Fail(ProviderError {
                kind: ProviderErrorKind::IdleTimeout,
                message: format!(
                    "no response from {} within {} s",
                    request.url,
                    config.idle_timeout.as_secs_f64()
                ),
            });
        }
        Ok(Err(e)) => {
            let detail = error_chain(&e);
            return Attempt::Retry {
                reason: format!("connection failed: {detail}"),
                retry_after: None,
                error: ProviderError {
                    kind: ProviderErrorKind::Http,
                    message: format!("cannot reach {}: {detail}", request.url),
                },
            };
        }
        Ok(Ok(r)) => r,
    };
    let status = response.status();
    if !status.is_success() {
        let wait = retry_after(response.headers());
        let text = read_error_body(&mut response, config, cancel).await;
        let body = serde_json::from_str::<Value>(&text).ok();
        let parsed = body.as_ref().and_then(error_message);
        let status_line = format!(
            "HTTP {} {}",
            status.as_u16(),
            status.canonical_reason().unwrap_or("")
        )
        .trim_end()
        .to_string();
        let detail = match &parsed {
            Some(m) => format!("{status_line}: {m}"),
            None if text.trim().is_empty() => status_line.clone(),
            None => format!("{status_line}: {}", clip(text.trim(), 500)),
        };
        // A request too long for the context fails the same way every time.
        let overflow = parsed.is_some() && body.as_ref().is_some_and(is_context_overflow);
        if retryable_status(status) && !overflow {
            return Attempt::Retry {
                reason: detail.clone(),
                retry_after: wait,
                error: ProviderError {
                    kind: ProviderErrorKind::Http,
                    message: detail,
                },
            };
        }
        let kind = if overflow {
            ProviderErrorKind::ContextOverflow
        } else if parsed.is_some() {
            ProviderErrorKind::Api
        } else {
            ProviderErrorKind::Http
        };
        return Attempt::Fail(ProviderError {
            kind,
            message: detail,
        });
    }
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let first = tokio::select! {
        r = tokio::time::timeout(config.idle_timeout, response.chunk()) => r,
        () = cancel.cancelled() => return Attempt::Fail(cancelled()),
    };
    match first {
        Err(_) => Attempt::Fail(idle_timeout(config, 0, 0)),
        Ok(Ok(Some(bytes))) if !bytes.is_empty() => {
            if looks_like_json(content_type.as_deref(), &bytes) {
                let body = read_body(&mut response, bytes.to_vec(), config, cancel).await;
                let truncated = body.len() >= ERROR_BODY_LIMIT;
                return Attempt::Fail(not_a_stream(
                    status.as_u16(),
                    content_type.as_deref(),
                    &body,
                    truncated,
                ));
            }
            Attempt::Streaming(response, bytes.to_vec())
        }
        Ok(Ok(_)) => Attempt::Retry {
            reason: "the connection closed before any byte of the body".into(),
            retry_after: None,
            error: disconnected(0, 0, "the connection closed before any byte of the body"),
        },
        Ok(Err(e)) => {
            let detail = error_chain(&e);
            Attempt::Retry {
                reason: format!("the connection broke before any byte of the body: {detail}"),
                retry_after: None,
                error: disconnected(0, 0, &detail),
            }
        }
    }
}

async fn read_error_body(
    response: &mut reqwest::Response,
    config: &HttpConfig,
    cancel: &CancellationToken,
) -> String {
    String::from_utf8_lossy(&read_body(response, Vec::new(), config, cancel).await).into_owned()
}

/// The rest of a body after `body`, up to [`ERROR_BODY_LIMIT`] bytes.
async fn read_body(
    response: &mut reqwest::Response,
    mut body: Vec<u8>,
    config: &HttpConfig,
    cancel: &CancellationToken,
) -> Vec<u8> {
    while body.len() < ERROR_BODY_LIMIT {
        let next = tokio::select! {
            r = tokio::time::timeout(config.idle_timeout, response.chunk()) => r,
            () = cancel.cancelled() => break,
        };
        match next {
            Ok(Ok(Some(bytes))) => body.extend_from_slice(&bytes),
            _ => break,
        }
    }
    body
}

fn clip(s: &str, max: usize) -> String {
    let mut out: String = s.chars().take(max).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

fn idle_timeout(config: &HttpConfig, bytes: usize, events: usize) -> ProviderError {
    ProviderError {
        kind: ProviderErrorKind::IdleTimeout,
        message: format!(
            "no data for {} s (after {bytes} bytes and {events} events)",
            config.idle_timeout.as_secs_f64()
        ),
    }
}

fn stopped_listening() -> ProviderError {
    ProviderError {
        kind: ProviderErrorKind::Disconnected,
        message: "the run no longer listens to this stream".into(),
    }
}

fn deliver(events: Vec<StreamEvent>, sink: &StreamSink) -> Result<(), ProviderError> {
    for event in events {
        if !sink.send(event) {
            return Err(stopped_listening());
        }
    }
    Ok(())
}

async fn stream_body(
    source: &mut Source,
    config: &HttpConfig,
    request: &HttpRequest,
    mapper: &mut dyn StreamMapper,
    sink: &StreamSink,
    cancel: &CancellationToken,
) -> Result<(), ProviderError> {
    let mut decoder = Decoder::new(mapper, request.max_output_tokens);
    let mut out = Vec::new();
    loop {
        if cancel.is_cancelled() {
            return Err(cancelled());
        }
        let Some(next) = source.next(config, cancel).await else {
            return Err(cancelled());
        };
        match next {
            Next::Idle => return Err(idle_timeout(config, decoder.bytes(), decoder.events())),
            Next::Bytes(data) => {
                let flow = decoder.push(&data, &mut out);
                deliver(std::mem::take(&mut out), sink)?;
                // The client ends the stream (its output passed the limit): returning
                // drops the response, which closes the connection.
                if flow? == Flow::Stop {
                    return Ok(());
                }
            }
            Next::End => break,
            Next::Broken(detail) => return Err(decoder.disconnected(&detail)),
        }
    }
    let end = decoder.end(&mut out);
    deliver(out, sink)?;
    end
}

#[cfg(test)]
mod tests;
