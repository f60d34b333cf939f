//! What real use of the wire protocols found (issue 13, items 7, 8, 9 and 16), run
//! through the real `xcsh` binary against a local server on 127.0.0.1: a stream that
//! restarts its message, several Anthropic thinking blocks sent back unchanged, a
//! plain JSON body where a stream was asked for, and a provider that streams far
//! beyond the output limit.

mod support;

use serde_json::{Value, json};
use support::assert_contains;
use support::env::{Env, stderr, steps};
use support::mock_server::{MockServer, Reply};
use support::sse::{
    Wire, anthropic_block_start, anthropic_delta, anthropic_end, anthropic_message,
    anthropic_start, anthropic_text, anthropic_thinking, anthropic_tool_input, anthropic_tool_use,
    chat, event,
};
use xcsh_machine::{FinishReason, ProviderErrorKind, StepOutcome, StreamEvent};

/// An Anthropic tool step whose message starts over halfway: the partial message
/// thought about b.txt and began a call for it; the restarted one reads a.txt.
fn restarted_anthropic_tool_step() -> Vec<String> {
    let mut frames = vec![anthropic_start(100)];
    frames.extend(anthropic_thinking(0, "Maybe b.txt.", "SIG_PARTIAL"));
    frames.extend(anthropic_tool_input(
        1,
        "toolu_partial",
        "read",
        &[r#"{"path":"b.t"#],
    ));
    frames.push(event(
        "message_start",
        r#"{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":100,"output_tokens":1}}}"#,
    ));
    frames.extend(anthropic_thinking(0, "Read a.txt.", "SIG_KEPT"));
    frames.extend(anthropic_tool_use(
        1,
        "toolu_1",
        "read",
        &[r#"{"path":"a.txt"}"#],
    ));
    frames.push(anthropic_end("tool_use", 20));
    frames.push(event("message_stop", r#"{"type":"message_stop"}"#));
    frames
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

/// A run of the Anthropic wire whose first step is `tool_step` (it reads a.txt) and
/// whose second answers; the run succeeded. The env, the server and the run's stderr.
fn anthropic_run_reading_a_txt(tool_step: Vec<String>) -> (Env, MockServer, String) {
    let env = Env::for_wires();
    let server = MockServer::start(vec![
        Reply::sse(tool_step),
        Reply::sse(Wire::Anthropic.text_step("a.txt says hello")),
    ]);
    let out = env.run_against(Wire::Anthropic, &server.url(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    (env, server, stderr(&out))
}

#[test]
fn a_restarted_anthropic_stream_runs_and_sends_back_only_the_second_message() {
    let (env, server, err) = anthropic_run_reading_a_txt(restarted_anthropic_tool_step());
    assert_contains(
        &err,
        "the provider restarted its response in step 1 (message_start (msg_2) before message_stop of msg_1)",
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
    env.assert_replays_clean(&env.session());
}

/// An Anthropic tool step with two thinking blocks (each with its signature),
/// a text block and a tool call.
fn two_thinking_blocks_tool_step() -> Vec<String> {
    let blocks = [
        anthropic_thinking(0, "The file is a.txt.", "SIG_ONE"),
        anthropic_thinking(1, "Read it whole.", "SIG_TWO"),
        anthropic_text(2, "Reading."),
        anthropic_tool_use(3, "toolu_1", "read", &[r#"{"path":"a.txt"}"#]),
    ];
    anthropic_message(100, blocks.concat(), "tool_use", 20)
}

#[test]
fn two_anthropic_thinking_blocks_are_sent_back_unchanged_and_in_order() {
    let wire = Wire::Anthropic;
    let (env, server, _) = anthropic_run_reading_a_txt(two_thinking_blocks_tool_step());
    let sent_back = json!([
        {"type": "thinking", "thinking": "The file is a.txt.", "signature": "SIG_ONE"},
        {"type": "thinking", "thinking": "Read it whole.", "signature": "SIG_TWO"},
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.txt"}},
    ]);
    assert_eq!(
        assistant_turn(&server.received()[1].body)["content"],
        sent_back
    );
    env.assert_replays_clean(&env.session());
    // Resumed, the context rebuilt from the log sends them back the same.
    let server = MockServer::start(vec![Reply::sse(wire.text_step("again"))]);
    let out = env.run_against(wire, &server.url(), &["--continue"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        assistant_turn(&server.received()[0].body)["content"],
        sent_back
    );
}

#[test]
fn a_json_body_where_a_stream_was_asked_for_is_an_error_that_shows_it() {
    let wire = Wire::OpenAi;
    let env = Env::for_wires();
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

/// A Chat Completions text chunk of about 1 KiB.
fn kib_of_text() -> String {
    let text = "all work and no play makes a dull model ".repeat(26);
    chat(&format!(
        r#"{{"index":0,"delta":{{"content":{}}},"finish_reason":null}}"#,
        serde_json::to_string(&text).unwrap()
    ))
}

/// Runs against `server` with `--max-output-tokens MAX_OUTPUT_TOKENS` and asserts
/// that xcsh did not panic, that the session's step ended `length` with the client's
/// cut recorded, its text within the output budget, and every line of the log short.
fn assert_cut_at_the_output_limit(
    env: &Env,
    wire: Wire,
    server: &MockServer,
    max_output_tokens: u64,
) {
    let limit = max_output_tokens.to_string();
    let out = env.run_against(wire, &server.url(), &["--max-output-tokens", &limit]);
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    let steps = steps(&env.session());
    assert_eq!(steps.len(), 1);
    let step = &steps[0];
    assert_eq!(step.outcome, StepOutcome::Completed);
    assert_eq!(step.message.finish, Some(FinishReason::Length));
    let budget = 4 * (2 * max_output_tokens + 1024);
    let text = step.message.text.len() as u64;
    assert!(
        text <= budget && text > budget / 2,
        "{text} bytes of text for a budget of {budget}"
    );
    let cut = step
        .events
        .iter()
        .find_map(|t| match &t.event {
            StreamEvent::OutputLimitExceeded {
                max_output_tokens,
                output_bytes,
            } => Some((*max_output_tokens, *output_bytes)),
            _ => None,
        })
        .expect("an output_limit_exceeded event");
    assert_eq!(u64::from(cut.0), max_output_tokens);
    assert!(cut.1 > budget, "{cut:?}");
    let log = std::fs::read_to_string(env.session()).unwrap();
    let longest = log.lines().map(str::len).max().unwrap();
    assert!(
        longest < 4 * budget as usize,
        "a log line of {longest} bytes"
    );
}

#[test]
fn a_stream_far_beyond_the_output_limit_is_cut_and_its_entry_stays_bounded() {
    let wire = Wire::OpenAi;
    let env = Env::for_wires();
    // 8 MiB of text, generated here, for an output limit of 1000 tokens.
    let mut frames = vec![chat(
        r#"{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}"#,
    )];
    frames.extend(std::iter::repeat_n(kib_of_text(), 8 * 1024));
    frames.push(chat(r#"{"index":0,"delta":{},"finish_reason":"stop"}"#));
    frames.push("data: [DONE]\n\n".into());
    let server = MockServer::start(vec![Reply::sse(frames)]);
    assert_cut_at_the_output_limit(&env, wire, &server, 1000);
}

#[test]
fn a_stream_without_end_is_cut_at_the_output_limit() {
    let wire = Wire::Anthropic;
    let env = Env::for_wires();
    let text = serde_json::to_string(&"lorem ipsum dolor sit amet ".repeat(40)).unwrap();
    let server = MockServer::start(vec![
        Reply::sse(vec![
            anthropic_start(10),
            anthropic_block_start(0, r#"{"type":"text","text":""}"#),
        ])
        .then_forever(anthropic_delta(
            0,
            &format!(r#"{{"type":"text_delta","text":{text}}}"#),
        )),
    ]);
    assert_cut_at_the_output_limit(&env, wire, &server, 2000);
}

#[test]
fn a_stream_cut_at_the_output_limit_plays_back_from_its_cassette_to_the_same_cut() {
    let wire = Wire::OpenAi;
    let env = Env::for_wires();
    let cassette = env.dir.path().join("cut.cassette.jsonl");
    let cassette = cassette.to_str().unwrap();
    let server = MockServer::start(vec![
        Reply::sse(vec![chat(
            r#"{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}"#,
        )])
        .then_forever(kib_of_text()),
    ]);
    let limit = ["--max-output-tokens", "500"];
    let recorded = env.run_against(
        wire,
        &server.url(),
        &[&limit[..], &["--record", cassette]].concat(),
    );
    assert!(
        !stderr(&recorded).contains("panicked"),
        "{}",
        stderr(&recorded)
    );
    let original = steps(&env.session());
    // Nothing listens on this port: only the cassette can answer.
    let played = env.run_against(
        wire,
        "http://127.0.0.1:9",
        &[&limit[..], &["--cassette", cassette]].concat(),
    );
    assert!(!stderr(&played).contains("panicked"), "{}", stderr(&played));
    let replayed = steps(&env.session());
    assert_eq!(original[0].message.finish, Some(FinishReason::Length));
    assert_eq!(replayed[0].message, original[0].message);
    let events = |s: &xcsh_log::StepRecord| -> Vec<StreamEvent> {
        s.events.iter().map(|t| t.event.clone()).collect()
    };
    assert_eq!(events(&replayed[0]), events(&original[0]));
}

#[test]
fn provider_test_checks_the_synthetic_streams_with_the_recorded_ones() {
    let env = Env::for_wires();
    let dir = env.dir.path().join("streams");
    std::fs::create_dir_all(dir.join("openai-chat")).unwrap();
    std::fs::write(
        dir.join("openai-chat/mine.jsonl"),
        concat!(
            r#"{"choices":[{"index":0,"delta":{"content":"hi"}}]}"#,
            "\n",
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = env.run(&["provider-test", dir.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", stderr(&out));
    for name in [
        "anthropic-messages/synthetic/restarted ",
        "anthropic-messages/synthetic/two-thinking-blocks ",
        "openai-chat/synthetic/restarted-new-id ",
        "openai-chat/synthetic/restarted-role ",
        "openai-chat/synthetic/numeric-content ",
        "openai-chat/synthetic/negative-tool-index ",
        "openai-responses/synthetic/restarted ",
    ] {
        let row = stdout
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_default();
        assert!(row.contains("pass"), "{name}: {row:?}\n{stdout}");
    }
    assert_contains(
        &stdout,
        "8 streams (1 recorded, 7 synthetic): 7 passed, 0 failed, 1 without a golden file",
    );
}
