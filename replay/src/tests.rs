//! Replay over real logs made by the production journal (`Player`): clean logs replay clean; a changed
//! decision, a changed input payload, a dropped decision or changed limits are each
//! reported at the right entry.

use chrono::{DateTime, Utc};
use expect_test::expect;
use xcsh_journal::{Action, Journal, Player, TimedLog};
use xcsh_log::{
    Body, Record, SessionHeader, SessionLog, SessionWriter, StepRecord, TimedEvent,
    ToolResultRecord, read_session,
};
use xcsh_machine::{
    Assembled, CallId, Decision, EntryId, Limits, Machine, RunConfig, StepNo, StepOutcome,
    StreamEvent, ToolOutcome, ToolStatus,
};

use super::minimize::Signature;
use super::*;

fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-30T00:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn recorder(dir: &tempfile::TempDir, name: &str) -> Player {
    let header = SessionHeader {
        session_id: "t".into(),
        cwd: "/w".into(),
        forked_from: None,
        parent: None,
        imported: None,
        provider: None,
    };
    let writer = SessionWriter::create(&dir.path().join(name), header, t0()).unwrap();
    Player::new(
        Journal::new(Machine::new(), EntryId(0)),
        TimedLog::new(writer, t0()),
    )
}

fn step(n: u32, text: &str, calls: &[&str]) -> Record {
    let mut events = vec![TimedEvent {
        ms: 1,
        event: StreamEvent::TextDelta { text: text.into() },
    }];
    for (i, args) in calls.iter().enumerate() {
        let index = u32::try_from(i).unwrap();
        events.push(TimedEvent {
            ms: 2,
            event: StreamEvent::ToolCallStart {
                index,
                id: CallId(format!("c{n}{i}")),
                name: "echo".into(),
            },
        });
        events.push(TimedEvent {
            ms: 3,
            event: StreamEvent::ToolCallDelta {
                index,
                arguments: (*args).into(),
            },
        });
    }
    Record::Step(Box::new(StepRecord {
        step: StepNo(n),
        events,
        outcome: StepOutcome::Completed,
        message: Assembled::default(),
    }))
}

/// Plays `steps` (text, tool-call arguments) as one run, settling every tool call
/// the machine dispatches; a steer arrives during step 1. The log is in a new
/// temporary folder (returned with it).
fn record_run(limits: Limits, steps: &[(&str, &[&str])]) -> (tempfile::TempDir, SessionLog) {
    let dir = tempfile::tempdir().unwrap();
    let mut rec = recorder(&dir, "s.jsonl");
    let config = RunConfig {
        limits,
        tools: vec!["echo".into()],
        mutating: Vec::new(),
        permissions: xcsh_machine::Permissions::Yolo,
        estimate_bytes_per_token: 0,
        sandbox: None,
    };
    rec.record(Record::UserMessage {
        text: "go".into(),
        config,
    })
    .unwrap();
    rec.record(Record::Steer {
        text: "also this".into(),
    })
    .unwrap();
    for (i, (text, calls)) in steps.iter().enumerate() {
        let n = u32::try_from(i + 1).unwrap();
        let actions = rec.record(step(n, text, calls)).unwrap();
        for action in actions {
            if let Action::StartTool { call, .. } = action {
                rec.record(Record::ToolResult(Box::new(ToolResultRecord {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    outcome: ToolOutcome {
                        status: ToolStatus::Ok,
                        content: call.arguments.clone(),
                    },
                    duration_ms: 1,
                    changes: Vec::new(),
                    child: None,
                })))
                .unwrap();
            }
        }
        if !rec.machine().is_running() {
            break;
        }
    }
    let path = rec.log.writer.path().to_path_buf();
    drop(rec);
    let log = read_session(&path).unwrap();
    (dir, log)
}

/// Writes `log` anew (valid hashes), passing each body through `edit`; `None` drops it.
fn rewrite(
    dir: &tempfile::TempDir,
    log: &SessionLog,
    edit: impl Fn(EntryId, Body) -> Option<Body>,
) -> SessionLog {
    let path = dir.path().join("edited.jsonl");
    let mut writer = SessionWriter::create(&path, log.header().clone(), t0()).unwrap();
    let mut leaf = EntryId(0);
    for entry in &log.entries[1..] {
        if let Some(body) = edit(entry.id, entry.body.clone()) {
            leaf = writer.append(leaf, entry.ts, &body).unwrap().0;
        }
    }
    drop(writer);
    read_session(&path).unwrap()
}

