//! `xcsh log`: the conversation of one branch as a reader wants it: user messages,
//! assistant text (reasoning folded to one line, or whole with `--reasoning`), tool
//! calls with their arguments and (capped) results, steers and follow-ups marked as
//! such, compactions with their summaries, approvals, and how each run ended.

use serde::{Serialize, Serializer};
use xcsh_log::{Body, Entry, Record, SessionLog, memory_record};
use xcsh_machine::{
    ApprovalScope, ApprovedBy, Decision, EntryId, FinishReason, IgnoreReason, StepOutcome,
    StopReason, SyntheticReason, ToolStatus, Usage, UserOrigin, Verdict,
};

use std::collections::{HashMap, HashSet};

use crate::common::{args_compact, one_line, outcome_text, serde_name, stop_text};
use crate::error::InspectError;
use crate::source::{Shapes, Source};

/// Longest tool result (and compaction summary) the text of `xcsh log` shows, in
/// lines and characters; an item, `--json` and the Markdown export hold it whole.
pub const RESULT_LINES: usize = 12;
pub const RESULT_CHARS: usize = 1200;

/// How the text of `xcsh log` shows a step's reasoning (SPEC.md §25.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reasoning {
    /// On one line, its first [`REASONING_CHARS`] characters (the default).
    Folded,
    /// Whole, line by line (`--reasoning`).
    Full,
}

/// How much of a step's reasoning the folded line shows, in characters.
pub const REASONING_CHARS: usize = 100;

/// One tool call as the model asked for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallView {
    pub id: String,
    pub name: String,
    /// Canonical compact JSON (sorted keys) when the arguments parse, else as given.
    pub arguments: String,
}

/// A message the model sees as the user's: the prompt, or a delivered steer or
/// follow-up (`queued` is its arrival entry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserView {
    pub entry: EntryId,
    pub origin: UserOrigin,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queued: Option<EntryId>,
}

/// What the model answered in one step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AssistantView {
    pub entry: EntryId,
    pub step: u32,
    pub text: String,
    /// The reasoning, whole (the text view folds it to one line unless asked for
    /// it in full, [`Reasoning`]; an export shows it whole).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    pub reasoning_chars: usize,
    pub tool_calls: Vec<CallView>,
    pub usage: Usage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish: Option<FinishReason>,
    /// In words (`failed http: 503 …`).
    #[serde(serialize_with = "outcome_words")]
    pub outcome: StepOutcome,
}

impl AssistantView {
    /// How the step ended, unless it completed.
    pub fn unless_completed(&self) -> Option<String> {
        (self.outcome != StepOutcome::Completed).then(|| outcome_text(&self.outcome))
    }
}

/// A tool call's result, or the result it was given without running.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResultView {
    pub entry: EntryId,
    pub call_id: String,
    pub name: String,
    pub status: ToolStatus,
    /// Whole (the text of `xcsh log` caps it: [`RESULT_LINES`], [`RESULT_CHARS`]).
    pub content: String,
    pub duration_ms: u64,
    /// Why the call was answered without running (`synthetic_result`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synthetic: Option<SyntheticReason>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
}

impl ResultView {
    /// How the call went: `not run: denied`, or its status and time joined by `sep`
    /// (`ok · 30 ms`).
    pub fn how(&self, sep: &str) -> String {
        match self.synthetic {
            Some(r) => format!("not run: {}", serde_name(&r)),
            None => format!("{}{sep}{} ms", serde_name(&self.status), self.duration_ms),
        }
    }
}

/// A message's origin as a reader reads it: `steer`, `follow-up`.
pub fn origin_word(origin: UserOrigin) -> String {
    serde_name(&origin).replace('_', "-")
}

/// A step outcome in the conversation's JSON: in words, as the views show it.
fn outcome_words<S: Serializer>(outcome: &StepOutcome, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&outcome_text(outcome))
}

/// A stop reason in the conversation's JSON: in words, as the views show it.
fn stop_words<S: Serializer>(reason: &StopReason, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&stop_text(reason))
}

