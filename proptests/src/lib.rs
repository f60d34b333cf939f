//! xcsh-proptests: generated input scripts played through the real machine and the
//! real log writer (via `Recorder`), and the invariants every run must keep.
//!
//! An [`Action`] is what the world does next (a user command, a provider step
//! settling, a tool settling); [`play`] turns each action into the input record the
//! runtime would write, aimed at whatever the machine currently has in flight, so
//! shrunk failures read as a short script.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use proptest::prelude::*;
use xcsh_core::log::{
    Record, Recorder, SessionHeader, SessionWriter, StepRecord, TimedEvent, ToolResultRecord,
};
use xcsh_core::machine::{
    ApprovalScope, Assembled, CallId, Effect, EntryId, FinishReason, Limits, Machine, Permissions,
    Phase, ProviderError, ProviderErrorKind, RunConfig, StepNo, StepOutcome, StreamEvent,
    ToolOutcome, ToolStatus, Usage, Verdict,
};

/// What a generated tool call's arguments look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Args {
    Valid,
    /// A call of the mutating tool `write` (goes through the permission policy).
    Mutating,
    NotAnObject,
    UnknownTool,
}

/// How a generated step ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Completed(FinishReason),
    Failed,
    Aborted,
}

/// One thing the world does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Prompt,
    Steer,
    FollowUp,
    Interrupt,
    /// The streaming step settles (or, with none streaming, a late step arrives).
    Step {
        text: bool,
        calls: Vec<Args>,
        end: End,
        usage: (u64, u64),
    },
    /// The `n`-th (modulo) dispatched, unsettled tool call settles.
    Tool {
        n: usize,
        status: ToolStatus,
    },
    /// A tool result for a call that is not in flight (late or unknown).
    LateTool,
    /// The user answers the `n`-th (modulo) approval question.
    Approve {
        n: usize,
        verdict: Verdict,
        scope: ApprovalScope,
    },
    /// The compaction in flight finishes (or fails).
    Summary {
        ok: bool,
    },
    Recover,
}

fn args() -> impl Strategy<Value = Args> {
    prop_oneof![
        6 => Just(Args::Valid),
        3 => Just(Args::Mutating),
        1 => Just(Args::NotAnObject),
        1 => Just(Args::UnknownTool),
    ]
}

fn end() -> impl Strategy<Value = End> {
    prop_oneof![
        10 => Just(End::Completed(FinishReason::ToolCalls)),
        4 => Just(End::Completed(FinishReason::Stop)),
        1 => Just(End::Completed(FinishReason::Length)),
        1 => Just(End::Completed(FinishReason::ContentFilter)),
        1 => Just(End::Failed),
        1 => Just(End::Aborted),
    ]
}

fn status() -> impl Strategy<Value = ToolStatus> {
    prop_oneof![
        6 => Just(ToolStatus::Ok),
        1 => Just(ToolStatus::Error),
        1 => Just(ToolStatus::Cancelled),
    ]
}

pub fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        2 => Just(Action::Prompt),
        2 => Just(Action::Steer),
        2 => Just(Action::FollowUp),
        1 => Just(Action::Interrupt),
        8 => (any::<bool>(), prop::collection::vec(args(), 0..4), end(), (0u64..3000, 0u64..300))
            .prop_map(|(text, calls, end, usage)| Action::Step { text, calls, end, usage }),
        8 => (0usize..4, status()).prop_map(|(n, status)| Action::Tool { n, status }),
        1 => Just(Action::LateTool),
        3 => (0usize..3, prop_oneof![Just(Verdict::Allow), Just(Verdict::Deny)],
              prop_oneof![Just(ApprovalScope::Once), Just(ApprovalScope::Tool), Just(ApprovalScope::Call)])
            .prop_map(|(n, verdict, scope)| Action::Approve { n, verdict, scope }),
        2 => any::<bool>().prop_map(|ok| Action::Summary { ok }),
        1 => Just(Action::Recover),
    ]
}

pub fn permissions() -> impl Strategy<Value = Permissions> {
    prop_oneof![
        Just(Permissions::Ask),
        Just(Permissions::Readonly),
        Just(Permissions::Yolo)
    ]
}

