//! The HTTP client under rmcp's streamable HTTP transport ([`HttpClient`], SPEC.md
//! §32.2): rmcp's own is reqwest 0.13, a second major beside the workspace's 0.12,
//! so this one implements its `StreamableHttpClient` over reqwest 0.12. A POST per
//! message (`Accept: application/json, text/event-stream`, the `Mcp-Session-Id`
//! once the server gave one), answered by 202, one JSON message or an SSE stream;
//! a GET for the server's own stream (405: it has none); a DELETE of the session on
//! close; every body read within its byte limit before it is parsed.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use futures::stream::{BoxStream, Stream, StreamExt, TryStreamExt};
use http::header::{ACCEPT, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, SseError, StreamableHttpClient,
    StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};

/// What a POST and a GET accept.
const ACCEPTED: &str = "application/json, text/event-stream";

/// The longest `Retry-After` kept (rmcp's bound).
const MAX_RETRY_AFTER: usize = 128;

/// A request that did not get a response (no connection, TLS, a broken body):
/// reqwest's error with its causes, as one line.
#[derive(Debug)]
pub struct HttpError(reqwest::Error);

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = std::error::Error::source(&self.0);
        while let Some(cause) = source {
            write!(f, ": {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

impl std::error::Error for HttpError {}

type Error = StreamableHttpError<HttpError>;
type Events = BoxStream<'static, Result<Sse, SseError>>;

fn client_error(e: reqwest::Error) -> Error {
    StreamableHttpError::Client(HttpError(e))
}

/// The client of every streamable HTTP server of a run: reqwest 0.12 (rustls),
/// no idle connection kept (a reused half-read connection stalls), no redirect
/// followed (a redirect of a POST could lose its body or send the session to
/// another host), no overall timeout (the transport's callers have theirs).
#[derive(Clone, Debug)]
pub(crate) struct HttpClient {
    client: reqwest::Client,
}

impl HttpClient {
    pub(crate) fn new() -> Result<HttpClient, String> {
        reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("xcsh/", env!("CARGO_PKG_VERSION")))
            .build()
            .map(|client| HttpClient { client })
            .map_err(|e| format!("cannot build its HTTP client: {}", HttpError(e)))
    }

    /// `request` with the bearer token and the transport's headers (the protocol
    /// version once negotiated).
    fn prepare(
        request: reqwest::RequestBuilder,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> reqwest::RequestBuilder {
        let mut request = match auth {
            Some(token) => request.bearer_auth(token),
            None => request,
        };
        for (name, value) in headers {
            request = request.header(name, value);
        }
        request
    }
}

/// rmcp's transport calls `post_message_with_response_limits` and
/// `get_stream_with_max_sse_event_size`; `post_message` and `get_stream` are the
/// trait's required methods and apply the default limits. (The trait's default
/// `post_message_with_max_sse_event_size` goes to `post_message`; rmcp does not call it.)
impl StreamableHttpClient for HttpClient {
    type Error = HttpError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(uri, message, session_id, auth, headers, limits)
            .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let request = self.client.post(uri.as_ref()).header(ACCEPT, ACCEPTED);
        let mut request = Self::prepare(request, auth, headers);
        let attached = session_id.is_some();
        if let Some(id) = session_id {
            request = request.header(HEADER_SESSION_ID, id.as_ref());
        }
        let response = request.json(&message).send().await.map_err(client_error)?;
        let status = response.status();
        auth_failure(status, response.headers())?;
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && attached {
            return Err(StreamableHttpError::SessionExpired);
        }
        let kind = BodyKind::of(response.headers());
        let session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        // A notification, response or error needs no answer: whatever a success
        // carries is as good as 202.
        let awaits_nothing = !matches!(message, ClientJsonRpcMessage::Request(_));
        if !status.is_success() {
            return failure(response, kind, session, limits).await;
        }
        if awaits_nothing && response.content_length() == Some(0) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        match kind {
            BodyKind::Events => Ok(StreamableHttpPostResponse::Sse(
                events(response, limits.max_sse_event_size),
                session,
            )),
            BodyKind::Json => {
                let body = read_bounded(response, limits.max_json_response_size).await?;
                match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                    Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, session)),
                    Err(_) if awaits_nothing => Ok(StreamableHttpPostResponse::Accepted),
                    Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(
                        format!(
                            "its JSON response is not a JSON-RPC message: {e}: {}",
                            preview(&body)
                        )
                        .into(),
                    )),
                }
            }
            BodyKind::Other(_) if awaits_nothing => Ok(StreamableHttpPostResponse::Accepted),
            BodyKind::Other(content_type) => {
                Err(StreamableHttpError::UnexpectedContentType(content_type))
            }
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        let request = Self::prepare(self.client.delete(uri.as_ref()), auth, headers)
            .header(HEADER_SESSION_ID, session_id.as_ref());
        let response = request.send().await.map_err(client_error)?;
        let status = response.status();
        // 405: the server does not let clients end sessions, which is allowed.
        if status.is_success() || status == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        Err(StreamableHttpError::UnexpectedServerResponse(
            format!("HTTP {status} to its DELETE").into(),
        ))
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, Error> {
        let max = StreamableHttpResponseLimits::default().max_sse_event_size;
        self.get_stream_with_max_sse_event_size(uri, session_id, last_event_id, auth, headers, max)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        max_event: usize,
    ) -> Result<Events, Error> {
        let request = self.client.get(uri.as_ref()).header(ACCEPT, ACCEPTED);
        let mut request = Self::prepare(request, auth, headers);
        if let Some(id) = session_id {
            request = request.header(HEADER_SESSION_ID, id.as_ref());
        }
        if let Some(id) = last_event_id {
            request = request.header(HEADER_LAST_EVENT_ID, id);
        }
        let response = request.send().await.map_err(client_error)?;
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        auth_failure(status, response.headers())?;
        if let Some(error) = status_error(status, response.headers()) {
            return Err(error.into());
        }
        if !status.is_success() {
            let limits = StreamableHttpResponseLimits::default();
            let body = read_truncated(response, limits.max_error_response_size).await?;
            return Err(StreamableHttpError::UnexpectedServerResponse(
                format!("HTTP {status} to its GET: {}", preview(&body)).into(),
            ));
        }
        match BodyKind::of(response.headers()) {
            BodyKind::Events | BodyKind::Json => Ok(events(response, max_event)),
            BodyKind::Other(content_type) => {
                Err(StreamableHttpError::UnexpectedContentType(content_type))
            }
        }
    }
}

