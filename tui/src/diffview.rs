//! A unified diff as styled lines: the one diff view of the UI (tool cards,
//! approvals, the `/diff` overlay).
//!
//! OWNER: helper "widgets" replaces this first version (no hunks, no colour).

use ratatui::text::Line;

use crate::Theme;

/// The unified diff from `before` to `after`.
pub fn unified(before: &str, after: &str, _theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for l in before.lines() {
        out.push(Line::from(format!("-{l}")));
    }
    for l in after.lines() {
        out.push(Line::from(format!("+{l}")));
    }
    out
}