/// One thing the conversation shows, made from one entry (so it is the same on every
/// branch that holds the entry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Item {
    Session {
        entry: EntryId,
        session_id: String,
        cwd: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        forked_from: Option<String>,
    },
    User(UserView),
    /// A steer or follow-up arrived (it is delivered later, or never).
    Queued {
        entry: EntryId,
        origin: UserOrigin,
        text: String,
    },
    Assistant(AssistantView),
    ToolResult(ResultView),
    Approval {
        entry: EntryId,
        call_id: String,
        tool: String,
        verdict: Verdict,
        by: ApprovedBy,
    },
    ApprovalAnswer {
        entry: EntryId,
        call_id: String,
        verdict: Verdict,
        scope: ApprovalScope,
    },
    Interrupt {
        entry: EntryId,
    },
    Ignored {
        entry: EntryId,
        reason: IgnoreReason,
    },
    Compaction {
        entry: EntryId,
        summary: String,
        first_kept: EntryId,
        tokens_before: u64,
        tokens_after: u64,
    },
    CompactionFailed {
        entry: EntryId,
        error: String,
    },
    RunFinished {
        entry: EntryId,
        /// In words (`max_steps 4`).
        #[serde(serialize_with = "stop_words")]
        reason: StopReason,
        steps: u32,
        tokens: u64,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        undelivered: Vec<EntryId>,
    },
    Branch {
        entry: EntryId,
        from_leaf: EntryId,
    },
    Label {
        entry: EntryId,
        target: EntryId,
        name: String,
    },
    Undo {
        entry: EntryId,
        run: EntryId,
        files: Vec<String>,
        /// What the model is told on this branch (absent in entries older than the
        /// note, whose next prompt carried it instead).
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// A memory entry (SPEC.md §28): the turn's index, the extraction after it,
    /// the snapshot of the notes, a note forgotten; `kind` is the entry type.
    Memory {
        entry: EntryId,
        #[serde(rename = "type")]
        entry_type: &'static str,
        text: String,
    },
    /// A record of an imported session kept verbatim (SPEC.md §33).
    Foreign {
        entry: EntryId,
        text: String,
    },
    /// The session moved to another workspace (`--workspace DIR`).
    Workspace {
        entry: EntryId,
        from: String,
        to: String,
    },
    /// The runs after it are made of another provider (SPEC.md §22.2).
    Provider {
        entry: EntryId,
        #[serde(flatten)]
        provider: xcsh_log::ProviderRecord,
    },
    Recovered {
        entry: EntryId,
        note: String,
    },
    /// The user asked for a compaction between runs (`/compact`).
    CompactRequest {
        entry: EntryId,
    },
    LateEvent {
        entry: EntryId,
        step: u32,
    },
    Unknown {
        entry: EntryId,
        type_name: String,
    },
}

