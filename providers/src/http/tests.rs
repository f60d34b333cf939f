//! Tests of `http.rs`.

use super::*;
use crate::testing::api_error;

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
    let c = HttpConfig::for_service_with_env(OPENAI, "m", None, None, &e).unwrap();
    assert_eq!(c.base_url, "https://x.test/v1");
    assert_eq!(c.api_key.as_deref(), Some("env-key"));
    let c = HttpConfig::for_service_with_env(
        OPENAI,
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
    let err = HttpConfig::for_service_with_env(ANTHROPIC, "m", None, None, &e).unwrap_err();
    assert_eq!(
        err,
        ConfigError::MissingKey {
            provider: "anthropic",
            var: "ANTHROPIC_API_KEY"
        }
    );
    assert!(err.to_string().contains("set ANTHROPIC_API_KEY"));
    let err = HttpConfig::for_service_with_env(OPENAI, "m", None, None, &e).unwrap_err();
    assert!(err.to_string().contains("OPENAI_API_KEY"));
    for local in [
        "http://127.0.0.1:11434/v1",
        "http://localhost:8080/v1",
        "http://[::1]:8000",
    ] {
        let c =
            HttpConfig::for_service_with_env(OPENAI, "m", Some(local.into()), None, &e).unwrap();
        assert!(c.api_key.is_none() && c.is_local(), "{local}");
    }
    let err = HttpConfig::for_service_with_env(OPENAI, "m", Some("ftp://x".into()), None, &e)
        .unwrap_err();
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
    use crate::anthropic::AnthropicMapper;
    use crate::responses::ResponsesMapper;
    let openai = OpenAiMapper::default().on_event(
        None,
        r#"{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
    );
    let anthropic = AnthropicMapper::default().on_event(
        Some("error"),
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#,
    );
    let responses = ResponsesMapper::default().on_event(
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

use crate::StreamItem;
use crate::openai::OpenAiMapper;
use xcsh_machine::StepNo;

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
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
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

/// Runs `stream` with a sink of its own: its result, and the events it sent.
async fn streamed<F>(
    stream: impl FnOnce(StreamSink) -> F,
) -> (Result<(), ProviderError>, Vec<StreamEvent>)
where
    F: std::future::Future<Output = Result<(), ProviderError>>,
{
    let (tx, mut rx) = mpsc::unbounded_channel();
    let result = stream(StreamSink::new(StepNo(1), tx)).await;
    let mut events = Vec::new();
    while let Ok((_, item)) = rx.try_recv() {
        if let StreamItem::Event(e) = item {
            events.push(e);
        }
    }
    (result, events)
}

/// The result and events of a stream the server answers with one reply.
async fn one_reply(
    status: &str,
    headers: &[&str],
    body: &str,
) -> (Result<(), ProviderError>, Vec<StreamEvent>) {
    let (base, _requests) = serve(vec![reply(status, headers, body)]);
    drive(&fast(&base), CancellationToken::new()).await
}

async fn drive(
    config: &HttpConfig,
    cancel: CancellationToken,
) -> (Result<(), ProviderError>, Vec<StreamEvent>) {
    let request = HttpRequest {
        url: config.endpoint("chat/completions"),
        headers: vec![("authorization".into(), "Bearer k".into())],
        body: serde_json::json!({"stream": true}).to_string(),
        max_output_tokens: Some(64),
    };
    let mut mapper = OpenAiMapper::default();
    streamed(|sink| async move {
        stream_sse(
            &client().unwrap(),
            config,
            request,
            &mut mapper,
            &sink,
            &cancel,
        )
        .await
    })
    .await
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
    let (result, events) = one_reply("429 Too Many Requests", &["retry-after: 3600"], "").await;
    let err = result.unwrap_err();
    assert!(err.message.contains("retry after 3600 s"), "{err}");
    assert!(events.is_empty());
}

#[tokio::test]
async fn a_4xx_json_error_is_an_api_error_without_retry() {
    let (result, events) = one_reply(
        "401 Unauthorized",
        &["content-type: application/json"],
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
    )
    .await;
    assert_eq!(
        result,
        Err(api_error(
            "HTTP 401 Unauthorized: invalid x-api-key (authentication_error)"
        ))
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
    let (result, events) = one_reply("200 OK", &["content-type: application/json"], &body).await;
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
    let (result, _) = one_reply(
        "200 OK",
        &["content-type: application/json; charset=utf-8"],
        r#"{"error":{"message":"model overloaded","code":"overloaded"}}"#,
    )
    .await;
    assert_eq!(
        result,
        Err(api_error(
            "HTTP 200 with a JSON error body instead of an SSE stream: model overloaded (overloaded)"
        ))
    );
    // No content type, but the body is JSON all the same.
    let (result, _) = one_reply("200 OK", &[], r#"[{"a":1}]"#).await;
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
    provider: &dyn crate::Provider,
) -> (Result<(), ProviderError>, Vec<StreamEvent>) {
    let request = crate::ModelRequest {
        system: "sys".into(),
        messages: vec![xcsh_machine::Message::User {
            origin: xcsh_machine::UserOrigin::Prompt,
            text: "hi".into(),
        }]
        .into(),
        tools: vec![],
        max_output_tokens: 64,
    };
    streamed(|sink| {
        provider.stream(crate::StreamCall::new(
            request,
            sink,
            CancellationToken::new(),
        ))
    })
    .await
}

#[tokio::test]
async fn each_provider_posts_to_its_endpoint_with_its_headers() {
    use crate::anthropic::AnthropicProvider;
    use crate::openai::OpenAiProvider;
    use crate::responses::ResponsesProvider;

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
    let p = AnthropicProvider::new(HttpConfig::new(&base, Some("sk-a".into()), "claude")).unwrap();
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
    let p = ResponsesProvider::new(HttpConfig::new(&format!("{base}/v1"), None, "gpt")).unwrap();
    let (result, events) = run_provider(&p).await;
    assert_eq!(result, Ok(()));
    assert_eq!(events.len(), 3, "{events:?}");
    let head = requests.recv().unwrap();
    assert!(head.starts_with("POST /v1/responses "), "{head}");
    assert!(!head.contains("authorization"), "{head}");
}
