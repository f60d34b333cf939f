//! The real `xcsh` binary: determinism of logs, crash recovery after SIGKILL, the
//! single-writer lock, branching with `--at`, and clear errors for bad input.

mod support;

use std::io::Write;
use std::path::Path;

use support::assert_contains;
use support::env::{Env, stderr, streaming};

/// Drops what legitimately differs between two runs of one script: timestamps, the
/// hashes that cover them, event timing, durations and the session id.
fn normalized(path: &Path) -> Vec<serde_json::Value> {
    fn scrub(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                for key in ["ts", "hash", "ms", "duration_ms", "session_id"] {
                    m.remove(key);
                }
                m.values_mut().for_each(scrub);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(scrub),
            _ => {}
        }
    }
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            scrub(&mut v);
            v
        })
        .collect()
}

const TOOL_STEP: &str = r#"{"text":"looking","tool_calls":[{"name":"echo","arguments":{"a":1}},{"name":"echo","arguments":{"b":2}}]}"#;
const FINAL_STEP: &str = r#"{"text":"all done"}"#;

#[test]
fn the_same_script_twice_writes_the_same_log_but_for_times_and_ids() {
    let env = Env::new();
    let script = env.script("s.jsonl", &[TOOL_STEP, FINAL_STEP]);
    for _ in 0..2 {
        let out = env.run_script(&script, &["-p", "do it"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "all done\n");
    }
    let sessions = env.sessions();
    assert_eq!(sessions.len(), 2);
    let (a, b) = (normalized(&sessions[0]), normalized(&sessions[1]));
    assert_eq!(a.len(), 11);
    assert_eq!(a, b);
}

const SLOW_STEP: &str = r#"{"text":"this answer streams slowly, twelve bytes a chunk, for a long while","chunk_delay_ms":200}"#;

#[test]
fn sigkill_while_streaming_then_continue_repairs_and_goes_on() {
    let env = Env::new();
    let slow = env.script("slow.jsonl", &[TOOL_STEP, SLOW_STEP]);
    let (mut child, path) = streaming(env.scripted(&slow, &["--json", "go"]), 2);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = std::fs::read_to_string(&path).unwrap();
    assert!(before.ends_with('\n'));
    // A write torn by a power cut: half a line at the end.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(br#"{"v":1,"id":99,"parent":9,"ts":"2026-"#)
        .unwrap();
    drop(f);

    let next = env.script("next.jsonl", &[FINAL_STEP]);
    let out = env.run_script(&next, &["--continue", "-p", "again"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert_contains(&err, "repaired a torn last line: 37 byte(s)");
    assert_contains(
        &err,
        "the previous run ended without finishing (step 2 streaming)",
    );
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.starts_with(&before), "every complete line is kept");
    let types: Vec<String> = after
        .lines()
        .skip(before.lines().count())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].to_string())
        .collect();
    assert_eq!(
        types.join(" ").replace('"', ""),
        // The run's `provider` entry: it plays another script.
        "recovered run_finished provider user_message step_started step run_finished"
    );
    let check = env.run(&["sessions", "--json"]);
    assert!(
        check.status.success(),
        "the repaired log reads clean: {}",
        stderr(&check)
    );
}

#[test]
fn a_second_writer_fails_at_once_naming_the_lock_holder() {
    let env = Env::new();
    let slow = env.script("slow.jsonl", &[SLOW_STEP]);
    let (mut child, path) = streaming(env.scripted(&slow, &["--json", "go"]), 1);
    let out = env.run_script(&slow, &["--resume", path.to_str().unwrap(), "-p", "x"]);
    let pid = child.id();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_contains(&err, "is already being written by pid ");
    assert_contains(&err, &format!("pid {pid} "));
}