/// What a response's `Content-Type` says its body is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum BodyKind {
    Json,
    Events,
    /// Neither (the header as sent, when there is one).
    Other(Option<String>),
}

impl BodyKind {
    fn of(headers: &HeaderMap) -> BodyKind {
        let Some(value) = headers.get(CONTENT_TYPE) else {
            return BodyKind::Other(None);
        };
        // The media type without its parameters, case-insensitively (RFC 9110).
        let essence = value
            .as_bytes()
            .split(|b| *b == b';')
            .next()
            .map(|e| String::from_utf8_lossy(e).trim().to_ascii_lowercase());
        match essence.as_deref() {
            Some(JSON_MIME_TYPE) => BodyKind::Json,
            Some(EVENT_STREAM_MIME_TYPE) => BodyKind::Events,
            _ => BodyKind::Other(Some(String::from_utf8_lossy(value.as_bytes()).into_owned())),
        }
    }
}

/// A 401 or 403 with a challenge: the server wants authorization xcsh cannot
/// give (no token is configured).
fn auth_failure(status: StatusCode, headers: &HeaderMap) -> Result<(), Error> {
    let challenge = || {
        headers
            .get(WWW_AUTHENTICATE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    };
    match status {
        StatusCode::UNAUTHORIZED => match challenge() {
            Some(header) => Err(StreamableHttpError::AuthRequired(AuthRequiredError::new(
                header,
            ))),
            None => Ok(()),
        },
        StatusCode::FORBIDDEN => match challenge() {
            Some(header) => Err(StreamableHttpError::InsufficientScope(
                InsufficientScopeError::new(header, None),
            )),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// A 429 or 5xx: the status and its `Retry-After`, nothing of the body.
fn status_error(status: StatusCode, headers: &HeaderMap) -> Option<HttpStatusError> {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let retry_after = headers
        .get(RETRY_AFTER)
        .filter(|v| v.len() <= MAX_RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    Some(HttpStatusError::new(status.as_u16(), retry_after))
}

/// What a POST answered with a status other than 2xx becomes: a JSON-RPC error
/// in a JSON body is the server's answer (so the request gets it as an MCP error);
/// otherwise an error with the status (429 and 5xx: with its `Retry-After`, no
/// body) or a bounded prefix of the body.
async fn failure(
    response: reqwest::Response,
    kind: BodyKind,
    session: Option<String>,
    limits: StreamableHttpResponseLimits,
) -> Result<StreamableHttpPostResponse, Error> {
    let status = response.status();
    let status_error = status_error(status, response.headers());
    if let Some(error) = status_error
        .as_ref()
        .filter(|_| status == StatusCode::TOO_MANY_REQUESTS || kind != BodyKind::Json)
    {
        return Err(HttpStatusError::new(error.status, error.retry_after.clone()).into());
    }
    let unauthorized = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
    let body = if kind == BodyKind::Json && !unauthorized {
        match read_bounded(response, limits.max_json_response_size).await {
            Ok(body) => body,
            Err(error @ StreamableHttpError::ResponseBodyTooLarge { .. }) => {
                return Err(status_error.map_or(error, Into::into));
            }
            Err(error) => return Err(error),
        }
    } else {
        read_truncated(response, limits.max_error_response_size).await?
    };
    if kind == BodyKind::Json
        && let Ok(message @ JsonRpcMessage::Error(_)) =
            serde_json::from_slice::<ServerJsonRpcMessage>(&body)
    {
        return Ok(StreamableHttpPostResponse::Json(message, session));
    }
    if let Some(error) = status_error {
        return Err(error.into());
    }
    let shown = &body[..body.len().min(limits.max_error_response_size)];
    Err(StreamableHttpError::UnexpectedServerResponse(
        format!("HTTP {status}: {}", preview(shown)).into(),
    ))
}

/// The first bytes of a body that could not be used, for a message.
fn preview(body: &[u8]) -> String {
    const SHOWN: usize = 256;
    if body.is_empty() {
        return "(an empty body)".to_owned();
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(SHOWN)]).into_owned();
    if body.len() > SHOWN {
        format!("{text}…")
    } else {
        text
    }
}

/// The whole body, or [`StreamableHttpError::ResponseBodyTooLarge`] as soon as
/// it is known to be longer than `max` (its `Content-Length` first, then the bytes
/// as they come).
async fn read_bounded(response: reqwest::Response, max: usize) -> Result<Vec<u8>, Error> {
    if response.content_length().is_some_and(|n| n > max as u64) {
        return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
    }
    let mut stream = response.bytes_stream();
    let mut body = Vec::new();
    while let Some(chunk) = stream.try_next().await.map_err(client_error)? {
        if chunk.len() > max - body.len() {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// At most the first `max` bytes of the body, the rest left unread.
async fn read_truncated(response: reqwest::Response, max: usize) -> Result<Vec<u8>, Error> {
    let mut stream = response.bytes_stream();
    let mut body = Vec::new();
    while body.len() < max {
        let Some(chunk) = stream.try_next().await.map_err(client_error)? else {
            break;
        };
        body.extend_from_slice(&chunk[..chunk.len().min(max - body.len())]);
    }
    Ok(body)
}

/// Why an SSE body stopped.
#[derive(Debug, thiserror::Error)]
enum EventsError {
    #[error("{0}")]
    Read(HttpError),
    #[error("an SSE event is longer than {max} bytes")]
    TooLarge { max: usize },
}

/// The SSE events of `response`, each at most `max` bytes (the stream ends with
/// an error at the first longer one).
fn events(response: reqwest::Response, max: usize) -> Events {
    let bytes = response.bytes_stream().map_err(HttpError);
    SseStream::from_bytes_stream(bounded(bytes, max)).boxed()
}

/// `bytes`, ended by an error as soon as an event in them passes `max` bytes.
fn bounded<S>(bytes: S, max: usize) -> impl Stream<Item = Result<Bytes, EventsError>> + Send
where
    S: Stream<Item = Result<Bytes, HttpError>> + Send,
{
    bytes.scan(EventSize::new(max), |size, chunk| {
        let item = match chunk {
            _ if size.failed => None,
            Ok(chunk) => match size.observe(&chunk) {
                Ok(()) => Some(Ok(chunk)),
                Err(()) => {
                    size.failed = true;
                    Some(Err(EventsError::TooLarge { max: size.max }))
                }
            },
            Err(e) => {
                size.failed = true;
                Some(Err(EventsError::Read(e)))
            }
        };
        std::future::ready(item)
    })
}

/// The size of the SSE event being received: the bytes of its field lines
/// (comment lines are not kept, so they do not count), an event ending at an
/// empty line; lines end in CR, LF or CRLF.
#[derive(Debug)]
pub(crate) struct EventSize {
    max: usize,
    /// The event's complete field lines, a newline each.
    event: usize,
    /// The line being received.
    line: usize,
    comment: bool,
    after_cr: bool,
    failed: bool,
}

impl EventSize {
    pub(crate) fn new(max: usize) -> EventSize {
        EventSize {
            max,
            event: 0,
            line: 0,
            comment: false,
            after_cr: false,
            failed: false,
        }
    }

    /// Takes in `chunk`; `Err` once the event passes the limit.
    pub(crate) fn observe(&mut self, chunk: &[u8]) -> Result<(), ()> {
        for &byte in chunk {
            if std::mem::take(&mut self.after_cr) && byte == b'\n' {
                continue;
            }
            match byte {
                b'\r' | b'\n' => {
                    self.end_line();
                    self.after_cr = byte == b'\r';
                }
                _ => {
                    if self.line == 0 {
                        self.comment = byte == b':';
                    }
                    self.line += 1;
                }
            }
            if self.event + if self.comment { 0 } else { self.line } > self.max {
                return Err(());
            }
        }
        Ok(())
    }

    fn end_line(&mut self) {
        if self.line == 0 {
            self.event = 0;
        } else if !self.comment {
            self.event += self.line + 1;
        }
        self.line = 0;
        self.comment = false;
    }
}

#[cfg(test)]
mod tests;
