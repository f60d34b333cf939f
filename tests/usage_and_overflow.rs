//! The real binary against a local provider server on 127.0.0.1 (issue 13): a server
//! that reports no usage (as llama.cpp's does) gets estimated, marked usage that the
//! spend budget and compaction use; a server that refuses a request as too long for
//! its context makes the run compact and retry once, and the session replays clean.

mod support;

use std::path::PathBuf;

use support::assert_contains;
use support::env::{Env, session_of, stderr, stdout, types};
use support::mock_server::{MockServer, Reply};
use support::sse::{Wire, openai_call_without_usage, openai_text_without_usage};

/// Big enough files that the estimate of the context crosses a small `--compact-at`.
fn env() -> Env {
    Env::new()
        .with_file("a.txt", &("MIDDLE-MARKER ".repeat(100) + "\n"))
        .with_file("b.txt", &("tail of b ".repeat(100) + "\n"))
        .with_var("NO_COLOR", "1")
}

/// Two steps of a server that reports no usage, `read a.txt` then `read b.txt`,
/// and `then`.
fn reading_a_then_b(then: Vec<Reply>) -> Vec<Reply> {
    let mut replies = vec![
        Reply::sse(openai_call_without_usage(
            "call_1",
            "read",
            r#"{"path":"a.txt"}"#,
        )),
        Reply::sse(openai_call_without_usage(
            "call_2",
            "read",
            r#"{"path":"b.txt"}"#,
        )),
    ];
    replies.extend(then);
    replies
}

