//! What real use of the wire protocols found (issue 13, items 7, 8, 9 and 16), run
//! through the real `xcsh` binary against a local server on 127.0.0.1: a stream that
//! restarts its message, several Anthropic thinking blocks sent back unchanged, a
//! plain JSON body where a stream was asked for, and a provider that streams far
//! beyond the output limit.

mod support;

use serde_json::{Value, json};
use support::env::{BIN, Env, stderr, steps};
use support::mock_server::{MockServer, Reply};
use support::sse::{Wire, anthropic_end, anthropic_start, event};
use xcsh_core::machine::{ProviderErrorKind, StepOutcome, StreamEvent};

/// An Anthropic tool step whose message starts over halfway: the partial message
/// thought about b.txt and began a call for it; the restarted one reads a.txt.
fn restarted_anthropic_tool_step() -> Vec<String> {
    vec![
        anthropic_start(100),
        event(
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Maybe b.txt."}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG_PARTIAL"}}"#,
        ),
        event(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        event(
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_partial","name":"read","input":{}}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"b.t"}}"#,
        ),
        event(
            "message_start",
            r#"{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":100,"output_tokens":1}}}"#,
        ),
        event(
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Read a.txt."}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG_KEPT"}}"#,
        ),
        event(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        event(
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"a.txt\"}"}}"#,
        ),
        event(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":1}"#,
        ),
        anthropic_end("tool_use", 20),
        event("message_stop", r#"{"type":"message_stop"}"#),
    ]
}

/// The assistant turn of the second request's `messages`.
fn assistant_turn(body: &str) -> Value {
    let body: Value = serde_json::from_str(body).unwrap();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .cloned()
        .unwrap()
}

#[test]
fn a_restarted_anthropic_stream_runs_and_sends_back_only_the_second_message() {
    let wire = Wire::Anthropic;
    let env = Env::new();
    let server = MockServer::start(vec![
        Reply::sse(restarted_anthropic_tool_step()),
        Reply::sse(wire.text_step("a.txt says hello")),
    ]);
    let out = env.run_against(wire, &server.url(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the provider restarted its response in step 1 (message_start (msg_2) before message_stop of msg_1)"),
        "{}",
        stderr(&out)
    );
    let received = server.received();
    assert_eq!(
        assistant_turn(&received[1].body)["content"],
        json!([
            {"type": "thinking", "thinking": "Read a.txt.", "signature": "SIG_KEPT"},
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.txt"}},
        ])
    );
    let steps = steps(&env.session());
    assert_eq!(steps[0].message.reasoning, "Read a.txt.");
    assert!(
        steps[0].events.iter().any(|t| matches!(
            &t.event,
            StreamEvent::Restarted { reason } if reason == "message_start (msg_2) before message_stop of msg_1"
        )),
        "{:?}",
        steps[0].events
    );
    // The log replays: the recorded restart re-assembles the same message.
    let replay = std::process::Command::new(BIN)
        .args(["replay", &env.session().display().to_string()])
        .env("XCSH_HOME", env.dir.path().join("home"))
        .output()
        .unwrap();
    assert!(
        replay.status.success(),
        "{}{}",
        String::from_utf8_lossy(&replay.stdout),
        stderr(&replay)
    );
}

/// An Anthropic tool step with two thinking blocks (each with its signature),
/// a text block and a tool call.
fn two_thinking_blocks_tool_step() -> Vec<String> {
    vec![
        anthropic_start(100),
        event(
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The file is a.txt."}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG_ONE"}}"#,
        ),
        event(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        event(
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"Read it whole."}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"SIG_TWO"}}"#,
        ),
        event(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":1}"#,
        ),
        event(
            "content_block_start",
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Reading."}}"#,
        ),
        event(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":2}"#,
        ),
        event(
            "content_block_start",
            r#"{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"a.txt\"}"}}"#,
        ),
        event(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":3}"#,
        ),
        anthropic_end("tool_use", 20),
        event("message_stop", r#"{"type":"message_stop"}"#),
    ]
}

#[test]
fn two_anthropic_thinking_blocks_are_sent_back_unchanged_and_in_order() {
    let wire = Wire::Anthropic;
    let env = Env::new();
    let server = MockServer::start(vec![
        Reply::sse(two_thinking_blocks_tool_step()),
        Reply::sse(wire.text_step("a.txt says hello")),
    ]);
    let out = env.run_against(wire, &server.url(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let received = server.received();
    assert_eq!(
        assistant_turn(&received[1].body)["content"],
        json!([
            {"type": "thinking", "thinking": "The file is a.txt.", "signature": "SIG_ONE"},
            {"type": "thinking", "thinking": "Read it whole.", "signature": "SIG_TWO"},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.txt"}},
        ])
    );
}

#[test]
fn a_json_body_where_a_stream_was_asked_for_is_an_error_that_shows_it() {
    let wire = Wire::OpenAi;
    let env = Env::new();
    let body = r#"{"id":"chatcmpl-9","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}"#;
    let server = MockServer::start(vec![Reply::error(200, body, &[])]);
    let out = env.run_against(wire, &server.url(), &[]);
    assert!(!out.status.success(), "{}", stderr(&out));
    let steps = steps(&env.session());
    let StepOutcome::Failed { error } = &steps[0].outcome else {
        panic!("{:?}", steps[0].outcome)
    };
    assert_eq!(
        (error.kind, error.message.as_str()),
        (
            ProviderErrorKind::Malformed,
            format!(
                "expected an SSE stream (text/event-stream), got a JSON body (content-type application/json): {body}"
            )
            .as_str()
        )
    );
    // Not retried: the server answered, just not with a stream.
    assert_eq!(server.received().len(), 1);
}
