//! Playing a [`Script`]: each action becomes the input record the runtime would
//! write, aimed at what the machine has in flight at that moment, and goes through
//! the production journal (`xcsh_journal::Player`) into the real log writer.
//! The same driver, over a log in memory, prints the script as a transcript of the
//! machine's transcript tests (`machine/test_data/`), without its effects.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use xcsh_journal::{Append, Journal, MemoryLog, Player, TimedLog};
use xcsh_log::{
    Body, LogError, Record, SessionHeader, SessionWriter, StepRecord, TimedEvent, ToolResultRecord,
};
use xcsh_machine::{
    Assembled, CallId, EntryId, Machine, Phase, RunConfig, StepNo, StepOutcome, StreamEvent,
    ToolOutcome, ToolStatus, Usage,
};

use crate::actions::{Action, Args, End, Script};

/// The tools every generated run may call; `write` is the mutating one.
pub const TOOLS: [&str; 2] = ["echo", "write"];

/// The provider errors of a generated failed step, refused step and failed summary:
/// those of the script's `end N failed`, `end N overflow` and `summary-failed`.
pub use xcsh_machine::script::{disconnect, summary_error, too_long};

/// A played script: the log file, the machine that wrote it, and what the live
/// machine was after each applied action.
pub struct Played {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
    pub machine: Machine,
    /// After each applied action: the entry the log ended at (the leaf) and a copy
    /// of the live machine there.
    pub states: Vec<(EntryId, Machine)>,
    /// The script, as [`Script::to_script`] prints it.
    pub script: String,
}

pub(crate) fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-30T00:00:00Z")
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

/// The journal's port in the driver: a log (a real one, or one in memory) and the
/// tool results appended since the driver last looked (their lines are printed when
/// they are recorded, in the dispatch order the journal keeps, not when they ended).
struct Tapped<L> {
    log: L,
    results: Vec<ToolResultRecord>,
}

impl<L: Append> Append for Tapped<L> {
    fn append(&mut self, parent: EntryId, body: &Body) -> Result<EntryId, LogError> {
        if let Body::Record(Record::ToolResult(r)) = body {
            self.results.push(ToolResultRecord::clone(r));
        }
        self.log.append(parent, body)
    }
}

type Driver<L> = Player<Tapped<L>>;

fn driver<L: Append>(log: L, leaf: EntryId) -> Driver<L> {
    Player::new(
        Journal::new(Machine::new(), leaf),
        Tapped {
            log,
            results: Vec::new(),
        },
    )
}

/// What driving a script produced besides the log.
struct Driven {
    lines: Vec<String>,
    states: Vec<(EntryId, Machine)>,
}

fn config(script: &Script) -> RunConfig {
    RunConfig {
        limits: script.limits,
        tools: TOOLS.iter().map(|t| t.to_string()).collect(),
        mutating: vec!["write".into()],
        permissions: script.permissions,
        estimate_bytes_per_token: script.estimate_bytes_per_token,
        sandbox: None,
    }
}

/// The script's first line: the configuration every prompt carries.
fn config_line(script: &Script) -> String {
    let l = script.limits;
    let permissions = serde_json::to_value(script.permissions)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let estimate = match script.estimate_bytes_per_token {
        0 => String::new(),
        n => format!(" estimate={n}"),
    };
    format!(
        "config max_steps={} max_tokens={} compact_at={} tools={} mutating=write permissions={permissions}{estimate}",
        l.max_steps,
        l.max_tokens,
        l.compact_at_tokens,
        TOOLS.join(",")
    )
}

