//! `xcsh --resume` without a session, where the session picker cannot open (stdin
//! not a terminal, `--plain`, a one-shot run): this workspace's sessions as `xcsh
//! sessions` lists them, then a usage error asking for an id (exit 2), at once. And
//! the order of both lists: the most recently active session first.
//!
//! The picker itself (the terminal UI) is tested in `tui_e2e.rs`.

mod support;

// Nothing is typed here: `Pty::send` is not used.
#[allow(dead_code)]
#[path = "support/pty.rs"]
mod pty;

use std::path::PathBuf;

use support::assert_contains;
use support::env::{Env, prompts, session_id, stderr, stdout};

/// The error `--resume` without SESSION ends with where no picker opens (`why`).
fn asks_for_an_id(why: &str) -> String {
    format!(
        "xcsh: error: --resume without SESSION opens the session picker, which needs the terminal UI ({why}): name the session instead, `--resume ID`, with an id listed above"
    )
}

/// Two sessions of the workspace, started one after the other (`older`, `newer`).
fn two_sessions(env: &Env) -> (PathBuf, PathBuf) {
    let script = env.script("s.jsonl", &[r#"{"text":"done"}"#]);
    env.ok_script(&script, &["-p", "the older one"]);
    env.ok_script(&script, &["-p", "the newer one"]);
    let files = env.sessions();
    assert_eq!(files.len(), 2, "{files:?}");
    let older = files.iter().find(|f| prompts(f) == ["the older one"]);
    let newer = files.iter().find(|f| prompts(f) == ["the newer one"]);
    (older.unwrap().clone(), newer.unwrap().clone())
}

/// The ids `xcsh sessions --json` lists, in its order.
fn listed_ids(env: &Env) -> Vec<String> {
    env.ok(&["sessions", "--json"])
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["id"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn resume_without_a_session_off_a_terminal_lists_the_sessions_and_asks_for_an_id() {
    let env = Env::new().with_var("NO_COLOR", "1");
    let (older, newer) = two_sessions(&env);
    // stdin is not a terminal (the test's commands read /dev/null).
    let out = env.run(&["--resume"]);
    assert_eq!(
        (out.status.code(), stdout(&out), stderr(&out)),
        (
            Some(2),
            env.ok(&["sessions"]),
            asks_for_an_id("stdin is not a terminal") + "\n"
        )
    );
    // A one-shot run cannot pick either; nothing was started or written.
    let out = env.run(&["--resume", "-p", "go on"]);
    assert_eq!(
        (out.status.code(), stderr(&out)),
        (Some(2), asks_for_an_id("not with -p") + "\n")
    );
    assert_eq!(env.sessions().len(), 2);
    assert_eq!(
        (prompts(&older), prompts(&newer)),
        (
            vec!["the older one".to_string()],
            vec!["the newer one".to_string()]
        )
    );
}

#[test]
fn plain_resume_without_a_session_on_a_terminal_lists_them_and_exits_at_once() {
    let env = Env::new().with_var("NO_COLOR", "1");
    let (older, newer) = two_sessions(&env);
    let term = pty::Pty::spawn(env.cmd(&["--plain", "--resume"]));
    term.wait_for("with an id listed above", 1);
    let (status, seen) = term.finish();
    let seen = String::from_utf8_lossy(&seen).replace("\r\n", "\n");
    assert_eq!(status.code(), Some(2), "{seen}");
    let error = asks_for_an_id("not with --plain");
    assert!(seen.trim_end().ends_with(&error), "{seen}");
    // The table, the newer session above the older one.
    let at = |id: String| seen.find(&id).unwrap_or_else(|| panic!("{id}: {seen}"));
    assert!(at(session_id(&newer)) < at(session_id(&older)), "{seen}");
    assert_eq!(env.sessions().len(), 2);
}

#[test]
fn resume_without_a_session_in_a_workspace_without_any_says_so() {
    let env = Env::new();
    let out = env.run(&["--resume"]);
    let ws = env.workspace().canonicalize().unwrap();
    assert_eq!(
        (out.status.code(), stdout(&out), stderr(&out)),
        (
            Some(2),
            String::new(),
            format!(
                "xcsh: error: --resume without SESSION opens the session picker, which needs the terminal UI (stdin is not a terminal); and this workspace ({}) has no session to resume (`xcsh sessions --all` lists every workspace's)\n",
                ws.display()
            )
        )
    );
    assert!(!env.home().join("sessions").exists());
}

/// `xcsh sessions` lists the session worked on last first, whenever it started (as
/// the picker does); `--resume ID` with a value works as it always has.
#[test]
fn sessions_lists_the_most_recently_active_session_first() {
    let env = Env::new().with_var("NO_COLOR", "1");
    let (older, newer) = two_sessions(&env);
    let (older_id, newer_id) = (session_id(&older), session_id(&newer));
    assert_eq!(listed_ids(&env), [newer_id.clone(), older_id.clone()]);

    let script = env.script("more.jsonl", &[r#"{"text":"more done"}"#]);
    let out = env.ok_script(&script, &["--resume", &older_id, "-p", "back to it"]);
    assert_eq!(out, "more done\n");
    assert_eq!(prompts(&older), ["the older one", "back to it"]);
    assert_eq!(listed_ids(&env), [older_id.clone(), newer_id.clone()]);
    let table = env.ok(&["sessions"]);
    let at = |id: &str| table.find(id).unwrap_or_else(|| panic!("{id}: {table}"));
    assert!(at(&older_id) < at(&newer_id), "{table}");
    assert_contains(&table, "back to it");
}
