//! `xcsh replay` through the real binary: every fixture in `fixtures/sessions/`
//! replays clean; altered copies are reported at exactly the right entry; `--set`
//! replays under a changed limit; `--until` shows the machine's state; a directory
//! gives a table; `--minimize` cuts a 40-step session to a few steps.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use support::assert_contains;
use support::env::{Env, fixture, fixtures, stderr, stdout};
use xcsh_log::{Body, Record, read_session};
use xcsh_machine::{Decision, EntryId, RunEnd};

/// An edit for [`altered`]: the `tool_dispatched` entry `target` with other
/// `arguments`, every other entry as it was.
fn with_arguments(
    target: EntryId,
    arguments: &'static str,
) -> impl FnMut(&xcsh_log::Entry) -> Option<Body> {
    move |e| match &e.body {
        Body::Decision(Decision::ToolDispatched { step, call }) if e.id == target => {
            let mut call = call.clone();
            call.arguments = arguments.into();
            Some(Body::Decision(Decision::ToolDispatched {
                step: *step,
                call,
            }))
        }
        other => Some(other.clone()),
    }
}

/// `xcsh replay ARGS` with a home of its own.
fn replay(args: &[&str]) -> Output {
    Env::new().run(&[&["replay"], args].concat())
}

/// `xcsh replay ARGS --json`, which must exit with `code`: its JSON.
fn replay_json(args: &[&str], code: i32) -> serde_json::Value {
    let out = replay(&[args, &["--json"]].concat());
    assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
    json(&out)
}

/// `out` ended with `code` (else its stdout and stderr are shown).
fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}{}",
        stdout(out),
        stderr(out)
    );
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(stdout(o).trim()).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

/// Replaces `path` by SESSION and every `in N ms` by `in _ ms`.
fn scrub(text: &str, path: &Path) -> String {
    support::untimed(&text.replace(&path.display().to_string(), "SESSION"))
}

const FIXTURES: [&str; 15] = [
    "memory",
    "plain",
    "tool-rounds",
    "parallel-tools",
    "steer",
    "follow-up",
    "interrupt",
    "length-stop",
    "budget-stop",
    "compaction",
    "branch-at",
    "provider-error",
    "ten-steps",
    "fork",
    "plan",
];

fn replays_clean(name: &str) {
    let path = fixture(name);
    let out = replay(&[path.to_str().unwrap()]);
    assert_exit(&out, 0);
    assert!(
        stdout(&out).ends_with(", no divergence\n"),
        "{}",
        stdout(&out)
    );
}

macro_rules! fixtures_replay_clean {
    ($($test:ident => $name:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            replays_clean($name);
        }
    )*};
}

fixtures_replay_clean! {
    fixture_plain_replays_clean => "plain",
    fixture_tool_rounds_replays_clean => "tool-rounds",
    fixture_parallel_tools_replays_clean => "parallel-tools",
    fixture_steer_replays_clean => "steer",
    fixture_follow_up_replays_clean => "follow-up",
    fixture_interrupt_replays_clean => "interrupt",
    fixture_length_stop_replays_clean => "length-stop",
    fixture_budget_stop_replays_clean => "budget-stop",
    fixture_compaction_replays_clean => "compaction",
    fixture_branch_at_replays_clean => "branch-at",
    fixture_provider_error_replays_clean => "provider-error",
    fixture_ten_steps_replays_clean => "ten-steps",
    fixture_fork_replays_clean => "fork",
    fixture_plan_replays_clean => "plan",
    fixture_memory_replays_clean => "memory",
}

