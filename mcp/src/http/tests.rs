//! Tests of the streamable HTTP client against a tiny HTTP server on 127.0.0.1
//! that answers each connection with one canned response and keeps the request.

use super::*;

use rmcp::model::{ClientNotification, ClientRequest, NumberOrString, PingRequest};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One request as the server read it: its request line, the headers the tests
/// look at, and its body.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    line: String,
    headers: Vec<String>,
    body: String,
}

/// The headers a test compares (the others, such as `host`, vary or are
/// reqwest's).
const SHOWN: &[&str] = &[
    "accept",
    "content-type",
    "mcp-session-id",
    "last-event-id",
    "mcp-protocol-version",
];

/// Serves `response` (raw HTTP) to the first connection on a free loopback port;
/// the handle yields the request it read.
async fn serve(response: &str) -> (String, tokio::task::JoinHandle<Seen>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let response = response.to_owned();
    let handle = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut raw = Vec::new();
        let mut buf = [0u8; 4096];
        let head_end = loop {
            let n = socket.read(&mut buf).await.unwrap();
            assert!(n > 0, "the client closed before its request was whole");
            raw.extend_from_slice(&buf[..n]);
            if let Some(at) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
        };
        let head = String::from_utf8(raw[..head_end].to_vec()).unwrap();
        let mut lines = head.split("\r\n");
        let line = lines.next().unwrap().to_owned();
        let mut headers = Vec::new();
        let mut length = 0;
        for header in lines.filter(|l| !l.is_empty()) {
            let (name, value) = header.split_once(':').unwrap();
            let name = name.to_ascii_lowercase();
            if name == "content-length" {
                length = value.trim().parse().unwrap();
            }
            if SHOWN.contains(&name.as_str()) {
                headers.push(format!("{name}: {}", value.trim()));
            }
        }
        headers.sort();
        while raw.len() < head_end + length {
            let n = socket.read(&mut buf).await.unwrap();
            assert!(n > 0, "the client closed before its body was whole");
            raw.extend_from_slice(&buf[..n]);
        }
        let body = String::from_utf8(raw[head_end..].to_vec()).unwrap();
        socket.write_all(response.as_bytes()).await.unwrap();
        socket.shutdown().await.unwrap();
        Seen {
            line,
            headers,
            body,
        }
    });
    (url, handle)
}

/// Serves a response built by [`response`] to the first connection and returns the
/// url, for the tests that do not look at the request.
async fn answering(status: &str, headers: &[&str], body: &str) -> String {
    serve(&response(status, headers, body)).await.0
}

/// The content types the canned answers carry.
const JSON: &str = "content-type: application/json";
const SSE: &str = "content-type: text/event-stream";
const HTML: &str = "content-type: text/html";

/// A raw response with `status`, `headers` and `body` (its length given).
fn response(status: &str, headers: &[&str], body: &str) -> String {
    let mut out = format!("HTTP/1.1 {status}\r\ncontent-length: {}\r\n", body.len());
    for header in headers {
        out.push_str(header);
        out.push_str("\r\n");
    }
    out.push_str("connection: close\r\n\r\n");
    out.push_str(body);
    out
}

fn ping() -> ClientJsonRpcMessage {
    ClientJsonRpcMessage::request(
        ClientRequest::PingRequest(PingRequest::default()),
        NumberOrString::Number(7),
    )
}

fn initialized() -> ClientJsonRpcMessage {
    ClientJsonRpcMessage::notification(ClientNotification::InitializedNotification(
        Default::default(),
    ))
}

const PING_BODY: &str = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
const PONG: &str = r#"{"jsonrpc":"2.0","id":7,"result":{}}"#;

fn client() -> HttpClient {
    HttpClient::new().unwrap()
}

/// A POST's outcome as text: the kind of answer, the message as JSON, the
/// session id; or the error.
async fn posted(outcome: Result<StreamableHttpPostResponse, Error>) -> String {
    match outcome {
        Ok(StreamableHttpPostResponse::Accepted) => "accepted".to_owned(),
        Ok(StreamableHttpPostResponse::Json(message, session)) => format!(
            "json {} session {session:?}",
            serde_json::to_string(&message).unwrap()
        ),
        Ok(StreamableHttpPostResponse::Sse(stream, session)) => {
            let events: Vec<String> = stream
                .map(|e| match e {
                    Ok(sse) => format!("data {:?} id {:?}", sse.data, sse.id),
                    Err(e) => format!("error {e}"),
                })
                .collect()
                .await;
            format!("sse {events:?} session {session:?}")
        }
        Ok(other) => format!("{other:?}"),
        Err(e) => format!("error: {e}"),
    }
}

/// POSTs `message` (in `session`, if any) to `url` with no extra headers.
async fn send(
    url: &str,
    message: ClientJsonRpcMessage,
    session: Option<&str>,
) -> Result<StreamableHttpPostResponse, Error> {
    client()
        .post_message(
            url.into(),
            message,
            session.map(Into::into),
            None,
            HashMap::new(),
        )
        .await
}

