//! The one-line summary of a session and the `xcsh sessions` table.

use std::path::Path;

use comfy_table::{ColumnConstraint, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde::Serialize;
use xcsh_log::SessionLog;
use xcsh_log::index::{ArchivedIndexData, Kind, index_of, open_index};

use crate::common::one_line;
use crate::error::InspectError;

/// What `xcsh sessions` shows of one session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    pub id: String,
    pub path: String,
    pub workspace: String,
    pub started: String,
    /// When the session was last active: the time of its last entry (in file
    /// order), formatted as `started` is; the order of `xcsh sessions`.
    pub last_active: String,
    pub entries: usize,
    pub branches: usize,
    pub last_message: String,
    pub tokens: u64,
    /// The first `user_message` text, whitespace collapsed, at most 100 characters
    /// (`…` when cut): what the session was started for (the session picker).
    pub first_message: String,
    /// The header's time in ms since the epoch (`started` is it, formatted).
    #[serde(skip)]
    pub started_ms: i64,
    /// [`last_active`](Self::last_active) in ms since the epoch.
    #[serde(skip)]
    pub active_ms: i64,
    /// A sub-agent's session: the session whose `task` call started it (SPEC.md
    /// §29.6; set by [`family_order`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Generations below a session listed at the top level (0 for those).
    #[serde(skip)]
    pub depth: usize,
}

/// Summarizes a session: counts, leaves, the last user message, tokens spent; from
/// its index made in memory (the one summary of [`summarize_path`] too).
pub fn summarize(log: &SessionLog) -> SessionSummary {
    match index_of(log, None) {
        Ok(index) => summarize_indexed(&log.path, index.data()),
        // An index is made of any log but one without entries: nothing to say.
        Err(_) => SessionSummary {
            id: xcsh_log::session_id(&log.path, "").to_string(),
            path: log.path.display().to_string(),
            workspace: String::new(),
            started: String::new(),
            last_active: String::new(),
            entries: 0,
            branches: 0,
            last_message: String::new(),
            tokens: 0,
            first_message: String::new(),
            started_ms: 0,
            active_ms: 0,
            parent: None,
            depth: 0,
        },
    }
}

/// Characters of [`SessionSummary::first_message`] (fewer than the index keeps of a
/// prompt, [`xcsh_log::index::PREVIEW_CHARS`], so both summaries agree).
const FIRST_MESSAGE_CHARS: usize = 100;

/// Summarizes the session file at `path` from its index (built or extended when
/// needed).
pub fn summarize_path(path: &Path) -> Result<SessionSummary, InspectError> {
    let index = open_index(path)?;
    Ok(summarize_indexed(path, index.data()))
}

/// The summary from an index of the log at `path`. The branches are the entries
/// without children, labels not counted (a label hangs off the entry it was written
/// after, but it is not a branch, as in `xcsh tree`).
pub fn summarize_indexed(path: &Path, d: &ArchivedIndexData) -> SessionSummary {
    let mut last_message = "";
    let mut first_message: Option<&str> = None;
    let mut tokens = 0u64;
    let mut has_child = vec![false; d.len()];
    for pos in 0..d.len() {
        match d.kind(pos) {
            Kind::UserMessage | Kind::Steer | Kind::FollowUp => {
                last_message = xcsh_log::mention::preview(d.str(&d.prompts[d.aux(pos)].preview));
                if d.kind(pos) == Kind::UserMessage {
                    first_message.get_or_insert(last_message);
                }
            }
            Kind::RunFinished => {
                tokens = tokens.saturating_add(d.finishes[d.aux(pos)].spend.to_native());
            }
            _ => {}
        }
        if d.kind(pos) == Kind::Label {
            continue;
        }
        if let Some(p) = d.parent(pos) {
            has_child[p] = true;
        }
    }
    let minute = |ms: i64| {
        chrono::DateTime::from_timestamp_millis(ms)
            .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_default()
    };
    let active_ms = last_active_ms(d);
    SessionSummary {
        id: xcsh_log::session_id(path, d.session_id.as_str()).to_string(),
        path: path.display().to_string(),
        workspace: d.cwd.as_str().to_string(),
        started: minute(d.started_ms.to_native()),
        last_active: minute(active_ms),
        entries: d.len(),
        branches: (0..d.len())
            .filter(|&p| !has_child[p] && d.kind(p) != Kind::Label)
            .count(),
        last_message: one_line(last_message, 60),
        tokens,
        first_message: one_line(first_message.unwrap_or_default(), FIRST_MESSAGE_CHARS),
        started_ms: d.started_ms.to_native(),
        active_ms,
        parent: None,
        depth: 0,
    }
}

/// The `xcsh sessions` table.
/// When the session indexed by `d` was last active, in ms since the epoch: the time
/// of its last entry (the log's own timestamps, which a copy or a `touch` of the
/// file does not change, as they do its modification time); the header's time when
/// that one is out of range.
fn last_active_ms(d: &ArchivedIndexData) -> i64 {
    match d.len().checked_sub(1).map(|last| d.ts_ns(last)) {
        Some(ns) if ns != i64::MIN => ns.div_euclid(1_000_000),
        _ => d.started_ms.to_native(),
    }
}

