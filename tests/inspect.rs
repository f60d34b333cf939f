//! The inspect commands through the real `xcsh` binary: every command on a recorded
//! fixture (plain output, no colors off a terminal), `diff` of two runs of one task
//! whose tool result differs, `fork` and `label` on a live session, `check` failing
//! on an edited file, and `events --follow` picking up appended lines.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use support::assert_contains;
use support::env::{Env, fixture, session_id, stderr, succeeded};

const TOOL_STEP: &str = r#"{"text":"looking","tool_calls":[{"name":"echo","arguments":{"a":1}},{"name":"echo","arguments":{"b":2}}]}"#;
const FINAL_STEP: &str = r#"{"text":"all done"}"#;

/// A finished session of this workspace made by `xcsh run`.
fn recorded(env: &Env) -> PathBuf {
    let script = env.script("s.jsonl", &[TOOL_STEP, FINAL_STEP]);
    env.ok_script(&script, &["-p", "do it"]);
    env.session()
}

#[test]
fn every_view_runs_on_a_recorded_session_without_colors_off_a_terminal() {
    let env = Env::new();
    let path = recorded(&env);
    let s = path.to_str().unwrap();
    let id = session_id(&path);
    let outputs = [
        env.ok(&["tree", &id[..6]]),
        env.ok(&["tree", s, "--full"]),
        env.ok(&["log", s]),
        env.ok(&["log", s, "--leaf", "5"]),
        env.ok(&["events", s, "--type", "tool_result,steer"]),
        env.ok(&["stats", s]),
        env.ok(&["check", s]),
        env.ok(&["export", s, "--format", "md"]),
    ];
    for o in &outputs {
        assert!(!o.contains('\x1b'), "no color off a terminal: {o}");
    }
    assert_contains(&outputs[0], "user \"do it\" · 2 steps · 2 tool calls");
    assert_contains(&outputs[3], "→ echo call_1_2 {\"b\":2}");
    assert!(
        !outputs[3].contains("all done"),
        "the branch ends at 5: {}",
        outputs[3]
    );
    assert_eq!(
        outputs[4].lines().count(),
        3,
        "header and two results: {}",
        outputs[4]
    );
    assert_contains(&outputs[6], "ok: 11 entries");
    for args in [
        vec!["tree", s, "--json"],
        vec!["stats", s, "--json"],
        vec!["check", s, "--json"],
        vec!["export", s, "--format", "json"],
    ] {
        let v: serde_json::Value = serde_json::from_str(&env.ok(&args)).unwrap();
        assert!(v.is_object(), "{args:?}");
    }
    for line in env.ok(&["events", s, "--json", "--step", "1"]).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["step"], 1);
    }
    let bad = env.run(&["tree", "nope"]);
    assert_eq!(bad.status.code(), Some(1));
    assert_contains(
        &stderr(&bad),
        "session nope: no session file or session id matches",
    );
}

#[test]
fn the_fixtures_pass_check_and_render() {
    for name in ["steer", "branch-at", "compaction", "tool-rounds"] {
        let f = fixture(name);
        if !f.exists() {
            eprintln!("{} is missing; skipped", f.display());
            continue;
        }
        let env = Env::new();
        let s = f.to_str().unwrap();
        assert!(env.ok(&["check", s]).contains(": ok:"));
        env.ok(&["tree", s]);
        env.ok(&["events", s]);
        env.ok(&["export", s, "--format", "html"]);
    }
}

