//! The journal's rules as transcripts: happenings in, the entries appended and the
//! actions asked for out, compared whole with `expect![[…]]`.

use std::time::Duration;

use expect_test::{Expect, expect};

use super::*;
use xcsh_log::{Body, LogError, Record};
use xcsh_machine::{
    ApprovalScope, CallId, Decision, EntryId, FinishReason, Limits, Machine, Permissions,
    ProviderError, ProviderErrorKind, RunConfig, RunEnd, StepNo, StreamEvent, ToolOutcome,
    ToolStatus, Verdict,
};

/// A log in memory whose appends are written into the transcript.
struct Port {
    log: MemoryLog,
    lines: Vec<String>,
}

impl Append for Port {
    fn append(&mut self, parent: EntryId, body: &Body) -> Result<EntryId, LogError> {
        let id = self.log.append(parent, body)?;
        let detail = match body {
            Body::Record(Record::ToolResult(r)) => format!(" {}", r.call_id),
            Body::Record(Record::Step(s)) => format!(" {} {:?}", s.step, s.outcome),
            Body::Record(Record::Steer { text }) => format!(" {text}"),
            Body::Decision(Decision::ToolDispatched { call, .. }) => format!(" {}", call.id),
            Body::Decision(Decision::Approval {
                call_id,
                verdict,
                by,
                ..
            }) => format!(" {call_id} {verdict:?} by {by:?}"),
            Body::Decision(Decision::RunFinished(RunEnd { reason, .. })) => format!(" {reason:?}"),
            _ => String::new(),
        };
        self.lines
            .push(format!("  +{id} {}{detail}", body.type_name()));
        Ok(id)
    }
}

struct Harness {
    journal: Journal,
    port: Port,
    now: Duration,
    out: String,
    /// The checks before a question that fail, by call id, with their error; every
    /// other check passes. The harness answers each `check` action at once.
    failing: Vec<(&'static str, &'static str)>,
}

fn config(permissions: Permissions) -> RunConfig {
    RunConfig {
        limits: Limits::default(),
        tools: vec!["echo".into(), "write".into(), "plan".into()],
        mutating: vec!["write".into()],
        permissions,
        estimate_bytes_per_token: 0,
        sandbox: None,
    }
}

impl Harness {
    fn new() -> Harness {
        Harness {
            journal: Journal::new(Machine::new(), EntryId(0)),
            port: Port {
                log: MemoryLog::starting_at(EntryId(1)),
                lines: Vec::new(),
            },
            now: Duration::ZERO,
            out: String::new(),
            failing: Vec::new(),
        }
    }

    fn on(&mut self, line: &str, happening: Happening) {
        self.out.push_str(&format!("> {line}\n"));
        let actions = self
            .journal
            .on(happening, self.now, &mut self.port)
            .unwrap();
        for l in self.port.lines.drain(..) {
            self.out.push_str(&l);
            self.out.push('\n');
        }
        let mut checks = Vec::new();
        for a in actions {
            self.out.push_str(&format!("  ! {}\n", render(&a)));
            if let Action::Check { call } = a {
                checks.push(call.id);
            }
        }
        for call_id in checks {
            let failure = self
                .failing
                .iter()
                .find(|(id, _)| *id == call_id.0)
                .map(|(_, error)| (*error).to_string());
            let line = match &failure {
                None => format!("checked {call_id}: ok"),
                Some(error) => format!("checked {call_id}: {error}"),
            };
            self.on(&line, Happening::Checked { call_id, failure });
        }
    }