#[test]
fn every_fixture_session_is_listed_and_shows_what_its_name_says() {
    let mut on_disk: Vec<String> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".jsonl").map(str::to_owned))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = FIXTURES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
    let types = |name: &str| -> Vec<String> {
        read_session(&fixture(name))
            .unwrap()
            .entries
            .iter()
            .map(|e| e.type_name().to_string())
            .collect()
    };
    let finished = |name: &str| -> String {
        let log = read_session(&fixture(name)).unwrap();
        let last = log
            .entries
            .iter()
            .rev()
            .find_map(|e| match &e.body {
                Body::Decision(Decision::RunFinished(RunEnd { reason, .. })) => {
                    Some(reason.clone())
                }
                _ => None,
            })
            .unwrap();
        serde_json::to_value(last).unwrap()["kind"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let count = |name: &str, ty: &str| types(name).iter().filter(|t| *t == ty).count();
    assert_eq!(finished("plain"), "completed");
    assert!(count("tool-rounds", "tool_result") >= 4 && count("tool-rounds", "approval") >= 1);
    assert_eq!(count("parallel-tools", "tool_dispatched"), 3);
    assert_eq!(count("steer", "steer"), 1);
    assert_eq!(count("steer", "delivered"), 1);
    assert_eq!(count("follow-up", "follow_up"), 1);
    assert_eq!(count("follow-up", "delivered"), 1);
    assert_eq!(finished("interrupt"), "interrupted");
    assert_eq!(count("interrupt", "interrupt"), 1);
    assert_eq!(finished("length-stop"), "output_limit");
    assert_eq!(finished("budget-stop"), "max_tokens");
    assert_eq!(count("compaction", "compacted"), 1);
    assert_eq!(count("branch-at", "branch"), 1);
    assert_eq!(finished("provider-error"), "provider_error");
    assert_eq!(count("ten-steps", "step_started"), 10);
    // A fork: the copied run (ids kept), a label naming the origin, a second run.
    assert_eq!(count("fork", "user_message"), 2);
    assert_eq!(count("fork", "label"), 1);
    // Memory over two turns: an index before each prompt, an extraction after each,
    // and the notes each wrote.
    assert_eq!(count("memory", "memory_index"), 2);
    assert_eq!(count("memory", "memory_extraction"), 2);
    assert_eq!(count("memory", "memory_snapshot"), 2);
    // The plan: four `plan` calls on the first branch (one of them broken), one on the
    // branch made with `--at`.
    assert_eq!(count("plan", "branch"), 1);
    let plan_calls = read_session(&fixture("plan"))
        .unwrap()
        .entries
        .iter()
        .filter(|e| matches!(&e.body, Body::Decision(Decision::ToolDispatched { call, .. }) if call.name == "plan"))
        .count();
    assert_eq!(plan_calls, 5);
}

/// The memory index a turn carried is part of what its steps decided on: another
/// index (here its hash, as if a note had changed) is a divergence at the turn's
/// first `step_started` (SPEC.md §28.4).
#[test]
fn another_memory_index_diverges_at_the_first_step_of_its_turn() {
    let dir = tempfile::tempdir().unwrap();
    // memory: 12 is the second turn's `memory_index`, 14 that turn's first step.
    let path = altered(dir.path(), "memory", |e| match &e.body {
        Body::Record(xcsh_log::Record::MemoryIndex(m)) if e.id == EntryId(12) => {
            let mut m = m.clone();
            m.hash = "0".repeat(64);
            Some(Body::Record(xcsh_log::Record::MemoryIndex(m)))
        }
        _ => Some(e.body.clone()),
    });
    divergence_at(&path, 14, "step_started", "decision_differs");
}

/// `xcsh replay PATH --json` finds `path` diverged at `entry`, a `entry_type`, in
/// the way `kind`; the divergence.
fn divergence_at(path: &Path, entry: u64, entry_type: &str, kind: &str) -> serde_json::Value {
    let v = replay_json(&[path.to_str().unwrap()], 1);
    assert_eq!(v["result"], "diverged");
    let d = v["divergence"].clone();
    assert_eq!(
        (&d["entry"], &d["entry_type"], &d["kind"]),
        (
            &serde_json::json!(entry),
            &serde_json::json!(entry_type),
            &serde_json::json!(kind)
        ),
        "{d}"
    );
    d
}

/// A copy of fixture `name` in `dir`, rewritten through a fresh writer (valid hashes,
/// ids re-numbered) with `edit` applied to each entry.
fn altered(dir: &Path, name: &str, edit: impl FnMut(&xcsh_log::Entry) -> Option<Body>) -> PathBuf {
    let out = dir.join(format!("{name}-altered.jsonl"));
    let log = read_session(&fixture(name)).unwrap();
    xcsh_replay::rewrite::rewrite(&log, &out, edit).unwrap();
    out
}

#[test]
fn an_altered_decision_is_reported_at_exactly_that_entry() {
    let dir = tempfile::tempdir().unwrap();
    // steer: 4 is the `tool_dispatched` of the sleep call.
    let path = altered(
        dir.path(),
        "steer",
        with_arguments(EntryId(4), r#"{"ms":30}"#),
    );
    let d = divergence_at(&path, 4, "tool_dispatched", "decision_differs");
    assert_eq!(d["after_input"], 3);

    let text = replay(&[path.to_str().unwrap()]);
    assert_eq!(text.status.code(), Some(1));
    expect_test::expect![[r#"
        SESSION: diverged at entry 4 (line 5, tool_dispatched)
          the machine re-made a different decision than the one recorded
          input:  entry 3 (line 4, step): step 1 "Running the slow check." calls sleep completed
          phase:  running 1 tool call(s) of step 1
          tool_dispatched differs in call.arguments (decision 1 after the input):
            --- recorded
            +++ re-made
            @@ -5,7 +5,7 @@
                 "call": {
                   "id": "call_1_1",
                   "name": "sleep",
            -      "arguments": "{\"ms\":30}"
            +      "arguments": "{\"ms\":300}"
                 }
               }
             }
          path to it (the last 5 entries of the branch):
                0  session          SESSION_ID WORKSPACE
                1  user_message     "Run the slow check."
                2  step_started     step 1 with 1 message(s)
                3  step             step 1 "Running the slow check." calls sleep completed
          >     4  tool_dispatched  step 1 call_1_1 sleep {"ms":30}
          5 entries replayed (2 inputs, 2 decisions) in _ ms before diverging
    "#]]
    .assert_eq(&scrub_header(&scrub(&stdout(&text), &path), &path));
}

/// Replaces the session header's id and workspace (they differ per generation).
fn scrub_header(text: &str, path: &Path) -> String {
    let log = read_session(path).unwrap();
    let h = log.header();
    text.replace(&h.session_id, "SESSION_ID")
        .replace(&h.cwd, "WORKSPACE")
}

#[test]
fn an_altered_input_payload_is_reported_at_the_decision_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    // steer: 6 is the sleep's `tool_result`; its content is in the context of step 2,
    // whose `step_started` (8, after `delivered` 7) no longer matches.
    let path = altered(dir.path(), "steer", |e| match &e.body {
        Body::Record(Record::ToolResult(r)) if e.id == EntryId(6) => {
            let mut r = r.clone();
            r.outcome.content = "slept 3 ms".into();
            Some(Body::Record(Record::ToolResult(r)))
        }
        other => Some(other.clone()),
    });
    let d = divergence_at(&path, 8, "step_started", "decision_differs");
    assert_eq!(d["after_input"], 6);
    assert_eq!(d["input"]["type"], "tool_result");
    assert_eq!(d["decision_index"], 1, "`delivered` (7) still matches");
}

#[test]
fn a_dropped_entry_is_reported_where_the_log_goes_on_without_it() {
    let dir = tempfile::tempdir().unwrap();
    // steer: drop the `tool_result` (6); the `delivered` after it (now 6) records a
    // decision the machine, still waiting for the sleep, does not make.
    let path = altered(dir.path(), "steer", |e| {
        (e.id != EntryId(6)).then(|| e.body.clone())
    });
    let d = divergence_at(&path, 6, "delivered", "unexpected_decision");
    assert_eq!(d["after_input"], 5, "the steer was the last input");
}

#[test]
fn set_max_steps_4_on_a_ten_step_session_diverges_at_the_decision_after_step_4() {
    let path = fixture("ten-steps");
    let v = replay_json(&[path.to_str().unwrap(), "--set", "max_steps=4"], 1);
    let d = &v["divergence"];
    assert_eq!(d["kind"], "decision_differs");
    assert_eq!(d["recorded"]["type"], "step_started");
    assert_eq!(d["recorded"]["data"]["step"], 5);
    assert_eq!(d["remade"]["type"], "run_finished");
    assert_eq!(d["remade"]["data"]["reason"]["kind"], "max_steps");
    assert_eq!(d["remade"]["data"]["steps"], 4);
    assert_eq!(d["input"]["type"], "tool_result");
    assert_eq!(d["phase_kind"], "finished");
    assert_eq!(v["set"], serde_json::json!({"max_steps": 4}));
    // The recorded limits are used otherwise: the same session replays clean.
    assert_eq!(replay(&[path.to_str().unwrap()]).status.code(), Some(0));
}

#[test]
fn set_rejects_an_unknown_key_naming_the_known_ones() {
    let out = replay(&[fixture("plain").to_str().unwrap(), "--set", "max_stepz=4"]);
    assert_eq!(out.status.code(), Some(2), "a wrong command line");
    expect_test::expect![[r#"
        xcsh: error: --set max_stepz=4: unknown key `max_stepz` (known: max_steps, max_tokens, max_output_tokens, compact_at_tokens, permissions)
    "#]]
    .assert_eq(&stderr(&out));
}

#[test]
fn until_prints_the_machine_state_at_that_entry() {
    let path = fixture("steer");
    // 5 is the steer: queued while the sleep runs.
    let out = replay(&[path.to_str().unwrap(), "--until", "5"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    expect_test::expect![[r#"
        SESSION: state after entry 5 (line 6, steer): "Also look at the README."
          phase:    running 1 tool call(s) of step 1
          run:      1 step(s), 1 in this window; spent 220 tokens (200 in / 20 out); last input 200 tokens; 0 compaction(s)
          limits:   max_steps=32, max_tokens=400000, max_output_tokens=8192, compact_at_tokens=150000, permissions=yolo; tools echo, sleep
          pending:  steers "Also look at the README."; follow-ups none
          context:  2 message(s), hash ba2e0ecd; the last 2:
            #0   user               -          "Run the slow check."
            #1   assistant          entry 3    "Running the slow check." + sleep {"ms":300}
          owed:     nothing (every decision made so far is in the log up to here)
          6 entries replayed (3 inputs, 2 decisions) in _ ms
    "#]]
    .assert_eq(&scrub(&stdout(&out), &path));
    // After the tool result, the machine has delivered the steer and started step 2:
    // decisions it made that the log records after that entry.
    let out = replay(&[path.to_str().unwrap(), "--until", "6", "--json"]);
    let state = &json(&out)["state"];
    assert_eq!(state["phase_kind"], "streaming");
    assert_eq!(state["pending"]["steers"], serde_json::json!([]));
    assert_eq!(state["owed"][0]["type"], "delivered");
    assert_eq!(state["owed"][1]["type"], "step_started");
    assert_eq!(state["context"]["messages"], 4);
}

#[test]
fn until_an_entry_of_another_branch_is_refused() {
    let path = fixture("branch-at");
    // branch-at: entries 5..=8 are the second run, left behind by the branch at 4.
    let out = replay(&[path.to_str().unwrap(), "--until", "6"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_contains(&err, "entry 6 is not on the branch that ends at entry 13");
    // The old branch itself replays clean from its own leaf.
    let out = replay(&[path.to_str().unwrap(), "--leaf", "8"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn a_directory_is_replayed_into_a_table_and_fails_on_a_divergence() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("saved");
    std::fs::create_dir_all(sessions.join("nested")).unwrap();
    for name in ["plain", "steer", "interrupt"] {
        std::fs::copy(fixture(name), sessions.join(format!("{name}.jsonl"))).unwrap();
    }
    altered(
        &sessions.join("nested"),
        "steer",
        with_arguments(EntryId(4), r#"{"ms":30}"#),
    );
    std::fs::write(sessions.join("broken.jsonl"), "{\"v\":1}\n").unwrap();
    let out = replay(&[sessions.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    expect_test::expect![[r#"
        ┌────────────────────────────┬─────────┬──────────┬────────────────────────────────────────────────────────────────────────┐
        │ session                    ┆ entries ┆ result   ┆ first divergence                                                       │
        ╞════════════════════════════╪═════════╪══════════╪════════════════════════════════════════════════════════════════════════╡
        │ broken.jsonl               ┆ -       ┆ FAILED   ┆ broken.jsonl:1: malformed entry: the line has no trailing "hash" field │
        │ interrupt.jsonl            ┆ 8       ┆ ok       ┆                                                                        │
        │ nested/steer-altered.jsonl ┆ 11      ┆ DIVERGED ┆ entry 4 (tool_dispatched): tool_dispatched differs in call.arguments   │
        │ plain.jsonl                ┆ 5       ┆ ok       ┆                                                                        │
        │ steer.jsonl                ┆ 11      ┆ ok       ┆                                                                        │
        └────────────────────────────┴─────────┴──────────┴────────────────────────────────────────────────────────────────────────┘
        5 session(s): 3 ok, 1 diverged, 1 failed
    "#]]
    .assert_eq(&stdout(&out));
    let out = replay(&[sessions.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let results: Vec<(String, String)> = stdout(&out)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["session"].as_str().unwrap().to_string(),
                v["result"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            ("broken.jsonl", "failed"),
            ("interrupt.jsonl", "ok"),
            ("nested/steer-altered.jsonl", "diverged"),
            ("plain.jsonl", "ok"),
            ("steer.jsonl", "ok"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
}

/// Runs the faux provider over `steps` tool steps (one `echo` each) and a final
/// answer with the real binary; returns the session file.
fn record_tool_steps(env: &Env, steps: u32) -> PathBuf {
    let script: Vec<String> = (1..=steps)
        .map(|i| {
            format!(
                r#"{{"text":"Step {i}.","tool_calls":[{{"name":"echo","arguments":{{"step":{i}}}}}],"usage":{{"input":{},"output":5}}}}"#,
                100 + i
            )
        })
        .chain([r#"{"text":"All steps done."}"#.into()])
        .collect();
    let script_path = env.file("steps.jsonl", &script.join("\n"));
    let max = (steps + 1).to_string();
    let out = env.run_script(
        &script_path,
        &["--max-steps", &max, "-p", "take many steps"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    env.session()
}

fn steps_in(path: &Path) -> usize {
    read_session(path)
        .unwrap()
        .entries
        .iter()
        .filter(|e| matches!(e.body, Body::Decision(Decision::StepStarted { .. })))
        .count()
}

/// (kind, recorded type, re-made type, phase kind) of a `--json` divergence.
fn signature(v: &serde_json::Value) -> [serde_json::Value; 4] {
    let d = &v["divergence"];
    [
        d["kind"].clone(),
        d["recorded"]["type"].clone(),
        d["remade"]["type"].clone(),
        d["phase_kind"].clone(),
    ]
}

#[test]
fn minimize_cuts_a_40_step_session_with_an_altered_late_decision_to_a_few_steps() {
    let env = Env::new();
    let original = record_tool_steps(&env, 40);
    assert_eq!(steps_in(&original), 41);
    let log = read_session(&original).unwrap();
    let target = log
        .entries
        .iter()
        .find(|e| {
            matches!(&e.body, Body::Decision(Decision::ToolDispatched { step, .. }) if step.0 == 37)
        })
        .unwrap()
        .id;
    let diverging = env.dir.path().join("diverging.jsonl");
    xcsh_replay::rewrite::rewrite(&log, &diverging, with_arguments(target, r#"{"step":370}"#))
        .unwrap();
    let before = replay_json(&[diverging.to_str().unwrap()], 1);
    assert_eq!(before["divergence"]["entry"], target.0);

    let small = env.dir.path().join("small.jsonl");
    let out = replay(&[
        diverging.to_str().unwrap(),
        "--minimize",
        "-o",
        small.to_str().unwrap(),
    ]);
    assert_exit(&out, 0);
    assert!(steps_in(&small) <= 5, "{} steps", steps_in(&small));
    let after = replay_json(&[small.to_str().unwrap()], 1);
    assert_eq!(signature(&after), signature(&before));
    // The altered arguments are what still differs.
    assert_eq!(
        after["divergence"]["recorded"]["data"]["call"]["arguments"],
        r#"{"step":370}"#
    );
    assert_eq!(
        after["divergence"]["remade"]["data"]["call"]["arguments"],
        r#"{"step":37}"#
    );
    let first = stdout(&out).lines().next().unwrap().to_string();
    assert_eq!(
        first
            .replace(&diverging.display().to_string(), "IN")
            .replace(&small.display().to_string(), "OUT")
            .split("; ")
            .next()
            .unwrap(),
        "minimized IN (165 entries, 1 run(s), 41 step(s), 40 tool call(s)) to OUT (5 entries, 1 run(s), 1 step(s), 1 tool call(s))"
    );
}

#[test]
fn minimize_under_set_max_steps_keeps_the_divergence_that_setting_causes() {
    let env = Env::new();
    let original = record_tool_steps(&env, 40);
    let small = env.dir.path().join("small.jsonl");
    let args = [original.to_str().unwrap(), "--set", "max_steps=4"];
    let before = replay(&[&args[..], &["--json"]].concat());
    assert_eq!(before.status.code(), Some(1), "{}", stderr(&before));
    let before = json(&before);
    let out = replay(&[&args[..], &["--minimize", "-o", small.to_str().unwrap()]].concat());
    assert_exit(&out, 0);
    assert!(steps_in(&small) <= 5, "{} steps", steps_in(&small));
    let after = replay(&[small.to_str().unwrap(), "--set", "max_steps=4", "--json"]);
    assert_eq!(after.status.code(), Some(1));
    assert_eq!(signature(&json(&after)), signature(&before));
    // Its own recorded limits replay clean: the setting is what diverges.
    assert_eq!(replay(&[small.to_str().unwrap()]).status.code(), Some(0));
}

#[test]
fn a_bad_user_script_line_is_named_with_its_file_and_line() {
    let env = Env::new();
    let script = env.file(
        "user.jsonl",
        "{\"after\":\"tool_call\",\"steer\":\"a\"}\n{\"after\":\"tool_call\",\"steer\":\"a\",\"interrupt\":true}\n",
    );
    let plain = fixtures().join("../scripts/sessions/plain.jsonl");
    let out = env.run_script(
        &plain,
        &["--user-script", script.to_str().unwrap(), "-p", "x"],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out).replace(&script.display().to_string(), "USER");
    assert_eq!(
        err,
        "xcsh: error: USER:2: a command is exactly one of \"steer\", \"follow_up\" or \"interrupt\": true\n"
    );
}

/// `tool-rounds` as a crash leaves it: its last line (`run_finished`) cut 40 bytes
/// short, with no newline.
#[test]
fn a_torn_log_is_a_run_cut_off_naming_the_torn_line_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("torn.jsonl");
    let bytes = std::fs::read(fixture("tool-rounds")).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 40]).unwrap();
    let out = replay(&[path.to_str().unwrap()]);
    assert_exit(&out, 0);
    expect_test::expect![[r#"
        SESSION: the run was cut off (no run_finished): 28 entries replayed (13 inputs, 14 decisions) in _ ms, no divergence
          the branch ends at entry 27 (line 28, step): step 6 "notes.txt says the project builds with …" completed
          not written: the decisions the machine makes after it (the process ended first):
            run_finished completed after 6 step(s), 4334 tokens
          continuing the session (--continue, --resume) records them and recovers the run
        SESSION:29: the last line is torn (215 bytes without a newline, a write a crash cut short): not replayed
    "#]]
    .assert_eq(&scrub(&stdout(&out), &path));
}
