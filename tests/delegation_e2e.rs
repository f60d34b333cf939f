//! Delegation through the real binary (SPEC §29): `xcsh run --delegate` over a faux
//! script that serves a family. A parent's `task` calls start sub-agents, each in a
//! session file of its own linked both ways; a failing child is the parent's tool
//! error; an interrupt (SIGINT) during two running sub-agents settles all three runs
//! as interrupted and leaves no process; a `kill -9` mid delegation is recovered for
//! parent and children alike by `--continue`. The sub-agents block in bash on a FIFO
//! the test holds: opening it for writing returns once the child's `cat` has opened
//! it, so the test knows both children are running without waiting a set time.

mod support;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use support::env::{Env, fixtures, from_file, lines, stderr};
use xcsh_tools::testing::processes_holding;

/// The parent session (its header names no parent) and the children, each in file
/// name order.
fn family(env: &Env) -> (PathBuf, Vec<PathBuf>) {
    let (children, parents): (Vec<PathBuf>, Vec<PathBuf>) = env
        .sessions()
        .into_iter()
        .partition(|p| lines(p)[0]["data"].get("parent").is_some());
    assert_eq!(parents.len(), 1, "{parents:?}");
    (parents[0].clone(), children)
}

/// The entries of a session as `id type` lines, with what matters of each (a tool
/// result's call, status and child; a run's end; a recovery's note), session ids
/// replaced by `names`.
fn outline(path: &Path, names: &[(String, &str)]) -> String {
    let mut out = String::new();
    for l in lines(path) {
        let data = &l["data"];
        let what = match l["type"].as_str().unwrap() {
            "session" => match data.get("parent") {
                Some(p) => format!(
                    "parent={} entry={} call={}",
                    p["session_id"].as_str().unwrap(),
                    p["entry"],
                    p["call_id"].as_str().unwrap()
                ),
                None => String::new(),
            },
            "tool_dispatched" => data["call"]["name"].as_str().unwrap().to_string(),
            "tool_result" => {
                let child = data
                    .get("child")
                    .map(|c| format!(" child={}", c["session_id"].as_str().unwrap()))
                    .unwrap_or_default();
                format!(
                    "{} {}{child}",
                    data["call_id"].as_str().unwrap(),
                    data["status"].as_str().unwrap()
                )
            }
            "synthetic_result" => format!(
                "{} {}",
                data["call"]["id"].as_str().unwrap(),
                data["reason"].as_str().unwrap()
            ),
            "run_finished" => data["reason"]["kind"].as_str().unwrap().to_string(),
            "recovered" => data["note"].as_str().unwrap().to_string(),
            _ => String::new(),
        };
        let mut line = format!("{} {} {what}", l["id"], l["type"].as_str().unwrap());
        for (id, name) in names {
            line = line.replace(id.as_str(), name);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The session id of a file (the id its name ends with).
fn id_of(path: &Path) -> String {
    support::env::session_id(path)
}

/// The names the outlines use for the parent and each child: `P`, `A`, `B` by the
/// description of the child's task (`a` or `b`, from its first user message).
fn names(parent: &Path, children: &[PathBuf]) -> Vec<(String, &'static str)> {
    let mut names = vec![(id_of(parent), "P")];
    for child in children {
        let prompt = lines(child)[1]["data"]["text"]
            .as_str()
            .unwrap()
            .to_string();
        names.push((id_of(child), if prompt.contains(" a") { "A" } else { "B" }));
    }
    names
}

#[test]
fn the_fixture_family_replays_clean_and_checks_clean() {
    let env = Env::new();
    let dir = fixtures().join("delegation");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 3, "{files:?}");
    for file in &files {
        env.assert_clean(file);
    }
}

/// The delegation fixture's script, run again: two sub-agents, one failing.
const TWO_ONE_FAILS: &str = "fixtures/scripts/sessions/delegation.jsonl";

#[test]
fn a_family_is_linked_both_ways_and_a_failing_child_is_the_parents_tool_error() {
    let env = Env::new();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(TWO_ONE_FAILS);
    let out = env
        .scripted(
            &script,
            &["--delegate", "-p", "Count the files and read the notes."],
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (parent, children) = family(&env);
    assert_eq!(children.len(), 2, "{children:?}");
    // The parent's tool results name the children; each child's header names the
    // parent's dispatch of its call.
    let parent_lines = lines(&parent);
    for result in parent_lines.iter().filter(|l| l["type"] == "tool_result") {
        let link = &result["data"]["child"];
        let file = parent
            .parent()
            .unwrap()
            .join(link["file"].as_str().unwrap());
        let header = &lines(&file)[0]["data"];
        let dispatch = parent_lines
            .iter()
            .find(|l| {
                l["type"] == "tool_dispatched"
                    && l["data"]["call"]["id"] == result["data"]["call_id"]
            })
            .unwrap();
        assert_eq!(
            (
                header["session_id"].clone(),
                header["parent"].clone(),
                link["session_id"].as_str().unwrap().to_string()
            ),
            (
                link["session_id"].clone(),
                serde_json::json!({
                    "session_id": id_of(&parent),
                    "entry": dispatch["id"],
                    "call_id": result["data"]["call_id"],
                }),
                id_of(&file)
            )
        );
        env.assert_clean(&file);
    }
    env.assert_clean(&parent);
    // The failing child is an error the parent's model reads, and the run goes on
    // to its answer.
    let results: Vec<(String, String)> = parent_lines
        .iter()
        .filter(|l| l["type"] == "tool_result")
        .map(|l| {
            let id = l["data"]["child"]["session_id"].as_str().unwrap();
            (
                l["data"]["status"].as_str().unwrap().to_string(),
                l["data"]["content"].as_str().unwrap().replace(id, "CHILD"),
            )
        })
        .collect();
    let count = "the sub-agent `count files` (session CHILD) completed, after 2 step(s) spending";
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].0, "ok");
    support::assert_starts_with(&results[0].1, count);
    assert!(
        results[0]
            .1
            .ends_with("Its final message:\n\nThere are 3 files.")
    );
    assert_eq!(
        results[1],
        (
            "error".to_string(),
            "error: the sub-agent `read notes` (session CHILD) failed: the provider failed: the provider is overloaded, after 1 step(s) spending 0 tokens. Its last message:\n\nReading the notes".to_string()
        )
    );
    let last = parent_lines.last().unwrap();
    assert_eq!(
        (
            last["type"].clone(),
            last["data"]["reason"]["kind"].clone(),
            last["data"]["steps"].clone()
        ),
        ("run_finished".into(), "completed".into(), 2.into())
    );
}

/// A script whose parent starts two sub-agents (`a`, `b`), each running `cat` on a
/// FIFO of its own in bash, then answers (if it gets that far).
fn blocking_script(env: &Env, fifos: &[PathBuf; 2]) -> PathBuf {
    let task = |agent: &str| {
        serde_json::json!({"name": "task", "arguments": {
            "description": agent,
            "prompt": format!("wait on {agent}"),
            "tools": ["bash"],
        }})
    };
    let wait = |agent: &str, fifo: &Path| {
        serde_json::json!({"agent": agent, "tool_calls": [{"name": "bash", "arguments": {
            "command": format!("cat {}", fifo.display()),
        }}]})
        .to_string()
    };
    let parent = serde_json::json!({"tool_calls": [task("a"), task("b")]}).to_string();
    env.script(
        "family.jsonl",
        &[
            &parent,
            &wait("a", &fifos[0]),
            &wait("b", &fifos[1]),
            r#"{"agent":"a","text":"never reached"}"#,
            r#"{"agent":"b","text":"never reached"}"#,
            r#"{"text":"never reached"}"#,
        ],
    )
}

/// Two FIFOs in the test's directory.
fn fifos(env: &Env) -> [PathBuf; 2] {
    ["a", "b"].map(|n| {
        let path = env.dir.path().join(format!("fifo-{n}"));
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path it is given.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        path
    })
}

/// Opens `fifo` for writing: returns once a reader (the child's `cat`) has opened
/// it; fails after 60 s without one (the run did not get there).
fn held(fifo: &Path) -> File {
    let (tx, rx) = std::sync::mpsc::channel();
    let path = fifo.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::OpenOptions::new().write(true).open(path));
    });
    rx.recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("no sub-agent opened {}", fifo.display()))
        .unwrap()
}

