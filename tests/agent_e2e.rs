//! Running agents for real: compaction against a local provider server, and the
//! `--json` event stream of a tool run.

mod support;

use support::env::{Env, from_file, session_of, stderr, tool_names};
use support::mock_server::{MockServer, Reply};
use support::sse::{Wire, openai_call, openai_text};
use support::{assert_contains, assert_starts_with};

fn env() -> Env {
    Env::new()
        .with_file("a.txt", "MIDDLE-MARKER in a.txt\n")
        .with_file("b.txt", "tail content of b.txt\n")
}

#[test]
fn crossing_compact_at_compacts_once_and_the_next_request_holds_the_summary_not_the_middle() {
    let env = env();
    let server = MockServer::start(vec![
        Reply::openai_call("call_1", "read", r#"{"path":"a.txt"}"#, 400),
        Reply::openai_call("call_2", "read", r#"{"path":"b.txt"}"#, 2000),
        // The summary request.
        Reply::openai_text("SUMMARY: the user asked to read a.txt and b.txt.", 2100),
        Reply::openai_text("Both files read.", 300),
    ]);
    // The summary request (the third) asks for a summary; it carries the middle,
    // without tools.
    let (out, received) = env.compacting_run(&server, "1000");
    assert!(received[2].body.contains("MIDDLE-MARKER"));
    assert!(!received[2].body.contains("\"tools\""));
    // The next step's request: the summary, the kept tail, not the middle.
    let next = &received[3].body;
    assert_contains(next, "SUMMARY: the user asked to read a.txt and b.txt.");
    assert_contains(next, "tail content of b.txt");
    assert!(!next.contains("MIDDLE-MARKER"), "{next}");
    assert!(
        !next.contains("read a.txt then b.txt"),
        "the first prompt was summarized: {next}"
    );
    let log = std::fs::read_to_string(session_of(&out)).unwrap();
    assert_eq!(log.matches("\"type\":\"compacted\"").count(), 1);
    assert_eq!(log.matches("\"type\":\"compaction_started\"").count(), 1);
}

/// The event kinds SPEC.md documents for `--json` (its "RunEvent" table).
fn documented_kinds() -> Vec<String> {
    let spec = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/SPEC.md")).unwrap();
    let start = spec
        .find("<!-- run-events -->")
        .expect("SPEC.md marks its RunEvent table");
    let end = spec[start..].find("<!-- /run-events -->").unwrap() + start;
    spec[start..end]
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect()
}

#[test]
fn json_output_of_a_tool_run_is_json_lines_of_documented_event_kinds() {
    let env = env();
    let server = MockServer::start(vec![
        Reply::sse(openai_call(
            &["Reading."],
            "call_1",
            "read",
            r#"{"path":"a.txt"}"#,
            100,
        )),
        Reply::sse(openai_text(&["It says ", "MIDDLE-MARKER."], 150)),
    ]);
    let out = env.run_on(Wire::OpenAi, &server.url(), &["--json", "read a.txt"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let documented = documented_kinds();
    let mut seen = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let kind = v["type"].as_str().unwrap().to_string();
        assert!(
            documented.contains(&kind) || kind == "result",
            "`{kind}` is not in SPEC.md"
        );
        if !seen.contains(&kind) {
            seen.push(kind);
        }
    }
    assert_eq!(
        seen,
        [
            "run_started",
            "step_started",
            "text_delta",
            "step_finished",
            "tool_call",
            "tool_result",
            "run_finished",
            "result"
        ]
    );
}

#[test]
fn show_context_prints_the_exact_request_with_project_instructions() {
    let env = env().with_agents_md("Always run the tests.\n");
    let out = env.offline(&["--show-context", "fix the bug"]);
    let body: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(body["model"], "m");
    assert_eq!(body["stream"], true);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    let system = messages[0]["content"].as_str().unwrap();
    assert_starts_with(system, "You are xcsh, a coding agent.");
    assert_contains(system, "# Project instructions");
    assert_contains(system, "AGENTS.md\n\nAlways run the tests.");
    assert_eq!(messages.last().unwrap()["content"], "fix the bug");
    let tools = tool_names(&body);
    // With the sandbox on (the default where the kernel can), the call outside it.
    let mut expected = vec!["read", "list", "grep", "glob", "edit", "write", "bash"];
    if xcsh_tools::sandbox::probe().is_ok() {
        expected.push("bash_outside_sandbox");
    }
    expected.push("plan");
    assert_eq!(tools, expected);
}

#[test]
fn config_file_profiles_and_flags_resolve_with_their_sources() {
    let env = env();
    let file = env.config(
        "max_steps = 10\nprofile = \"local\"\n[profiles.local]\nprovider = \"openai\"\nmodel = \"qwen3\"\n",
    );
    let v = env.config_json();
    assert_eq!(v["max_steps"], from_file(serde_json::json!(10), &file));
    assert_eq!(
        v["model"],
        serde_json::json!({"value": "qwen3", "source": {"kind": "profile", "name": "local", "path": file}})
    );
    assert_eq!(
        v["compact_at"],
        serde_json::json!({"value": 150000, "source": {"kind": "default"}})
    );
    // A flag beats the profile: the request names the flag's model.
    let out = env.run(&[
        "run",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "flagged",
        "--show-context",
        "x",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let body: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(body["model"], "flagged");
    // Missing credentials name the variable to set.
    let out = env.run(&["run", "--provider", "anthropic", "-p", "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert_contains(
        &stderr(&out),
        "no API key for anthropic: set ANTHROPIC_API_KEY",
    );
}
