//! Rebuilding the model context at any leaf of a session log, without running the
//! machine: what the machine holds after the entries on that path.

use super::entry::{Body, Entry, Record};
use super::error::LogError;
use super::reader::SessionLog;
use xcsh_machine::{
    ContextItem, Decision, EntryId, FinishReason, Message, StepOutcome, ToolStatus, UserOrigin,
};

/// The model context at `leaf`: equal to what the machine
/// ([`xcsh_machine::Machine::context`]) holds after the entries on that path.
///
/// Rules:
/// - Take the path from the root to `leaf` (following `parent`).
/// - If the path holds a `compacted` decision, take the newest one (closest to the
///   leaf): the context starts with `Message::Summary { text: summary }` (source
///   `None`), and only entries from its `first_kept` onwards contribute; `first_kept`
///   must be on the path before it, else [`LogError::CompactionOffPath`].
/// - Each entry contributes:
///   - `user_message` record: `User { origin: Prompt, text }`, source `None`;
///   - `delivered` decision: `User { origin, text }`, source `None`;
///   - `undo` record with a `note`: `User { origin: Undo, text: note }`, source `None`;
///   - `step` record: if its outcome is `completed`, `Assistant { text, reasoning,
///     tool_calls }` from its `message`, unless all three are empty; if it failed or
///     was aborted, `Assistant { text, reasoning, tool_calls: [] }` unless text and
///     reasoning are both empty (partial tool calls are never kept); source
///     `Some(step entry id)`;
///   - `tool_result` record: `ToolResult { call_id, name, is_error: status != ok,
///     content }`, source `None`;
///   - `synthetic_result` decision: `ToolResult { call_id: call.id, name: call.name,
///     is_error: true, content }`, source `None`;
///   - every other entry: nothing.
/// - An input entry immediately followed on the path by an `ignored` decision
///   contributes nothing (the machine ignored it).
pub fn rebuild_context(log: &SessionLog, leaf: EntryId) -> Result<Vec<ContextItem>, LogError> {
    let path = path_entries(log, leaf)?;
    let mut items = Vec::new();
    let mut start = 0;
    let newest_compaction = path
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, e)| match &e.body {
            Body::Decision(Decision::Compacted {
                summary,
                first_kept,
                ..
            }) => Some((i, e.id, summary, *first_kept)),
            _ => None,
        });
    if let Some((at, id, summary, first_kept)) = newest_compaction {
        start = path[..at]
            .iter()
            .position(|e| e.id == first_kept)
            .ok_or_else(|| LogError::CompactionOffPath {
                path: log.path.clone(),
                id,
                first_kept,
            })?;
        items.push(ContextItem {
            source: None,
            message: Message::Summary {
                text: summary.clone(),
            },
        });
    }
    for (i, entry) in path.iter().enumerate().skip(start) {
        let ignored = entry.body.is_input()
            && path
                .get(i + 1)
                .is_some_and(|next| matches!(next.body, Body::Decision(Decision::Ignored { .. })));
        if ignored {
            continue;
        }
        if let Some(message) = contribution(entry) {
            items.push(message);
        }
    }
    Ok(items)
}

/// The entries from the root to `leaf`, root first.
fn path_entries(log: &SessionLog, leaf: EntryId) -> Result<Vec<&Entry>, LogError> {
    log.branch(leaf, |id| LogError::UnknownEntry {
        path: log.path.clone(),
        id,
    })
}

