//! MCP servers as tools end to end (SPEC.md §32): the real binary with real MCP
//! servers it starts itself — the reference server `server-everything` (npm,
//! installed by scripts/setup-test-deps.sh) and a small stdlib Python server of our
//! own (`support/mcp_probe.py`) that crashes mid-call, hangs, or never starts —
//! over the faux provider (and, for `--redrive`, a cassette of the local mock
//! server).

#[path = "support/mcp.rs"]
mod mcp;
mod support;

use std::path::{Path, PathBuf};

use serde_json::json;

use mcp::{
    assert_redrives, assert_timed_out_then, available, call, everything_entry, interrupted,
    outcomes, record_one_call, text,
};
use support::assert_contains;
use support::env::{Env, lines, session_of, stderr, stdout};

/// `node` and the entry point of server-everything, when installed.
fn everything() -> Option<String> {
    everything_entry().map(|e| e.display().to_string())
}

fn python() -> bool {
    let found = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    available("python3", found)
}

/// The probe server's script.
fn probe_script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support/mcp_probe.py")
        .display()
        .to_string()
}

/// `[mcp_servers.NAME]` of the probe server writing its markers into `markers`,
/// with `flags` after them and `extra` lines.
fn probe_with(name: &str, markers: &Path, flags: &[&str], extra: &str) -> String {
    let mut args = vec![probe_script(), markers.display().to_string()];
    args.extend(flags.iter().map(|f| (*f).to_owned()));
    format!(
        "[mcp_servers.{name}]\ncommand = \"python3\"\nargs = {}\n{extra}\n",
        serde_json::to_string(&args).unwrap()
    )
}

fn probe_table(name: &str, markers: &Path, extra: &str) -> String {
    probe_with(name, markers, &[], extra)
}

fn everything_table(entry: &str) -> String {
    format!("[mcp_servers.everything]\ncommand = \"node\"\nargs = [{entry:?}, \"stdio\"]\n")
}

/// A list of the session's first run configuration (`tools`, `mutating`), as recorded.
fn recorded(session: &Path, list: &str) -> Vec<String> {
    let started = lines(session)
        .into_iter()
        .find(|v| v["type"] == "user_message")
        .unwrap();
    serde_json::from_value(started["data"]["config"][list].clone()).unwrap()
}

/// When python3 is here: `env`, its config made by `config` from the probe servers'
/// markers directory (`markers`, below the home), and that directory.
fn with_probe(
    env: Env,
    markers: &str,
    config: impl FnOnce(&Path) -> String,
) -> Option<(Env, PathBuf)> {
    if !python() {
        return None;
    }
    let markers = env.subdir(markers);
    env.config(&config(&markers));
    Some((env, markers))
}

/// [`with_probe`] with the one server `probe`, `extra` lines in its table.
fn probe_only(extra: &str) -> Option<(Env, PathBuf)> {
    with_probe(Env::new(), "markers", |m| probe_table("probe", m, extra))
}

/// When python3 is here: a run with the one server `probe` (`extra` lines in its
/// table) that calls its tools `calls` in turn, then answers `answer`; the run must
/// succeed.
fn probe_run(
    extra: &str,
    calls: &[(&str, serde_json::Value)],
    answer: &str,
    args: &[&str],
) -> Option<(Env, std::process::Output)> {
    let (env, _) = probe_only(extra)?;
    let mut steps: Vec<String> = calls
        .iter()
        .map(|(tool, arguments)| call(&format!("mcp__probe__{tool}"), arguments.clone()))
        .collect();
    steps.push(text(answer));
    let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
    let out = run_ok(&env, &steps, args);
    Some((env, out))
}

/// When server-everything is here: a run that calls its tool `tool` with `arguments`
/// (prompted `prompt`), then answers "done"; the run must succeed.
fn everything_run(
    tool: &str,
    arguments: serde_json::Value,
    prompt: &str,
) -> Option<(Env, std::process::Output)> {
    let entry = everything()?;
    let env = Env::new();
    env.config(&everything_table(&entry));
    let steps = [
        call(&format!("mcp__everything__{tool}"), arguments),
        text("done"),
    ];
    let out = run_ok(&env, &[&steps[0], &steps[1]], &["-p", prompt]);
    Some((env, out))
}