/// Starts `xcsh run --delegate ARGS` over the [`blocking_script`] of `fifos`.
fn start_family(env: &Env, fifos: &[PathBuf; 2], args: &[&str]) -> Child {
    let script = blocking_script(env, fifos);
    env.standard(&script, &[&["--delegate"], args].concat())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// In an [`Env::unsandboxed`] environment (the processes of a call are then
/// visible to the scan), starts the family run, sends it `signal` once
/// both sub-agents block in bash, and returns the environment and what the run
/// printed once it is over, its FIFOs closed (which ends the `cat`s, which outlive
/// a killed xcsh until then) and no process of it left.
fn signalled_mid_delegation(signal: i32) -> (Env, Output) {
    let env = Env::unsandboxed();
    let fifos = fifos(&env);
    let child = start_family(&env, &fifos, &["-p", "wait for both"]);
    let ends = [held(&fifos[0]), held(&fifos[1])];
    // SAFETY: kill sends a signal to the child this test started.
    assert_eq!(
        unsafe { libc::kill(libc::pid_t::try_from(child.id()).unwrap(), signal) },
        0
    );
    let out = child.wait_with_output().unwrap();
    drop(ends);
    assert_none_left(env.dir.path().to_str().unwrap());
    (env, out)
}

/// `xcsh run --continue -p "what happened?"` over a script answering `answer`,
/// which must exit with 0.
fn continue_answering(env: &Env, answer: &str) {
    let next = env.script("next.jsonl", &[answer]);
    let out = env
        .standard(&next, &["--continue", "-p", "what happened?"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// No process holds `needle` (bounded: a killed process may take a moment to go).
fn assert_none_left(needle: &str) {
    support::poll(
        Duration::from_secs(10),
        Duration::from_millis(20),
        || processes_holding(needle),
        Vec::is_empty,
        |left| format!("processes were left: {left:?}"),
    );
}

/// The sessions of a family of two children, the names the outlines give them, and
/// the children's outlines in order.
struct TwoChildren {
    parent: PathBuf,
    children: Vec<PathBuf>,
    names: Vec<(String, &'static str)>,
    outlines: Vec<String>,
}

fn two_children(env: &Env) -> TwoChildren {
    let (parent, children) = family(env);
    assert_eq!(children.len(), 2);
    let names = names(&parent, &children);
    let mut outlines: Vec<String> = children.iter().map(|c| outline(c, &names)).collect();
    outlines.sort();
    TwoChildren {
        parent,
        children,
        names,
        outlines,
    }
}

impl TwoChildren {
    /// The children's outlines are `A`'s (linked to the parent's entry 5, call 1)
    /// and `B`'s (entry 7, call 2): each its link, its prompt, the step asking for
    /// bash and its allowance, then `end`, in which `LINE` stands for the line of the
    /// parent's script that the child's call came from (2 for `A`, 3 for `B`).
    fn assert_children_end_with(&self, end: &str) {
        let child = |line: u32, entry: u32, call: u32| {
            format!(
                "0 session parent=P entry={entry} call=call_1_{call}
1 user_message
2 step_started
3 step
4 approval
5 tool_dispatched bash
{}",
                end.replace("LINE", &line.to_string())
            )
        };
        assert_eq!(self.outlines, [child(2, 5, 1), child(3, 7, 2)]);
    }

    /// Every session of the family replays and checks clean.
    fn assert_clean(&self, env: &Env) {
        for file in self.children.iter().chain([&self.parent]) {
            env.assert_clean(file);
        }
    }
}

/// How the parent's outline starts: its prompt, and the step asking for two `task`
/// calls and their allowances.
const PARENT_START: &str = "0 session
1 user_message
2 step_started
3 step
4 approval
5 tool_dispatched task
6 approval
7 tool_dispatched task
";

#[test]
fn an_interrupt_during_two_sub_agents_settles_all_three_runs_and_continue_works() {
    let (env, out) = signalled_mid_delegation(libc::SIGINT);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let family_of_two = two_children(&env);
    family_of_two.assert_children_end_with(
        "6 interrupt
7 tool_result call_LINE_1 cancelled
8 run_finished interrupted
",
    );
    let TwoChildren {
        parent,
        children,
        names,
        ..
    } = &family_of_two;
    assert_eq!(
        outline(parent, names),
        format!(
            "{PARENT_START}8 interrupt
9 tool_result call_1_1 cancelled child=A
10 tool_result call_1_2 cancelled child=B
11 run_finished interrupted
"
        )
    );
    family_of_two.assert_clean(&env);
    // `--continue` takes the parent (the children are newer, and skipped).
    continue_answering(&env, r#"{"text":"Both helpers were stopped."}"#);
    let last = lines(parent).pop().unwrap();
    assert_eq!(
        (last["type"].clone(), last["data"]["reason"]["kind"].clone()),
        ("run_finished".into(), "completed".into())
    );
    assert_eq!(&family(&env).1, children, "no new session was made");
    env.assert_clean(parent);
}

#[test]
fn a_crash_mid_delegation_is_recovered_for_parent_and_children_on_continue() {
    let (env, out) = signalled_mid_delegation(libc::SIGKILL);
    assert_eq!(out.status.code(), None, "killed: {}", stderr(&out));
    continue_answering(&env, r#"{"text":"Recovered."}"#);
    let family_of_two = two_children(&env);
    family_of_two.assert_children_end_with(
        "6 recovered the previous run ended without finishing (1 tool call(s) of step 1 running); unsettled work is settled now
7 synthetic_result call_LINE_1 lost
8 run_finished crashed
",
    );
    let TwoChildren {
        parent,
        children,
        names,
        ..
    } = &family_of_two;
    let parent_outline = outline(parent, names);
    let file = |name: &str| {
        let path = &children[names.iter().position(|(_, n)| *n == name).unwrap() - 1];
        path.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .replace(&id_of(path), name)
    };
    let expected_start = format!(
        "{PARENT_START}8 recovered the previous run ended without finishing (2 tool call(s) of step 1 running); unsettled work is settled now; the lost `task` call call_1_1 ran the sub-agent session A ({}), recovered too; the lost `task` call call_1_2 ran the sub-agent session B ({}), recovered too
9 synthetic_result call_1_1 lost
10 synthetic_result call_1_2 lost
11 run_finished crashed
12 provider
13 user_message
",
        file("A"),
        file("B")
    );
    assert!(
        parent_outline.starts_with(&expected_start),
        "{parent_outline}\n---\n{expected_start}"
    );
    assert!(
        parent_outline.ends_with("run_finished completed\n"),
        "{parent_outline}"
    );
    family_of_two.assert_clean(&env);
}

#[test]
fn sub_agents_run_within_the_concurrency_cap() {
    let env = Env::unsandboxed();
    let fifos = fifos(&env);
    let child = start_family(
        &env,
        &fifos,
        &["--max-parallel-tools", "1", "-p", "one at a time"],
    );
    // `a` runs; `b`, dispatched behind it, has not started: no session of its own.
    let a = held(&fifos[0]);
    assert_eq!(family(&env).1.len(), 1);
    drop(a);
    // Once `a` is done, `b` starts.
    drop(held(&fifos[1]));
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (parent, children) = family(&env);
    let names = names(&parent, &children);
    let ends: Vec<String> = children.iter().map(|c| outline(c, &names)).collect();
    for end in &ends {
        assert!(end.ends_with("run_finished completed\n"), "{end}");
    }
    let last = lines(&parent).pop().unwrap();
    assert_eq!(last["data"]["reason"]["kind"], "completed");
}

/// `delegate = true` in config.toml offers the `task` tool as `--delegate` does, and
/// `xcsh config` says where the setting came from; without either, no `task`.
#[test]
fn delegate_true_in_the_config_file_offers_the_task_tool() {
    let env = Env::new();
    let show = |env: &Env| support::env::stdout(&env.offline(&["--show-context", "fix it"]));
    assert!(!show(&env).contains("\"task\""));
    let file = env.config("delegate = true\n");
    assert!(show(&env).contains("\"name\": \"task\""), "{}", show(&env));
    assert_eq!(
        env.config_json()["delegate"],
        from_file(serde_json::json!(true), &file)
    );
}
