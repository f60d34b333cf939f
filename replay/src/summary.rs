//! One-line summaries for reports: of entries and decisions (the one wording of
//! `xcsh_log::describe`, which inspect shows too), of the machine's phase and of
//! context messages: short enough for a terminal line, specific enough to recognize
//! the entry.

use serde::Serialize;
use xcsh_log::Entry;
use xcsh_log::describe::{entry_text, one_line, speaker, stop_text};
use xcsh_machine::{Message, Phase};

pub use xcsh_log::describe::{decision_text as decision_summary, entry_text as entry_summary};

/// The longest quoted text kept in a summary, in characters.
const QUOTE: usize = 48;

/// An entry named in a report: its id, line, type and a one-line summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntryRef {
    pub id: xcsh_machine::EntryId,
    pub line: Option<u32>,
    #[serde(rename = "type")]
    pub type_name: String,
    pub summary: String,
}

impl EntryRef {
    pub fn new(entry: &Entry, line: Option<u32>) -> EntryRef {
        EntryRef {
            id: entry.id,
            line,
            type_name: entry.type_name().to_string(),
            summary: entry_text(entry),
        }
    }
}

/// The phase a machine is in, without its data: what a minimized log must keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseKind {
    Idle,
    Streaming,
    RunningTools,
    Compacting,
    Finished,
}

impl PhaseKind {
    pub fn of(phase: &Phase) -> PhaseKind {
        match phase {
            Phase::Idle => PhaseKind::Idle,
            Phase::Streaming(_) => PhaseKind::Streaming,
            Phase::RunningTools(_) => PhaseKind::RunningTools,
            Phase::Compacting(_) => PhaseKind::Compacting,
            Phase::Finished(_) => PhaseKind::Finished,
        }
    }
}

/// The phase in words, with its data (`running 2 tool call(s) of step 3`).
pub fn phase_name(phase: &Phase) -> String {
    match phase {
        Phase::Idle => "idle".into(),
        Phase::Streaming(s) => {
            let flag = if s.interrupted { ", interrupted" } else { "" };
            format!("streaming step {}{flag}", s.step)
        }
        Phase::RunningTools(t) => {
            let waiting = if t.awaiting.is_empty() {
                String::new()
            } else {
                format!(", {} awaiting approval", t.awaiting.len())
            };
            let flag = if t.interrupted { ", interrupted" } else { "" };
            format!(
                "running {} tool call(s) of step {}{waiting}{flag}",
                t.pending.len(),
                t.step
            )
        }
        Phase::Compacting(c) => {
            let flag = if c.interrupted { ", interrupted" } else { "" };
            format!("compacting (first kept entry {}){flag}", c.first_kept)
        }
        Phase::Finished(r) => format!("finished: {}", stop_text(r)),
    }
}

/// Text on one line, cut to `QUOTE` characters.
pub(crate) fn clip(text: &str) -> String {
    one_line(text, QUOTE)
}

/// Text on one line, cut, in quotes as every view quotes ([`xcsh_log::describe::quoted`]).
pub(crate) fn quote(text: &str) -> String {
    xcsh_log::describe::quoted(&clip(text))
}

/// A context message: its role and what it says, on one line.
pub fn message_summary(message: &Message) -> (String, String) {
    match message {
        Message::User { origin, text } => (speaker(*origin).to_lowercase(), quote(text)),
        Message::Assistant {
            text, tool_calls, ..
        } => {
            let mut parts = Vec::new();
            if !text.is_empty() {
                parts.push(quote(text));
            }
            for c in tool_calls {
                parts.push(format!("{} {}", c.name, clip(&c.arguments)));
            }
            if parts.is_empty() {
                parts.push("(empty)".into());
            }
            ("assistant".into(), parts.join(" + "))
        }
        Message::ToolResult {
            call_id,
            name,
            is_error,
            content,
        } => {
            let status = if *is_error { "error" } else { "ok" };
            (
                "tool_result".into(),
                format!("{call_id} {name} {status}: {}", clip(content)),
            )
        }
        Message::Summary { text } => ("summary".into(), quote(text)),
    }
}