/// Limits small enough that generated runs hit them.
pub fn limits() -> impl Strategy<Value = Limits> {
    (
        1u32..6,
        prop_oneof![Just(0u64), 500u64..8000],
        prop_oneof![Just(0u64), 500u64..3000],
    )
        .prop_map(|(max_steps, max_tokens, compact_at_tokens)| Limits {
            max_steps,
            max_tokens,
            max_output_tokens: 8192,
            compact_at_tokens,
        })
}

/// A played script: the log file and the machine that wrote it.
pub struct Played {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
    pub machine: Machine,
    /// Tool calls dispatched and not yet settled when the script ended.
    pub in_flight: Vec<CallId>,
}

fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-30T00:00:00Z")
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

/// Plays `actions` under `limits` through a `Recorder` into a fresh log.
pub fn play(limits: Limits, permissions: Permissions, actions: &[Action]) -> Played {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("p.jsonl");
    let header = SessionHeader {
        session_id: "prop".into(),
        cwd: "/w".into(),
        forked_from: None,
    };
    let writer = SessionWriter::create(&path, header, t0()).expect("create the log");
    let mut rec = Recorder::new(Machine::new(), writer, EntryId(0), t0());
    let config = RunConfig {
        limits,
        tools: vec!["echo".into(), "write".into()],
        mutating: vec!["write".into()],
        permissions,
    };
    let mut in_flight: Vec<CallId> = Vec::new();
    let mut awaiting: Vec<CallId> = Vec::new();
    let mut late_step = 1000;
    for (i, action) in actions.iter().enumerate() {
        let record = match action {
            Action::Prompt => Record::UserMessage {
                text: format!("prompt {i}"),
                config: config.clone(),
            },
            Action::Steer => Record::Steer {
                text: format!("steer {i}"),
            },
            Action::FollowUp => Record::FollowUp {
                text: format!("follow-up {i}"),
            },
            Action::Interrupt => Record::Interrupt {},
            Action::Recover => Record::Recovered {
                note: "generated".into(),
            },
            Action::Step {
                text,
                calls,
                end,
                usage,
            } => {
                let step = if let Phase::Streaming(s) = rec.machine.phase() {
                    s.step
                } else {
                    late_step += 1;
                    StepNo(late_step)
                };
                step_record(step, i, *text, calls, *end, *usage)
            }
            Action::Tool { n, status } => {
                if in_flight.is_empty() {
                    continue;
                }
                let id = in_flight.remove(n % in_flight.len());
                Record::ToolResult(ToolResultRecord {
                    call_id: id,
                    name: "echo".into(),
                    outcome: ToolOutcome {
                        status: *status,
                        content: format!("result {i}"),
                    },
                    duration_ms: 1,
                    changes: Vec::new(),
                })
            }
            Action::Approve { n, verdict, scope } => {
                if awaiting.is_empty() {
                    continue;
                }
                Record::ApprovalAnswer {
                    call_id: awaiting.remove(n % awaiting.len()),
                    verdict: *verdict,
                    scope: *scope,
                }
            }
            Action::LateTool => Record::ToolResult(ToolResultRecord {
                call_id: CallId(format!("never-{i}")),
                name: "echo".into(),
                outcome: ToolOutcome {
                    status: ToolStatus::Ok,
                    content: "late".into(),
                },
                duration_ms: 1,
                changes: Vec::new(),
            }),
            Action::Summary { ok } => {
                if !matches!(rec.machine.phase(), Phase::Compacting(_)) {
                    continue;
                }
                if *ok {
                    Record::CompactionSummary {
                        summary: Some(format!("summary {i}")),
                        error: None,
                    }
                } else {
                    Record::CompactionSummary {
                        summary: None,
                        error: Some(ProviderError {
                            kind: ProviderErrorKind::Http,
                            message: "503".into(),
                        }),
                    }
                }
            }
        };
        let effects = rec.record(record).expect("append to the log");
        for effect in effects {
            match effect {
                Effect::ExecuteTool { call } => {
                    awaiting.retain(|c| *c != call.id);
                    in_flight.push(call.id);
                }
                Effect::AskApproval { call } => awaiting.push(call.id),
                _ => {}
            }
        }
        // Questions the machine settled itself (interrupt, a grant) are no longer open.
        if let Phase::RunningTools(t) = rec.machine.phase() {
            awaiting.retain(|id| t.awaiting.iter().any(|c| c.id == *id));
        }
        // A run that finished leaves nothing in flight (recover settles what was).
        if !rec.machine.is_running() {
            in_flight.clear();
            awaiting.clear();
        }
    }
    Played {
        path,
        machine: rec.machine.clone(),
        in_flight,
        dir,
    }
}

