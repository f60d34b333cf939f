//! MCP servers over streamable HTTP (`url`, SPEC.md §32.2) end to end: the real
//! binary against the reference server `server-everything` serving HTTP on a
//! loopback port (npm, installed by scripts/setup-test-deps.sh), a port nothing
//! listens on and a listener that never answers, over the faux provider (and, for
//! `--redrive`, a cassette of the local mock server).

#[path = "support/mcp.rs"]
mod mcp;
#[path = "support/mcp_http.rs"]
mod mcp_http;
mod support;

use std::path::Path;
use std::process::Output;

use mcp::{
    assert_redrives, assert_timed_out_then, call, interrupted, outcomes, record_one_call, text,
};
use mcp_http::{HttpEverything, Silent, free_port};
use support::assert_contains;
use support::env::{Env, lines, session_of, stderr, stdout};

fn url_table(name: &str, url: &str, extra: &str) -> String {
    format!("[mcp_servers.{name}]\nurl = {url:?}\n{extra}\n")
}

/// The tools of the session's first run, as recorded.
fn recorded_tools(session: &Path) -> Vec<String> {
    let started = lines(session)
        .into_iter()
        .find(|v| v["type"] == "user_message")
        .unwrap();
    serde_json::from_value(started["data"]["config"]["tools"].clone()).unwrap()
}

/// When server-everything is here: it serving HTTP, and `env` with a config that
/// names it `everything` (`extra` lines in its table).
fn serving(env: Env, extra: &str) -> Option<(HttpEverything, Env)> {
    let server = HttpEverything::start()?;
    env.config(&url_table("everything", &server.url(), extra));
    Some((server, env))
}

