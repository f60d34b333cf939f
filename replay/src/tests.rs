//! Replay over real logs made by the `Recorder`: clean logs replay clean; a changed
//! decision, a changed input payload, a dropped decision or changed limits are each
//! reported at the right entry.

use chrono::{DateTime, Utc};
use expect_test::expect;
use xcsh_core::log::{
    Body, Record, Recorder, SessionHeader, SessionLog, SessionWriter, StepRecord, TimedEvent,
    ToolResultRecord, read_session,
};
use xcsh_core::machine::{
    Assembled, CallId, Decision, Effect, EntryId, Limits, Machine, RunConfig, StepNo, StepOutcome,
    StreamEvent, ToolOutcome, ToolStatus,
};

use super::*;

fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-30T00:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn recorder(dir: &tempfile::TempDir, name: &str) -> Recorder {
    let header = SessionHeader {
        session_id: "t".into(),
        cwd: "/w".into(),
        forked_from: None,
    };
    let writer = SessionWriter::create(&dir.path().join(name), header, t0()).unwrap();
    Recorder::new(Machine::new(), writer, EntryId(0), t0())
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
    Record::Step(StepRecord {
        step: StepNo(n),
        events,
        outcome: StepOutcome::Completed,
        message: Assembled::default(),
    })
}

/// Plays `steps` (text, tool-call arguments) as one run, settling every tool call
/// the machine dispatches; a steer arrives during step 1.
fn record_run(dir: &tempfile::TempDir, limits: Limits, steps: &[(&str, &[&str])]) -> SessionLog {
    let mut rec = recorder(dir, "s.jsonl");
    let config = RunConfig {
        limits,
        tools: vec!["echo".into()],
        mutating: Vec::new(),
        permissions: xcsh_core::machine::Permissions::Yolo,
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
        let effects = rec.record(step(n, text, calls)).unwrap();
        for effect in effects {
            if let Effect::ExecuteTool { call } = effect {
                rec.record(Record::ToolResult(ToolResultRecord {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    outcome: ToolOutcome {
                        status: ToolStatus::Ok,
                        content: call.arguments.clone(),
                    },
                    duration_ms: 1,
                    changes: Vec::new(),
                }))
                .unwrap();
            }
        }
        if !rec.machine.is_running() {
            break;
        }
    }
    let path = rec.writer.path().to_path_buf();
    drop(rec);
    read_session(&path).unwrap()
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

#[test]
fn a_recorded_run_replays_clean() {
    let dir = tempfile::tempdir().unwrap();
    let log = record_run(&dir, Limits::default(), &three_tool_steps());
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
    let dir = tempfile::tempdir().unwrap();
    let log = record_run(&dir, Limits::default(), &three_tool_steps());
    let target = log
        .entries
        .iter()
        .find(|e| matches!(e.body, Body::Decision(Decision::ToolDispatched { .. })))
        .unwrap()
        .id;
    let edited = rewrite(&dir, &log, |id, body| match body {
        Body::Decision(Decision::ToolDispatched { step, mut call }) if id == target => {
            call.arguments = r#"{"a":999}"#.into();
            Some(Body::Decision(Decision::ToolDispatched { step, call }))
        }
        other => Some(other),
    });
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
    let dir = tempfile::tempdir().unwrap();
    let log = record_run(&dir, Limits::default(), &three_tool_steps());
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
    let step2 = edited
        .entries
        .iter()
        .find(|e| matches!(&e.body, Body::Record(Record::Step(s)) if s.step == StepNo(2)))
        .unwrap()
        .id;
    assert_eq!(d.kind, DivergenceKind::DecisionDiffers);
    assert_eq!(d.entry, Some(EntryId(step2.0 + 1)));
    assert_eq!(d.after_input, Some(step2));
}

#[test]
fn a_dropped_decision_is_reported_where_the_log_goes_on_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = record_run(&dir, Limits::default(), &three_tool_steps());
    let delivered = log
        .entries
        .iter()
        .find(|e| matches!(e.body, Body::Decision(Decision::Delivered { .. })))
        .unwrap()
        .id;
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
    let dir = tempfile::tempdir().unwrap();
    let steps: Vec<(&str, &[&str])> = (0..10).map(|_| ("s", &[r#"{}"#][..])).collect();
    let log = record_run(&dir, Limits::default(), &steps);
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