/// [`send`]'s outcome as text (see [`posted`]).
async fn post(url: &str, message: ClientJsonRpcMessage, session: Option<&str>) -> String {
    posted(send(url, message, session).await).await
}

/// POSTs a ping to `url` under the response `limits` that `limit` sets, as rmcp's
/// transport passes them (`post_message_with_response_limits`); the outcome as text.
async fn post_limited(url: &str, limit: impl FnOnce(&mut StreamableHttpResponseLimits)) -> String {
    let mut limits = StreamableHttpResponseLimits::default();
    limit(&mut limits);
    let outcome = client()
        .post_message_with_response_limits(url.into(), ping(), None, None, HashMap::new(), limits)
        .await;
    posted(outcome).await
}

#[tokio::test]
async fn a_post_sends_the_message_with_the_accept_header_and_its_json_answer_is_the_message() {
    let (url, seen) = serve(&response("200 OK", &[JSON, "mcp-session-id: s-1"], PONG)).await;
    let outcome = post(&url, ping(), None).await;
    assert_eq!(outcome, format!("json {PONG} session Some(\"s-1\")"));
    assert_eq!(
        seen.await.unwrap(),
        Seen {
            line: "POST /mcp HTTP/1.1".to_owned(),
            headers: vec![
                "accept: application/json, text/event-stream".to_owned(),
                "content-type: application/json".to_owned(),
            ],
            body: PING_BODY.to_owned(),
        }
    );
}

#[tokio::test]
async fn a_post_in_a_session_carries_its_id_and_the_protocol_version_header() {
    let (url, seen) = serve(&response("202 Accepted", &[], "")).await;
    let headers = HashMap::from([(
        HeaderName::from_static("mcp-protocol-version"),
        HeaderValue::from_static("2025-06-18"),
    )]);
    let outcome = client()
        .post_message(url.into(), initialized(), Some("s-1".into()), None, headers)
        .await;
    assert_eq!(posted(outcome).await, "accepted");
    assert_eq!(
        seen.await.unwrap().headers,
        [
            "accept: application/json, text/event-stream",
            "content-type: application/json",
            "mcp-protocol-version: 2025-06-18",
            "mcp-session-id: s-1",
        ]
    );
}

#[tokio::test]
async fn an_sse_answer_is_its_events_in_order() {
    let body = format!(
        ": keep-alive\r\n\r\nid: 1\r\ndata: {PONG}\r\n\r\nevent: message\ndata: a\ndata: b\n\n"
    );
    let url = answering(
        "200 OK",
        &["content-type: text/event-stream; charset=utf-8"],
        &body,
    )
    .await;
    let outcome = send(&url, ping(), None).await;
    let Ok(StreamableHttpPostResponse::Sse(stream, None)) = outcome else {
        panic!("{}", posted(outcome).await);
    };
    let events: Vec<(Option<String>, Option<String>)> = stream
        .map(|e| e.map(|e| (e.data, e.id)).unwrap())
        .collect()
        .await;
    assert_eq!(
        events,
        [
            (Some(PONG.to_owned()), Some("1".to_owned())),
            (Some("a\nb".to_owned()), None),
        ]
    );
}

#[tokio::test]
async fn an_sse_event_longer_than_the_limit_ends_the_stream_with_an_error() {
    let body = format!("data: {}\n\ndata: never\n\n", "x".repeat(64));
    let url = answering("200 OK", &[SSE], &body).await;
    assert_eq!(
        post_limited(&url, |l| l.max_sse_event_size = 32).await,
        "sse [\"error body error: an SSE event is longer than 32 bytes\"] session None"
    );
}

#[tokio::test]
async fn a_json_answer_longer_than_the_limit_is_refused_unread() {
    let url = answering("200 OK", &[JSON], PONG).await;
    assert_eq!(
        post_limited(&url, |l| l.max_json_response_size = 8).await,
        "error: HTTP response body exceeded the maximum size of 8 bytes"
    );
}

#[tokio::test]
async fn a_404_in_a_session_is_an_expired_session() {
    let url = answering("404 Not Found", &[], "").await;
    assert_eq!(
        post(&url, ping(), Some("gone")).await,
        "error: Session expired (HTTP 404)"
    );
}

#[tokio::test]
async fn a_json_rpc_error_with_an_error_status_is_the_servers_answer() {
    let error = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#;
    let url = answering("400 Bad Request", &[JSON], error).await;
    assert_eq!(
        post(&url, ping(), None).await,
        format!("json {error} session None")
    );
}

#[tokio::test]
async fn a_server_error_is_its_status_and_retry_after_without_the_body() {
    let url = answering(
        "503 Service Unavailable",
        &[HTML, "retry-after: 3"],
        "<html>down</html>",
    )
    .await;
    let outcome = send(&url, ping(), None).await;
    match outcome {
        Err(StreamableHttpError::HttpStatus(e)) => {
            assert_eq!((e.status, e.retry_after), (503, Some("3".to_owned())))
        }
        other => panic!("{}", posted(other).await),
    }
}