fn three_tool_steps() -> Vec<(&'static str, &'static [&'static str])> {
    vec![
        ("one", &[r#"{"a":1}"#, r#"{"b":2}"#][..]),
        ("two", &[r#"{"c":3}"#][..]),
        ("three", &[r#"{"d":4}"#][..]),
        ("done", &[][..]),
    ]
}

fn diverge(log: &SessionLog) -> Divergence {
    match replay_branch(log, log.leaf()) {
        Err(ReplayError::Diverged(d)) => *d,
        other => panic!("expected a divergence, got {other:?}"),
    }
}

/// The id of the `n`th entry (from 0) whose body is `is`.
fn nth(log: &SessionLog, n: usize, is: impl Fn(&Body) -> bool) -> EntryId {
    log.entries
        .iter()
        .filter(|e| is(&e.body))
        .nth(n)
        .unwrap()
        .id
}

fn is_dispatch(b: &Body) -> bool {
    matches!(b, Body::Decision(Decision::ToolDispatched { .. }))
}

fn is_delivery(b: &Body) -> bool {
    matches!(b, Body::Decision(Decision::Delivered { .. }))
}

/// `log` rewritten with the dispatch `target` carrying `arguments`.
fn with_arguments(
    dir: &tempfile::TempDir,
    log: &SessionLog,
    target: EntryId,
    arguments: &str,
) -> SessionLog {
    rewrite(dir, log, |id, body| match body {
        Body::Decision(Decision::ToolDispatched { step, mut call }) if id == target => {
            call.arguments = arguments.into();
            Some(Body::Decision(Decision::ToolDispatched { step, call }))
        }
        other => Some(other),
    })
}

/// `edited` minimized into `min.jsonl`, which diverges as `edited` does; the
/// divergence of `edited` and the minimized log read back.
fn minimized(dir: &tempfile::TempDir, edited: &SessionLog) -> (Minimized, Divergence, SessionLog) {
    let before = diverge(edited);
    let out = dir.path().join("min.jsonl");
    let m = minimize(edited, edited.leaf(), &Overrides::default(), &out).unwrap();
    assert_eq!(Signature::of(&m.divergence), Signature::of(&before));
    let written = read_session(&out).unwrap();
    (m, before, written)
}

#[test]
fn a_recorded_run_replays_clean() {
    let (_dir, log) = record_run(Limits::default(), &three_tool_steps());
    let report = replay_branch(&log, log.leaf()).unwrap();
    assert_eq!(
        report,
        ReplayReport {
            entries: 21,
            inputs: 10,
            decisions: 10
        }
    );
}

#[test]
fn an_altered_decision_is_reported_at_its_entry_with_a_diff() {
    let (dir, log) = record_run(Limits::default(), &three_tool_steps());
    let target = nth(&log, 0, is_dispatch);
    let edited = with_arguments(&dir, &log, target, r#"{"a":999}"#);
    let d = diverge(&edited);
    assert_eq!(
        (d.kind, d.entry),
        (DivergenceKind::DecisionDiffers, Some(target))
    );
    expect![[r#"
        --- recorded
        +++ re-made
        @@ -5,7 +5,7 @@
             "call": {
               "id": "c10",
               "name": "echo",
        -      "arguments": "{\"a\":999}"
        +      "arguments": "{\"a\":1}"
             }
           }
         }
    "#]]
    .assert_eq(&d.diff);
}

#[test]
fn an_altered_input_payload_shows_at_the_decision_it_changes() {
    let (dir, log) = record_run(Limits::default(), &three_tool_steps());
    // Step 2's recorded stream now carries other arguments: the dispatch after it
    // (recorded with the old ones) no longer matches.
    let edited = rewrite(&dir, &log, |_, body| match body {
        Body::Record(Record::Step(mut s)) if s.step == StepNo(2) => {
            for e in &mut s.events {
                if let StreamEvent::ToolCallDelta { arguments, .. } = &mut e.event {
                    *arguments = r#"{"c":4}"#.into();
                }
            }
            Some(Body::Record(Record::Step(s)))
        }
        other => Some(other),
    });
    let d = diverge(&edited);
    let step2 = nth(
        &edited,
        0,
        |b| matches!(b, Body::Record(Record::Step(s)) if s.step == StepNo(2)),
    );
    assert_eq!(d.kind, DivergenceKind::DecisionDiffers);
    assert_eq!(d.entry, Some(EntryId(step2.0 + 1)));
    assert_eq!(d.after_input, Some(step2));
}

#[test]
fn a_dropped_decision_is_reported_where_the_log_goes_on_without_it() {
    let (dir, log) = record_run(Limits::default(), &three_tool_steps());
    let delivered = nth(&log, 0, is_delivery);
    let edited = rewrite(&dir, &log, |id, body| (id != delivered).then_some(body));
    let d = diverge(&edited);
    // The machine re-makes `delivered`; the log has `step_started` there instead.
    assert_eq!(
        (d.kind, d.entry),
        (DivergenceKind::DecisionDiffers, Some(delivered))
    );
    assert!(matches!(d.remade, Some(Decision::Delivered { .. })));
    assert!(matches!(d.recorded, Some(Decision::StepStarted { .. })));
}

#[test]
fn replay_uses_the_recorded_limits_and_a_changed_limit_diverges_after_that_step() {
    let steps: Vec<(&str, &[&str])> = (0..10).map(|_| ("s", &[r#"{}"#][..])).collect();
    let (dir, log) = record_run(Limits::default(), &steps);
    replay_branch(&log, log.leaf()).unwrap();
    let edited = rewrite(&dir, &log, |_, body| match body {
        Body::Record(Record::UserMessage { text, mut config }) => {
            config.limits.max_steps = 4;
            Some(Body::Record(Record::UserMessage { text, config }))
        }
        other => Some(other),
    });
    let d = diverge(&edited);
    assert_eq!(d.kind, DivergenceKind::DecisionDiffers);
    // The steer was delivered after step 1, so the window of 4 ends after step 5.
    assert!(
        matches!(
            d.recorded,
            Some(Decision::StepStarted {
                step: StepNo(6),
                ..
            })
        ),
        "{d:?}"
    );
    assert!(
        matches!(d.remade, Some(Decision::RunFinished { .. })),
        "{d:?}"
    );
}

fn many_tool_steps(n: usize) -> Vec<(&'static str, &'static [&'static str])> {
    let mut steps: Vec<(&str, &[&str])> = (0..n).map(|_| ("s", &[r#"{"x":1}"#][..])).collect();
    steps.push(("done", &[][..]));
    steps
}

/// Limits that let 40 steps run.
fn roomy() -> Limits {
    Limits {
        max_steps: 100,
        ..Limits::default()
    }
}

fn count(log: &SessionLog, f: impl Fn(&Body) -> bool) -> usize {
    log.entries.iter().filter(|e| f(&e.body)).count()
}

fn steps_started(log: &SessionLog) -> usize {
    count(log, |b| {
        matches!(b, Body::Decision(Decision::StepStarted { .. }))
    })
}

#[test]
fn replay_with_options_stops_after_the_until_entry_with_the_state_there() {
    let (_dir, log) = record_run(Limits::default(), &three_tool_steps());
    // 1 prompt, 2 steer, 3 step_started, 4 step (two calls), 5 and 6 dispatched.
    let options = ReplayOptions {
        until: Some(EntryId(4)),
        overrides: Overrides::default(),
    };
    let replayed = replay(&log, log.leaf(), &options).unwrap();
    let Outcome::Stopped(state) = replayed.outcome else {
        panic!("{replayed:?}");
    };
    assert_eq!(replayed.report.entries, 5);
    assert_eq!(state.entry.type_name, "step");
    assert_eq!(state.phase_kind, PhaseKind::RunningTools);
    assert_eq!(state.pending.steers, ["also this"]);
    assert_eq!(state.run.steps, 1);
    assert_eq!(state.context.messages, 2);
    let owed: Vec<&str> = state.owed.iter().map(Decision::type_name).collect();
    assert_eq!(owed, ["tool_dispatched", "tool_dispatched"]);
    // An entry the session does not hold is refused, saying which there are.
    let options = ReplayOptions {
        until: Some(EntryId(999)),
        overrides: Overrides::default(),
    };
    assert!(matches!(
        replay(&log, log.leaf(), &options),
        Err(ReplayError::Log(LogError::NoSuchEntry {
            id: EntryId(999),
            ..
        }))
    ));
}

#[test]
fn overrides_parse_every_key_and_refuse_bad_values() {
    let o = Overrides::parse(&[
        "max_steps=4",
        "max_tokens=0",
        "max_output_tokens=100",
        "compact_at_tokens=5000",
        "permissions=readonly",
    ])
    .unwrap();
    assert_eq!(
        o.describe(),
        [
            "max_steps=4",
            "max_tokens=0",
            "max_output_tokens=100",
            "compact_at_tokens=5000",
            "permissions=readonly"
        ]
    );
    let err = |s: &str| Overrides::parse(&[s]).unwrap_err().to_string();
    expect![[r#"--set max_steps=-1: `-1` is not a non-negative whole number"#]]
        .assert_eq(&err("max_steps=-1"));
    expect![[r#"--set max_steps: expected key=value"#]].assert_eq(&err("max_steps"));
    expect![[
        r#"--set permissions=maybe: `maybe` is not a permission policy (ask, readonly, yolo)"#
    ]]
    .assert_eq(&err("permissions=maybe"));
}

#[test]
fn rewrite_points_ids_inside_bodies_at_the_same_entries() {
    let (dir, log) = record_run(Limits::default(), &three_tool_steps());
    let out = dir.path().join("same.jsonl");
    let same = rewrite::rewrite(&log, &out, |e| Some(e.body.clone())).unwrap();
    assert_eq!(same.entries.len(), log.entries.len());
    replay_branch(&same, same.leaf()).unwrap();
    // Dropping the first decision (before the steer) gives every later entry the id
    // one lower: `delivered.queued` must follow the steer to its new id.
    let steer = nth(&log, 0, |b| matches!(b, Body::Record(Record::Steer { .. })));
    let first_decision = nth(&log, 0, |b| matches!(b, Body::Decision(_)));
    assert!(first_decision < steer);
    let out = dir.path().join("shifted.jsonl");
    let shifted = rewrite::rewrite(&log, &out, |e| {
        (e.id != first_decision).then(|| e.body.clone())
    })
    .unwrap();
    let delivered = shifted.get(nth(&shifted, 0, is_delivery)).map(|e| &e.body);
    let Some(Body::Decision(Decision::Delivered { queued, .. })) = delivered else {
        unreachable!("nth finds a delivery: {delivered:?}");
    };
    let queued = *queued;
    assert_eq!(queued, EntryId(steer.0 - 1));
    assert!(matches!(
        shifted.get(queued).map(|e| &e.body),
        Some(Body::Record(Record::Steer { .. }))
    ));
}

#[test]
fn minimize_keeps_an_altered_late_decision_in_one_step() {
    let (dir, log) = record_run(roomy(), &many_tool_steps(40));
    assert_eq!(steps_started(&log), 41);
    let target = nth(&log, 35, is_dispatch);
    let edited = with_arguments(&dir, &log, target, r#"{"x":2}"#);
    let (m, _, written) = minimized(&dir, &edited);
    assert_eq!(m.before.steps, 41);
    assert!(m.after.steps <= 5, "{:?}", m.after);
    assert_eq!(steps_started(&written), m.after.steps);
    let d = diverge(&written);
    assert_eq!(d.entry, written.entries.last().map(|e| e.id));
    expect![[r#"
        --- recorded
        +++ re-made
        @@ -5,7 +5,7 @@
             "call": {
               "id": "c360",
               "name": "echo",
        -      "arguments": "{\"x\":2}"
        +      "arguments": "{\"x\":1}"
             }
           }
         }
    "#]]
    .assert_eq(&d.diff);
}

#[test]
fn minimize_keeps_an_altered_late_input_and_the_decision_it_changes() {
    let (dir, log) = record_run(roomy(), &many_tool_steps(40));
    let target = nth(&log, 30, |b| {
        matches!(b, Body::Record(Record::ToolResult(_)))
    });
    let edited = rewrite(&dir, &log, |id, body| match body {
        Body::Record(Record::ToolResult(mut r)) if id == target => {
            r.outcome.content = "something else".into();
            Some(Body::Record(Record::ToolResult(r)))
        }
        other => Some(other),
    });
    let (m, before, _) = minimized(&dir, &edited);
    assert_eq!(before.after_input, Some(target));
    assert!(m.after.steps <= 5, "{:?}", m.after);
    let input = m.divergence.input.as_ref().unwrap();
    assert_eq!(input.type_name, "tool_result");
    expect![[r#"c310 echo ok 1ms "something else""#]].assert_eq(&input.summary);
}

#[test]
fn minimize_keeps_a_dropped_delivery_with_its_steer() {
    let (dir, log) = record_run(roomy(), &many_tool_steps(12));
    let delivered = nth(&log, 0, is_delivery);
    let edited = rewrite(&dir, &log, |id, body| (id != delivered).then_some(body));
    let (m, _, written) = minimized(&dir, &edited);
    assert_eq!(
        count(&written, |b| matches!(
            b,
            Body::Record(Record::Steer { .. })
        )),
        1,
        "the steer whose delivery is missing stays"
    );
    assert!(m.after.steps <= 2, "{:?}", m.after);
}

#[test]
fn minimize_needs_a_divergence() {
    let (dir, log) = record_run(Limits::default(), &three_tool_steps());
    let out = dir.path().join("min.jsonl");
    assert!(matches!(
        minimize(&log, log.leaf(), &Overrides::default(), &out),
        Err(ReplayError::NoDivergence { .. })
    ));
    assert!(!out.exists());
}

#[test]
fn a_directory_replays_in_parallel_in_path_order() {
    let (dir, log) = record_run(Limits::default(), &three_tool_steps());
    let sessions = dir.path().join("all");
    std::fs::create_dir_all(sessions.join("b")).unwrap();
    for name in ["a.jsonl", "b/c.jsonl", "d.jsonl"] {
        std::fs::copy(&log.path, sessions.join(name)).unwrap();
    }
    std::fs::write(sessions.join("notes.txt"), "not a session").unwrap();
    let paths = find_sessions(&sessions).unwrap();
    let runs = replay_all(
        &paths,
        &sessions,
        &Overrides::parse(&["max_steps=1"]).unwrap(),
        2,
    );
    let names: Vec<&str> = runs.iter().map(|r| r.session.as_str()).collect();
    assert_eq!(names, ["a.jsonl", "b/c.jsonl", "d.jsonl"]);
    assert!(
        runs.iter()
            .all(|r| matches!(r.result, SessionResult::Diverged { .. }))
    );
    let clean = replay_all(&paths, &sessions, &Overrides::default(), 2);
    assert!(clean.iter().all(SessionRun::is_ok));
}

/// Every fixture session, with each of its entries dropped in turn (a valid log with
/// one entry missing): wherever that diverges, `--minimize` finds a smaller log that
/// diverges the same way.
#[test]
fn minimize_reproduces_the_divergence_of_every_fixture_with_any_entry_dropped() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/sessions");
    let dir = tempfile::tempdir().unwrap();
    let (mut minimized, mut edits) = (0, 0);
    for file in find_sessions(&fixtures).unwrap() {
        let log = read_session(&file).unwrap();
        for dropped in log.entries.iter().skip(1).map(|e| e.id) {
            edits += 1;
            let edited_path = dir.path().join(format!("edited-{edits}.jsonl"));
            let edited = rewrite::rewrite(&log, &edited_path, |e| {
                (e.id != dropped).then(|| e.body.clone())
            })
            .unwrap();
            let Err(ReplayError::Diverged(before)) = replay_branch(&edited, edited.leaf()) else {
                continue;
            };
            let out = dir.path().join(format!("min-{minimized}.jsonl"));
            let m = minimize(&edited, edited.leaf(), &Overrides::default(), &out)
                .unwrap_or_else(|e| panic!("{} without {dropped}: {e}", file.display()));
            assert_eq!(
                Signature::of(&m.divergence),
                Signature::of(&before),
                "{} without {dropped}",
                file.display()
            );
            assert!(m.after.entries <= edited.entries.len());
            minimized += 1;
        }
    }
    assert!(minimized > 50, "{minimized} divergences minimized");
}

/// The first `lines` lines of `log`'s file and the first `torn` bytes of the next
/// one (no newline: a write a crash cut short), as the file `name` in `dir`.
fn cut(dir: &tempfile::TempDir, log: &SessionLog, lines: usize, torn: usize) -> std::path::PathBuf {
    let text = std::fs::read_to_string(&log.path).unwrap();
    let mut kept: String = text.split_inclusive('\n').take(lines).collect();
    kept.push_str(&text.split_inclusive('\n').nth(lines).unwrap_or("")[..torn]);
    let path = dir.path().join(format!("cut-{lines}-{torn}.jsonl"));
    std::fs::write(&path, kept).unwrap();
    path
}

/// A run recorded in full, then cut before its `run_finished` (entry 20, line 21)
/// with `torn` bytes of that line left: the replay of the cut file, streamed and
/// read whole (the two must agree), and the finish it lost.
fn cut_before_the_finish(torn: usize) -> (Replay, Decision, Entry) {
    let (dir, log) = record_run(Limits::default(), &three_tool_steps());
    let finish = log.entries.last().unwrap();
    assert_eq!(
        (finish.id, finish.type_name()),
        (EntryId(20), "run_finished")
    );
    let path = cut(&dir, &log, 20, torn);
    let streamed = replay_file(&path, None, &ReplayOptions::default())
        .unwrap()
        .unwrap();
    let whole = read_session(&path).unwrap();
    let replayed = replay(&whole, whole.leaf(), &ReplayOptions::default()).unwrap();
    assert_eq!(streamed.replay, replayed, "streamed and whole agree");
    let lost = xcsh_log::entry_decision(finish).unwrap().clone();
    (replayed, lost, log.entries[19].clone())
}

/// What the replay of [`cut_before_the_finish`]'s file must be: the run cut off after
/// entry 19 (line 20), owing the finish it lost; `torn`, the torn line's.
fn cut_off_before_the_finish(lost: Decision, last: &Entry, torn: Option<Torn>) -> Replay {
    Replay {
        report: ReplayReport {
            entries: 20,
            inputs: 10,
            decisions: 9,
        },
        outcome: Outcome::CutOff(Box::new(CutOff {
            last: EntryRef::new(last, Some(20)),
            phase: "finished: completed".into(),
            phase_kind: PhaseKind::Finished,
            owed: vec![lost],
        })),
        torn,
    }
}

#[test]
fn a_log_that_ends_before_its_run_finished_is_a_run_cut_off_not_a_divergence() {
    let (replayed, lost, last) = cut_before_the_finish(0);
    assert_eq!(replayed, cut_off_before_the_finish(lost, &last, None));
}

#[test]
fn a_torn_last_line_is_named_by_its_line_and_the_run_it_ended_is_cut_off() {
    let (replayed, lost, last) = cut_before_the_finish(40);
    let torn = Torn {
        line: 21,
        bytes: 40,
    };
    assert_eq!(replayed, cut_off_before_the_finish(lost, &last, Some(torn)));
}

#[test]
fn a_log_that_ends_while_a_tool_runs_is_a_run_cut_off_owing_nothing() {
    let (dir, log) = record_run(Limits::default(), &three_tool_steps());
    let dispatch = nth(&log, 2, is_dispatch);
    let line = log.line_of(dispatch).unwrap() as usize;
    let path = cut(&dir, &log, line, 0);
    let whole = read_session(&path).unwrap();
    let replayed = replay(&whole, whole.leaf(), &ReplayOptions::default()).unwrap();
    let last = log.get(dispatch).unwrap();
    assert_eq!(
        replayed.outcome,
        Outcome::CutOff(Box::new(CutOff {
            last: EntryRef::new(last, Some(line as u32)),
            phase: "running 1 tool call(s) of step 2".into(),
            phase_kind: PhaseKind::RunningTools,
            owed: Vec::new(),
        }))
    );
}

#[test]
fn a_decision_owed_after_a_finished_run_is_still_a_divergence() {
    let (_dir, log) = record_run(Limits::default(), &three_tool_steps());
    // A steer after the finish, without the `ignored` the machine answers it with.
    let (mut writer, _) = SessionWriter::open(&log.path).unwrap();
    let steer = Body::Record(Record::Steer {
        text: "late".into(),
    });
    writer.append(log.leaf(), t0(), &steer).unwrap();
    drop(writer);
    let log = read_session(&log.path).unwrap();
    let d = diverge(&log);
    assert_eq!(
        (d.kind, d.entry, d.recorded, d.remade),
        (
            DivergenceKind::MissingDecision,
            None,
            None,
            Some(Decision::Ignored {
                reason: xcsh_machine::IgnoreReason::NoRunInProgress
            })
        )
    );
}

#[test]
fn a_directory_table_shows_a_cut_off_session_as_cut_off_and_counts_it_ok() {
    let (dir, log) = record_run(Limits::default(), &three_tool_steps());
    let path = cut(&dir, &log, 20, 40);
    let runs = replay_all(&[path], dir.path(), &Overrides::default(), 1);
    expect![[r#"
        ┌─────────────────┬─────────┬─────────┬────────────────────────────────────────────────────────────────────────────────────┐
        │ session         ┆ entries ┆ result  ┆ first divergence                                                                   │
        ╞═════════════════╪═════════╪═════════╪════════════════════════════════════════════════════════════════════════════════════╡
        │ cut-20-40.jsonl ┆ 20      ┆ cut off ┆ the run was cut off (no run_finished) after entry 19 (line 20, step); torn line 21 │
        └─────────────────┴─────────┴─────────┴────────────────────────────────────────────────────────────────────────────────────┘
        1 session(s): 1 ok, 0 diverged, 0 failed
    "#]].assert_eq(&render::table(&runs));
}