fn drive<L: Append>(script: &Script, sink: &mut Driver<L>) -> Driven {
    let config = config(script);
    let mut lines = vec![config_line(script)];
    let mut states = Vec::new();
    // Settled boundaries so far (no run in progress, every decision written): the
    // session start, then the leaf after every action that left the machine idle.
    let mut boundaries: Vec<(EntryId, Machine, usize)> = vec![(EntryId(0), Machine::new(), 0)];
    let mut late_step = 1000;
    for (i, action) in script.actions.iter().enumerate() {
        let machine = sink.machine();
        let pending = match machine.phase() {
            Phase::RunningTools(t) => t.pending.clone(),
            Phase::Idle | Phase::Streaming(_) | Phase::Compacting(_) | Phase::Finished(_) => {
                Vec::new()
            }
        };
        // The step streaming (and whether the journal cancelled it), the calls that
        // run (dispatched, not ended), the call asked about.
        let streaming = sink.journal.streaming();
        let running: Vec<CallId> = sink.journal.running().cloned().collect();
        let asking = sink.journal.asking().cloned();
        let (record, line) = match action {
            Action::Prompt => {
                let text = format!("prompt-{i}");
                let line = format!("prompt {text}");
                let record = Record::UserMessage {
                    text,
                    config: config.clone(),
                };
                (record, Some(line))
            }
            Action::Steer => {
                let text = format!("steer-{i}");
                (
                    Record::Steer { text: text.clone() },
                    Some(format!("steer {text}")),
                )
            }
            Action::FollowUp => {
                let text = format!("follow-{i}");
                (
                    Record::FollowUp { text: text.clone() },
                    Some(format!("follow {text}")),
                )
            }
            Action::Interrupt => (Record::Interrupt {}, Some("interrupt".to_string())),
            Action::Undo => {
                let note = format!("undo-{i}");
                let record = Record::Undo {
                    run: EntryId(0),
                    files: Vec::new(),
                    note: Some(note.clone()),
                };
                (record, Some(format!("undo {note}")))
            }
            Action::Compact => (
                Record::Compact {
                    config: config.clone(),
                },
                Some("compact".to_string()),
            ),
            Action::Recover => (
                Record::Recovered {
                    note: "generated".into(),
                },
                Some("recover".to_string()),
            ),
            Action::Step {
                text,
                calls,
                end,
                usage,
            } => {
                let (step, late, end) = match streaming {
                    // An error end of a cancelled step is an abort; an abort of one
                    // that was not cancelled, an error (the runtime's rule).
                    Some((step, cancelled)) => (
                        step,
                        false,
                        match (end, cancelled) {
                            (End::Aborted, false) => End::Failed,
                            (End::Failed | End::Overflow, true) => End::Aborted,
                            (e, _) => *e,
                        },
                    ),
                    None => {
                        late_step += 1;
                        (StepNo(late_step), true, *end)
                    }
                };
                // A refusal as too long comes before any output (an HTTP error).
                let (text, calls, usage) = match end {
                    End::Overflow => (false, &[][..], (0, 0)),
                    End::Completed(_) | End::Failed | End::Aborted => (*text, &calls[..], *usage),
                };
                let played = PlayedStep {
                    step,
                    i,
                    text,
                    calls,
                    end,
                    usage,
                };
                (played.record(), Some(played.line(late)))
            }
            Action::Tool { n, status } => {
                if running.is_empty() {
                    continue;
                }
                let id = &running[n % running.len()];
                let name = pending
                    .iter()
                    .find(|c| c.id == *id)
                    .map_or("echo", |c| c.name.as_str());
                let content = format!("result-{i}");
                // Its line is printed when the journal records it.
                let record = Record::ToolResult(Box::new(ToolResultRecord {
                    call_id: id.clone(),
                    name: name.into(),
                    outcome: ToolOutcome {
                        status: *status,
                        content,
                    },
                    duration_ms: 1,
                    changes: Vec::new(),
                    child: None,
                }));
                (record, None)
            }
            Action::LateTool => {
                let id = CallId(format!("never-{i}"));
                let record = Record::ToolResult(Box::new(ToolResultRecord {
                    call_id: id,
                    name: "echo".into(),
                    outcome: ToolOutcome {
                        status: ToolStatus::Ok,
                        content: "late".into(),
                    },
                    duration_ms: 1,
                    changes: Vec::new(),
                    child: None,
                }));
                (record, None)
            }
            Action::LateEvent => {
                // A straggler of the step before the one streaming, or of the last
                // step when none is streaming.
                let step = match streaming {
                    Some((s, _)) => StepNo(s.0.saturating_sub(1)),
                    None => StepNo(machine.run().steps),
                };
                let line = format!("delta {step} late");
                let record = Record::LateEvent {
                    step,
                    event: StreamEvent::TextDelta {
                        text: "late".into(),
                    },
                };
                (record, Some(line))
            }
            // The question with the user is the one answered.
            Action::Approve { answer, .. } => {
                let Some(call) = &asking else {
                    continue;
                };
                let (verdict, scope) = answer.verdict_scope();
                let line = format!("approve {} {}", call.id, answer.key());
                let record = Record::ApprovalAnswer {
                    call_id: call.id.clone(),
                    verdict,
                    scope,
                    message: None,
                };
                (record, Some(line))
            }
            Action::CheckFails => {
                let Some(call) = &asking else {
                    continue;
                };
                let content = format!("error: {} would fail", call.id);
                let line = format!("check {} {content}", call.id);
                let record = Record::CheckFailed {
                    call_id: call.id.clone(),
                    content,
                };
                (record, Some(line))
            }
            Action::Summary { ok } => {
                if !matches!(machine.phase(), Phase::Compacting(_)) {
                    continue;
                }
                if *ok {
                    let text = format!("summary-{i}");
                    let line = format!("summary {text}");
                    let record = Record::CompactionSummary {
                        summary: Some(text),
                        error: None,
                    };
                    (record, Some(line))
                } else {
                    let record = Record::CompactionSummary {
                        summary: None,
                        error: Some(summary_error()),
                    };
                    (record, Some("summary-failed".to_string()))
                }
            }
            Action::Branch { n } => {
                let (at, machine, line_no) = boundaries[n % boundaries.len()].clone();
                if at == sink.leaf() {
                    continue;
                }
                sink.branch(at, machine.clone()).expect("append to the log");
                lines.push(format!(
                    "# branch: continue on a new branch from the state after line {line_no} (not expressible in this syntax)"
                ));
                let leaf = sink.leaf();
                boundaries.push((leaf, machine.clone(), lines.len()));
                states.push((leaf, machine));
                continue;
            }
        };
        sink.record(record).expect("append to the log");
        match line {
            Some(line) => lines.push(line),
            None => lines.extend(sink.log.results.iter().map(|r| {
                format!(
                    "tool {} {} {}",
                    r.call_id,
                    status_word(r.outcome.status),
                    r.outcome.content
                )
            })),
        }
        sink.log.results.clear();
        let leaf = sink.leaf();
        let machine = sink.machine().clone();
        if !machine.is_running() {
            boundaries.push((leaf, machine.clone(), lines.len()));
        }
        states.push((leaf, machine));
    }
    Driven { lines, states }
}