/// What one entry adds to the context (see [`rebuild_context`]); public for the
/// writers that keep a context as they write (`xcsh import`).
pub fn contribution(entry: &Entry) -> Option<ContextItem> {
    let user = |origin, text: &String| ContextItem {
        source: None,
        message: Message::User {
            origin,
            text: text.clone(),
        },
    };
    match &entry.body {
        Body::Record(Record::UserMessage { text, .. }) => Some(user(UserOrigin::Prompt, text)),
        Body::Record(Record::Undo {
            note: Some(note), ..
        }) => Some(user(UserOrigin::Undo, note)),
        Body::Decision(Decision::Delivered { origin, text, .. }) => Some(user(*origin, text)),
        Body::Record(Record::Step(step)) => {
            let m = &step.message;
            // A stream that completed with finish reason `error` failed (the machine
            // keeps its prose, never its tool calls).
            let tool_calls = match step.outcome {
                StepOutcome::Completed if m.finish == Some(FinishReason::Error) => Vec::new(),
                StepOutcome::Completed => m.tool_calls.clone(),
                StepOutcome::Failed { .. } | StepOutcome::Aborted => Vec::new(),
            };
            if m.text.is_empty()
                && m.reasoning.is_empty()
                && m.reasoning_blocks.is_empty()
                && tool_calls.is_empty()
            {
                return None;
            }
            Some(ContextItem {
                source: Some(entry.id),
                message: Message::Assistant {
                    text: m.text.clone(),
                    reasoning: m.reasoning.clone(),
                    reasoning_signature: m.reasoning_signature.clone(),
                    reasoning_blocks: m.reasoning_blocks.clone(),
                    tool_calls,
                },
            })
        }
        Body::Record(Record::ToolResult(r)) => Some(ContextItem {
            source: None,
            message: Message::ToolResult {
                call_id: r.call_id.clone(),
                name: r.name.clone(),
                is_error: r.outcome.status != ToolStatus::Ok,
                content: r.outcome.content.clone(),
            },
        }),
        Body::Decision(Decision::SyntheticResult { call, content, .. }) => Some(ContextItem {
            source: None,
            message: Message::ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                is_error: true,
                content: content.clone(),
            },
        }),
        Body::Record(_) | Body::Decision(_) | Body::Unknown { .. } => None,
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::writer::testutil::{header, ts};
    use crate::{SessionWriter, StepRecord, TimedEvent, ToolResultRecord, read_session};
    use xcsh_machine::{
        Assembler, CallId, Effect, FinishReason, Input, Limits, Machine, ReasoningBlock, RunConfig,
        StepNo, StreamEvent, ToolCall, ToolOutcome, Usage,
    };

    /// Drives a real machine and records what a runtime would: each input entry
    /// before it is applied, each decision as it is made, all on one branch.
    struct Sim {
        /// The session file's folder, removed with the simulation.
        _dir: tempfile::TempDir,
        machine: Machine,
        writer: SessionWriter,
        leaf: EntryId,
        clock: u32,
    }

    impl Sim {
        /// A new session whose first entry is the prompt `go` under `limits`.
        fn go(limits: Limits) -> Sim {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("s.jsonl");
            let mut sim = Sim {
                _dir: dir,
                machine: Machine::new(),
                writer: SessionWriter::create(&path, header(), ts(0)).unwrap(),
                leaf: EntryId(0),
                clock: 0,
            };
            sim.prompt("go", limits);
            sim
        }

        fn append(&mut self, body: &Body) -> EntryId {
            self.clock += 1;
            let (id, _) = self
                .writer
                .append(self.leaf, ts(self.clock % 60), body)
                .unwrap();
            self.leaf = id;
            id
        }

        fn apply(&mut self, input: Input) {
            for effect in self.machine.handle(input) {
                if let Effect::Record(decision) = effect {
                    self.append(&Body::Decision(decision));
                }
            }
        }

        fn record(&mut self, record: Record, input: Input) {
            self.append(&Body::Record(record));
            self.apply(input);
        }

        fn prompt(&mut self, text: &str, limits: Limits) {
            let config = RunConfig {
                limits,
                ..crate::writer::testutil::config()
            };
            self.record(
                Record::UserMessage {
                    text: text.into(),
                    config: config.clone(),
                },
                Input::Prompt {
                    text: text.into(),
                    config,
                },
            );
        }

        /// One step: the events reach the machine, then the step entry is written
        /// and its end applied.
        fn step(&mut self, step: u32, events: Vec<StreamEvent>) {
            let step = StepNo(step);
            let mut assembler = Assembler::default();
            for event in &events {
                assembler.push(event);
                for effect in self.machine.handle(Input::Stream {
                    step,
                    event: event.clone(),
                }) {
                    assert!(!matches!(effect, Effect::Record(_)), "{effect:?}");
                }
            }
            let record = Record::Step(Box::new(StepRecord {
                step,
                events: events
                    .into_iter()
                    .map(|event| TimedEvent { ms: 1, event })
                    .collect(),
                outcome: StepOutcome::Completed,
                message: assembler.finish(),
            }));
            let entry = self.append(&Body::Record(record));
            self.apply(Input::StepEnded {
                step,
                entry,
                outcome: StepOutcome::Completed,
            });
        }

        /// A step that answers `text` and stops, its request `input_tokens` long.
        fn answer(&mut self, step: u32, text: &str, input_tokens: u64) {
            let mut events = vec![StreamEvent::TextDelta { text: text.into() }];
            events.extend(finish(FinishReason::Stop, input_tokens));
            self.step(step, events);
        }

        fn tool_result(&mut self, call: &str, content: &str) {
            let outcome = ToolOutcome {
                status: ToolStatus::Ok,
                content: content.into(),
            };
            self.record(
                Record::ToolResult(Box::new(ToolResultRecord {
                    call_id: CallId(call.into()),
                    name: "echo".into(),
                    outcome: outcome.clone(),
                    duration_ms: 3,
                    changes: Vec::new(),
                    child: None,
                })),
                Input::ToolSettled {
                    call_id: CallId(call.into()),
                    outcome,
                    spent: None,
                },
            );
        }

        fn summary(&mut self, text: &str) {
            self.record(
                Record::CompactionSummary {
                    summary: Some(text.into()),
                    error: None,
                },
                Input::CompactionDone {
                    result: Ok(text.into()),
                },
            );
        }

        /// Closes the log and returns it with the machine's context items.
        /// The log written, and the context rebuilt from it at the leaf, which is
        /// the machine's.
        fn finish(self) -> (SessionLog, Vec<ContextItem>) {
            let path = self.writer.path().to_path_buf();
            drop(self.writer);
            let log = read_session(&path).unwrap();
            let context = rebuild_context(&log, self.leaf).unwrap();
            assert_eq!(context, self.machine.context().to_items());
            (log, context)
        }
    }

    fn text(t: &str) -> StreamEvent {
        StreamEvent::TextDelta { text: t.into() }
    }

    fn call(index: u32, id: &str, arguments: &str) -> Vec<StreamEvent> {
        vec![
            StreamEvent::ToolCallStart {
                index,
                id: CallId(id.into()),
                name: "echo".into(),
            },
            StreamEvent::ToolCallDelta {
                index,
                arguments: arguments.into(),
            },
            StreamEvent::ToolCallEnd { index },
        ]
    }

    fn finish(reason: FinishReason, input_tokens: u64) -> Vec<StreamEvent> {
        vec![
            StreamEvent::Usage {
                usage: Usage {
                    input_tokens,
                    output_tokens: 1,
                    ..Usage::default()
                },
            },
            StreamEvent::Finish { reason },
        ]
    }

    fn echo(id: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: CallId(id.into()),
            name: "echo".into(),
            arguments: arguments.into(),
        }
    }

    fn assistant(text: &str, tool_calls: Vec<ToolCall>) -> Message {
        Message::Assistant {
            text: text.into(),
            reasoning: String::new(),
            reasoning_signature: String::new(),
            reasoning_blocks: Vec::new(),
            tool_calls,
        }
    }

    /// The prompt `go` every test starts with.
    fn prompt_go() -> ContextItem {
        item(
            None,
            Message::User {
                origin: UserOrigin::Prompt,
                text: "go".into(),
            },
        )
    }

    fn item(source: Option<u64>, message: Message) -> ContextItem {
        ContextItem {
            source: source.map(EntryId),
            message,
        }
    }

    fn tool_result(id: &str, content: &str, is_error: bool) -> Message {
        Message::ToolResult {
            call_id: CallId(id.into()),
            name: "echo".into(),
            is_error,
            content: content.into(),
        }
    }

    #[test]
    fn context_without_compaction_matches_the_machine() {
        let mut sim = Sim::go(Limits::default());
        // Step 1 asks for a valid and an invalid call: one dispatched, one synthetic.
        let mut events = vec![text("calling")];
        events.extend(call(0, "c1", r#"{"x":1}"#));
        events.extend(call(1, "c2", "not json"));
        events.extend(finish(FinishReason::ToolCalls, 10));
        sim.step(1, events);
        sim.tool_result("c1", "one");
        sim.answer(2, "done", 20);
        let (_log, context) = sim.finish();
        // Entries: 1 prompt, 2 step_started, 3 step, 4 tool_dispatched,
        // 5 synthetic_result, 6 tool_result, 7 step_started, 8 step, 9 run_finished.
        assert_eq!(
            context,
            vec![
                prompt_go(),
                item(
                    Some(3),
                    assistant(
                        "calling",
                        vec![echo("c1", r#"{"x":1}"#), echo("c2", "not json")]
                    )
                ),
                item(
                    None,
                    tool_result(
                        "c2",
                        "error: the arguments of `echo` are not a JSON object (they are not valid JSON); the call was not run",
                        true
                    )
                ),
                item(None, tool_result("c1", "one", false)),
                item(Some(8), assistant("done", vec![])),
            ]
        );
    }

    #[test]
    fn a_restarted_step_with_reasoning_blocks_rebuilds_as_the_machine_built_it() {
        let mut sim = Sim::go(Limits::default());
        let reasoning = |t: &str| StreamEvent::ReasoningDelta { text: t.into() };
        let signature = |s: &str| StreamEvent::ReasoningSignature {
            signature: s.into(),
        };
        let mut events = vec![
            reasoning("partial"),
            signature("SIG_PARTIAL"),
            text("half"),
            StreamEvent::Restarted {
                reason: "message_start before message_stop".into(),
            },
            reasoning("One."),
            signature("SIG_1"),
            StreamEvent::ReasoningBlockStart {},
            StreamEvent::ReasoningRedacted {
                data: "DATA".into(),
            },
            text("done"),
        ];
        events.extend(finish(FinishReason::Stop, 10));
        sim.step(1, events);
        let (_log, context) = sim.finish();
        assert_eq!(
            context[1].message,
            Message::Assistant {
                text: "done".into(),
                reasoning: "One.".into(),
                reasoning_signature: String::new(),
                reasoning_blocks: vec![
                    ReasoningBlock {
                        text: "One.".into(),
                        signature: "SIG_1".into(),
                        redacted: String::new(),
                    },
                    ReasoningBlock {
                        redacted: "DATA".into(),
                        ..ReasoningBlock::default()
                    },
                ],
                tool_calls: vec![],
            }
        );
    }

    #[test]
    fn context_after_compaction_starts_with_the_summary_and_matches_the_machine() {
        let mut sim = Sim::go(Limits {
            compact_at_tokens: 100,
            ..Limits::default()
        });
        let mut events = call(0, "c1", "{}");
        events.extend(finish(FinishReason::ToolCalls, 50));
        sim.step(1, events);
        sim.tool_result("c1", "one");
        let mut events = vec![text("again")];
        events.extend(call(0, "c2", "{}"));
        events.extend(finish(FinishReason::ToolCalls, 150));
        sim.step(2, events);
        // Over `compact_at_tokens` with an earlier assistant message: compaction
        // starts, keeping from step 2's entry.
        sim.tool_result("c2", "two");
        sim.summary("the story so far");
        sim.answer(3, "done", 60);
        let (log, context) = sim.finish();

        let compacted: Vec<_> = log
            .entries
            .iter()
            .filter_map(|e| match &e.body {
                Body::Decision(Decision::Compacted { first_kept, .. }) => Some(*first_kept),
                _ => None,
            })
            .collect();
        let step2 = log
            .entries
            .iter()
            .find(|e| matches!(&e.body, Body::Record(Record::Step(s)) if s.step == StepNo(2)))
            .unwrap()
            .id;
        assert_eq!(compacted, vec![step2]);

        let last_step = log.entries[log.entries.len() - 2].id;
        assert_eq!(
            context,
            vec![
                item(
                    None,
                    Message::Summary {
                        text: "the story so far".into()
                    }
                ),
                item(Some(step2.0), assistant("again", vec![echo("c2", "{}")])),
                item(None, tool_result("c2", "two", false)),
                item(Some(last_step.0), assistant("done", vec![])),
            ]
        );
    }

    #[test]
    fn an_ignored_tool_result_contributes_nothing() {
        let mut sim = Sim::go(Limits::default());
        sim.answer(1, "hi", 10);
        // A result for a call that was never dispatched: the machine ignores it.
        sim.tool_result("stray", "late");
        let (log, context) = sim.finish();

        let types: Vec<&str> = log.entries.iter().map(Entry::type_name).collect();
        assert_eq!(
            types,
            vec![
                "session",
                "user_message",
                "step_started",
                "step",
                "run_finished",
                "tool_result",
                "ignored"
            ]
        );
        assert_eq!(
            context,
            vec![prompt_go(), item(Some(3), assistant("hi", vec![])),]
        );
    }

    #[test]
    fn a_compaction_keeping_an_entry_off_the_path_is_an_error() {
        let (_dir, path) = crate::writer::testutil::scratch();
        let mut w = SessionWriter::create(&path, header(), ts(0)).unwrap();
        let (id, _) = w
            .append(
                EntryId(0),
                ts(1),
                &Body::Decision(Decision::Compacted {
                    summary: "s".into(),
                    first_kept: EntryId(9),
                    tokens_before: 10,
                    tokens_after: 1,
                }),
            )
            .unwrap();
        drop(w);
        let log = read_session(&path).unwrap();
        assert_eq!(
            rebuild_context(&log, id).unwrap_err().to_string(),
            format!(
                "{}: compaction entry 1 keeps from entry 9, which is not on the path to the leaf",
                path.display()
            )
        );
    }
}