/// The `xcsh sessions` table (SPEC §16.3), as wide as the terminal when stdout is
/// one, else as wide as its content.
pub fn sessions_table(sessions: &[SessionSummary]) -> String {
    sessions_table_in(sessions, None)
}

/// The narrowest the `last message` column (and `workspace`, when shown) is let
/// become before other columns are left out.
const MIN_MESSAGE_WIDTH: usize = 20;

/// [`sessions_table`] `width` columns wide (`None`: the terminal's, if any). The
/// id (what users copy), the workspace, the times and the counts never wrap; the
/// workspace column is left out when every row has the same one (always so without
/// `--all`); the message takes what is left. On a terminal too narrow for that,
/// `branches`, `started`, `entries` and `tokens` are left out, in that order, until
/// the message has [`MIN_MESSAGE_WIDTH`] columns (if it still has not, the
/// workspace wraps too).
fn sessions_table_in(sessions: &[SessionSummary], width: Option<u16>) -> String {
    let one_workspace = sessions
        .windows(2)
        .all(|w| w[0].workspace == w[1].workspace);
    // The workspace and the message come from the log (a model's text, a path):
    // neutralized for the terminal (SPEC §16.6), as every other view does.
    let rows: Vec<[String; 8]> = sessions
        .iter()
        .map(|s| {
            [
                if s.depth == 0 {
                    s.id.clone()
                } else {
                    format!("{}↳ {}", "  ".repeat(s.depth - 1), s.id)
                },
                crate::terminal::neutralize(&s.workspace).into_owned(),
                s.started.clone(),
                s.last_active.clone(),
                s.entries.to_string(),
                s.branches.to_string(),
                s.tokens.to_string(),
                crate::terminal::neutralize(&s.last_message).into_owned(),
            ]
        })
        .collect();
    let header = [
        "id",
        "workspace",
        "started",
        "last active",
        "entries",
        "branches",
        "tokens",
        "last message",
    ];
    let (workspace, message) = (1, 7);
    let mut shown: Vec<usize> = (0..header.len())
        .filter(|&c| c != workspace || !one_workspace)
        .collect();
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    if let Some(width) = width {
        table.set_width(width);
    }
    // The workspace wraps only when it is that or a message narrower than
    // MIN_MESSAGE_WIDTH.
    let mut wrap_workspace = false;
    if let Some(width) = table.width().map(usize::from) {
        // What a column takes: its widest cell, 2 of padding and its border.
        let fixed = |c: usize| {
            let widest = rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0);
            widest.max(header[c].chars().count()) + 3
        };
        let needed = |shown: &[usize], wrap_workspace: bool| {
            1 + shown
                .iter()
                .map(|&c| match c {
                    c if c == message || (c == workspace && wrap_workspace) => {
                        MIN_MESSAGE_WIDTH + 3
                    }
                    c => fixed(c),
                })
                .sum::<usize>()
        };
        for leave_out in [5, 2, 4, 6] {
            if needed(&shown, false) <= width {
                break;
            }
            shown.retain(|&c| c != leave_out);
        }
        wrap_workspace = needed(&shown, false) > width;
    }
    table.set_header(shown.iter().map(|&c| header[c]));
    for row in &rows {
        table.add_row(shown.iter().map(|&c| row[c].as_str()));
    }
    for (column, &c) in table.column_iter_mut().zip(&shown) {
        if c != message && !(c == workspace && wrap_workspace) {
            column.set_constraint(ColumnConstraint::ContentWidth);
        }
    }
    table.to_string()
}

mod family;

