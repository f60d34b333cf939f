//! The real `xcsh` binary against a local HTTP server on 127.0.0.1 speaking each
//! wire protocol: a two-step tool run per protocol, injected faults (disconnect
//! mid-stream, stall, malformed frame, 429 with retry-after, 500 then success, a
//! 4xx JSON error), and cassettes recorded and played back.

mod support;

use std::path::Path;

use support::env::{Env, SECRET, stderr, steps, types};
use support::mock_server::{Fault, MockServer, Reply};
use support::sse::Wire;
use support::{assert_contains, assert_starts_with};
use xcsh_log::{Body, read_session};
use xcsh_machine::{ProviderErrorKind, StepOutcome, StreamEvent};

fn two_step(wire: Wire) -> Vec<Reply> {
    vec![
        Reply::sse(wire.tool_step()),
        Reply::sse(wire.text_step("a.txt says hello")),
    ]
}

#[test]
fn each_protocol_completes_a_two_step_tool_run() {
    for wire in Wire::ALL {
        let env = Env::for_wires();
        let server = MockServer::start(two_step(wire));
        let out = env.run_against(wire, &server.url(), &[]);
        assert!(out.status.success(), "{wire:?}: {}", stderr(&out));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "a.txt says hello\n",
            "{wire:?}"
        );
        let received = server.received();
        assert_eq!(received.len(), 2, "{wire:?}");
        for r in &received {
            assert_eq!(
                (r.method.as_str(), r.path.as_str()),
                ("POST", wire.path()),
                "{wire:?}"
            );
            let auth = match wire {
                Wire::Anthropic => r.header("x-api-key").map(str::to_string),
                Wire::OpenAi | Wire::Responses => r.header("authorization").map(str::to_string),
            };
            assert!(auth.unwrap().ends_with(SECRET), "{wire:?}: the key is sent");
        }
        // The second request carries the tool's result back to the model.
        assert!(
            received[1].body.contains("hello from a.txt"),
            "{wire:?}: {}",
            received[1].body
        );
        assert_eq!(
            types(&env.session()).join(" "),
            "session user_message step_started step tool_dispatched tool_result step_started step run_finished",
            "{wire:?}"
        );
    }
}

