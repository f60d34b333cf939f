//! The one-line summary of a session and the `xcsh sessions` table.

use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde::Serialize;
use xcsh_core::log::{Body, Dag, Record, SessionLog};
use xcsh_core::machine::{Decision, Usage};

use crate::common::one_line;

/// What `xcsh sessions` shows of one session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    pub id: String,
    pub path: String,
    pub workspace: String,
    pub started: String,
    pub entries: usize,
    pub branches: usize,
    pub last_message: String,
    pub tokens: u64,
}

/// Summarizes a session: counts, leaves, the last user message, tokens spent.
pub fn summarize(log: &SessionLog) -> SessionSummary {
    let header = log.header();
    let mut last_message = String::new();
    let mut usage = Usage::default();
    for entry in &log.entries {
        match &entry.body {
            Body::Record(Record::UserMessage { text, .. })
            | Body::Record(Record::Steer { text })
            | Body::Record(Record::FollowUp { text }) => last_message.clone_from(text),
            Body::Decision(Decision::RunFinished { usage: u, .. }) => usage.add(u),
            _ => {}
        }
    }
    let started = log
        .entries
        .first()
        .map(|e| e.ts.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default();
    SessionSummary {
        id: header.session_id.clone(),
        path: log.path.display().to_string(),
        workspace: header.cwd.clone(),
        started,
        entries: log.entries.len(),
        branches: Dag::build(&log.entries).leaves().len(),
        last_message: one_line(&last_message, 60),
        tokens: usage.spend(),
    }
}

/// The `xcsh sessions` table.
pub fn sessions_table(sessions: &[SessionSummary]) -> String {
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header([
            "id",
            "workspace",
            "started",
            "entries",
            "branches",
            "tokens",
            "last message",
        ]);
    for s in sessions {
        table.add_row([
            s.id.clone(),
            s.workspace.clone(),
            s.started.clone(),
            s.entries.to_string(),
            s.branches.to_string(),
            s.tokens.to_string(),
            s.last_message.clone(),
        ]);
    }
    table.to_string()
}