/// What the conversation shows of one entry; `None` for the entries it leaves out
/// (`step_started`, `tool_dispatched`, `compaction_started`, a successful
/// `compaction_summary`, `check_failed`: the step, the assistant's calls,
/// `compacted` and the call's synthetic result say it).
pub fn item(entry: &Entry) -> Option<Item> {
    let id = entry.id;
    let it = match &entry.body {
        Body::Record(r) => match r {
            Record::Session(h) => Item::Session {
                entry: id,
                session_id: h.session_id.clone(),
                cwd: h.cwd.clone(),
                forked_from: h
                    .forked_from
                    .as_ref()
                    .map(|f| format!("{} @ {}", f.session_id, f.entry)),
            },
            Record::Branch { from_leaf } => Item::Branch {
                entry: id,
                from_leaf: *from_leaf,
            },
            Record::Label { target, name } => Item::Label {
                entry: id,
                target: *target,
                name: name.clone(),
            },
            Record::Undo { run, files, note } => Item::Undo {
                entry: id,
                run: *run,
                files: files.iter().map(|f| f.display().to_string()).collect(),
                note: note.clone(),
            },
            memory_record!() => Item::Memory {
                entry: id,
                entry_type: r.type_name(),
                text: crate::common::entry_text(entry),
            },
            Record::Workspace { from, to } => Item::Workspace {
                entry: id,
                from: from.clone(),
                to: to.clone(),
            },
            Record::Provider(provider) => Item::Provider {
                entry: id,
                provider: provider.clone(),
            },
            Record::Foreign(_) => Item::Foreign {
                entry: id,
                text: crate::common::entry_text(entry),
            },
            Record::UserMessage { text, .. } => Item::User(UserView {
                entry: id,
                origin: UserOrigin::Prompt,
                text: text.clone(),
                queued: None,
            }),
            Record::Steer { text } => Item::Queued {
                entry: id,
                origin: UserOrigin::Steer,
                text: text.clone(),
            },
            Record::FollowUp { text } => Item::Queued {
                entry: id,
                origin: UserOrigin::FollowUp,
                text: text.clone(),
            },
            Record::Interrupt {} => Item::Interrupt { entry: id },
            Record::Step(s) => {
                let m = &s.message;
                let calls = match s.outcome {
                    StepOutcome::Completed => m.tool_calls.as_slice(),
                    StepOutcome::Failed { .. } | StepOutcome::Aborted => &[],
                };
                Item::Assistant(AssistantView {
                    entry: id,
                    step: s.step.0,
                    text: m.text.clone(),
                    reasoning: m.reasoning.clone(),
                    reasoning_chars: m.reasoning.chars().count(),
                    tool_calls: calls
                        .iter()
                        .map(|c| CallView {
                            id: c.id.0.clone(),
                            name: c.name.clone(),
                            arguments: args_compact(&c.arguments),
                        })
                        .collect(),
                    usage: m.usage,
                    finish: m.finish,
                    outcome: s.outcome.clone(),
                })
            }
            Record::ToolResult(t) => Item::ToolResult(ResultView {
                entry: id,
                call_id: t.call_id.0.clone(),
                name: t.name.clone(),
                status: t.outcome.status,
                content: t.outcome.content.clone(),
                duration_ms: t.duration_ms,
                synthetic: None,
                changed: t
                    .changes
                    .iter()
                    .map(|c| c.path.display().to_string())
                    .collect(),
            }),
            Record::CompactionSummary { error: Some(e), .. } => Item::CompactionFailed {
                entry: id,
                error: one_line(&e.message, 200),
            },
            Record::CompactionSummary { error: None, .. } => return None,
            // The call's `synthetic_result` (`would_fail`) shows the error.
            Record::CheckFailed { .. } => return None,
            Record::Recovered { note } => Item::Recovered {
                entry: id,
                note: note.clone(),
            },
            Record::Compact { .. } => Item::CompactRequest { entry: id },
            Record::LateEvent { step, .. } => Item::LateEvent {
                entry: id,
                step: step.0,
            },
            Record::ApprovalAnswer {
                call_id,
                verdict,
                scope,
                ..
            } => Item::ApprovalAnswer {
                entry: id,
                call_id: call_id.0.clone(),
                verdict: *verdict,
                scope: *scope,
            },
        },
        Body::Decision(d) => match d {
            Decision::StepStarted { .. }
            | Decision::ToolDispatched { .. }
            | Decision::CompactionStarted { .. } => return None,
            Decision::Delivered {
                origin,
                queued,
                text,
            } => Item::User(UserView {
                entry: id,
                origin: *origin,
                text: text.clone(),
                queued: Some(*queued),
            }),
            Decision::Approval {
                call_id,
                tool,
                verdict,
                by,
            } => Item::Approval {
                entry: id,
                call_id: call_id.0.clone(),
                tool: tool.clone(),
                verdict: *verdict,
                by: *by,
            },
            Decision::SyntheticResult {
                call,
                reason,
                content,
            } => Item::ToolResult(ResultView {
                entry: id,
                call_id: call.id.0.clone(),
                name: call.name.clone(),
                status: ToolStatus::Error,
                content: content.clone(),
                duration_ms: 0,
                synthetic: Some(*reason),
                changed: Vec::new(),
            }),
            Decision::Compacted {
                summary,
                first_kept,
                tokens_before,
                tokens_after,
            } => Item::Compaction {
                entry: id,
                summary: summary.clone(),
                first_kept: *first_kept,
                tokens_before: *tokens_before,
                tokens_after: *tokens_after,
            },
            Decision::Ignored { reason } => Item::Ignored {
                entry: id,
                reason: *reason,
            },
            Decision::RunFinished(end) => Item::RunFinished {
                entry: id,
                reason: end.reason.clone(),
                steps: end.steps,
                tokens: end.usage.spend(),
                undelivered: end.undelivered.clone(),
            },
        },
        Body::Unknown { type_name, .. } => Item::Unknown {
            entry: id,
            type_name: type_name.clone(),
        },
    };
    Some(it)
}