/// Runs the faux script of `steps` with `args`; the run must succeed.
fn run_ok(env: &Env, steps: &[&str], args: &[&str]) -> std::process::Output {
    let script = env.script("s.jsonl", steps);
    let out = env.run_script(&script, args);
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

#[test]
fn a_scripted_run_calls_an_mcp_tool_and_the_log_holds_its_result_and_replays_clean() {
    let Some((env, out)) = everything_run("echo", serde_json::json!({"message": "hi"}), "echo hi")
    else {
        return;
    };
    let session = session_of(&out);
    assert_eq!(
        outcomes(&session),
        [serde_json::json!({"status": "ok", "content": "Echo: hi"})]
    );
    assert!(recorded(&session, "tools").contains(&"mcp__everything__echo".to_owned()));
    env.assert_clean(&session);
}

#[test]
fn arguments_against_the_servers_schema_are_refused_before_the_call() {
    let Some((_env, out)) =
        everything_run("get-sum", serde_json::json!({"a": "one", "b": 2}), "add")
    else {
        return;
    };
    let outcome = &outcomes(&session_of(&out))[0];
    assert_eq!(outcome["status"], "error");
    let content = outcome["content"].as_str().unwrap();
    assert_contains(
        content,
        "invalid arguments for `mcp__everything__get-sum` (the call was not run):\n- at \"/a\": ",
    );
}

#[test]
fn a_server_that_fails_to_start_is_a_notice_and_the_run_goes_on_without_its_tools() {
    let Some((env, _)) = with_probe(Env::new(), "markers", |markers| {
        format!(
            "[mcp_servers.missing]\ncommand = \"/nonexistent/mcp-server\"\n\n{}\n{}",
            probe_with(
                "slow",
                markers,
                &["--hang-on-start"],
                "startup_timeout_sec = 0.5"
            ),
            probe_table("probe", markers, "")
        )
    }) else {
        return;
    };
    let out = run_ok(&env, &[&text("no tools needed")], &["-p", "hello"]);
    let err = stderr(&out);
    assert_contains(
        &err,
        "xcsh: MCP server missing failed to start: cannot run `/nonexistent/mcp-server`: No such file or directory (os error 2); its tools are unavailable\n",
    );
    assert_contains(
        &err,
        "xcsh: MCP server slow failed to start: it did not start within 0.5 s (startup_timeout_sec); its tools are unavailable\n",
    );
    let tools = recorded(&session_of(&out), "tools");
    assert!(tools.contains(&"mcp__probe__ok".to_owned()), "{tools:?}");
    assert!(
        !tools
            .iter()
            .any(|t| t.starts_with("mcp__slow__") || t.starts_with("mcp__missing__")),
        "{tools:?}"
    );
}

#[test]
fn a_server_that_crashes_mid_call_gives_an_error_result_and_its_later_calls_too() {
    let calls = [("crash", json!({})), ("ok", json!({"path": "a"}))];
    let Some((env, out)) = probe_run("", &calls, "finished anyway", &["-p", "crash it"]) else {
        return;
    };
    assert_eq!(stdout(&out), "finished anyway\n");
    let session = session_of(&out);
    let gone = "MCP server probe exited: the connection closed during the call (its stderr ends: probe: crashing on purpose); its tools are unavailable for the rest of the session";
    assert_eq!(
        outcomes(&session),
        [
            serde_json::json!({"status": "error", "content": gone}),
            serde_json::json!({"status": "error", "content": gone}),
        ]
    );
    env.assert_clean(&session);
}

#[test]
fn a_hanging_call_times_out_after_tool_timeout_sec_and_the_run_goes_on() {
    let calls = [("hang", json!({})), ("ok", json!({"path": "still here"}))];
    let Some((_env, out)) = probe_run("tool_timeout_sec = 0.5", &calls, "done", &["-p", "hang"])
    else {
        return;
    };
    assert_timed_out_then(
        &session_of(&out),
        "mcp__probe__hang",
        "probe",
        "ok: still here",
    );
}

#[test]
fn an_interrupt_cancels_a_running_mcp_call() {
    let Some((env, _)) = probe_only("") else {
        return;
    };
    assert_eq!(
        interrupted(&env, &call("mcp__probe__hang", json!({}))),
        [
            serde_json::json!({"status": "cancelled", "content": "mcp__probe__hang cancelled by the user; side effects it already had were not undone"})
        ]
    );
}

#[test]
fn xcsh_mcp_lists_each_server_with_its_state_and_tools() {
    // Inside the workspace: `xcsh mcp` starts the servers under the sandbox.
    let Some((env, markers)) = with_probe(Env::new(), "work/markers", |markers| {
        format!(
            "{}\n[mcp_servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n\n[mcp_servers.later]\ncommand = \"python3\"\nenabled = false\n",
            probe_table("probe", markers, "tool_timeout_sec = 30")
        )
    }) else {
        return;
    };
    let out = env
        .ok(&["mcp"])
        .replace(&probe_script(), "PROBE")
        .replace(&markers.display().to_string(), "MARKERS");
    expect_test::expect![[r#"
        broken (stdio: /nonexistent/mcp-server): failed: cannot run `/nonexistent/mcp-server`: No such file or directory (os error 2)
        later (stdio: python3): disabled (enabled = false)
        probe (stdio: python3 PROBE MARKERS): started, 4 tool(s), tool timeout 30 s
          mcp__probe__ok     read-only  Answers with the path it was given
          mcp__probe__touch  mutating   Creates an empty file at the path
          mcp__probe__crash  mutating   Exits in the middle of the call
          mcp__probe__hang   read-only  Never answers
    "#]]
    .assert_eq(&out);
}

#[test]
fn a_bad_mcp_servers_table_is_an_error_naming_the_file() {
    let env = Env::new();
    let config = env.config("[mcp_servers.x]\nargs = [\"a\"]\n");
    let script = env.script("s.jsonl", &[&text("hi")]);
    let out = env.run_script(&script, &["-p", "hi"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_contains(
        &stderr(&out),
        &format!(
            "xcsh: error: {}: [mcp_servers.x]: give `command` (a stdio server) or `url` (streamable HTTP)",
            config.display()
        ),
    );
}

#[test]
fn redrive_serves_the_mcp_result_from_the_log_and_never_starts_the_server() {
    let Some((env, markers)) =
        with_probe(Env::for_wires(), "markers", |m| probe_table("probe", m, ""))
    else {
        return;
    };
    let (original, cassette) = record_one_call(&env, "mcp__probe__ok", "path");
    assert_eq!(
        outcomes(&original),
        [serde_json::json!({"status": "ok", "content": "ok: a.txt"})]
    );
    let started = markers.join("started");
    assert!(started.is_file());
    std::fs::remove_file(&started).unwrap();
    // The server cannot start now: its script is gone from the config's command.
    env.config(&probe_table("probe", &markers, "").replace("python3", "/nonexistent/python3"));
    assert_redrives(&env, &original, &cassette);
    assert!(!started.exists(), "the redrive started the MCP server");
}

#[test]
fn the_server_runs_under_the_sandbox_of_the_runs_tools() {
    let Some((env, _)) = with_probe(Env::new(), "work/markers", |m| probe_table("probe", m, ""))
    else {
        return;
    };
    if !xcsh_tools::testing::sandbox_supported() {
        return;
    }
    let inside = env.workspace().join("inside.txt").display().to_string();
    let outside = env.dir.path().join("outside.txt").display().to_string();
    let script = env.script(
        "s.jsonl",
        &[
            &call("mcp__probe__touch", serde_json::json!({"path": inside})),
            &call("mcp__probe__touch", serde_json::json!({"path": outside})),
            &text("done"),
        ],
    );
    let out = env.run_standard(&script, &["-p", "touch both"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        outcomes(&session_of(&out)),
        [
            serde_json::json!({"status": "ok", "content": format!("created {inside}")}),
            serde_json::json!({"status": "error", "content": format!("cannot create {outside}: Permission denied")}),
        ]
    );
    assert!(!Path::new(&outside).exists());
}

#[test]
fn tools_marked_read_only_run_under_readonly_and_the_others_are_denied() {
    let calls = [
        ("ok", json!({"path": "p"})),
        ("touch", json!({"path": "t"})),
    ];
    let args = ["--permissions", "readonly", "-p", "both"];
    let Some((env, out)) = probe_run("", &calls, "done", &args) else {
        return;
    };
    let session = session_of(&out);
    let mutating = recorded(&session, "mutating");
    assert!(
        mutating.contains(&"mcp__probe__touch".to_owned()),
        "{mutating:?}"
    );
    assert!(
        mutating.contains(&"mcp__probe__crash".to_owned()),
        "{mutating:?}"
    );
    assert!(
        !mutating
            .iter()
            .any(|m| m == "mcp__probe__ok" || m == "mcp__probe__hang"),
        "{mutating:?}"
    );
    assert_eq!(
        outcomes(&session),
        [serde_json::json!({"status": "ok", "content": "ok: p"})]
    );
    assert!(!env.workspace().join("t").exists());
    let synthetic: Vec<serde_json::Value> = lines(&session)
        .into_iter()
        .filter(|v| v["type"] == "synthetic_result")
        .collect();
    assert_eq!(synthetic.len(), 1, "{synthetic:?}");
    env.assert_clean(&session);
}
