//! Traces from the command line without a backend: `xcsh export --format otlp`,
//! `xcsh run --otel-endpoint` against a one-request collector of the test's own on
//! 127.0.0.1 (OTLP/HTTP protobuf to /v1/traces), a collector that is down (a notice,
//! never a failed run), and `[otel]` in `xcsh config` (header values hidden).

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use support::env::{Env, stderr};
use support::{assert_contains, assert_lacks};

const TOOL_STEP: &str = r#"{"text":"looking","tool_calls":[{"name":"echo","arguments":{"a":1}}]}"#;
const FINAL_STEP: &str = r#"{"text":"all done"}"#;

/// One POST received by the collector: its request line, headers (lower-case
/// names) and body.
struct Received {
    line: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A collector on 127.0.0.1 that answers one request with 200 and hands it over.
fn one_request_collector() -> (String, mpsc::Receiver<Received>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let Ok((stream, _)) = listener.accept() else {
            return;
        };
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            reader.read_line(&mut h).unwrap();
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
            }
        }
        let len: usize = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        let mut stream = reader.into_inner();
        let _ = stream.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        );
        let _ = tx.send(Received {
            line: line.trim_end().to_owned(),
            headers,
            body,
        });
    });
    (url, rx)
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
fn export_format_otlp_writes_the_family_as_one_otlp_json_request() {
    let env = Env::new();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sessions/delegation/parent.jsonl");
    let out = env.ok(&["export", fixture.to_str().unwrap(), "--format", "otlp"]);
    assert_eq!(out.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let spans = v["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap();
    let mut names: Vec<&str> = spans.iter().map(|s| s["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "chat",
            "chat",
            "chat",
            "chat",
            "chat",
            "execute_tool echo",
            "execute_tool task",
            "execute_tool task",
            "invoke_agent xcsh",
            "invoke_agent xcsh",
            "invoke_agent xcsh",
        ]
    );
    // Content is opt-in.
    assert!(!out.contains("gen_ai.input.messages"));
    let with = env.ok(&[
        "export",
        fixture.to_str().unwrap(),
        "--format",
        "otlp",
        "--otel-content",
    ]);
    assert!(with.contains("gen_ai.input.messages"));
}

#[test]
fn a_run_with_otel_endpoint_posts_its_spans_as_protobuf_to_v1_traces() {
    let env = Env::new();
    let script = env.script("s.jsonl", &[TOOL_STEP, FINAL_STEP]);
    let (url, rx) = one_request_collector();
    let out = env.run_script(
        &script,
        &[
            "-p",
            "do it",
            "--otel-endpoint",
            &url,
            "--otel-header",
            "x-test=1",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let got = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(got.line, "POST /v1/traces HTTP/1.1");
    assert_eq!(got.header("content-type"), Some("application/x-protobuf"));
    assert_eq!(got.header("x-test"), Some("1"));
    for name in ["invoke_agent xcsh", "chat", "execute_tool echo", "faux"] {
        assert!(contains(&got.body, name), "no {name:?} in the request");
    }
    assert!(
        !contains(&got.body, "all done"),
        "content without --otel-content"
    );
    assert_lacks(&stderr(&out), "traces not sent");
}

#[test]
fn a_run_whose_collector_is_down_finishes_with_a_notice() {
    let env = Env::new();
    let script = env.script("s.jsonl", &[FINAL_STEP]);
    // Bound, then dropped: nothing listens on the port.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    env.config(&format!("[otel]\nendpoint = \"http://127.0.0.1:{port}\"\n"));
    let out = env.run_script(&script, &["-p", "do it"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "all done\n");
    assert_contains(
        &stderr(&out),
        "xcsh: traces not sent: cannot send the spans to",
    );
}

#[test]
fn config_shows_the_otel_section_with_header_values_hidden() {
    let env = Env::new();
    env.config(
        "[otel]\nendpoint = \"http://127.0.0.1:4318\"\ncontent = true\n[otel.headers]\nAuthorization = \"Basic c2VjcmV0\"\n",
    );
    let out = env.ok(&["config"]);
    assert_contains(&out, "http://127.0.0.1:4318");
    assert_contains(&out, "Authorization (values hidden)");
    assert!(!out.contains("c2VjcmV0"), "{out}");
    let json = env.config_json();
    assert_eq!(json["otel_endpoint"]["value"], "http://127.0.0.1:4318");
    assert_eq!(json["otel_content"]["value"], true);
    assert!(!json.to_string().contains("c2VjcmV0"));
}
