//! The task plan of a session at an entry (SPEC.md §27.4), as text and as data: what
//! `xcsh plan SESSION[@ENTRY]` and `/plan` print, and the plan sections of `export`
//! and `diff`. The plan itself is the log's fold (`xcsh_log::plan`).

use serde::Serialize;

use super::common::branch_path;
use super::error::InspectError;
use xcsh_log::SessionLog;
use xcsh_log::plan::{PlanUpdate, plan_at, plan_difference};
use xcsh_machine::EntryId;

/// The plan at an entry: where it was asked for, and the update in effect there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanView {
    /// The entry the plan is of.
    pub at: EntryId,
    /// The last valid update on the path to `at` (`None`: no plan there).
    pub plan: Option<PlanUpdate>,
}

/// The plan of `log` at entry `at`.
pub fn view(log: &SessionLog, at: EntryId) -> Result<PlanView, InspectError> {
    let path = branch_path(log, at)?;
    Ok(PlanView {
        at,
        plan: plan_at(path),
    })
}

impl PlanView {
    /// `plan at entry 14 (from entry 12, call call_2): 1 of 3 completed`, then the
    /// checklist; or `no plan at entry N: …`.
    pub fn text(&self) -> String {
        match &self.plan {
            None => format!(
                "no plan at entry {}: the model has not written one on this branch\n",
                self.at
            ),
            Some(u) => format!(
                "plan at entry {} (from entry {}, call {}): {} of {} completed\n{}",
                self.at,
                u.entry,
                u.call_id,
                u.plan.completed(),
                u.plan.items.len(),
                u.plan.checklist()
            ),
        }
    }
}

/// How the plans at the ends of two branches differ (`diff`), `None` when they are
/// the same: a heading line, then [`plan_difference`].
pub fn difference(a: &PlanView, b: &PlanView) -> Option<String> {
    let body = plan_difference(
        a.plan.as_ref().map(|u| &u.plan),
        b.plan.as_ref().map(|u| &u.plan),
    )?;
    let from = |v: &PlanView| match &v.plan {
        Some(u) => format!("entry {}", u.entry),
        None => "none".to_owned(),
    };
    Some(format!(
        "plans differ (a: {}, b: {}):\n{body}",
        from(a),
        from(b)
    ))
}