#[test]
fn a_disconnect_mid_stream_fails_the_step_with_what_arrived() {
    let wire = Wire::OpenAi;
    let env = Env::for_wires();
    let frames = wire.text_step("this answer is cut off");
    let cut = frames[0].len() + 10;
    let server = MockServer::start(vec![
        Reply::sse(frames).with_fault(Fault::DisconnectAfter(cut)),
    ]);
    let out = env.run_against(wire, &server.url(), &[]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_contains(
        &stderr(&out),
        "run failed: disconnected: the stream broke off after",
    );
    let steps = steps(&env.session());
    let StepOutcome::Failed { error } = &steps[0].outcome else {
        panic!("{:?}", steps[0].outcome)
    };
    assert_eq!(error.kind, ProviderErrorKind::Disconnected);
    assert!(
        error
            .message
            .contains(&format!("after {cut} bytes and 1 events")),
        "{}",
        error.message
    );
    // What arrived before the cut is in the step entry.
    assert_eq!(steps[0].message.text, "this answer is cut off");
}

#[test]
fn a_stall_past_the_idle_timeout_is_an_idle_timeout_error() {
    let wire = Wire::Anthropic;
    let env = Env::for_wires();
    let server = MockServer::start(vec![
        Reply::sse(wire.text_step("slow")).with_fault(Fault::StallAt(2)),
    ]);
    let out = env.run_against(wire, &server.url(), &["--idle-timeout", "0.3"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let steps = steps(&env.session());
    let StepOutcome::Failed { error } = &steps[0].outcome else {
        panic!("{:?}", steps[0].outcome)
    };
    assert_eq!(error.kind, ProviderErrorKind::IdleTimeout);
    assert_starts_with(&error.message, "no data for 0.3 s (after ");
}

#[test]
fn a_malformed_frame_is_a_clear_error_and_the_log_stays_readable() {
    let wire = Wire::Responses;
    let env = Env::for_wires();
    let mut frames = wire.text_step("ok");
    frames.insert(
        2,
        "event: response.output_text.delta\ndata: {not json\n\n".into(),
    );
    let server = MockServer::start(vec![Reply::sse(frames)]);
    let out = env.run_against(wire, &server.url(), &[]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let steps = steps(&env.session());
    let StepOutcome::Failed { error } = &steps[0].outcome else {
        panic!("{:?}", steps[0].outcome)
    };
    assert_eq!(error.kind, ProviderErrorKind::Malformed);
}

/// A run on `wire` whose first request gets `error`: it succeeds after one retry
/// (three requests in all); returns its environment.
fn retried_once(wire: Wire, error: Reply) -> Env {
    let env = Env::for_wires();
    let mut replies = vec![error];
    replies.extend(two_step(wire));
    let server = MockServer::start(replies);
    let out = env.run_against(wire, &server.url(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.received().len(), 3);
    env
}

#[test]
fn a_429_with_retry_after_is_retried_and_the_retry_is_recorded() {
    let env = retried_once(
        Wire::OpenAi,
        Reply::error(
            429,
            r#"{"error":{"message":"Rate limit reached","type":"rate_limit"}}"#,
            &[("retry-after", "0")],
        ),
    );
    let steps = steps(&env.session());
    let retries: Vec<&StreamEvent> = steps[0]
        .events
        .iter()
        .map(|e| &e.event)
        .filter(|e| matches!(e, StreamEvent::Retrying { .. }))
        .collect();
    assert_eq!(
        retries,
        [&StreamEvent::Retrying {
            attempt: 2,
            reason: "HTTP 429 Too Many Requests: Rate limit reached (rate_limit)".into(),
            delay_ms: 0
        }]
    );
}

#[test]
fn a_500_then_success_is_retried() {
    retried_once(
        Wire::Anthropic,
        Reply::error(
            500,
            r#"{"type":"error","error":{"type":"api_error","message":"Internal"}}"#,
            &[],
        ),
    );
}

#[test]
fn a_4xx_json_error_is_not_retried_and_names_the_providers_message() {
    let wire = Wire::OpenAi;
    let env = Env::for_wires();
    let server = MockServer::start(vec![Reply::error(
        401,
        r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#,
        &[],
    )]);
    let out = env.run_against(wire, &server.url(), &[]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(server.received().len(), 1);
    assert_contains(
        &stderr(&out),
        "run failed: API error: HTTP 401 Unauthorized: Incorrect API key provided (invalid_api_key)",
    );
}

/// The decisions of a session, without what varies between runs.
fn decisions(path: &Path) -> Vec<serde_json::Value> {
    read_session(path)
        .unwrap()
        .entries
        .iter()
        .filter_map(|e| match &e.body {
            Body::Decision(d) => Some(serde_json::to_value(d).unwrap()),
            _ => None,
        })
        .collect()
}

/// A run of `read a.txt` on `wire` against `server`, recorded to a cassette in the
/// test's directory (it must succeed); returns the cassette's path.
fn record(env: &Env, wire: Wire, server: &MockServer) -> String {
    let cassette = env.dir.path().join("run.cassette.jsonl");
    let cassette = cassette.to_str().unwrap().to_owned();
    let recorded = env.run_against(wire, &server.url(), &["--record", &cassette]);
    assert!(recorded.status.success(), "{wire:?}: {}", stderr(&recorded));
    cassette
}

/// `xcsh replay --redrive SESSION --cassette CASSETTE`, and its stdout.
fn redrive(env: &Env, session: &Path, cassette: &str) -> (std::process::Output, String) {
    let out = env.run(&[
        "replay",
        "--redrive",
        session.to_str().unwrap(),
        "--cassette",
        cassette,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, stdout)
}

#[test]
fn a_recorded_cassette_plays_back_to_the_same_decisions_without_the_network() {
    for wire in Wire::ALL {
        let env = Env::for_wires();
        let server = MockServer::start(two_step(wire));
        let cassette = &record(&env, wire, &server);
        let original = env.session();

        // Nothing listens on this port: only the cassette can answer.
        let dead = "http://127.0.0.1:9";
        let played = env.run_against(wire, dead, &["--cassette", cassette]);
        assert!(played.status.success(), "{wire:?}: {}", stderr(&played));
        let replayed = env.session();
        assert_ne!(original, replayed);
        assert_eq!(decisions(&original), decisions(&replayed), "{wire:?}");

        // The key was sent to the server, but never written down.
        for file in [Path::new(cassette), &original, &replayed] {
            let text = std::fs::read_to_string(file).unwrap();
            assert!(
                !text.contains(SECRET),
                "{wire:?}: {} holds the key",
                file.display()
            );
        }
    }
}

#[test]
fn a_cassette_miss_names_the_closest_recorded_request() {
    let wire = Wire::OpenAi;
    let env = Env::for_wires();
    let server = MockServer::start(two_step(wire));
    let cassette = &record(&env, wire, &server);
    let out = env.run_on(
        wire,
        "http://127.0.0.1:9",
        &["--cassette", cassette, "-p", "a different prompt"],
    );
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert_contains(
        &err,
        "no recorded request matches this one; the closest is exchange 1 (line 2):",
    );
    assert_contains(&err, "\n-      \"content\": \"read a.txt\",\n");
    assert_contains(&err, "\n+      \"content\": \"a different prompt\",\n");
}

#[test]
fn redrive_reruns_the_agent_from_a_cassette_and_the_log_and_matches() {
    let wire = Wire::OpenAi;
    let env = Env::for_wires();
    let server = MockServer::start(two_step(wire));
    let cassette = record(&env, wire, &server);
    let original = env.session();
    // The file the tool read is gone: the redrive serves the recorded result.
    std::fs::remove_file(env.workspace().join("a.txt")).unwrap();
    let (out, stdout) = redrive(&env, &original, &cassette);
    assert!(out.status.success(), "{stdout}{}", stderr(&out));
    assert_contains(&stdout, "redriven (1 run(s)) to ");
    assert!(
        stdout.ends_with(": decisions and conversation match\n"),
        "{stdout}"
    );
}

#[test]
fn redrive_reports_a_difference_when_the_cassette_cannot_answer_the_same_way() {
    let wire = Wire::OpenAi;
    let env = Env::for_wires();
    let mut replies = two_step(wire);
    replies.push(Reply::sse(wire.text_step("a second answer")));
    let server = MockServer::start(replies);
    let cassette = record(&env, wire, &server);
    // A second turn, not recorded: the cassette has no answer for it.
    let more = env.run_on(wire, &server.url(), &["--continue", "-p", "more"]);
    assert!(more.status.success(), "{}", stderr(&more));
    let original = env.session();
    let (out, stdout) = redrive(&env, &original, &cassette);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", stderr(&out));
    assert_contains(&stdout, "redriven (2 run(s)) to ");
    assert_contains(&stdout, ": DIFFERS: decision ");
    assert_contains(&stdout, "no recorded request matches this one");
}