#[tokio::test]
async fn another_error_status_shows_the_start_of_its_body() {
    let url = answering(
        "400 Bad Request",
        &["content-type: text/plain"],
        "no such endpoint",
    )
    .await;
    assert_eq!(
        post(&url, ping(), None).await,
        "error: unexpected server response: HTTP 400 Bad Request: no such endpoint"
    );
}

#[tokio::test]
async fn a_401_with_a_challenge_says_authorization_is_required() {
    let url = answering(
        "401 Unauthorized",
        &["www-authenticate: Bearer realm=\"mcp\""],
        "",
    )
    .await;
    let outcome = send(&url, ping(), None).await;
    match outcome {
        Err(StreamableHttpError::AuthRequired(e)) => {
            assert_eq!(
                e.to_string(),
                "authorization required: Bearer realm=\"mcp\""
            )
        }
        other => panic!("{}", posted(other).await),
    }
}

#[tokio::test]
async fn a_request_answered_with_html_is_an_unexpected_content_type() {
    let url = answering("200 OK", &[HTML], "<html></html>").await;
    assert_eq!(
        post(&url, ping(), None).await,
        "error: Unexpected content type: Some(\"text/html\")"
    );
}

#[tokio::test]
async fn a_notification_answered_with_anything_successful_is_accepted() {
    let url = answering("200 OK", &[HTML], "<html></html>").await;
    assert_eq!(post(&url, initialized(), None).await, "accepted");
}

#[tokio::test]
async fn a_server_that_is_not_listening_is_a_client_error_naming_the_cause() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    drop(listener);
    let outcome = post(&url, ping(), None).await;
    assert!(
        outcome.starts_with(&format!(
            "error: Client error: error sending request for url ({url}): "
        )) && outcome.ends_with("Connection refused (os error 111)"),
        "{outcome}"
    );
}

#[tokio::test]
async fn a_get_answered_405_means_the_server_has_no_stream_of_its_own() {
    let (url, seen) = serve(&response("405 Method Not Allowed", &[], "")).await;
    let outcome = client()
        .get_stream(
            url.into(),
            Some("s-1".into()),
            Some("e-9".into()),
            None,
            HashMap::new(),
        )
        .await;
    assert!(
        matches!(outcome, Err(StreamableHttpError::ServerDoesNotSupportSse)),
        "{:?}",
        outcome.err()
    );
    assert_eq!(
        seen.await.unwrap(),
        Seen {
            line: "GET /mcp HTTP/1.1".to_owned(),
            headers: vec![
                "accept: application/json, text/event-stream".to_owned(),
                "last-event-id: e-9".to_owned(),
                "mcp-session-id: s-1".to_owned(),
            ],
            body: String::new(),
        }
    );
}

#[tokio::test]
async fn a_get_stream_yields_the_servers_events() {
    let url = answering("200 OK", &[SSE], "data: hello\n\n").await;
    let stream = client()
        .get_stream(url.into(), Some("s-1".into()), None, None, HashMap::new())
        .await
        .unwrap();
    let events: Vec<Option<String>> = stream.map(|e| e.unwrap().data).collect().await;
    assert_eq!(events, [Some("hello".to_owned())]);
}

#[tokio::test]
async fn delete_ends_the_session_by_its_id() {
    let (url, seen) = serve(&response("200 OK", &[], "")).await;
    let outcome = client()
        .delete_session(url.into(), "s-1".into(), None, HashMap::new())
        .await;
    assert!(outcome.is_ok(), "{:?}", outcome.err());
    assert_eq!(
        seen.await.unwrap(),
        Seen {
            line: "DELETE /mcp HTTP/1.1".to_owned(),
            headers: vec!["accept: */*".to_owned(), "mcp-session-id: s-1".to_owned()],
            body: String::new(),
        }
    );
}

#[tokio::test]
async fn delete_refused_with_405_is_fine() {
    let url = answering("405 Method Not Allowed", &[], "").await;
    let outcome = client()
        .delete_session(url.into(), "s-1".into(), None, HashMap::new())
        .await;
    assert!(outcome.is_ok(), "{:?}", outcome.err());
}

/// What an [`EventSize`] of `max` bytes answers to each of `chunks`, fed in order.
fn fed(max: usize, chunks: &[&[u8]]) -> Vec<Result<(), ()>> {
    let mut size = EventSize::new(max);
    chunks.iter().map(|chunk| size.observe(chunk)).collect()
}

#[test]
fn an_event_size_counts_field_lines_across_chunks_and_line_endings_but_not_comments() {
    let chunks: [&[u8]; 5] = [
        b": a comment longer than twelve bytes\r\n",
        b"data: 1234",
        b"\r",
        b"\n\r\n",
        b"data: 1234567",
    ];
    assert_eq!(fed(12, &chunks), [Ok(()), Ok(()), Ok(()), Ok(()), Err(())]);
}

#[test]
fn an_empty_line_starts_a_new_event() {
    let chunks: [&[u8]; 2] = [b"data: 123\n\n", b"data: 123\r\rdata: 123\n"];
    assert_eq!(fed(10, &chunks), [Ok(()), Ok(())]);
}