fn step_record(
    step: StepNo,
    i: usize,
    text: bool,
    calls: &[Args],
    end: End,
    usage: (u64, u64),
) -> Record {
    let mut events = Vec::new();
    let mut ms = 0;
    let mut push = |event| {
        ms += 1;
        events.push(TimedEvent { ms, event });
    };
    if text {
        push(StreamEvent::TextDelta {
            text: format!("text {i}"),
        });
    }
    for (k, a) in calls.iter().enumerate() {
        let index = u32::try_from(k).unwrap_or(u32::MAX);
        push(StreamEvent::ToolCallStart {
            index,
            id: CallId(format!("call-{i}-{k}")),
            name: if *a == Args::UnknownTool {
                "nope"
            } else {
                "echo"
            }
            .into(),
        });
        push(StreamEvent::ToolCallDelta {
            index,
            arguments: if *a == Args::NotAnObject {
                "[1"
            } else {
                "{\"k\":1}"
            }
            .into(),
        });
        push(StreamEvent::ToolCallEnd { index });
    }
    push(StreamEvent::Usage {
        usage: Usage {
            input_tokens: usage.0,
            output_tokens: usage.1,
            ..Usage::default()
        },
    });
    let outcome = match end {
        End::Completed(reason) => {
            push(StreamEvent::Finish { reason });
            StepOutcome::Completed
        }
        End::Failed => StepOutcome::Failed {
            error: ProviderError {
                kind: ProviderErrorKind::Disconnected,
                message: "reset".into(),
            },
        },
        End::Aborted => StepOutcome::Aborted,
    };
    Record::Step(StepRecord {
        step,
        events,
        outcome,
        message: Assembled::default(),
    })
}