#[test]
fn check_fails_on_an_edited_line_naming_it() {
    let env = Env::new();
    let path = recorded(&env);
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("looking", "LOOKING");
    std::fs::write(&path, text).unwrap();
    let out = env.run(&["check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_contains(&text, "hash_mismatch          entry #3 (line 4)");
}

/// Runs a `read` of notes.txt, then answers; the file's content is `content`.
fn read_task(env: &Env, content: &str) -> PathBuf {
    std::fs::write(env.workspace().join("notes.txt"), content).unwrap();
    let script = env.script(
        "read.jsonl",
        &[
            r#"{"text":"reading","tool_calls":[{"name":"read","arguments":{"path":"notes.txt"}}]}"#,
            r#"{"text":"read it"}"#,
        ],
    );
    succeeded(env.standard(&script, &["-p", "read the notes"]));
    env.session()
}

#[test]
fn diff_of_two_runs_whose_tool_result_differs_names_that_result_first() {
    let env = Env::new();
    let a = read_task(&env, "alpha\nbeta\n");
    let b = read_task(&env, "alpha\ngamma\n");
    assert_ne!(a, b);
    let out = env.run(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "they differ: {}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text
        .lines()
        .find(|l| l.starts_with("first divergence"))
        .unwrap();
    assert!(
        first.starts_with("first divergence: run 1 step 1 call 1 (read) result"),
        "{text}"
    );
    assert!(first.ends_with("content differs"), "{text}");
    assert_contains(&text, "common history: none");
    let same = env.run(&["diff", a.to_str().unwrap(), a.to_str().unwrap()]);
    assert_eq!(same.status.code(), Some(0));
    let json = env.run(&[
        "diff",
        "--json",
        &format!("{}@6", a.display()),
        &format!("{}@6", b.display()),
    ]);
    assert_eq!(json.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["changes"][0]["key"], "run 1 step 1 call 1 (read) result");
}

#[test]
fn fork_copies_a_branch_that_a_run_can_continue_and_label_names_an_entry() {
    let env = Env::new();
    let path = recorded(&env);
    let s = path.to_str().unwrap();
    // Inside the tool round: refused, naming the boundaries.
    let out = env.run(&["fork", s, "5"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "xcsh: error: cannot fork at entry 5: it is inside a run (2 tool call(s) of step 1 running); fork at a settled boundary instead: entry 0 (the session start) or entry 10 (where this run finished)\n"
    );
    let forked = env.dir.path().join("forked.jsonl");
    let msg = env.ok(&["fork", s, "#10", "-o", forked.to_str().unwrap()]);
    assert_contains(&msg, "11 entries copied");
    let original = std::fs::read_to_string(&path).unwrap();
    let copy = std::fs::read_to_string(&forked).unwrap();
    assert!(copy.starts_with(&original), "byte for byte, then the label");
    let script = env.script("more.jsonl", &[FINAL_STEP]);
    env.ok_script(
        &script,
        &[
            "--resume",
            forked.to_str().unwrap(),
            "-p",
            "more, in the fork",
        ],
    );
    assert!(
        env.ok(&["check", forked.to_str().unwrap()])
            .contains(": ok:")
    );
    let tree = env.ok(&["tree", forked.to_str().unwrap()]);
    let origin = session_id(&path);
    assert!(
        tree.starts_with(&format!("forked from {origin} @ 10\n")),
        "{tree}"
    );
    assert_contains(&tree, &format!("[#10: forked from {origin} @ 10]"));
    assert_contains(&tree, "user \"more, in the fork\"");
    // The fork shares the original's history by hash.
    let diff = env.ok(&["diff", s, &format!("{}@10", forked.display())]);
    assert_contains(&diff, "common history: 11 entries up to #10");
    // A fork without -o goes to this workspace's sessions.
    let before = env.sessions().len();
    env.ok(&["fork", s, "10"]);
    assert_eq!(env.sessions().len(), before + 1);

    let msg = env.ok(&["label", s, "3", "the tool step"]);
    assert_contains(&msg, "labelled entry 3");
    let tree = env.ok(&["tree", s]);
    assert!(
        tree.contains("[#3: the tool step]") && tree.contains("◀ leaf"),
        "{tree}"
    );
}

#[test]
fn events_follow_prints_entries_appended_later() {
    let env = Env::new();
    let path = recorded(&env);
    let all = std::fs::read(&path).unwrap();
    let live = env.dir.path().join("live.jsonl");
    let cut = all.iter().position(|&b| b == b'\n').unwrap() + 1;
    std::fs::write(&live, &all[..cut]).unwrap();
    let mut child = env
        .cmd(&["events", "--follow", live.to_str().unwrap()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // A watchdog, so that a broken follow fails instead of hanging the suite.
    let (done, wait) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        if wait.recv_timeout(Duration::from_secs(60)).is_err() {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    });
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || lines.next().unwrap().unwrap();
    assert!(next().contains("seq"));
    assert!(next().contains("session"));
    std::fs::OpenOptions::new()
        .append(true)
        .open(&live)
        .unwrap()
        .write_all(&all[cut..])
        .unwrap();
    let mut seen = Vec::new();
    loop {
        let l = next();
        let finished = l.contains("run_finished");
        seen.push(l);
        if finished {
            break;
        }
    }
    let _ = done.send(());
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(seen.iter().any(|l| l.contains("tool_result")), "{seen:?}");
}