    /// Given: a prompt under `permissions` started step 1. Checks its transcript, and
    /// starts a new one.
    fn prompt(&mut self, permissions: Permissions) {
        self.on(
            "prompt",
            Happening::Prompt {
                text: "go".into(),
                config: config(permissions),
            },
        );
        expect![[r#"
            > prompt
              +1 user_message
              +2 step_started
              ! event step_started
              ! sync
              ! start_model 1
        "#]]
        .assert_eq(&std::mem::take(&mut self.out));
    }

    /// Given (`ask`): step 1 asked to write twice (`c1`, `c2`), and the user is asked
    /// about `c1`.
    fn asked_about_two_writes() -> Harness {
        let mut h = Harness::new();
        h.prompt(Permissions::Ask);
        h.step(1, &[("c1", "write"), ("c2", "write")]);
        expect![[r#"
            > end 1 ok
              +3 step 1 Completed
              ! event step_finished
              ! check c1
            > checked c1: ok
              ! event approval_requested
              ! ask c1 (1 more waiting)
        "#]]
        .assert_eq(&std::mem::take(&mut h.out));
        h
    }

    /// Step `n`'s whole stream: calls `(id, name)`, then its completed end.
    fn step(&mut self, n: u32, calls: &[(&str, &str)]) {
        let calls: Vec<(&str, &str, &str)> = calls.iter().map(|(i, n)| (*i, *n, "{}")).collect();
        self.step_with(n, &calls);
    }

    /// Step `n`'s whole stream: calls `(id, name, arguments)`, then its completed end.
    fn step_with(&mut self, n: u32, calls: &[(&str, &str, &str)]) {
        let step = StepNo(n);
        let mut events = Vec::new();
        for (k, (id, name, arguments)) in calls.iter().enumerate() {
            let index = u32::try_from(k).unwrap();
            events.push(StreamEvent::ToolCallStart {
                index,
                id: CallId((*id).into()),
                name: (*name).into(),
            });
            events.push(StreamEvent::ToolCallDelta {
                index,
                arguments: (*arguments).into(),
            });
            events.push(StreamEvent::ToolCallEnd { index });
        }
        events.push(StreamEvent::Finish {
            reason: if calls.is_empty() {
                FinishReason::Stop
            } else {
                FinishReason::ToolCalls
            },
        });
        let before = self.out.len();
        for event in events {
            self.on("event", Happening::Stream { step, event });
        }
        // The events themselves are not the point here.
        self.out.truncate(before);
        self.end(&format!("end {n} ok"), n, Ok(()));
    }

    /// A text delta of step `n`.
    fn text(&mut self, n: u32, text: &str) {
        self.on(
            "text",
            Happening::Stream {
                step: StepNo(n),
                event: StreamEvent::TextDelta { text: text.into() },
            },
        );
    }

    /// The end of step `n`'s stream, shown as `line`.
    fn end(&mut self, line: &str, n: u32, result: Result<(), ProviderError>) {
        self.on(
            line,
            Happening::StreamEnded {
                step: StepNo(n),
                result,
            },
        );
    }

    fn tool(&mut self, id: &str, name: &str) {
        self.tool_with(id, name, ToolStatus::Ok);
    }

    /// Call `id` ended with `status` (shown as `tool ID ended`, with the status
    /// unless ok).
    fn tool_with(&mut self, id: &str, name: &str, status: ToolStatus) {
        let line = match status {
            ToolStatus::Ok => format!("tool {id} ended"),
            other => format!("tool {id} ended ({other:?})"),
        };
        self.on(
            &line,
            Happening::ToolEnded(ToolEnd {
                call_id: CallId(id.into()),
                name: name.into(),
                outcome: ToolOutcome {
                    status,
                    content: "done".into(),
                },
                duration_ms: 1,
                changes: Vec::new(),
                child: None,
            }),
        );
    }

    fn answer(&mut self, id: &str, verdict: Verdict, scope: ApprovalScope) {
        self.on(
            &format!("answer {id} {verdict:?} {scope:?}"),
            Happening::Answered {
                call_id: CallId(id.into()),
                verdict,
                scope,
                message: None,
            },
        );
    }

    fn check(self, expected: Expect) {
        expected.assert_eq(&self.out);
    }

    /// Compares the transcript with `expected` followed by the named ending `then`
    /// (the last input's last entries and actions, shown without their indent); the
    /// next check starts a new transcript.
    fn check_then(&mut self, expected: Expect, then: &Expect) {
        let out = std::mem::take(&mut self.out);
        let lines: Vec<&str> = out.lines().collect();
        let (head, tail) = lines.split_at(lines.len() - then.data().trim().lines().count());
        expected.assert_eq(&format!("{}\n", head.join("\n")));
        let tail: Vec<&str> = tail
            .iter()
            .map(|l| {
                l.strip_prefix("  ")
                    .expect("an ending is the output of an input")
            })
            .collect();
        then.assert_eq(&format!("{}\n", tail.join("\n")));
    }
}

/// Then: the last of step 1's two results (`c2`) is written as entry 7, after the
/// results before it, and step 2 starts.
static STEP_2_STARTS: Expect = expect![[r#"
    +7 tool_result c2
    +8 step_started
    ! event tool_result
    ! event step_started
    ! sync
    ! start_model 2
"#]];

/// Given [`Harness::asked_about_two_writes`], the transcript of the user's answer
/// about `c1`.
fn answer_c1_of_two_writes(verdict: Verdict, scope: ApprovalScope, expected: Expect) {
    let mut h = Harness::asked_about_two_writes();
    h.answer("c1", verdict, scope);
    h.check(expected);
}

fn render(action: &Action) -> String {
    match action {
        Action::Emit(event) => {
            let v = serde_json::to_value(event).unwrap();
            format!("event {}", v["type"].as_str().unwrap_or("?"))
        }
        Action::Sync => "sync".into(),
        Action::StartModel { step } => format!("start_model {step}"),
        Action::CancelModel { step } => format!("cancel_model {step}"),
        Action::StartTool { call, dispatched } => {
            format!("start_tool {} (dispatched by {dispatched})", call.id)
        }
        Action::CancelTool { call_id } => format!("cancel_tool {call_id}"),
        Action::Check { call } => format!("check {}", call.id),
        Action::Ask { call, waiting } => format!("ask {} ({waiting} more waiting)", call.id),
        Action::Summarize { upto } => format!("summarize {upto}"),
        Action::CancelSummary => "cancel_summary".into(),
        Action::Release(entries) => format!("release {entries:?}"),
        Action::StartExtraction { turn } => format!("start_extraction ({} messages)", turn.len()),
        Action::CancelExtraction => "cancel_extraction".into(),
        Action::WriteNotes(notes) => format!(
            "write_notes {}",
            notes
                .iter()
                .map(|n| n.name.as_str())
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

#[test]
fn a_call_that_ends_first_waits_for_the_calls_dispatched_before_it() {
    let mut h = Harness::new();
    h.prompt(Permissions::Yolo);
    h.step(1, &[("c1", "echo"), ("c2", "echo")]);
    h.tool("c2", "echo");
    h.tool("c1", "echo");
    h.check_then(
        expect![[r#"
        > end 1 ok
          +3 step 1 Completed
          +4 tool_dispatched c1
          +5 tool_dispatched c2
          ! event step_finished
          ! event tool_call
          ! sync
          ! start_tool c1 (dispatched by 4)
          ! event tool_call
          ! sync
          ! start_tool c2 (dispatched by 5)
        > tool c2 ended
          ! event tool_result
        > tool c1 ended
          +6 tool_result c1
    "#]],
        &STEP_2_STARTS,
    );
    h.on("synced", Happening::Synced);
    h.check(expect![[r#"
        > synced
          ! release [EntryId(4), EntryId(5)]
    "#]]);
}

#[test]
fn approval_questions_are_put_one_at_a_time_and_a_grant_covers_the_next() {
    answer_c1_of_two_writes(
        Verdict::Allow,
        ApprovalScope::Tool,
        expect![[r#"
        > answer c1 Allow Tool
          +4 approval_answer
          +5 tool_dispatched c1
          +6 approval c2 Allow by ToolGrant
          +7 tool_dispatched c2
          ! event tool_call
          ! sync
          ! start_tool c1 (dispatched by 5)
          ! event approval
          ! event tool_call
          ! sync
          ! start_tool c2 (dispatched by 7)
    "#]],
    );
}

#[test]
fn the_error_end_of_a_cancelled_step_is_an_abort() {
    let mut h = Harness::new();
    h.prompt(Permissions::Yolo);
    h.now = Duration::from_millis(40);
    h.text(1, "hi");
    h.on("interrupt", Happening::Interrupt);
    h.end(
        "end 1 error",
        1,
        Err(ProviderError {
            kind: ProviderErrorKind::Disconnected,
            message: "cancelled".into(),
        }),
    );
    h.end("late end 1", 1, Ok(()));
    h.check(expect![[r#"
        > text
          ! event text_delta
        > interrupt
          +3 interrupt
          ! cancel_model 1
        > end 1 error
          +4 step 1 Aborted
          +5 run_finished Interrupted
          ! event step_finished
          ! event run_finished
        > late end 1
    "#]]);
}

#[test]
fn a_stream_event_is_timed_from_the_start_of_its_step() {
    let mut h = Harness::new();
    h.now = Duration::from_millis(1_000);
    h.prompt(Permissions::Yolo);
    h.now = Duration::from_millis(1_250);
    h.text(1, "hi");
    h.end("end", 1, Ok(()));
    let step = h.port.log.entries.iter().find_map(|(_, b)| match b {
        Body::Record(Record::Step(s)) => Some(s.clone()),
        _ => None,
    });
    assert_eq!(step.map(|s| s.events[0].ms), Some(250));
}

#[test]
fn a_steer_after_the_finish_is_recorded_ignored_and_reported_undelivered() {
    let mut h = Harness::new();
    h.prompt(Permissions::Yolo);
    h.step(1, &[]);
    h.on("steer late", Happening::Steer("late".into()));
    let result = h.journal.result("s".into(), "p".into());
    assert_eq!(result.undelivered, vec!["late".to_string()]);
    h.check(expect![[r#"
        > end 1 ok
          +3 step 1 Completed
          +4 run_finished Completed
          ! event step_finished
          ! event run_finished
        > steer late
          +5 steer late
          +6 ignored
          ! event ignored
    "#]]);
}

/// A call whose check fails is never asked about: its error is recorded as the
/// input `check_failed`, and the machine settles the call with it; a call that
/// needs no answer runs meanwhile.
#[test]
fn a_call_that_fails_its_check_is_not_asked_about() {
    let mut h = Harness::new();
    h.failing = vec![("c1", "error: `a` must be read first")];
    h.prompt(Permissions::Ask);
    h.step(1, &[("c1", "write"), ("c2", "echo")]);
    h.check(expect![[r#"
        > end 1 ok
          +3 step 1 Completed
          +4 tool_dispatched c2
          ! event step_finished
          ! check c1
          ! event tool_call
          ! sync
          ! start_tool c2 (dispatched by 4)
        > checked c1: error: `a` must be read first
          +5 check_failed
          +6 synthetic_result
          ! event tool_result
    "#]]);
}

#[test]
fn after_a_denial_the_next_question_is_put() {
    answer_c1_of_two_writes(
        Verdict::Deny,
        ApprovalScope::Once,
        expect![[r#"
            > answer c1 Deny Once
              +4 approval_answer
              +5 synthetic_result
              ! event tool_result
              ! check c2
            > checked c2: ok
              ! event approval_requested
              ! ask c2 (0 more waiting)
        "#]],
    );
}

/// One step asks to write three times (and to echo, which runs at once): each
/// question says how many more wait behind it (2, 1, 0), counted from the journal's
/// own state as the answers come.
#[test]
fn each_question_says_how_many_more_wait_behind_it() {
    let mut h = Harness::new();
    h.prompt(Permissions::Ask);
    let calls = [
        ("c1", "write"),
        ("c2", "write"),
        ("c3", "write"),
        ("c4", "echo"),
    ];
    h.step(1, &calls);
    h.answer("c1", Verdict::Allow, ApprovalScope::Once);
    h.answer("c2", Verdict::Deny, ApprovalScope::Once);
    h.check(expect![[r#"
        > end 1 ok
          +3 step 1 Completed
          +4 tool_dispatched c4
          ! event step_finished
          ! check c1
          ! event tool_call
          ! sync
          ! start_tool c4 (dispatched by 4)
        > checked c1: ok
          ! event approval_requested
          ! ask c1 (2 more waiting)
        > answer c1 Allow Once
          +5 approval_answer
          +6 tool_dispatched c1
          ! event tool_call
          ! sync
          ! start_tool c1 (dispatched by 6)
          ! check c2
        > checked c2: ok
          ! event approval_requested
          ! ask c2 (1 more waiting)
        > answer c2 Deny Once
          +7 approval_answer
          +8 synthetic_result
          ! event tool_result
          ! check c3
        > checked c3: ok
          ! event approval_requested
          ! ask c3 (0 more waiting)
    "#]]);
}

/// A `plan` call's `plan` event comes right after its ok `tool_result` is appended;
/// a broken plan (an error result) has none.
#[test]
fn an_ok_plan_result_is_followed_by_its_plan_event_and_a_broken_one_by_none() {
    let mut h = Harness::new();
    h.prompt(Permissions::Ask);
    let good = r#"{"items":[{"text":"Read","status":"in_progress"}]}"#;
    let broken =
        r#"{"items":[{"text":"A","status":"in_progress"},{"text":"B","status":"in_progress"}]}"#;
    h.step_with(1, &[("c1", "plan", good), ("c2", "plan", broken)]);
    h.out.clear();
    h.tool("c1", "plan");
    h.tool_with("c2", "plan", ToolStatus::Error);
    h.check_then(
        expect![[r#"
        > tool c1 ended
          +6 tool_result c1
          ! event tool_result
          ! event plan
        > tool c2 ended (Error)
    "#]],
        &STEP_2_STARTS,
    );
}

/// The memory of a run, in the journal's order (SPEC.md §28).
mod memory {
    use super::*;
    use xcsh_log::TimedEvent;
    use xcsh_log::memory::{MemoryIndexRecord, MemoryScope, NoteRef, SnapshotRecord};

    fn index(h: &mut Harness) {
        h.on(
            "memory index",
            Happening::MemoryIndex(MemoryIndexRecord {
                text: "# Memory\n".into(),
                hash: "abcd".into(),
                notes: Vec::new(),
            }),
        );
    }

    fn answer(text: &str) -> Vec<TimedEvent> {
        vec![
            TimedEvent {
                ms: 1,
                event: StreamEvent::TextDelta { text: text.into() },
            },
            TimedEvent {
                ms: 2,
                event: StreamEvent::Finish {
                    reason: FinishReason::Stop,
                },
            },
        ]
    }

    /// Given: an index, a prompt, and a completed step 1 (the extraction started).
    fn completed_with_memory() -> Harness {
        let mut h = Harness::new();
        index(&mut h);
        prompt_go(&mut h);
        h.step(1, &[]);
        h.out.clear();
        h
    }

    fn prompt_go(h: &mut Harness) {
        h.on(
            "prompt",
            Happening::Prompt {
                text: "go".into(),
                config: config(Permissions::Yolo),
            },
        );
    }

    const NOTE: &str =
        r#"{"notes":[{"name":"build","description":"How to build","body":"cargo build"}]}"#;

    /// The index is recorded before the prompt; the completed run then syncs and
    /// starts the extraction (the run is not over yet); its end is recorded, the
    /// notes are written, and the snapshot closes the run.
    #[test]
    fn the_index_comes_before_the_prompt_and_the_snapshot_after_the_extraction() {
        let mut h = Harness::new();
        index(&mut h);
        prompt_go(&mut h);
        h.step(1, &[]);
        assert!(!h.journal.finished());
        h.on(
            "extraction ended",
            Happening::ExtractionEnded {
                events: answer(NOTE),
                result: Ok(()),
                answer: NOTE.into(),
            },
        );
        assert!(!h.journal.finished());
        h.on(
            "notes written",
            Happening::NotesWritten(SnapshotRecord {
                notes: vec![NoteRef {
                    scope: MemoryScope::Project,
                    name: "build".into(),
                    hash: "ffff".into(),
                }],
                written: vec![NoteRef {
                    scope: MemoryScope::Project,
                    name: "build".into(),
                    hash: "ffff".into(),
                }],
                errors: Vec::new(),
            }),
        );
        assert!(h.journal.finished());
        h.check(expect![[r#"
            > memory index
              +1 memory_index
              ! event memory_index
            > prompt
              +2 user_message
              +3 step_started
              ! event step_started
              ! sync
              ! start_model 1
            > end 1 ok
              +4 step 1 Completed
              +5 run_finished Completed
              ! event step_finished
              ! event run_finished
              ! sync
              ! start_extraction (1 messages)
            > extraction ended
              +6 memory_extraction
              ! event memory_extracted
              ! write_notes build
            > notes written
              +7 memory_snapshot
              ! event memory_written
        "#]]);
    }

    /// An interrupt during the extraction is recorded (and ignored by the finished
    /// machine) and cancels it; the aborted extraction is recorded, nothing written.
    #[test]
    fn an_interrupt_during_the_extraction_cancels_it_and_writes_nothing() {
        let mut h = completed_with_memory();
        h.on("interrupt", Happening::Interrupt);
        h.on("interrupt again", Happening::Interrupt);
        h.on(
            "extraction ended",
            Happening::ExtractionEnded {
                events: Vec::new(),
                result: Err(ProviderError {
                    kind: ProviderErrorKind::Disconnected,
                    message: "cancelled".into(),
                }),
                answer: String::new(),
            },
        );
        assert!(h.journal.finished());
        h.check(expect![[r#"
            > interrupt
              +6 interrupt
              +7 ignored
              ! event ignored
              ! cancel_extraction
            > interrupt again
              +8 interrupt
              +9 ignored
              ! event ignored
            > extraction ended
              +10 memory_extraction
              ! event memory_extracted
              ! event notice
        "#]]);
    }

    /// A failed extraction (or an unparsable answer) is a notice and an entry; the
    /// run ends as it did.
    #[test]
    fn a_failed_or_unparsable_extraction_is_a_notice_not_a_failure() {
        for result in [
            Err(ProviderError {
                kind: ProviderErrorKind::Api,
                message: "http 500".into(),
            }),
            Ok(()),
        ] {
            let mut h = completed_with_memory();
            h.on(
                "extraction ended",
                Happening::ExtractionEnded {
                    events: answer("no json here"),
                    result,
                    answer: "no json here".into(),
                },
            );
            assert!(h.journal.finished());
            assert_eq!(
                h.journal.result(String::new(), String::new()).stop_reason,
                xcsh_machine::StopReason::Completed
            );
            expect![[r#"
                > extraction ended
                  +6 memory_extraction
                  ! event memory_extracted
                  ! event notice
            "#]]
            .assert_eq(&h.out);
        }
    }

    /// A run that does not complete (here: interrupted while streaming) skips the
    /// extraction, with a notice; a run without an index never extracts.
    #[test]
    fn a_turn_that_did_not_complete_skips_the_extraction() {
        let mut h = Harness::new();
        index(&mut h);
        prompt_go(&mut h);
        h.out.clear();
        h.on("interrupt", Happening::Interrupt);
        h.end(
            "end 1 cancelled",
            1,
            Err(ProviderError {
                kind: ProviderErrorKind::Disconnected,
                message: "cancelled".into(),
            }),
        );
        assert!(h.journal.finished());
        h.check(expect![[r#"
            > interrupt
              +4 interrupt
              ! cancel_model 1
            > end 1 cancelled
              +5 step 1 Aborted
              +6 run_finished Interrupted
              ! event step_finished
              ! event run_finished
              ! event notice
        "#]]);
        let mut plain = Harness::new();
        plain.prompt(Permissions::Yolo);
        plain.step(1, &[]);
        assert!(plain.journal.finished());
        plain.check(expect![[r#"
            > end 1 ok
              +3 step 1 Completed
              +4 run_finished Completed
              ! event step_finished
              ! event run_finished
        "#]]);
    }
}
