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

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::StreamSink;
use super::cassette::{self, BodyEnd, Chunk, Exchange, Next, Playback, Tape};
use super::decode::{
    Decoder, Flow, bounded, bounded_text, disconnected, looks_like_json, not_a_stream,
};
use super::sse::StreamMapper;
use crate::machine::{ProviderError, ProviderErrorKind, StreamEvent};

mod config;
mod errors;

pub use config::*;
pub use errors::*;

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

fn cancelled() -> ProviderError {
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
    exchange(client, config, request, mapper, sink, cancel)
        .await
        .map_err(bounded)
}

async fn exchange(
    client: &reqwest::Client,
    config: &HttpConfig,
    request: HttpRequest,
    mapper: &mut dyn StreamMapper,
    sink: &StreamSink,
    cancel: &CancellationToken,
) -> Result<(), ProviderError> {
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
    let max_attempts = config.max_attempts.max(1);
    let mut attempt = 1;
    let mut retries = Vec::new();
    loop {
        let started = std::time::Instant::now();
        match attempt_once(client, config, &request, body, cancel).await {
            Attempt::Fail(e) => {
                record(retries, cassette::Response::Error { error: e.clone() })?;
                return Err(e);
            }
            Attempt::Streaming(response, first) => {
                let mut source = Source::Live {
                    response,
                    first: Some(first),
                    started,
                    tap: recorder.map(|_| (Vec::new(), None)),
                };
                let result = stream_body(&mut source, config, &request, mapper, sink, cancel).await;
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
                    record(
                        retries,
                        cassette::Response::Error {
                            error: error.clone(),
                        },
                    )?;
                    return Err(error);
                }
                let delay = match retry_after {
                    Some(wait) if wait > config.max_retry_wait => {
                        error.message = format!(
                            "{} (the server asked to retry after {} s, longer than the {} s this client waits)",
                            error.message,
                            wait.as_secs(),
                            config.max_retry_wait.as_secs()
                        );
                        record(
                            retries,
                            cassette::Response::Error {
                                error: error.clone(),
                            },
                        )?;
                        return Err(error);
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
}

/// Where and how a wire protocol posts: the endpoint path under the base URL, its
/// fixed headers, and the header that carries the API key.
pub struct Endpoint {
    pub path: &'static str,
    pub headers: Vec<(String, String)>,
    pub auth: fn(&str) -> (String, String),
}

/// Streams one POST of `body` to the endpoint through `mapper` into `sink`: the
/// whole of a wire-protocol provider's `stream` once its body is built.
/// `max_output_tokens` is the request's limit, which the client enforces too.
#[allow(clippy::too_many_arguments)]
pub fn post_stream<M: StreamMapper + Send + 'static>(
    client: reqwest::Client,
    config: std::sync::Arc<HttpConfig>,
    endpoint: Endpoint,
    body: Value,
    max_output_tokens: u32,
    mapper: M,
    sink: StreamSink,
    cancel: CancellationToken,
) -> super::BoxFuture<Result<(), ProviderError>> {
    post_stream_text(
        client,
        config,
        endpoint,
        body.to_string(),
        max_output_tokens,
        mapper,
        sink,
        cancel,
    )
}

/// [`post_stream`] with the body already serialized to JSON text.
#[allow(clippy::too_many_arguments)]
pub fn post_stream_text<M: StreamMapper + Send + 'static>(
    client: reqwest::Client,
    config: std::sync::Arc<HttpConfig>,
    endpoint: Endpoint,
    body: String,
    max_output_tokens: u32,
    mut mapper: M,
    sink: StreamSink,
    cancel: CancellationToken,
) -> super::BoxFuture<Result<(), ProviderError>> {
    Box::pin(async move {
        let mut headers = endpoint.headers;
        if let Some(key) = &config.api_key {
            headers.push((endpoint.auth)(key));
        }
        let request = HttpRequest {
            url: config.endpoint(endpoint.path),
            headers,
            body,
            max_output_tokens: Some(max_output_tokens),
        };
        stream_sse(&client, &config, request, &mut mapper, &sink, &cancel).await
    })
}

/// `Authorization: Bearer KEY` (OpenAI and the servers that speak its protocols).
pub fn bearer(key: &str) -> (String, String) {
    ("authorization".to_string(), format!("Bearer {key}"))
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
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn flags_win_over_environment() {
        let e = env(&[
            ("OPENAI_API_KEY", "env-key"),
            ("OPENAI_BASE_URL", "https://x.test/v1"),
        ]);
        let c = HttpConfig::openai_with_env("m", None, None, &e).unwrap();
        assert_eq!(c.base_url, "https://x.test/v1");
        assert_eq!(c.api_key.as_deref(), Some("env-key"));
        let c = HttpConfig::openai_with_env(
            "m",
            Some("https://y.test/v1/".into()),
            Some("flag-key".into()),
            &e,
        )
        .unwrap();
        assert_eq!(c.base_url, "https://y.test/v1");
        assert_eq!(c.api_key.as_deref(), Some("flag-key"));
        assert_eq!(
            c.endpoint("chat/completions"),
            "https://y.test/v1/chat/completions"
        );
    }

    #[test]
    fn missing_key_names_the_variable_but_local_servers_need_none() {
        let e = env(&[]);
        let err = HttpConfig::anthropic_with_env("m", None, None, &e).unwrap_err();
        assert_eq!(
            err,
            ConfigError::MissingKey {
                provider: "anthropic",
                var: "ANTHROPIC_API_KEY"
            }
        );
        assert!(err.to_string().contains("set ANTHROPIC_API_KEY"));
        let err = HttpConfig::openai_with_env("m", None, None, &e).unwrap_err();
        assert!(err.to_string().contains("OPENAI_API_KEY"));
        for local in [
            "http://127.0.0.1:11434/v1",
            "http://localhost:8080/v1",
            "http://[::1]:8000",
        ] {
            let c = HttpConfig::openai_with_env("m", Some(local.into()), None, &e).unwrap();
            assert!(c.api_key.is_none() && c.is_local(), "{local}");
        }
        let err = HttpConfig::openai_with_env("m", Some("ftp://x".into()), None, &e).unwrap_err();
        assert!(matches!(err, ConfigError::BadBaseUrl { .. }));
    }

    #[test]
    fn debug_redacts_the_key() {
        let c = HttpConfig::new("https://api.openai.com/v1", Some("sk-secret".into()), "m");
        let shown = format!("{c:?}");
        assert!(!shown.contains("sk-secret"));
        assert!(shown.contains("<redacted>"));
    }

    #[test]
    fn a_requests_debug_print_shows_no_credential_header_value() {
        let request = HttpRequest {
            url: "https://api.anthropic.com/v1/messages".into(),
            headers: vec![
                ("Authorization".into(), "Bearer sk-secret".into()),
                ("x-api-key".into(), "sk-ant-secret".into()),
                ("anthropic-version".into(), ANTHROPIC_VERSION.into()),
            ],
            body: "{}".into(),
            max_output_tokens: Some(8192),
        };
        expect_test::expect![[r#"
            HttpRequest { url: "https://api.anthropic.com/v1/messages", headers: [("Authorization", "<redacted>"), ("x-api-key", "<redacted>"), ("anthropic-version", "2023-06-01")], body: "{}", max_output_tokens: Some(8192) }"#]]
        .assert_eq(&format!("{request:?}"));
    }

    #[test]
    fn backoff_grows_and_stays_within_bounds() {
        let base = Duration::from_millis(100);
        for attempt in 1..=8 {
            let step = (base * 2u32.pow(attempt - 1)).min(BACKOFF_CAP);
            let d = backoff(base, attempt, "u");
            assert!(d >= step / 2 && d <= step, "attempt {attempt}: {d:?}");
        }
        assert!(backoff(base, 40, "u") <= BACKOFF_CAP);
    }

    #[test]
    fn retry_after_headers() {
        let mut h = reqwest::header::HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn provider_error_messages() {
        let openai: Value = serde_json::from_str(
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
        )
        .unwrap();
        assert_eq!(
            error_message(&openai).as_deref(),
            Some("Incorrect API key provided (invalid_api_key)")
        );
        let anthropic: Value = serde_json::from_str(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
        .unwrap();
        assert_eq!(
            error_message(&anthropic).as_deref(),
            Some("Overloaded (overloaded_error)")
        );
        assert_eq!(error_message(&Value::Null), None);
    }

    /// The refusals of a request too long for the context, as each provider
    /// documents (or, for llama.cpp, as its server sends) them, are `context_overflow`;
    /// other invalid requests stay `api`.
    #[test]
    fn context_length_refusals_are_context_overflow() {
        let kind = |body: &str| api_error_kind(&serde_json::from_str(body).unwrap());
        for body in [
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#,
            r#"{"error":{"code":400,"message":"request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9412,"n_ctx":8192}}"#,
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"invalid_request_error"}}"#,
            r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens. Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
            r#"{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}"#,
        ] {
            assert_eq!(kind(body), ProviderErrorKind::ContextOverflow, "{body}");
        }
        for body in [
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 300000 > 64000, which is the maximum allowed"}}"#,
        ] {
            assert_eq!(kind(body), ProviderErrorKind::Api, "{body}");
        }
    }

    /// A refusal that arrives as an in-stream error event is classified the same way
    /// by each wire protocol's mapper.
    #[test]
    fn in_stream_context_length_refusals_are_context_overflow() {
        use crate::provider::anthropic::AnthropicMapper;
        use crate::provider::responses::ResponsesMapper;
        let openai = OpenAiMapper::new().on_event(
            None,
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
        );
        let anthropic = AnthropicMapper::new().on_event(
            Some("error"),
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#,
        );
        let responses = ResponsesMapper::new().on_event(
            Some("response.failed"),
            r#"{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}}"#,
        );
        for (name, result) in [
            ("openai", openai),
            ("anthropic", anthropic),
            ("responses", responses),
        ] {
            assert_eq!(
                result.map_err(|e| e.kind),
                Err(ProviderErrorKind::ContextOverflow),
                "{name}"
            );
        }
    }

    // ---- real HTTP against a scripted server on 127.0.0.1 ----

    use std::io::{BufRead, BufReader, Read, Write as _};
    use std::net::TcpListener;

    use tokio::sync::mpsc;

    use crate::machine::StepNo;
    use crate::provider::StreamItem;
    use crate::provider::openai::OpenAiMapper;

    /// One scripted reply: bytes written, then (optionally) a stall before closing.
    struct Reply {
        bytes: Vec<u8>,
        stall: Duration,
    }

    fn reply(status: &str, headers: &[&str], body: &str) -> Reply {
        let mut head = format!("HTTP/1.1 {status}\r\nconnection: close\r\n");
        for h in headers {
            head.push_str(h);
            head.push_str("\r\n");
        }
        head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
        Reply {
            bytes: [head.as_bytes(), body.as_bytes()].concat(),
            stall: Duration::ZERO,
        }
    }

    /// An SSE reply without content-length: the body ends when the server closes.
    fn sse(body: &str, stall: Duration) -> Reply {
        let head =
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
        Reply {
            bytes: [head.as_bytes(), body.as_bytes()].concat(),
            stall,
        }
    }

    /// Serves `replies` one connection each; returns the base URL and the requests
    /// (head and body) as they arrived.
    fn serve(replies: Vec<Reply>) -> (String, std::sync::mpsc::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for reply in replies {
                let Ok((stream, _)) = listener.accept() else {
                    return;
                };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut head = String::new();
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    let end = line == "\r\n";
                    head.push_str(&line);
                    if end {
                        break;
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                head.push_str(&String::from_utf8_lossy(&body));
                let _ = tx.send(head);
                let mut stream = stream;
                let _ = stream.write_all(&reply.bytes);
                let _ = stream.flush();
                std::thread::sleep(reply.stall);
            }
        });
        (base, rx)
    }

    fn fast(base: &str) -> HttpConfig {
        let mut c = HttpConfig::new(base, None, "m");
        c.retry_base = Duration::from_millis(1);
        c.idle_timeout = Duration::from_millis(500);
        c
    }

    const CHAT_OK: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

    async fn drive(
        config: &HttpConfig,
        cancel: CancellationToken,
    ) -> (Result<(), ProviderError>, Vec<StreamEvent>) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let sink = StreamSink::new(StepNo(1), tx);
        let request = HttpRequest {
            url: config.endpoint("chat/completions"),
            headers: vec![("authorization".into(), "Bearer k".into())],
            body: serde_json::json!({"stream": true}).to_string(),
            max_output_tokens: Some(64),
        };
        let mut mapper = OpenAiMapper::new();
        let result = stream_sse(
            &client().unwrap(),
            config,
            request,
            &mut mapper,
            &sink,
            &cancel,
        )
        .await;
        drop(sink);
        let mut events = Vec::new();
        while let Some((_, item)) = rx.recv().await {
            if let StreamItem::Event(e) = item {
                events.push(e);
            }
        }
        (result, events)
    }

    #[tokio::test]
    async fn streams_and_sends_the_request() {
        let (base, requests) = serve(vec![sse(CHAT_OK, Duration::ZERO)]);
        let (result, events) = drive(&fast(&base), CancellationToken::new()).await;
        assert_eq!(result, Ok(()));
        assert_eq!(events.len(), 2, "{events:?}");
        let head = requests.recv().unwrap();
        assert!(
            head.starts_with("POST /chat/completions HTTP/1.1"),
            "{head}"
        );
        assert!(head.contains("authorization: Bearer k"), "{head}");
        assert!(head.ends_with("{\"stream\":true}"), "{head}");
    }

    #[tokio::test]
    async fn retries_429_with_retry_after_then_500_then_succeeds() {
        let (base, _requests) = serve(vec![
            reply(
                "429 Too Many Requests",
                &["retry-after: 0"],
                r#"{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}"#,
            ),
            reply("500 Internal Server Error", &[], "oops"),
            sse(CHAT_OK, Duration::ZERO),
        ]);
        let (result, events) = drive(&fast(&base), CancellationToken::new()).await;
        assert_eq!(result, Ok(()));
        let retries: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Retrying {
                    attempt,
                    reason,
                    delay_ms,
                } => Some((*attempt, reason.clone(), *delay_ms)),
                _ => None,
            })
            .collect();
        assert_eq!(retries.len(), 2, "{retries:?}");
        assert_eq!(
            (retries[0].0, retries[0].1.as_str(), retries[0].2),
            (
                2,
                "HTTP 429 Too Many Requests: Rate limit reached (rate_limit_exceeded)",
                0
            )
        );
        assert_eq!(retries[1].0, 3);
        assert_eq!(retries[1].1, "HTTP 500 Internal Server Error: oops");
        assert!(matches!(events.last(), Some(StreamEvent::Finish { .. })));
    }

    #[tokio::test]
    async fn gives_up_after_max_attempts() {
        let (base, _r) = serve(vec![
            reply("503 Service Unavailable", &[], ""),
            reply("503 Service Unavailable", &[], ""),
        ]);
        let mut config = fast(&base);
        config.max_attempts = 2;
        let (result, events) = drive(&config, CancellationToken::new()).await;
        assert_eq!(
            result,
            Err(ProviderError {
                kind: ProviderErrorKind::Http,
                message: "HTTP 503 Service Unavailable (after 2 attempts)".into()
            })
        );
        assert_eq!(events.len(), 1);
    }

    #[tokio::test]
    async fn a_long_retry_after_is_not_waited_for() {
        let (base, _r) = serve(vec![reply(
            "429 Too Many Requests",
            &["retry-after: 3600"],
            "",
        )]);
        let (result, events) = drive(&fast(&base), CancellationToken::new()).await;
        let err = result.unwrap_err();
        assert!(err.message.contains("retry after 3600 s"), "{err}");
        assert!(events.is_empty());
    }

    #[tokio::test]
    async fn a_4xx_json_error_is_an_api_error_without_retry() {
        let (base, _r) = serve(vec![reply(
            "401 Unauthorized",
            &["content-type: application/json"],
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
        )]);
        let (result, events) = drive(&fast(&base), CancellationToken::new()).await;
        assert_eq!(
            result,
            Err(ProviderError {
                kind: ProviderErrorKind::Api,
                message: "HTTP 401 Unauthorized: invalid x-api-key (authentication_error)".into()
            })
        );
        assert!(events.is_empty());
    }

    #[tokio::test]
    async fn a_400_context_length_refusal_is_context_overflow_without_retry() {
        let (base, requests) = serve(vec![reply(
            "400 Bad Request",
            &["content-type: application/json"],
            r#"{"error":{"code":400,"message":"request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9412,"n_ctx":8192}}"#,
        )]);
        let (result, events) = drive(&fast(&base), CancellationToken::new()).await;
        assert_eq!(
            result,
            Err(ProviderError {
                kind: ProviderErrorKind::ContextOverflow,
                message: "HTTP 400 Bad Request: request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it (400)".into()
            })
        );
        assert!(events.is_empty());
        assert_eq!(requests.try_iter().count(), 1);
    }

    #[tokio::test]
    async fn a_disconnect_mid_stream_says_how_much_arrived() {
        let partial =
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: {\"cho";
        let (base, _r) = serve(vec![sse(partial, Duration::ZERO)]);
        let (result, events) = drive(&fast(&base), CancellationToken::new()).await;
        let err = result.unwrap_err();
        assert_eq!(err.kind, ProviderErrorKind::Disconnected);
        assert!(
            err.message
                == format!(
                    "the stream broke off after {} bytes and 2 events: the connection closed inside an unfinished event",
                    partial.len()
                ),
            "{err}"
        );
        assert_eq!(events, vec![StreamEvent::TextDelta { text: "hi".into() }]);
    }

    #[tokio::test]
    async fn a_json_200_where_a_stream_was_asked_for_is_an_error_that_shows_the_body() {
        let body = format!(
            r#"{{"id":"chatcmpl-1","object":"chat.completion","choices":[{{"index":0,"message":{{"role":"assistant","content":"{}"}}}}]}}"#,
            "x".repeat(300)
        );
        let (base, _r) = serve(vec![reply(
            "200 OK",
            &["content-type: application/json"],
            &body,
        )]);
        let (result, events) = drive(&fast(&base), CancellationToken::new()).await;
        assert_eq!(
            result,
            Err(ProviderError {
                kind: ProviderErrorKind::Malformed,
                message: format!(
                    "expected an SSE stream (text/event-stream), got a JSON body (content-type application/json): {}… ({} bytes in all)",
                    &body[..200],
                    body.len()
                ),
            })
        );
        assert!(events.is_empty());
        // A JSON error object in a 200 is the provider's error.
        let (base, _r) = serve(vec![reply(
            "200 OK",
            &["content-type: application/json; charset=utf-8"],
            r#"{"error":{"message":"model overloaded","code":"overloaded"}}"#,
        )]);
        let (result, _) = drive(&fast(&base), CancellationToken::new()).await;
        assert_eq!(
            result,
            Err(ProviderError {
                kind: ProviderErrorKind::Api,
                message: "HTTP 200 with a JSON error body instead of an SSE stream: model overloaded (overloaded)".into(),
            })
        );
        // No content type, but the body is JSON all the same.
        let (base, _r) = serve(vec![reply("200 OK", &[], r#"[{"a":1}]"#)]);
        let (result, _) = drive(&fast(&base), CancellationToken::new()).await;
        assert_eq!(
            result.map_err(|e| (e.kind, e.message)),
            Err((
                ProviderErrorKind::Malformed,
                r#"expected an SSE stream (text/event-stream), got a JSON body (no content-type): [{"a":1}]"#.into()
            ))
        );
    }

    #[tokio::test]
    async fn a_connection_refused_is_retried_then_reported() {
        // Bind and drop: nothing listens on that port any more.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut config = fast(&format!("http://127.0.0.1:{port}"));
        config.max_attempts = 2;
        let (result, events) = drive(&config, CancellationToken::new()).await;
        let err = result.unwrap_err();
        assert_eq!(err.kind, ProviderErrorKind::Http);
        assert!(err.message.contains("cannot reach"), "{err}");
        assert!(err.message.ends_with("(after 2 attempts)"), "{err}");
        assert!(matches!(
            events.as_slice(),
            [StreamEvent::Retrying { attempt: 2, .. }]
        ));
    }

    #[tokio::test]
    async fn a_stall_is_an_idle_timeout_and_cancel_stops_at_once() {
        let first = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n";
        let (base, _r) = serve(vec![
            sse(first, Duration::from_secs(3)),
            sse(first, Duration::from_secs(3)),
        ]);
        let config = fast(&base);
        let (result, events) = drive(&config, CancellationToken::new()).await;
        let err = result.unwrap_err();
        assert_eq!(err.kind, ProviderErrorKind::IdleTimeout);
        assert!(err.message.contains("after"), "{err}");
        assert_eq!(events.len(), 1);

        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            trigger.cancel();
        });
        let mut config = fast(&base);
        config.idle_timeout = Duration::from_secs(30);
        let started = std::time::Instant::now();
        let (result, _) = drive(&config, cancel).await;
        assert_eq!(result.unwrap_err().message, "cancelled");
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    async fn run_provider(
        provider: &dyn crate::provider::Provider,
    ) -> (Result<(), ProviderError>, Vec<StreamEvent>) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let sink = StreamSink::new(StepNo(1), tx);
        let request = crate::provider::ModelRequest {
            system: "sys".into(),
            messages: vec![crate::machine::Message::User {
                origin: crate::machine::UserOrigin::Prompt,
                text: "hi".into(),
            }],
            tools: vec![],
            max_output_tokens: 64,
        };
        let result = provider
            .stream(request, sink, CancellationToken::new())
            .await;
        let mut events = Vec::new();
        while let Ok((_, item)) = rx.try_recv() {
            if let StreamItem::Event(e) = item {
                events.push(e);
            }
        }
        (result, events)
    }

    #[tokio::test]
    async fn each_provider_posts_to_its_endpoint_with_its_headers() {
        use crate::provider::anthropic::AnthropicProvider;
        use crate::provider::openai::OpenAiProvider;
        use crate::provider::responses::ResponsesProvider;

        let (base, requests) = serve(vec![sse(CHAT_OK, Duration::ZERO)]);
        let p = OpenAiProvider::new(HttpConfig::new(
            &format!("{base}/v1"),
            Some("sk-o".into()),
            "gpt",
        ))
        .unwrap();
        let (result, events) = run_provider(&p).await;
        assert_eq!(result, Ok(()));
        assert_eq!(events.len(), 2);
        let head = requests.recv().unwrap();
        assert!(head.starts_with("POST /v1/chat/completions "), "{head}");
        assert!(head.contains("authorization: Bearer sk-o"), "{head}");
        assert!(head.contains("\"max_tokens\":64"), "{head}");

        let anthropic_ok = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n\
            event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
            event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"yo\"}}\n\n\
            event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
            event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n\
            event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        let (base, requests) = serve(vec![sse(anthropic_ok, Duration::ZERO)]);
        let p =
            AnthropicProvider::new(HttpConfig::new(&base, Some("sk-a".into()), "claude")).unwrap();
        let (result, events) = run_provider(&p).await;
        assert_eq!(result, Ok(()));
        assert!(events.contains(&StreamEvent::TextDelta { text: "yo".into() }));
        let head = requests.recv().unwrap();
        assert!(head.starts_with("POST /v1/messages "), "{head}");
        assert!(head.contains("x-api-key: sk-a"), "{head}");
        assert!(head.contains("anthropic-version: 2023-06-01"), "{head}");
        assert!(!head.contains("authorization"), "{head}");

        let responses_ok = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\"}}\n\n\
            event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"delta\":\"ok\"}\n\n\
            event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n";
        let (base, requests) = serve(vec![sse(responses_ok, Duration::ZERO)]);
        // A local server needs no key: no authorization header is sent.
        let p =
            ResponsesProvider::new(HttpConfig::new(&format!("{base}/v1"), None, "gpt")).unwrap();
        let (result, events) = run_provider(&p).await;
        assert_eq!(result, Ok(()));
        assert_eq!(events.len(), 3, "{events:?}");
        let head = requests.recv().unwrap();
        assert!(head.starts_with("POST /v1/responses "), "{head}");
        assert!(!head.contains("authorization"), "{head}");
    }
}