#[test]
fn at_an_earlier_entry_continues_on_a_new_branch_in_the_same_file() {
    let env = Env::new();
    let one = env.script("one.jsonl", &[FINAL_STEP]);
    assert!(env.run_script(&one, &["-p", "first"]).status.success());
    assert!(
        env.run_script(&one, &["--continue", "-p", "second"])
            .status
            .success()
    );
    let path = env.session();
    // Entries: 0 session, 1 prompt, 2 started, 3 step, 4 finished, then the second turn.
    let out = env.run_script(
        &one,
        &[
            "--resume",
            path.to_str().unwrap(),
            "--at",
            "4",
            "-p",
            "instead",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("continuing from entry 4 on a new branch (the previous leaf was 8)")
    );
    let log = normalized(&path);
    let branch = &log[9];
    assert_eq!(branch["type"], "branch");
    assert_eq!(branch["parent"], 4);
    assert_eq!(branch["data"]["from_leaf"], 8);
    assert_eq!(log[10]["parent"], 9);
    assert_eq!(log[10]["data"]["text"], "instead");
}

#[test]
fn at_an_entry_inside_a_run_is_refused_naming_the_boundary_to_use() {
    let env = Env::new();
    let script = env.script("s.jsonl", &[TOOL_STEP, FINAL_STEP, FINAL_STEP]);
    assert!(env.run_script(&script, &["-p", "first"]).status.success());
    let out = env.run_script(&script, &["--continue", "--at", "3", "-p", "x"]);
    assert_eq!(out.status.code(), Some(1));
    expect_test::expect![[r#"
        xcsh: error: entry 3 is inside a run (2 tool call(s) of step 1 running); continue from a settled boundary instead: entry 0 (the session start) or entry 10 (where this run finished)
    "#]]
    .assert_eq(&stderr(&out));
    // The last step settled the run, but its `run_finished` comes after it.
    let out = env.run_script(&script, &["--continue", "--at", "9", "-p", "x"]);
    assert_eq!(out.status.code(), Some(1));
    expect_test::expect![[r#"
        xcsh: error: entry 9 is inside a run (the decisions it led to come after it); continue from a settled boundary instead: entry 0 (the session start) or entry 10 (where this run finished)
    "#]].assert_eq(&stderr(&out));
}

#[test]
fn a_bad_script_line_is_named_with_its_file_and_line() {
    let env = Env::new();
    let script = env.script("bad.jsonl", &[FINAL_STEP, r#"{"text": 5}"#]);
    let out = env.run_script(&script, &["-p", "x"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_contains(
        &err,
        "bad.jsonl:2: not a faux script step: invalid type: integer `5`",
    );
}

#[test]
fn readonly_denies_a_scripted_write_and_records_the_denial() {
    let env = Env::new();
    let script = env.script(
        "w.jsonl",
        &[
            r#"{"tool_calls":[{"name":"write","arguments":{"path":"new.txt","content":"hi"}}]}"#,
            r#"{"text":"could not write"}"#,
        ],
    );
    let out = env.run_standard(
        &script,
        &["--permissions", "readonly", "-p", "write a file"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !env.workspace().join("new.txt").exists(),
        "the file system is untouched"
    );
    let log = normalized(&env.sessions()[0]);
    let approval = log.iter().find(|e| e["type"] == "approval").unwrap();
    assert_eq!(
        approval["data"],
        serde_json::json!({"call_id": "call_1_1", "tool": "write", "verdict": "deny", "by": "policy_readonly"})
    );
    let result = log
        .iter()
        .find(|e| e["type"] == "synthetic_result")
        .unwrap();
    assert_eq!(result["data"]["reason"], "denied");
    assert_eq!(
        result["data"]["content"],
        "denied: this session is read-only (--permissions readonly), so `write` was not run"
    );
}

/// A view given no SESSION shows this workspace's newest session, the one
/// `--continue` continues; a workspace without any says so and where to look.
#[test]
fn a_view_without_a_session_shows_the_workspaces_newest() {
    let env = Env::new();
    let script = env.script("s.jsonl", &[FINAL_STEP]);
    for prompt in ["first", "second"] {
        let out = env.run_script(&script, &["-p", prompt]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let newest = env.sessions().pop().unwrap();
    let newest = newest.to_str().unwrap();
    for view in [
        &["log"][..],
        &["tree"],
        &["stats"],
        &["export", "--format", "md"],
    ] {
        let named = [view, &[newest]].concat();
        assert_eq!(env.ok(view), env.ok(&named), "{view:?}");
    }
    assert_contains(&env.ok(&["log"]), "second");
    let empty = env.subdir("elsewhere");
    let out = env.run_in(&empty, &["log"]);
    assert_eq!(
        (out.status.code(), stderr(&out)),
        (
            Some(1),
            format!(
                "xcsh: error: no SESSION given, and this workspace ({}) has none: name one (`xcsh sessions --all` lists every workspace's)\n",
                empty.display()
            )
        )
    );
}