pub use family::{family_order, family_order_opened};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Kit;
    use xcsh_log::{Body, Record};
    use xcsh_machine::EntryId;

    /// Labels on an inner entry and on the leaf hang off those entries, but the
    /// session still has the two branches `xcsh tree` draws.
    #[test]
    fn labels_are_not_counted_as_branches() {
        let mut k = crate::testkit::branched();
        let leaf = k.leaf();
        for target in [EntryId(2), leaf] {
            k.append_raw(
                leaf,
                Body::Record(Record::Label {
                    target,
                    name: format!("at {target}"),
                }),
            );
        }
        let (_dir, log) = k.finish();
        assert_eq!(summarize(&log).branches, 2);
    }

    #[test]
    fn the_sessions_table_neutralizes_what_came_from_the_log() {
        let mut k = Kit::new("hostile");
        k.prompt("first");
        k.step(1, "done", &[]);
        k.prompt("clear \x1b[2J\x1b]0;owned\x07 now");
        k.step(1, "done", &[]);
        let (_dir, log) = k.finish();
        let table = sessions_table(&[summarize(&log)]);
        assert!(
            !table.contains('\x1b') && !table.contains('\x07'),
            "{table:?}"
        );
        assert!(table.contains("clear ␛[2J␛]0;owned␇ now"), "{table}");
    }

    /// Two sessions as `xcsh sessions` lists them; with `other`, the second is of
    /// another workspace (as `--all` may list).
    fn two_listed(other: bool) -> Vec<SessionSummary> {
        let session = |id: &str, workspace: &str, message: &str| SessionSummary {
            id: id.to_string(),
            path: format!("/h/sessions/{id}.jsonl"),
            workspace: workspace.to_string(),
            started: "2026-11-30 03:31".to_string(),
            last_active: "2026-12-01 17:02".to_string(),
            entries: 1234,
            branches: 2,
            last_message: message.to_string(),
            tokens: 98765,
            first_message: message.to_string(),
            started_ms: 0,
            active_ms: 0,
            parent: None,
            depth: 0,
        };
        vec![
            session(
                "9bdf6e0a1c2d",
                "/home/ada/projects/xcsh",
                "now make the parser accept a trailing comma in every list",
            ),
            session(
                "e6c62a58b0f1",
                if other {
                    "/home/ada/notes"
                } else {
                    "/home/ada/projects/xcsh"
                },
                "fix the failing test",
            ),
        ]
    }

    /// At 60 columns the id and the time stay whole, on one line; the columns that
    /// do not fit are left out and the message wraps in what is left.
    #[test]
    fn a_narrow_sessions_table_keeps_the_id_whole_and_wraps_only_the_message() {
        expect_test::expect![[r#"
            ┌──────────────┬──────────────────┬────────────────────────┐
            │ id           ┆ last active      ┆ last message           │
            ╞══════════════╪══════════════════╪════════════════════════╡
            │ 9bdf6e0a1c2d ┆ 2026-12-01 17:02 ┆ now make the parser    │
            │              ┆                  ┆ accept a trailing      │
            │              ┆                  ┆ comma in every list    │
            │ e6c62a58b0f1 ┆ 2026-12-01 17:02 ┆ fix the failing test   │
            └──────────────┴──────────────────┴────────────────────────┘"#]]
        .assert_eq(&sessions_table_in(&two_listed(false), Some(60)));
    }

    /// One workspace (always so without `--all`) is not repeated on every row; two
    /// are shown, whole. The message takes what the other columns leave, and the
    /// columns that would leave it less than 20 are left out (`branches` at 100
    /// columns, `started` too at 120 with the workspace).
    #[test]
    fn the_workspace_column_shows_only_when_the_rows_differ_in_it() {
        expect_test::expect![[r#"
            ┌──────────────┬──────────────────┬──────────────────┬─────────┬────────┬──────────────────────────┐
            │ id           ┆ started          ┆ last active      ┆ entries ┆ tokens ┆ last message             │
            ╞══════════════╪══════════════════╪══════════════════╪═════════╪════════╪══════════════════════════╡
            │ 9bdf6e0a1c2d ┆ 2026-11-30 03:31 ┆ 2026-12-01 17:02 ┆ 1234    ┆ 98765  ┆ now make the parser      │
            │              ┆                  ┆                  ┆         ┆        ┆ accept a trailing comma  │
            │              ┆                  ┆                  ┆         ┆        ┆ in every list            │
            │ e6c62a58b0f1 ┆ 2026-11-30 03:31 ┆ 2026-12-01 17:02 ┆ 1234    ┆ 98765  ┆ fix the failing test     │
            └──────────────┴──────────────────┴──────────────────┴─────────┴────────┴──────────────────────────┘"#]]
        .assert_eq(&sessions_table_in(&two_listed(false), Some(100)));
        expect_test::expect![[r#"
            ┌──────────────┬─────────────────────────┬──────────────────┬─────────┬────────┬───────────────────────────────────────┐
            │ id           ┆ workspace               ┆ last active      ┆ entries ┆ tokens ┆ last message                          │
            ╞══════════════╪═════════════════════════╪══════════════════╪═════════╪════════╪═══════════════════════════════════════╡
            │ 9bdf6e0a1c2d ┆ /home/ada/projects/xcsh ┆ 2026-12-01 17:02 ┆ 1234    ┆ 98765  ┆ now make the parser accept a trailing │
            │              ┆                         ┆                  ┆         ┆        ┆ comma in every list                   │
            │ e6c62a58b0f1 ┆ /home/ada/notes         ┆ 2026-12-01 17:02 ┆ 1234    ┆ 98765  ┆ fix the failing test                  │
            └──────────────┴─────────────────────────┴──────────────────┴─────────┴────────┴───────────────────────────────────────┘"#]]
        .assert_eq(&sessions_table_in(&two_listed(true), Some(120)));
    }

    /// The first prompt names the session, whatever came after it.
    #[test]
    fn the_first_message_is_the_first_prompt_collapsed_and_cut() {
        let mut k = Kit::new("first");
        let long = format!("fix   the\nparser {}", "x".repeat(120));
        k.prompt(&long);
        k.step(1, "done", &[]);
        k.prompt("second task");
        k.step(1, "done", &[]);
        let (_dir, log) = k.finish();
        let want = format!("fix the parser {}…", "x".repeat(84));
        let plain = summarize(&log);
        assert_eq!(
            (plain.first_message.as_str(), plain.last_message.as_str()),
            (want.as_str(), "second task")
        );
        assert_eq!(plain.started_ms, crate::testkit::t0().timestamp_millis());
    }
}
