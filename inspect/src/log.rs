//! `xcsh log`: the conversation of one branch as a reader wants it: user messages,
//! assistant text (reasoning folded to one line), tool calls with their arguments and
//! (capped) results, steers and follow-ups marked as such, compactions with their
//! summaries, approvals, and how each run ended.

use serde::Serialize;
use xcsh_log::{Body, Entry, Record, SessionLog, memory_record};
use xcsh_machine::{Decision, EntryId, StepOutcome, Usage};

use crate::common::{
    args_compact, branch_path, cap, one_line, origin_name, outcome_text, serde_name, stop_text,
};
use crate::error::InspectError;
use crate::style::{Paint, Style};

/// Longest tool result shown, in lines and characters.
pub const RESULT_LINES: usize = 12;
pub const RESULT_CHARS: usize = 1200;

/// One tool call as the model asked for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallView {
    pub id: String,
    pub name: String,
    /// Canonical compact JSON (sorted keys) when the arguments parse, else as given.
    pub arguments: String,
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
    /// A message the model sees as the user's: the prompt, or a delivered steer or
    /// follow-up (`queued` is its arrival entry).
    User {
        entry: EntryId,
        origin: &'static str,
        text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        queued: Option<EntryId>,
    },
    /// A steer or follow-up arrived (it is delivered later, or never).
    Queued {
        entry: EntryId,
        origin: &'static str,
        text: String,
    },
    Assistant {
        entry: EntryId,
        step: u32,
        text: String,
        /// The reasoning on one line, shortened.
        #[serde(skip_serializing_if = "String::is_empty")]
        reasoning: String,
        reasoning_chars: usize,
        tool_calls: Vec<CallView>,
        usage: Usage,
        #[serde(skip_serializing_if = "Option::is_none")]
        finish: Option<String>,
        outcome: String,
    },
    ToolResult {
        entry: EntryId,
        call_id: String,
        name: String,
        status: String,
        /// Capped to [`RESULT_LINES`] lines and [`RESULT_CHARS`] characters.
        content: String,
        duration_ms: u64,
        /// Why the call was answered without running (`synthetic_result`).
        #[serde(skip_serializing_if = "Option::is_none")]
        synthetic: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        changed: Vec<String>,
    },
    Approval {
        entry: EntryId,
        call_id: String,
        tool: String,
        verdict: String,
        by: String,
    },
    ApprovalAnswer {
        entry: EntryId,
        call_id: String,
        verdict: String,
        scope: String,
    },
    Interrupt {
        entry: EntryId,
    },
    Ignored {
        entry: EntryId,
        reason: String,
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
        reason: String,
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
/// `compaction_summary`: the step, the assistant's calls and `compacted` say it).
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
            Record::Foreign(_) => Item::Foreign {
                entry: id,
                text: crate::common::entry_text(entry),
            },
            Record::UserMessage { text, .. } => Item::User {
                entry: id,
                origin: "prompt",
                text: text.clone(),
                queued: None,
            },
            Record::Steer { text } => Item::Queued {
                entry: id,
                origin: "steer",
                text: text.clone(),
            },
            Record::FollowUp { text } => Item::Queued {
                entry: id,
                origin: "follow_up",
                text: text.clone(),
            },
            Record::Interrupt {} => Item::Interrupt { entry: id },
            Record::Step(s) => {
                let m = &s.message;
                let calls = match s.outcome {
                    StepOutcome::Completed => m.tool_calls.as_slice(),
                    StepOutcome::Failed { .. } | StepOutcome::Aborted => &[],
                };
                Item::Assistant {
                    entry: id,
                    step: s.step.0,
                    text: m.text.clone(),
                    reasoning: one_line(&m.reasoning, 100),
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
                    finish: m.finish.as_ref().map(serde_name),
                    outcome: outcome_text(&s.outcome),
                }
            }
            Record::ToolResult(t) => Item::ToolResult {
                entry: id,
                call_id: t.call_id.0.clone(),
                name: t.name.clone(),
                status: serde_name(&t.outcome.status),
                content: cap(&t.outcome.content, RESULT_LINES, RESULT_CHARS),
                duration_ms: t.duration_ms,
                synthetic: None,
                changed: t
                    .changes
                    .iter()
                    .map(|c| c.path.display().to_string())
                    .collect(),
            },
            Record::CompactionSummary { error: Some(e), .. } => Item::CompactionFailed {
                entry: id,
                error: one_line(&e.message, 200),
            },
            Record::CompactionSummary { error: None, .. } => return None,
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
                verdict: serde_name(verdict),
                scope: serde_name(scope),
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
            } => Item::User {
                entry: id,
                origin: origin_name(*origin),
                text: text.clone(),
                queued: Some(*queued),
            },
            Decision::Approval {
                call_id,
                tool,
                verdict,
                by,
            } => Item::Approval {
                entry: id,
                call_id: call_id.0.clone(),
                tool: tool.clone(),
                verdict: serde_name(verdict),
                by: serde_name(by),
            },
            Decision::SyntheticResult {
                call,
                reason,
                content,
            } => Item::ToolResult {
                entry: id,
                call_id: call.id.0.clone(),
                name: call.name.clone(),
                status: "error".into(),
                content: cap(content, RESULT_LINES, RESULT_CHARS),
                duration_ms: 0,
                synthetic: Some(serde_name(reason)),
                changed: Vec::new(),
            },
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
                reason: serde_name(reason),
            },
            Decision::RunFinished {
                reason,
                steps,
                usage,
                undelivered,
            } => Item::RunFinished {
                entry: id,
                reason: stop_text(reason),
                steps: *steps,
                tokens: usage.spend(),
                undelivered: undelivered.clone(),
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
    let leaf = leaf.unwrap_or_else(|| log.leaf());
    let mut path: Vec<(EntryId, Item)> = branch_path(log, leaf)?
        .into_iter()
        .filter_map(|e| Some((e.id, item(e)?)))
        .collect();
    // The session's own id (a fork's is in its file name, its header is its source's).
    if let Some((_, Item::Session { session_id, .. })) = path.first_mut() {
        *session_id = xcsh_log::session_id(&log.path, session_id).to_string();
    }
    // Labels are not on any path (nothing continues from them): show those naming
    // an entry of this branch right after it, in file order.
    let on_path: std::collections::HashSet<EntryId> = path.iter().map(|(id, _)| *id).collect();
    let mut labels: std::collections::HashMap<EntryId, Vec<Item>> = Default::default();
    for e in &log.entries {
        if let Body::Record(Record::Label { target, .. }) = &e.body
            && on_path.contains(target)
            && let Some(label) = item(e)
        {
            labels.entry(*target).or_default().push(label);
        }
    }
    let mut items = Vec::with_capacity(path.len() + labels.values().map(Vec::len).sum::<usize>());

    for (id, it) in path {
        let named = labels.remove(&id);
        items.push(it);
        items.extend(named.into_iter().flatten());
    }
    Ok(items)
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The conversation as text.
pub fn render(items: &[Item], style: Style) -> String {
    let mut out = String::new();
    let mut push = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    for it in items {
        match it {
            Item::Session {
                session_id,
                cwd,
                forked_from,
                ..
            } => {
                push(style.paint(Paint::Dim, &format!("session {session_id} in {cwd}")));
                if let Some(f) = forked_from {
                    push(style.paint(Paint::Dim, &format!("forked from {f}")));
                }
            }
            Item::User {
                entry,
                origin,
                text,
                queued,
            } => {
                let head = match (origin, queued) {
                    (&"prompt", _) => format!("\n▶ user #{entry}"),
                    (o, Some(q)) => format!(
                        "▶ {} #{entry} (delivered, arrived as #{q})",
                        o.replace('_', "-")
                    ),
                    (o, None) => format!("▶ {} #{entry}", o.replace('_', "-")),
                };
                push(style.paint(Paint::Bold, &style.paint(Paint::Cyan, &head)));
                push(indent(text));
            }
            Item::Queued {
                entry,
                origin,
                text,
            } => push(style.paint(
                Paint::Cyan,
                &format!(
                    "⧗ {} arrived #{entry}: {}",
                    origin.replace('_', "-"),
                    one_line(text, 100)
                ),
            )),
            Item::Assistant {
                entry,
                step,
                text,
                reasoning,
                reasoning_chars,
                tool_calls,
                usage,
                outcome,
                ..
            } => {
                let mut head = format!(
                    "◆ assistant #{entry} · step {step} · {} in / {} out",
                    usage.input_tokens, usage.output_tokens
                );
                if outcome != "completed" {
                    head.push_str(&format!(" · {outcome}"));
                }
                push(style.paint(Paint::Bold, &head));
                if !reasoning.is_empty() {
                    push(style.paint(
                        Paint::Dim,
                        &format!("    (reasoning, {reasoning_chars} chars) {reasoning}"),
                    ));
                }
                if !text.is_empty() {
                    push(indent(text));
                }
                for c in tool_calls {
                    push(style.paint(
                        Paint::Yellow,
                        &format!(
                            "    → {} {} {}",
                            c.name,
                            c.id,
                            crate::common::cut(&c.arguments, 300)
                        ),
                    ));
                }
            }
            Item::ToolResult {
                entry,
                call_id,
                name,
                status,
                content,
                duration_ms,
                synthetic,
                changed,
            } => {
                let how = match synthetic {
                    Some(reason) => format!("not run: {reason}"),
                    None => format!("{status} · {duration_ms} ms"),
                };
                let head = format!("← {name} {call_id} #{entry} · {how}");
                push(if status == "ok" {
                    style.paint(Paint::Green, &head)
                } else {
                    style.paint(Paint::Red, &head)
                });
                if !content.is_empty() {
                    push(indent(content));
                }
                for path in changed {
                    push(style.paint(Paint::Dim, &format!("    changed {path}")));
                }
            }
            Item::Approval {
                entry,
                call_id,
                tool,
                verdict,
                by,
            } => push(style.paint(
                Paint::Magenta,
                &format!("✓ approval #{entry}: {tool} {call_id} {verdict} by {by}"),
            )),
            Item::ApprovalAnswer {
                entry,
                call_id,
                verdict,
                scope,
            } => push(style.paint(
                Paint::Magenta,
                &format!("✓ the user answered #{entry}: {call_id} {verdict} ({scope})"),
            )),
            Item::Interrupt { entry } => {
                push(style.paint(Paint::Red, &format!("✗ interrupt #{entry}")))
            }
            Item::Ignored { entry, reason } => {
                push(style.paint(Paint::Dim, &format!("  (ignored #{entry}: {reason})")))
            }
            Item::Compaction {
                entry,
                summary,
                first_kept,
                tokens_before,
                tokens_after,
            } => {
                push(style.paint(Paint::Blue, &format!(
                    "⇢ compacted #{entry}: {tokens_before} → {tokens_after} tokens, kept from #{first_kept}"
                )));
                push(indent(&cap(summary, RESULT_LINES, RESULT_CHARS)));
            }
            Item::CompactionFailed { entry, error } => push(style.paint(
                Paint::Red,
                &format!("⇢ compaction failed #{entry}: {error}"),
            )),
            Item::RunFinished {
                entry,
                reason,
                steps,
                tokens,
                undelivered,
            } => {
                let mut s = format!(
                    "■ run finished #{entry}: {reason} · {steps} step(s) · {tokens} tokens"
                );
                if !undelivered.is_empty() {
                    let ids: Vec<String> = undelivered.iter().map(|i| format!("#{i}")).collect();
                    s.push_str(&format!(" · undelivered {}", ids.join(", ")));
                }
                push(style.paint(Paint::Dim, &s));
            }
            Item::Branch { entry, from_leaf } => push(style.paint(
                Paint::Blue,
                &format!("\n↳ branch #{entry}: continues here (the leaf was #{from_leaf})"),
            )),
            Item::Label {
                entry,
                target,
                name,
            } => push(style.paint(
                Paint::Magenta,
                &format!("◇ label #{entry} on #{target}: {name}"),
            )),
            Item::Recovered { entry, note } => {
                push(style.paint(Paint::Red, &format!("! recovered #{entry}: {note}")))
            }
            Item::Undo {
                entry,
                run,
                files,
                note,
            } => push(style.paint(
                Paint::Magenta,
                &format!(
                    "↶ undo #{entry}: the file changes of run #{run} reverted: {}{}",
                    files.join(", "),
                    if note.is_some() {
                        " (the model is told with the next request on this branch)"
                    } else {
                        ""
                    }
                ),
            )),
            Item::Memory { entry, text, .. } => {
                push(style.paint(Paint::Blue, &format!("\n◆ {text} #{entry}")))
            }
            Item::Foreign { entry, text } => {
                push(style.paint(Paint::Dim, &format!("\n⇢ foreign #{entry}: {text}")))
            }
            Item::Workspace { entry, from, to } => push(style.paint(
                Paint::Blue,
                &format!("\n⇢ workspace #{entry}: the session moved from {from} to {to}"),
            )),
            Item::CompactRequest { entry } => push(style.paint(
                Paint::Blue,
                &format!("\n⇢ compact requested #{entry} (/compact)"),
            )),
            Item::LateEvent { entry, step } => push(style.paint(
                Paint::Dim,
                &format!("  (a late stream event of step {step} #{entry})"),
            )),
            Item::Unknown { entry, type_name } => push(style.paint(
                Paint::Dim,
                &format!("? #{entry} of unknown type {type_name}"),
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;

    #[test]
    fn the_conversation_of_a_steered_run() {
        let (_dir, log) = testkit::steer_session();
        let items = conversation(&log, None).unwrap();
        expect_test::expect![[r#"
            session fixture in /workspace

            ▶ user #1
                list the files and say hello
            ⧗ steer arrived #3: also check b
            ◆ assistant #4 · step 1 · 100 in / 10 out
                looking
                → echo call_1_1 {"a":1}
                → echo call_1_2 {"b":2}
            ⧗ follow-up arrived #7: then summarize
            ← echo call_1_1 #8 · ok · 30 ms
                {"a":1}
            ← echo call_1_2 #9 · ok · 30 ms
                {"b":2}
            ▶ steer #10 (delivered, arrived as #3)
                also check b
            ◆ assistant #12 · step 2 · 200 in / 10 out
                done with both
            ▶ follow-up #13 (delivered, arrived as #7)
                then summarize
            ◆ assistant #15 · step 3 · 300 in / 10 out
                summary: all good
            ■ run finished #16: completed · 3 step(s) · 730 tokens
        "#]]
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
        drop(dir);
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