fn status_word(status: ToolStatus) -> &'static str {
    match status {
        ToolStatus::Ok => "ok",
        ToolStatus::Error => "error",
        ToolStatus::Cancelled => "cancelled",
    }
}

fn finish_word(reason: xcsh_machine::FinishReason) -> String {
    serde_json::to_value(reason)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The call id a step's `k`-th call carries: the script syntax's `c{step}{k+1}`.
pub fn call_id(step: StepNo, k: usize) -> CallId {
    CallId(format!("c{}{}", step.0, k + 1))
}

/// A step as it is played: its number, the index `i` of its action (the text it
/// streams is `t{i}`), and what it streams and how it ends.
struct PlayedStep<'a> {
    step: StepNo,
    i: usize,
    text: bool,
    calls: &'a [Args],
    end: End,
    usage: (u64, u64),
}

impl PlayedStep<'_> {
    /// The step's lines in the script syntax (`late`: no step is streaming).
    fn line(&self, late: bool) -> String {
        let PlayedStep {
            step,
            i,
            text,
            calls,
            end,
            usage,
        } = *self;
        let outcome = match end {
            End::Completed(_) => "completed",
            End::Failed => "failed",
            End::Overflow => "overflow",
            End::Aborted => "aborted",
        };
        if late {
            // The script's `step` would feed its events to a step that is not streaming:
            // the end alone says the same (a late step, ignored).
            return format!("end {step} {outcome}");
        }
        let calls_word = || {
            calls
                .iter()
                .enumerate()
                .map(|(k, a)| {
                    let (name, args) = a.call(k);
                    format!("{name}:{args}")
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        match end {
            End::Completed(reason) => {
                let mut words = vec![format!("step {step}")];
                if text {
                    words.push(format!("text=t{i}"));
                }
                if !calls.is_empty() {
                    words.push(format!("calls={}", calls_word()));
                }
                if usage != (0, 0) {
                    words.push(format!("usage={}/{}", usage.0, usage.1));
                }
                words.push(format!("finish={}", finish_word(reason)));
                words.join(" ")
            }
            End::Failed | End::Overflow | End::Aborted => {
                let mut lines = Vec::new();
                if text {
                    lines.push(format!("delta {step} t{i}"));
                }
                lines.push(format!("end {step} {outcome}"));
                let mut lost = Vec::new();
                if !calls.is_empty() {
                    lost.push(format!("calls={}", calls_word()));
                }
                if usage != (0, 0) {
                    lost.push(format!("usage={}/{}", usage.0, usage.1));
                }
                if !lost.is_empty() {
                    lines.push(format!(
                    "# lost: {} streamed before the {outcome} end (only the run_finished usage differs)",
                    lost.join(" ")
                ));
                }
                lines.join("\n")
            }
        }
    }

    /// The step's record, as the runtime would write it.
    fn record(&self) -> Record {
        let mut events = Vec::new();
        let mut ms = 0;
        let mut push = |event| {
            ms += 1;
            events.push(TimedEvent { ms, event });
        };
        if self.text {
            push(StreamEvent::TextDelta {
                text: format!("t{}", self.i),
            });
        }
        for (k, a) in self.calls.iter().enumerate() {
            let index = u32::try_from(k).unwrap_or(u32::MAX);
            let (name, arguments) = a.call(k);
            push(StreamEvent::ToolCallStart {
                index,
                id: call_id(self.step, k),
                name: name.into(),
            });
            push(StreamEvent::ToolCallDelta { index, arguments });
            push(StreamEvent::ToolCallEnd { index });
        }
        // No usage at all, as some servers stream (the script's step has no `usage=`).
        if self.usage != (0, 0) {
            push(StreamEvent::Usage {
                usage: Usage {
                    input_tokens: self.usage.0,
                    output_tokens: self.usage.1,
                    ..Usage::default()
                },
            });
        }
        let outcome = match self.end {
            End::Completed(reason) => {
                push(StreamEvent::Finish { reason });
                StepOutcome::Completed
            }
            End::Failed => StepOutcome::Failed {
                error: disconnect(),
            },
            End::Overflow => StepOutcome::Failed { error: too_long() },
            End::Aborted => StepOutcome::Aborted,
        };
        Record::Step(Box::new(StepRecord {
            step: self.step,
            events,
            outcome,
            message: Assembled::default(),
        }))
    }
}

/// Plays `script` through the production journal into a fresh log.
pub fn play(script: &Script) -> Played {
    let dir = crate::scratch_dir();
    let path = dir.path().join("p.jsonl");
    let header = SessionHeader::new("prop", "/w");
    let writer = SessionWriter::create(&path, header, t0()).expect("create the log");
    let mut sink = driver(TimedLog::new(writer, t0()), EntryId(0));
    let driven = drive(script, &mut sink);
    sink.log.log.writer.sync().expect("sync the log");
    Played {
        machine: sink.machine().clone(),
        states: driven.states,
        script: transcript(&driven.lines),
        path,
        dir,
    }
}

impl Script {
    /// The script as a transcript of `machine/test_data/` without its effects (a
    /// `> config` line, then `> ` and one input a line), ready to be saved there as a
    /// transcript test: `UPDATE_EXPECT=1` fills in the effects.
    /// Actions that had no target (a tool result with no call in flight, …) are left
    /// out; what the syntax cannot say is a `#` comment.
    pub fn to_script(&self) -> String {
        let mut bare = driver(MemoryLog::starting_at(EntryId(1)), EntryId(0));
        transcript(&drive(self, &mut bare).lines)
    }

    /// How many inputs [`Script::to_script`] holds (lines but the `config` line and
    /// comments; a failed step's `delta` and `end` count as one).
    pub fn inputs(&self) -> usize {
        count_inputs(&self.to_script())
    }
}

/// Script lines as a transcript's input lines: `> ` before each but the comments.
fn transcript(lines: &[String]) -> String {
    let text = lines.join("\n");
    let marked: Vec<String> = text
        .lines()
        .map(|l| match l.starts_with('#') {
            true => l.to_string(),
            false => format!("> {l}"),
        })
        .collect();
    marked.join("\n")
}

/// Inputs of a printed script: its `> ` lines but `config`, and a failed step's
/// `delta` lines (the step is one input with its `end`).
pub fn count_inputs(script: &str) -> usize {
    script
        .lines()
        .filter_map(|l| l.strip_prefix("> "))
        .filter(|l| {
            !l.is_empty()
                && !l.starts_with('#')
                && !l.starts_with("config ")
                && (!l.starts_with("delta ") || l.ends_with(" late"))
        })
        .count()
}