#[test]
fn a_server_that_reports_no_usage_gets_estimated_tokens_in_stats_and_the_result() {
    let env = env();
    let server = MockServer::start(vec![
        Reply::sse(openai_call_without_usage(
            "call_1",
            "read",
            r#"{"path":"a.txt"}"#,
        )),
        Reply::sse(openai_text_without_usage("Read it.")),
    ]);
    let out = env.run_on(Wire::OpenAi, &server.url(), &["--json", "read a.txt"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Each step's usage is estimated and marked so.
    let steps: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|v| v["type"] == "step_finished")
        .collect();
    assert_eq!(steps.len(), 2);
    for s in &steps {
        assert_eq!(s["usage"]["estimated"], true, "{s}");
        assert!(s["usage"]["input_tokens"].as_u64().unwrap() > 0, "{s}");
    }
    // The second request carries the file: its estimate is larger.
    assert!(
        steps[1]["usage"]["input_tokens"].as_u64().unwrap()
            > steps[0]["usage"]["input_tokens"].as_u64().unwrap() + 300
    );
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["usage"]["estimated"], true, "{result}");
    let input = result["usage"]["input_tokens"].as_u64().unwrap();
    assert!(input > 300, "{result}");

    // `xcsh stats` shows the estimated figures with `~`, in the table and in JSON.
    let session = session_of(&out);
    let stats = env.run(&["stats", session.to_str().unwrap()]);
    assert!(stats.status.success(), "{}", stderr(&stats));
    let text = stdout(&stats);
    assert_contains(&text, &format!("~{input}"));
    let stats = env.run(&["stats", "--json", session.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(v["total"]["input_tokens"], input, "{v}");
    assert_eq!(v["total"]["estimated"], true, "{v}");
    assert_eq!(v["runs"][0]["estimated"], true, "{v}");
    env.assert_clean(&session);
}

#[test]
fn a_small_compact_at_compacts_against_a_server_that_reports_no_usage() {
    let env = env();
    let server = MockServer::start(reading_a_then_b(vec![
        // The summary request.
        Reply::sse(openai_text_without_usage("SUMMARY: a.txt was read.")),
        Reply::sse(openai_text_without_usage("Both read.")),
    ]));
    let (out, received) = env.compacting_run(&server, "300");
    let next = &received[3].body;
    assert_contains(next, "SUMMARY: a.txt was read.");
    assert!(!next.contains("MIDDLE-MARKER"), "{next}");
    let session = session_of(&out);
    let t = types(&session);
    assert_eq!(t.iter().filter(|t| *t == "compacted").count(), 1, "{t:?}");
    env.assert_clean(&session);
}

/// OpenAI's refusal of a request longer than the model's context window.
const OPENAI_TOO_LONG: &str = r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;

/// llama.cpp server's refusal (`exceed_context_size_error`).
const LLAMA_TOO_LONG: &str = r#"{"error":{"code":400,"message":"request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9412,"n_ctx":8192}}"#;

/// The replies of a run that reads a.txt and b.txt, is refused as too long for the
/// context (`refusal`, HTTP 400), compacts (the summary request's answer) and gets
/// `retry` for the step it retries.
fn refused_then_compacted(refusal: &str, retry: Reply) -> Vec<Reply> {
    reading_a_then_b(vec![
        Reply::error(400, refusal, &[]),
        // The summary request.
        Reply::sse(openai_text_without_usage("SUMMARY: a.txt was read.")),
        retry,
    ])
}

#[test]
fn a_context_length_refusal_compacts_retries_once_and_the_session_replays_clean() {
    let env = env();
    let server = MockServer::start(refused_then_compacted(
        OPENAI_TOO_LONG,
        // The retry, over the compacted context.
        Reply::sse(openai_text_without_usage("Done after all.")),
    ));
    // The default mode, which streams and announces what happens on stderr.
    let out = env.run_on(Wire::OpenAi, &server.url(), &["read a.txt then b.txt"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Done after all.\n");
    let err = stderr(&out);
    assert_contains(
        &err,
        "xcsh: the provider refused the request as too long for the model's context: HTTP 400 Bad Request: This model's maximum context length is 128000 tokens.",
    );
    assert!(err.contains("xcsh: compacting the conversation ("), "{err}");
    assert!(!err.contains("run stopped"), "{err}");
    let received = server.received();
    assert_eq!(received.len(), 5, "no second retry, no other request");
    assert!(received[2].body.contains("MIDDLE-MARKER"));
    assert!(
        received[3]
            .body
            .contains("Summarize the conversation so far")
    );
    assert!(!received[4].body.contains("MIDDLE-MARKER"));
    assert!(received[4].body.contains("SUMMARY: a.txt was read."));
    let session = session_of(&out);
    let t = types(&session);
    let from = t.iter().rposition(|t| t == "tool_result").unwrap();
    assert_eq!(
        t[from + 1..],
        [
            "step_started",
            "step",
            "compaction_started",
            "compaction_summary",
            "compacted",
            "step_started",
            "step",
            "run_finished"
        ],
        "{t:?}"
    );
    env.assert_clean(&session);
}

#[test]
fn a_second_refusal_stops_the_run_with_context_overflow() {
    let env = env();
    let server = MockServer::start(refused_then_compacted(
        LLAMA_TOO_LONG,
        Reply::error(400, LLAMA_TOO_LONG, &[]),
    ));
    let out = env.run_on(
        Wire::OpenAi,
        &server.url(),
        &["--json", "read a.txt then b.txt"],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let result: serde_json::Value =
        serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    assert_eq!(
        result["stop_reason"]["kind"], "context_overflow",
        "{result}"
    );
    assert_eq!(
        result["stop_reason"]["error"]["kind"], "context_overflow",
        "{result}"
    );
    assert_eq!(server.received().len(), 5);
    let session = PathBuf::from(result["session_path"].as_str().unwrap());
    env.assert_clean(&session);
    // Without --json, the one-shot run says why it stopped.
    let server = MockServer::start(vec![Reply::error(400, LLAMA_TOO_LONG, &[])]);
    let out = env.run_on(Wire::OpenAi, &server.url(), &["-p", "hello"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_contains(
        &stderr(&out),
        "xcsh: run failed: the request is too long for the model's context and could not be compacted: ",
    );
}