/// When server-everything is here: a run of the faux script that calls its `echo`
/// with `message`, then answers "done", run by `run` (prompted "echo"); the run must
/// succeed with the echo as its one tool outcome. Returns the environment and the
/// output, the server still serving.
fn echo_run(
    message: &str,
    run: fn(&Env, &Path, &[&str]) -> Output,
) -> Option<(HttpEverything, Env, Output)> {
    let (server, env) = serving(Env::new(), "")?;
    let arguments = serde_json::json!({ "message": message });
    let script = env.script(
        "s.jsonl",
        &[&call("mcp__everything__echo", arguments), &text("done")],
    );
    let out = run(&env, &script, &["-p", "echo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        outcomes(&session_of(&out)),
        [serde_json::json!({"status": "ok", "content": format!("Echo: {message}")})]
    );
    Some((server, env, out))
}

#[test]
fn a_scripted_run_calls_an_mcp_tool_over_streamable_http_and_the_log_replays_clean() {
    let Some((_server, env, out)) = echo_run("over http", |env, script, args| {
        env.run_script(script, args)
    }) else {
        return;
    };
    assert!(!stderr(&out).contains("MCP server"), "{}", stderr(&out));
    let session = session_of(&out);
    assert!(recorded_tools(&session).contains(&"mcp__everything__echo".to_owned()));
    env.assert_clean(&session);
}

#[test]
fn redrive_serves_the_http_servers_result_from_the_log_with_the_server_stopped() {
    let Some((mut server, env)) = serving(Env::for_wires(), "") else {
        return;
    };
    let (original, cassette) = record_one_call(&env, "mcp__everything__echo", "message");
    assert_eq!(
        outcomes(&original),
        [serde_json::json!({"status": "ok", "content": "Echo: a.txt"})]
    );
    server.stop();
    assert_redrives(&env, &original, &cassette);
}

#[test]
fn a_url_nothing_listens_on_is_a_failed_notice_at_once_not_at_the_deadline() {
    let env = Env::new();
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    // A deadline far beyond the test's: the notice must come from the refused
    // connection, not from the deadline.
    env.config(&url_table("down", &url, "startup_timeout_sec = 600"));
    let script = env.script("s.jsonl", &[&text("no tools needed")]);
    let out = env.run_script(&script, &["-p", "hello"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "no tools needed\n");
    let err = stderr(&out);
    assert_contains(
        &err,
        &format!(
            "xcsh: MCP server down failed to start: the MCP handshake failed (send initialize request): Client error: error sending request for url ({url}): client error (Connect): tcp connect error: Connection refused (os error 111); its tools are unavailable\n"
        ),
    );
    let tools = recorded_tools(&session_of(&out));
    assert!(
        !tools.iter().any(|t| t.starts_with("mcp__down__")),
        "{tools:?}"
    );
}

#[test]
fn a_url_server_that_never_answers_fails_at_its_startup_deadline() {
    let silent = Silent::start();
    let env = Env::new();
    env.config(&url_table(
        "mute",
        &silent.url(),
        "startup_timeout_sec = 0.5",
    ));
    let script = env.script("s.jsonl", &[&text("no tools needed")]);
    let out = env.run_script(&script, &["-p", "hello"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_contains(
        &stderr(&out),
        "xcsh: MCP server mute failed to start: it did not start within 0.5 s (startup_timeout_sec); its tools are unavailable\n",
    );
}

#[test]
fn xcsh_mcp_lists_the_http_server_with_its_state_and_tools() {
    let Some(server) = HttpEverything::start() else {
        return;
    };
    let env = Env::new();
    let down = format!("http://127.0.0.1:{}/mcp", free_port());
    env.config(&format!(
        "{}\n{}\n{}",
        url_table("down", &down, ""),
        url_table("everything", &server.url(), "tool_timeout_sec = 30"),
        url_table("later", "http://127.0.0.1:9/mcp", "enabled = false"),
    ));
    let out = env
        .ok(&["mcp"])
        .replace(&server.url(), "URL")
        .replace(&down, "DOWN");
    expect_test::expect![[r#"
        down (streamable HTTP: DOWN): failed: the MCP handshake failed (send initialize request): Client error: error sending request for url (DOWN): client error (Connect): tcp connect error: Connection refused (os error 111)
        everything (streamable HTTP: URL): started, 13 tool(s), tool timeout 30 s
          mcp__everything__echo                            read-only  Echoes back the input string
          mcp__everything__get-annotated-message           read-only  Demonstrates how annotations can be used to provide metadata about content.
          mcp__everything__get-env                         read-only  Returns all environment variables, helpful for debugging MCP server configuration
          mcp__everything__get-resource-links              read-only  Returns up to ten resource links that reference different types of resources
          mcp__everything__get-resource-reference          read-only  Returns a resource reference that can be used by MCP clients
          mcp__everything__get-structured-content          read-only  Returns structured content along with an output schema for client data validation
          mcp__everything__get-sum                         read-only  Returns the sum of two numbers
          mcp__everything__get-tiny-image                  read-only  Returns a tiny MCP logo image.
          mcp__everything__gzip-file-as-resource           mutating   Compresses a single file using gzip compression. Depending upon the selected output type, returns either the compressed data as a gzipped resource or a resource link, allowing it to be downloaded in a subsequent request during the current session.
          mcp__everything__toggle-simulated-logging        mutating   Toggles simulated, random-leveled logging on or off.
          mcp__everything__toggle-subscriber-updates       mutating   Toggles simulated resource subscription updates on or off.
          mcp__everything__trigger-long-running-operation  read-only  Demonstrates a long running operation with progress updates.
          mcp__everything__simulate-research-query         mutating   Simulates a deep research operation that gathers, analyzes, and synthesizes information. Demonstrates MCP task-based operations with progress through multiple stages. If 'ambiguous' is true and client supports elicitation, sends an elicitation request for clarification.
        later (streamable HTTP: http://127.0.0.1:9/mcp): disabled (enabled = false)
    "#]]
    .assert_eq(&out);
}

#[test]
fn a_call_after_the_server_stopped_is_an_error_naming_the_refused_connection() {
    let Some((mut server, env)) = serving(Env::new(), "") else {
        return;
    };
    // Step 2 streams slowly (10 chunks, 200 ms apart) before its call: the server
    // is stopped as soon as its text starts, after the first call's result.
    let slow = serde_json::json!({
        "text": "x".repeat(120),
        "chunk_delay_ms": 200,
        "tool_calls": [{"name": "mcp__everything__echo", "arguments": {"message": "after"}}],
    })
    .to_string();
    let script = env.script(
        "s.jsonl",
        &[
            &call(
                "mcp__everything__echo",
                serde_json::json!({"message": "before"}),
            ),
            &slow,
            &text("done"),
        ],
    );
    let (child, session) =
        support::env::streaming(env.scripted(&script, &["--json", "echo twice"]), 2);
    server.stop();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        outcomes(&session),
        [
            serde_json::json!({"status": "ok", "content": "Echo: before"}),
            serde_json::json!({"status": "error", "content": format!(
                "MCP server everything could not be reached: Client error: error sending request for url ({}): client error (Connect): tcp connect error: Connection refused (os error 111)",
                server.url()
            )}),
        ]
    );
    env.assert_clean(&session);
}

/// A call of server-everything's tool that answers after a minute.
fn long_call() -> String {
    call(
        "mcp__everything__trigger-long-running-operation",
        serde_json::json!({"duration": 60, "steps": 1}),
    )
}

#[test]
fn a_slow_http_call_times_out_after_tool_timeout_sec_and_the_next_call_works() {
    let Some((_server, env)) = serving(Env::new(), "tool_timeout_sec = 0.5") else {
        return;
    };
    let script = env.script(
        "s.jsonl",
        &[
            &long_call(),
            &call(
                "mcp__everything__echo",
                serde_json::json!({"message": "still here"}),
            ),
            &text("done"),
        ],
    );
    let out = env.run_script(&script, &["-p", "wait"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_timed_out_then(
        &session_of(&out),
        "mcp__everything__trigger-long-running-operation",
        "everything",
        "Echo: still here",
    );
}

#[test]
fn an_interrupt_cancels_a_running_http_call() {
    let Some((_server, env)) = serving(Env::new(), "") else {
        return;
    };
    assert_eq!(
        interrupted(&env, &long_call()),
        [
            serde_json::json!({"status": "cancelled", "content": "mcp__everything__trigger-long-running-operation cancelled by the user; side effects it already had were not undone"})
        ]
    );
}

#[test]
fn a_url_server_is_reached_with_the_sandbox_on_and_no_sandbox_network() {
    // The standard tools: bash's sandbox is on (where the machine has one), without
    // network; the server is reached by xcsh itself (SPEC.md §32.7).
    echo_run("sandboxed run", |env, script, args| {
        env.run_standard(script, args)
    });
}
