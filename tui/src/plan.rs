//! The task plan as a checklist (SPEC.md §27.4): compact in the live area while a
//! turn runs (at most [`LIVE_ROWS`] rows, the item in progress kept in view, the rest
//! counted as `+N more`), and whole as a history cell for each change. Pure: a plan
//! in, lines out; the plan is the last `plan` event's, itself the image of a
//! recorded tool result.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use xcsh_log::plan::{Plan, PlanItem, PlanStatus};

use crate::Theme;
use crate::fmt;
use crate::theme::Role;

/// The most rows the live checklist takes (its heading included).
pub const LIVE_ROWS: usize = 6;

/// The live checklist: the heading and as many items as fit in [`LIVE_ROWS`]; when
/// some do not, a window that keeps the item in progress (else the first one not
/// completed) in view, and a last row `… +N more`.
pub fn live_lines(plan: &Plan, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = vec![heading("Plan", plan, width, theme)];
    let room = LIVE_ROWS - 1;
    let n = plan.items.len();
    if n <= room {
        out.extend(plan.items.iter().map(|i| item_line(i, width, theme)));
        return out;
    }
    let shown = room - 1;
    let focus = plan
        .items
        .iter()
        .position(|i| i.status == PlanStatus::InProgress)
        .or_else(|| {
            plan.items
                .iter()
                .position(|i| i.status != PlanStatus::Completed)
        })
        .unwrap_or(0);
    let start = focus.saturating_sub(1).min(n - shown);
    out.extend(
        plan.items[start..start + shown]
            .iter()
            .map(|i| item_line(i, width, theme)),
    );
    out.push(Line::from(Span::styled(
        fmt::clip(&format!("  … +{} more", n - shown), usize::from(width)),
        theme.style(Role::Dim),
    )));
    out
}

/// A change of the plan in history: `Plan updated · 1 of 3 completed`, the
/// explanation, then every item.
pub fn history_lines(plan: &Plan, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = vec![heading("Plan updated", plan, width, theme)];
    if let Some(explanation) = plan.explanation.as_deref().filter(|e| !e.trim().is_empty()) {
        let text = fmt::clean(explanation.trim());
        out.extend(fmt::prefixed(
            fmt::plain(&text, theme.style(Role::Dim)),
            width,
            Span::raw("  "),
            Span::raw("  "),
        ));
    }
    if plan.items.is_empty() {
        out.push(Line::from(Span::styled(
            "  (no items)",
            theme.style(Role::Dim),
        )));
    }
    out.extend(plan.items.iter().map(|i| item_line(i, width, theme)));
    out
}

fn heading(what: &str, plan: &Plan, width: u16, theme: &Theme) -> Line<'static> {
    let text = format!(
        "{what} · {} of {} completed",
        plan.completed(),
        plan.items.len()
    );
    Line::from(Span::styled(
        fmt::clip(&text, usize::from(width)),
        theme.style(Role::Tool),
    ))
}

/// `  [x] text`, one row, clipped to `width`: completed dim, in progress bold.
fn item_line(item: &PlanItem, width: u16, theme: &Theme) -> Line<'static> {
    let style = match item.status {
        PlanStatus::Completed => theme.style(Role::Dim),
        PlanStatus::InProgress => theme.style(Role::Text).add_modifier(Modifier::BOLD),
        PlanStatus::Pending => theme.style(Role::Text),
    };
    let text = format!(
        "  {} {}",
        item.status.mark(),
        fmt::clean(item.text.trim()).replace('\n', " ")
    );
    Line::from(Span::styled(fmt::clip(&text, usize::from(width)), style))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{lines_text, narrow_and_wide, styled};

    fn plan(items: &[(&str, PlanStatus)]) -> Plan {
        Plan {
            explanation: None,
            items: items
                .iter()
                .map(|(text, status)| PlanItem {
                    text: (*text).into(),
                    status: *status,
                })
                .collect(),
        }
    }

    fn both(f: impl Fn(u16) -> Vec<Line<'static>>) -> String {
        narrow_and_wide(lines_text(&f(40), 40), lines_text(&f(120), 120))
    }

    const THREE: &[(&str, PlanStatus)] = &[
        ("Read the parser and its tests", PlanStatus::Completed),
        (
            "Fix the off-by-one in the tokenizer's column count for wide characters",
            PlanStatus::InProgress,
        ),
        ("Run the whole test suite", PlanStatus::Pending),
    ];

    #[test]
    fn the_live_checklist_of_three_items_at_40_and_120_columns() {
        let theme = Theme::COLOR;
        expect_test::expect![[r#"
            Plan · 1 of 3 completed
              [x] Read the parser and its tests
              [>] Fix the off-by-one in the tokeniz…
              [ ] Run the whole test suite
            ---
            (lines 1-2 as above)
              [>] Fix the off-by-one in the tokenizer's column count for wide characters
              [ ] Run the whole test suite
        "#]]
        .assert_eq(&both(|w| live_lines(&plan(THREE), w, &theme)));
    }

    #[test]
    fn a_long_plan_keeps_the_item_in_progress_in_view_and_counts_the_rest() {
        let theme = Theme::COLOR;
        let mut items: Vec<(String, PlanStatus)> = (1..=9)
            .map(|i| (format!("step {i}"), PlanStatus::Pending))
            .collect();
        for item in &mut items[..5] {
            item.1 = PlanStatus::Completed;
        }
        items[5].1 = PlanStatus::InProgress;
        let items: Vec<(&str, PlanStatus)> = items.iter().map(|(t, s)| (t.as_str(), *s)).collect();
        let lines = live_lines(&plan(&items), 40, &theme);
        assert_eq!(lines.len(), LIVE_ROWS);
        expect_test::expect![[r#"
            Plan · 5 of 9 completed
              [x] step 5
              [>] step 6
              [ ] step 7
              [ ] step 8
              … +5 more
        "#]]
        .assert_eq(&lines_text(&lines, 40));
    }

    #[test]
    fn a_change_in_history_shows_the_explanation_and_every_item() {
        let theme = Theme::COLOR;
        let mut p = plan(THREE);
        p.explanation = Some("The tokenizer miscounts wide characters.".into());
        expect_test::expect![[r#"
            Plan updated · 1 of 3 completed
              The tokenizer miscounts wide
              characters.
              [x] Read the parser and its tests
              [>] Fix the off-by-one in the tokeniz…
              [ ] Run the whole test suite
            ---
            Plan updated · 1 of 3 completed
              The tokenizer miscounts wide characters.
              [x] Read the parser and its tests
              [>] Fix the off-by-one in the tokenizer's column count for wide characters
              [ ] Run the whole test suite
        "#]]
        .assert_eq(&both(|w| history_lines(&p, w, &theme)));
    }

    #[test]
    fn the_item_in_progress_is_bold_and_completed_ones_dim() {
        let theme = Theme::COLOR;
        expect_test::expect![[r#"
            ⟦blue,bold:Plan · 1 of 3 completed⟧
            ⟦dim:  [x] Read the parser and its tests⟧
            ⟦bold:  [>] Fix the off-by-one in the tokenizer's column count for wide characters⟧
              [ ] Run the whole test suite
        "#]]
        .assert_eq(&styled(&live_lines(&plan(THREE), 120, &theme)));
    }
}
