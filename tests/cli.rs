//! The real `xcsh` binary: determinism of logs, crash recovery after SIGKILL, the
//! single-writer lock, branching with `--at`, and clear errors for bad input.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_xcsh");

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn workspace(&self) -> PathBuf {
        let w = self.dir.path().join("work");
        std::fs::create_dir_all(&w).unwrap();
        w
    }

    fn script(&self, name: &str, lines: &[&str]) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, lines.join("\n")).unwrap();
        path
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args);
        if args.first() == Some(&"run") && !args.contains(&"--tools") {
            // The scripts here call the test tools `echo` and `sleep`.
            c.args(["--tools", "test"]);
        }
        c.current_dir(self.workspace())
            .env("XCSH_HOME", self.home())
            .env_remove("NO_COLOR")
            .stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    fn sessions(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for dir in std::fs::read_dir(self.home().join("sessions")).unwrap() {
            for f in std::fs::read_dir(dir.unwrap().path()).unwrap() {
                let p = f.unwrap().path();
                if p.extension().is_some_and(|e| e == "jsonl") {
                    out.push(p);
                }
            }
        }
        out.sort();
        out
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

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
    let script = script.to_str().unwrap();
    for _ in 0..2 {
        let out = env.run(&["run", "--script", script, "-p", "do it"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "all done\n");
    }
    let sessions = env.sessions();
    assert_eq!(sessions.len(), 2);
    let (a, b) = (normalized(&sessions[0]), normalized(&sessions[1]));
    assert_eq!(a.len(), 11);
    assert_eq!(a, b);
}

/// Starts a slow run with `--json` and returns it once the first text delta of its
/// last step (the slow one) is out.
fn start_streaming(env: &Env, args: &[&str], step: u64) -> (Child, PathBuf) {
    let mut child = env
        .cmd(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let mut path = None;
    for line in lines.by_ref() {
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        if v["type"] == "run_started" {
            path = Some(PathBuf::from(v["session_path"].as_str().unwrap()));
        }
        if v["type"] == "text_delta" && v["step"] == step {
            break;
        }
    }
    // Keep draining stdout so the child never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (child, path.unwrap())
}

const SLOW_STEP: &str = r#"{"text":"this answer streams slowly, twelve bytes a chunk, for a long while","chunk_delay_ms":200}"#;

#[test]
fn sigkill_while_streaming_then_continue_repairs_and_goes_on() {
    let env = Env::new();
    let slow = env.script("slow.jsonl", &[TOOL_STEP, SLOW_STEP]);
    let (mut child, path) = start_streaming(
        &env,
        &["run", "--json", "--script", slow.to_str().unwrap(), "go"],
        2,
    );
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
    let out = env.run(&[
        "run",
        "--continue",
        "--script",
        next.to_str().unwrap(),
        "-p",
        "again",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("repaired a torn last line: 37 byte(s)"),
        "{err}"
    );
    assert!(
        err.contains("the previous run ended without finishing (step 2 streaming)"),
        "{err}"
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
        "recovered run_finished user_message step_started step run_finished"
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
    let (mut child, path) = start_streaming(
        &env,
        &["run", "--json", "--script", slow.to_str().unwrap(), "go"],
        1,
    );
    let out = env.run(&[
        "run",
        "--resume",
        path.to_str().unwrap(),
        "--script",
        slow.to_str().unwrap(),
        "-p",
        "x",
    ]);
    let pid = child.id();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("is already being written by pid "), "{err}");
    assert!(err.contains(&format!("pid {pid} ")), "{err}");
}

#[test]
fn at_an_earlier_entry_continues_on_a_new_branch_in_the_same_file() {
    let env = Env::new();
    let one = env.script("one.jsonl", &[FINAL_STEP]);
    let one = one.to_str().unwrap();
    assert!(
        env.run(&["run", "--script", one, "-p", "first"])
            .status
            .success()
    );
    assert!(
        env.run(&["run", "--continue", "--script", one, "-p", "second"])
            .status
            .success()
    );
    let path = env.sessions().pop().unwrap();
    // Entries: 0 session, 1 prompt, 2 started, 3 step, 4 finished, then the second turn.
    let out = env.run(&[
        "run",
        "--resume",
        path.to_str().unwrap(),
        "--at",
        "4",
        "--script",
        one,
        "-p",
        "instead",
    ]);
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
    let script = script.to_str().unwrap();
    assert!(
        env.run(&["run", "--script", script, "-p", "first"])
            .status
            .success()
    );
    let out = env.run(&[
        "run",
        "--continue",
        "--at",
        "3",
        "--script",
        script,
        "-p",
        "x",
    ]);
    assert_eq!(out.status.code(), Some(1));
    expect_test::expect![[r#"
        xcsh: error: entry 3 is inside a run (2 tool call(s) of step 1 running); continue from a settled boundary instead: entry 0 (the session start) or entry 10 (where this run finished)
    "#]]
    .assert_eq(&stderr(&out));
    // The last step settled the run, but its `run_finished` comes after it.
    let out = env.run(&[
        "run",
        "--continue",
        "--at",
        "9",
        "--script",
        script,
        "-p",
        "x",
    ]);
    assert_eq!(out.status.code(), Some(1));
    expect_test::expect![[r#"
        xcsh: error: entry 9 is inside a run (the decisions it led to come after it); continue from a settled boundary instead: entry 0 (the session start) or entry 10 (where this run finished)
    "#]].assert_eq(&stderr(&out));
}

#[test]
fn a_bad_script_line_is_named_with_its_file_and_line() {
    let env = Env::new();
    let script = env.script("bad.jsonl", &[FINAL_STEP, r#"{"text": 5}"#]);
    let out = env.run(&["run", "--script", script.to_str().unwrap(), "-p", "x"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("bad.jsonl:2: not a faux script step: invalid type: integer `5`"),
        "{err}"
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
    let out = env.run(&[
        "run",
        "--tools",
        "standard",
        "--permissions",
        "readonly",
        "--script",
        script.to_str().unwrap(),
        "-p",
        "write a file",
    ]);
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