/// The conversation of the branch ending at `leaf` (the recorded leaf when `None`).
pub fn conversation(log: &SessionLog, leaf: Option<EntryId>) -> Result<Vec<Item>, InspectError> {
    let mut items = Vec::new();
    conversation_with(log, leaf, &mut |it| {
        items.push(it);
        true
    })?;
    Ok(items)
}

/// The conversation of the branch ending at `leaf` (the recorded leaf when `None`)
/// of `source`, item by item through `each` (until it returns `false`): from a log
/// in memory, or streamed from its file without holding more than its shape.
pub fn conversation_with(
    source: &impl Source,
    leaf: Option<EntryId>,
    each: &mut dyn FnMut(Item) -> bool,
) -> Result<(), InspectError> {
    let shapes = source.shapes()?;
    let path = shapes.path_to(leaf.unwrap_or_else(|| shapes.leaf()))?;
    branch_items(source, &shapes, &path, each)
}

/// [`conversation_with`] over the shapes read already, of the branch `path` (its
/// ids from the root, [`Shapes::path_to`]).
pub fn branch_items(
    source: &impl Source,
    shapes: &Shapes,
    path: &[EntryId],
    each: &mut dyn FnMut(Item) -> bool,
) -> Result<(), InspectError> {
    let on_path: HashSet<EntryId> = path.iter().copied().collect();
    // Labels are not on any path (nothing continues from them): show those naming
    // an entry of this branch right after it, in file order.
    // Only those are read (a pass of their own, skipped when there are none).
    let mut labels: HashMap<EntryId, Vec<Item>> = HashMap::new();
    let wanted: HashSet<EntryId> = shapes
        .labels
        .iter()
        .filter(|(_, target)| on_path.contains(target))
        .map(|&(id, _)| id)
        .collect();
    if !wanted.is_empty() {
        source.entries(
            shapes,
            crate::source::Visit {
                want: &|id| wanted.contains(&id),
                keep: &|e| match &e.body {
                    Body::Record(Record::Label { target, .. }) => Some((*target, item(e)?)),
                    _ => None,
                },
                each: &mut |label| {
                    if let Some((target, it)) = label {
                        labels.entry(target).or_default().push(it);
                    }
                    true
                },
            },
        )?;
    }
    let mut first = true;
    source.entries(
        shapes,
        crate::source::Visit {
            want: &|id| on_path.contains(&id),
            keep: &|e| Some((e.id, item(e)?)),
            each: &mut |kept| {
                let Some((id, mut it)) = kept else {
                    return true;
                };
                // The session's own id (a fork's is in its file name, its header is its
                // source's).
                if std::mem::take(&mut first)
                    && let Item::Session { session_id, .. } = &mut it
                {
                    *session_id = xcsh_log::session_id(source.file(), session_id).to_string();
                }
                if !each(it) {
                    return false;
                }
                labels.remove(&id).into_iter().flatten().all(&mut *each)
            },
        },
    )
}

mod render;

