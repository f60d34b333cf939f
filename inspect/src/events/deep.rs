//! `xcsh events --deep` (SPEC.md §29.6): the timelines of a whole family in one,
//! each member's rows in its own lane named by its session id, merged by time
//! (relative to the session's header; a member's own order kept; at the same
//! millisecond the member listed first goes first: the parent, then its children
//! depth first).

use std::path::Path;

use serde::Serialize;
use xcsh_log::family::{Depth, load_family};

use super::{Filter, Row, render_row, timeline};
use crate::common::rel_ms;
use crate::error::InspectError;
use crate::style::{Paint, Style};

/// A row of a family's timeline: the member's session id and its row (times
/// relative to the session the command was given).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeepRow {
    pub session: String,
    #[serde(flatten)]
    pub row: Row,
}

/// The family timeline of the session at `path` (the rows `filter` keeps), and the
/// family's problems (children missing, broken, mislinked), one line each.
pub fn deep_timeline(
    path: &Path,
    filter: &Filter,
) -> Result<(Vec<DeepRow>, Vec<String>), InspectError> {
    let family = load_family(path, Depth::All)?;
    let origin = family.data.entries.first().map(|e| e.ts);
    let mut lanes: Vec<(String, std::vec::IntoIter<Row>)> = family
        .members()
        .into_iter()
        .map(|m| {
            let shift = match (origin, m.data.entries.first()) {
                (Some(o), Some(first)) => rel_ms(o, first.ts),
                _ => 0,
            };
            let rows: Vec<Row> = timeline(&m.data)
                .into_iter()
                .map(|mut r| {
                    r.t_ms = r.t_ms.saturating_add(shift);
                    r
                })
                .filter(|r| filter.keeps(r))
                .collect();
            (m.session_id.clone(), rows.into_iter())
        })
        .collect();
    let mut heads: Vec<Option<Row>> = lanes.iter_mut().map(|(_, it)| it.next()).collect();
    let mut out = Vec::new();
    // Each step takes the earliest head, the first member on a tie.
    while let Some(k) = (0..heads.len())
        .filter(|&k| heads[k].is_some())
        .min_by_key(|&k| heads[k].as_ref().map_or(i64::MAX, |r| r.t_ms))
    {
        let next = lanes[k].1.next();
        if let Some(row) = std::mem::replace(&mut heads[k], next) {
            out.push(DeepRow {
                session: lanes[k].0.clone(),
                row,
            });
        }
    }
    Ok((out, family.problems()))
}

/// Width of the session column.
const SESSION_WIDTH: usize = 12;

/// The column heads of [`render_deep_row`].
pub fn deep_header(style: Style) -> String {
    format!(
        "{} {}",
        style.paint(Paint::Dim, &format!("{:<SESSION_WIDTH$}", "session")),
        super::header(style)
    )
}

/// One family row as a line: the member's session id, then the row.
pub fn render_deep_row(row: &DeepRow, style: Style) -> String {
    format!(
        "{:<SESSION_WIDTH$} {}",
        row.session,
        render_row(&row.row, style)
    )
}
