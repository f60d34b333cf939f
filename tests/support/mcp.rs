//! What the MCP end-to-end tests share (tests/mcp_e2e.rs over stdio,
//! tests/mcp_http_e2e.rs over streamable HTTP): finding server-everything, the loud
//! skip of a missing dependency, the faux script steps and tool outcomes the tests
//! write and read, an interrupted call, and a recorded run redriven from its cassette.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::env::{Env, lines, session_of, stderr, stdout};
use crate::support::mock_server::{MockServer, Reply};
use crate::support::sse::Wire;

/// The pinned version scripts/setup-test-deps.sh installs.
pub const EVERYTHING_VERSION: &str = "2026.8.31";

/// Whether an external thing a test needs is here: skipped loudly outside CI,
/// required under `CI=true`.
pub fn available(what: &str, found: bool) -> bool {
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{what} is missing: run scripts/setup-test-deps.sh"
        );
        eprintln!("SKIPPED: {what} is missing (run scripts/setup-test-deps.sh to install it)");
    }
    found
}

/// The entry point of server-everything when it and `node` are installed.
pub fn everything_entry() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let entry = cache.join(format!(
        "xcsh-test-deps/mcp-everything-{EVERYTHING_VERSION}/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    ));
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let found = node && entry.is_file();
    available("node or @modelcontextprotocol/server-everything", found).then_some(entry)
}

/// A faux step calling `name` with `arguments`.
pub fn call(name: &str, arguments: serde_json::Value) -> String {
    serde_json::json!({"tool_calls": [{"name": name, "arguments": arguments}]}).to_string()
}

/// A faux step answering `t`.
pub fn text(t: &str) -> String {
    serde_json::json!({ "text": t }).to_string()
}

/// The outcomes of the session's tool results, in order.
pub fn outcomes(session: &Path) -> Vec<serde_json::Value> {
    lines(session)
        .into_iter()
        .filter(|v| v["type"] == "tool_result")
        .map(
            |v| serde_json::json!({"status": v["data"]["status"], "content": v["data"]["content"]}),
        )
        .collect()
}

/// Asserts that the session's tool outcomes are a call of `tool` (of the server
/// `server`) cut at its `tool_timeout_sec` of 0.5 s, then a call that answered `then`.
#[track_caller]
pub fn assert_timed_out_then(session: &Path, tool: &str, server: &str, then: &str) {
    assert_eq!(
        outcomes(session),
        [
            serde_json::json!({"status": "error", "content": format!("MCP tool `{tool}` timed out after 0.5 s (tool_timeout_sec of [mcp_servers.{server}]); the server was told to cancel it")}),
            serde_json::json!({"status": "ok", "content": then}),
        ]
    );
}

/// The outcomes of a run of `env` that makes the faux call `call` and is interrupted
/// while the call runs; the run must exit 130 (interrupted).
pub fn interrupted(env: &Env, call: &str) -> Vec<serde_json::Value> {
    let script = env.script("s.jsonl", &[call, &text("never")]);
    let out = env.run_script_as_user(
        &script,
        &[r#"{"after":"tool_call","step":1,"interrupt":true}"#],
        &["-p", "wait"],
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    outcomes(&session_of(&out))
}

/// Records, over the OpenAI wire against the mock server, a run of `env` whose
/// model calls `tool` once (the `read` step of `support::sse` with `argument` for
/// its `path`), then answers; the run must succeed. Returns its session and the
/// cassette.
pub fn record_one_call(env: &Env, tool: &str, argument: &str) -> (PathBuf, String) {
    let step = Wire::OpenAi
        .tool_step()
        .into_iter()
        .map(|frame| {
            frame
                .replace(r#""name":"read""#, &format!(r#""name":"{tool}""#))
                .replace(r#"\"path\":"#, &format!(r#"\"{argument}\":"#))
        })
        .collect();
    let provider = MockServer::start(vec![
        Reply::sse(step),
        Reply::sse(Wire::OpenAi.text_step("the server answered")),
    ]);
    let cassette = env.dir.path().join("c.jsonl").display().to_string();
    let out = env.run_against(
        Wire::OpenAi,
        &provider.url(),
        &["--tools", "test", "--record", &cassette],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    (env.session(), cassette)
}

/// `xcsh replay --redrive SESSION --cassette CASSETTE` matches every decision and
/// the conversation without a word about an MCP server, and the log replays clean.
pub fn assert_redrives(env: &Env, session: &Path, cassette: &str) {
    let out = env.redrive(session, cassette);
    let shown = stdout(&out);
    assert!(out.status.success(), "{shown}{}", stderr(&out));
    assert!(
        shown.ends_with(": decisions and conversation match\n"),
        "{shown}"
    );
    assert!(!stderr(&out).contains("MCP server"), "{}", stderr(&out));
    env.assert_replays_clean(session);
}