pub use render::{render, render_item, render_with};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Style;
    use crate::testkit;

    #[test]
    fn the_conversation_of_a_steered_run() {
        let (_dir, log) = testkit::steer_session();
        let items = conversation(&log, None).unwrap();
        expect_test::expect_file!["../tests/golden/the-conversation-of-a-steered-run.txt"]
            .assert_eq(&render(&items, Style::plain()));
    }

    /// Labels follow the entry they name, in the order they were written (as the
    /// tree lists them), and only those on this branch.
    #[test]
    fn labels_follow_their_entry_in_the_order_written() {
        let (dir, log) = testkit::branched_session();
        let mut text = std::fs::read_to_string(&log.path).unwrap();
        let mut parent = log.entries.last().unwrap().clone();
        for (id, target, name) in [
            (18, 14, "first"),
            (19, 14, "second"),
            (20, 9, "off the branch"),
        ] {
            let target = EntryId(target);
            let (line, hash) = Entry::encode(
                EntryId(id),
                Some(target),
                Some(&log.get(target).unwrap().hash),
                parent.ts,
                &Body::Record(Record::Label {
                    target,
                    name: name.into(),
                }),
            );
            text.push_str(std::str::from_utf8(&line).unwrap());
            parent.hash = hash;
        }
        std::fs::write(&log.path, text).unwrap();
        let log = xcsh_log::read_session(&log.path).unwrap();
        let entries: Vec<u64> = conversation(&log, None)
            .unwrap()
            .iter()
            .map(|i| serde_json::to_value(i).unwrap()["entry"].as_u64().unwrap())
            .collect();
        assert_eq!(entries, vec![0, 1, 3, 5, 7, 8, 13, 14, 18, 19, 16, 17]);
        let mut streamed = Vec::new();
        conversation_with(&crate::Streamed::new(&log.path), None, &mut |it| {
            streamed.push(it);
            true
        })
        .unwrap();
        assert_eq!(streamed, conversation(&log, None).unwrap());
        drop(dir);
    }

    /// Streamed from the file, the conversation is the one of the log in memory,
    /// on every branch.
    #[test]
    fn the_streamed_conversation_is_the_one_in_memory() {
        for (_dir, log) in [testkit::steer_session(), testkit::branched_session()] {
            let source = crate::Streamed::new(&log.path);
            for leaf in [None, Some(EntryId(12)), Some(EntryId(3))] {
                let mut streamed = Vec::new();
                conversation_with(&source, leaf, &mut |it| {
                    streamed.push(it);
                    true
                })
                .unwrap();
                assert_eq!(streamed, conversation(&log, leaf).unwrap());
            }
            let missing = conversation_with(&source, Some(EntryId(999)), &mut |_| true);
            assert_eq!(
                missing.unwrap_err().to_string(),
                conversation(&log, Some(EntryId(999)))
                    .unwrap_err()
                    .to_string()
            );
        }
    }

    /// By default a step's reasoning is folded to one line of 100 characters.
    #[test]
    fn reasoning_is_folded_to_one_line_by_default() {
        let (_dir, log) = testkit::reasoning_session();
        let items = conversation(&log, None).unwrap();
        expect_test::expect![[r#"
            session fixture in /workspace

            ▶ user #1
                print the date as ISO 8601
            ◆ assistant #3 · step 1 · 100 in / 10 out
                (reasoning, 163 chars) The user wants the date printed in ISO 8601. First read src/main.rs to see how it prints the date n…
                Done: the date prints as 2026-01-01.
            ■ run finished #4: completed · 1 step(s) · 110 tokens
        "#]]
        .assert_eq(&render(&items, Style::plain()));
    }

    /// `--reasoning` shows a step's reasoning whole, line by line.
    #[test]
    fn full_reasoning_shows_every_line() {
        let (_dir, log) = testkit::reasoning_session();
        let steps: Vec<Item> = conversation(&log, None)
            .unwrap()
            .into_iter()
            .filter(|i| matches!(i, Item::Assistant(_)))
            .collect();
        expect_test::expect![[r#"
            ◆ assistant #3 · step 1 · 100 in / 10 out
                (reasoning, 163 chars)
                  The user wants the date printed in ISO 8601.
                  First read src/main.rs to see how it prints the date now,
                  then change the format string to %Y-%m-%d and run the tests.
                Done: the date prints as 2026-01-01.
        "#]]
        .assert_eq(&render_with(&steps, Style::plain(), Reasoning::Full));
    }

    #[test]
    fn another_leaf_shows_another_branch_with_reasoning_folded() {
        let (_dir, log) = testkit::branched_session();
        let items = conversation(&log, None).unwrap();
        let text = render(&items, Style::plain());
        assert!(text.contains("instead, another task"), "{text}");
        assert!(!text.contains("second task"), "{text}");
        assert!(
            text.contains("(reasoning, 30 chars) thinking about the alternative"),
            "{text}"
        );
        let first = conversation(&log, Some(EntryId(12))).unwrap();
        let text = render(&first, Style::plain());
        assert!(text.contains("second task"), "{text}");
        assert!(!text.contains("instead"), "{text}");
    }
}
