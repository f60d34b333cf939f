//! The task plan of a session at an entry (SPEC.md §27.4), as text and as data: what
//! `xcsh plan SESSION[@ENTRY]` and `/plan` print, and the plan sections of `export`
//! and `diff`. The plan itself is the log's fold (`xcsh_log::plan`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::common::branch_path;
use super::error::InspectError;
use xcsh_log::SessionLog;
use xcsh_log::plan::{Plan, PlanStatus, PlanUpdate, plan_at, plan_difference, plan_history};
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

/// Every valid plan update in the session, on any branch, by the id of its
/// `tool_result` entry (the HTML export marks them in the conversation).
pub fn updates_by_entry(log: &SessionLog) -> Result<BTreeMap<u64, Plan>, InspectError> {
    let mut out = BTreeMap::new();
    for leaf in xcsh_log::Dag::from_log(log).leaves() {
        for u in plan_history(branch_path(log, leaf)?) {
            out.insert(u.entry.0, u.plan);
        }
    }
    Ok(out)
}

/// The plan as a Markdown task list: the explanation as a paragraph, then
/// `- [x] text`, `- [ ] **text** (in progress)`, `- [ ] text`.
pub fn markdown_list(plan: &Plan) -> String {
    let mut out = String::new();
    if let Some(e) = plan.explanation.as_deref().filter(|e| !e.trim().is_empty()) {
        out.push_str(&format!("{}\n\n", e.trim()));
    }
    if plan.items.is_empty() {
        out.push_str("_(no items)_\n");
    }
    for item in &plan.items {
        let text = item.text.trim();
        out.push_str(&match item.status {
            PlanStatus::Completed => format!("- [x] {text}\n"),
            PlanStatus::InProgress => format!("- [ ] **{text}** (in progress)\n"),
            PlanStatus::Pending => format!("- [ ] {text}\n"),
        });
    }
    out
}