/// Checks the run invariants of SPEC.md over a log, entry by entry. Returns the first
/// violation, naming the entry.
pub fn check_invariants(log: &xcsh_core::log::SessionLog) -> Result<(), String> {
    use std::collections::BTreeMap;
    use xcsh_core::log::Body;
    use xcsh_core::machine::{Decision, StopReason, SyntheticReason, UserOrigin};

    let entries = &log.entries;
    let ignored = |i: usize| {
        matches!(
            entries.get(i + 1).map(|e| &e.body),
            Some(Body::Decision(Decision::Ignored { .. }))
        )
    };
    let mut running = false;
    let mut limits = Limits::default();
    let mut spent = 0u64;
    let mut window = 0u32;
    // Dispatched calls of this run and how many settlements each got.
    let mut calls: BTreeMap<String, u32> = BTreeMap::new();
    let mut last_steer: Option<EntryId> = None;
    let mut last_follow: Option<EntryId> = None;
    let mut in_group_follow = false;
    let mut permissions = Permissions::Yolo;
    // Mutating calls allowed (by an answer or an automatic approval) and not yet run.
    let mut allowed: Vec<String> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let id = entry.id;
        let fail = |what: String| Err(format!("entry {id}: {what}"));
        let was_delivery = in_group_follow;
        in_group_follow = false;
        match &entry.body {
            Body::Record(Record::ApprovalAnswer {
                call_id,
                verdict: Verdict::Allow,
                ..
            }) if !ignored(i) => allowed.push(call_id.0.clone()),
            Body::Record(Record::UserMessage { config, .. }) if !ignored(i) => {
                running = true;
                limits = config.limits;
                permissions = config.permissions;
                spent = 0;
                window = 0;
                calls.clear();
                last_steer = None;
                last_follow = None;
            }
            Body::Record(Record::Step(s)) if !ignored(i) => {
                spent += s.message.usage.spend();
            }
            Body::Record(Record::ToolResult(r)) if !ignored(i) => {
                match calls.get_mut(&r.call_id.0) {
                    Some(n) => *n += 1,
                    None => {
                        return fail(format!(
                            "a result for {} that was never dispatched",
                            r.call_id
                        ));
                    }
                }
            }
            Body::Decision(d) => {
                if !running && !matches!(d, Decision::Ignored { .. }) {
                    return fail(format!(
                        "decision {} with no run in progress",
                        d.type_name()
                    ));
                }
                match d {
                    Decision::StepStarted { .. } => {
                        if limits.max_tokens > 0 && spent >= limits.max_tokens {
                            return fail(format!(
                                "a step started with {spent} of {} tokens spent",
                                limits.max_tokens
                            ));
                        }
                        window += 1;
                        if window > limits.max_steps {
                            return fail(format!(
                                "step {window} of a window of {}",
                                limits.max_steps
                            ));
                        }
                        if calls.values().any(|n| *n == 0) {
                            return fail("a step started with tool calls unsettled".into());
                        }
                    }
                    Decision::ToolDispatched { call, .. } => {
                        if call.name == "write" {
                            if permissions == Permissions::Readonly {
                                return fail(format!("{} dispatched under readonly", call.id));
                            }
                            let Some(pos) = allowed.iter().position(|a| *a == call.id.0) else {
                                return fail(format!("{} dispatched without an approval", call.id));
                            };
                            allowed.remove(pos);
                        }
                        if calls.insert(call.id.0.clone(), 0).is_some() {
                            return fail(format!("{} dispatched twice", call.id));
                        }
                    }
                    Decision::SyntheticResult { call, reason, .. } => {
                        if *reason == SyntheticReason::Lost {
                            match calls.get_mut(&call.id.0) {
                                Some(n) => *n += 1,
                                None => {
                                    return fail(format!("{} lost but never dispatched", call.id));
                                }
                            }
                        }
                    }
                    Decision::Delivered { origin, queued, .. } => {
                        if calls.values().any(|n| *n == 0) {
                            return fail(
                                "a message delivered while tool calls were unsettled".into(),
                            );
                        }
                        window = 0;
                        match origin {
                            UserOrigin::Steer => {
                                if was_delivery {
                                    return fail("a steer delivered after a follow-up".into());
                                }
                                if last_steer.is_some_and(|l| l >= *queued) {
                                    return fail("steers delivered out of arrival order".into());
                                }
                                last_steer = Some(*queued);
                            }
                            UserOrigin::FollowUp | UserOrigin::Prompt => {
                                if last_follow.is_some_and(|l| l >= *queued) {
                                    return fail(
                                        "follow-ups delivered out of arrival order".into(),
                                    );
                                }
                                last_follow = Some(*queued);
                                in_group_follow = true;
                            }
                        }
                    }
                    Decision::RunFinished {
                        reason,
                        undelivered,
                        ..
                    } => {
                        running = false;
                        if let Some((call, n)) = calls.iter().find(|(_, n)| **n != 1) {
                            return fail(format!("{call} settled {n} times by the run's end"));
                        }
                        match reason {
                            StopReason::Completed if !undelivered.is_empty() => {
                                return fail("completed with messages still pending".into());
                            }
                            StopReason::MaxTokens { limit, spent: s } if s < limit => {
                                return fail(format!("max_tokens stop with {s} < {limit}"));
                            }
                            _ => {}
                        }
                    }
                    Decision::Approval {
                        call_id,
                        verdict: Verdict::Allow,
                        ..
                    } => allowed.push(call_id.0.clone()),
                    Decision::CompactionStarted { .. }
                    | Decision::Approval { .. }
                    | Decision::Compacted { .. }
                    | Decision::Ignored { .. } => {}
                }
            }
            _ => {}
        }
    }
    if !running && let Some((call, n)) = calls.iter().find(|(_, n)| **n > 1) {
        return Err(format!("{call} settled {n} times"));
    }
    Ok(())
}
