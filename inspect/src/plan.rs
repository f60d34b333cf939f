//! The task plan of a session at an entry (SPEC.md §27.4), as text and as data: what
//! `xcsh plan SESSION[@ENTRY]` and `/plan` print, and the plan sections of `export`
//! and `diff`. The plan itself is the log's fold (`xcsh_log::plan`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::common::branch_path;
use super::error::InspectError;
use xcsh_log::plan::{
    Plan, PlanStatus, PlanUpdate, plan_at, plan_difference, plan_updates_in_tree,
};
use xcsh_log::{Entry, SessionLog};
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
    Ok(view_on(at, &branch_path(log, at)?))
}

/// The plan at entry `at`, whose path from the root (root first) is `path`.
pub fn view_on(at: EntryId, path: &[&Entry]) -> PlanView {
    PlanView {
        at,
        plan: plan_at(path.iter().copied()),
    }
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
/// `tool_result` entry (the HTML export marks them in the conversation): one walk over
/// the tree, linear in the entries whatever the number of branches.
pub fn updates_by_entry(log: &SessionLog) -> BTreeMap<u64, Plan> {
    plan_updates_in_tree(&log.entries)
        .into_iter()
        .map(|u| (u.entry.0, u.plan))
        .collect()
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// The per-leaf reference: the fold run over the path to every leaf, as
    /// `updates_by_entry` did before it walked the tree once.
    fn per_leaf(log: &SessionLog) -> BTreeMap<u64, Plan> {
        let mut out = BTreeMap::new();
        for leaf in xcsh_log::Dag::from_log(log).leaves() {
            for u in xcsh_log::plan::plan_history(branch_path(log, leaf).unwrap()) {
                out.insert(u.entry.0, u.plan);
            }
        }
        out
    }

    #[test]
    fn the_tree_walk_finds_the_updates_of_every_branch_as_the_per_leaf_fold_does() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/sessions/plan.jsonl");
        let log = xcsh_log::read_session(&path).unwrap();
        let got = updates_by_entry(&log);
        assert_eq!(got, per_leaf(&log));
        // The fixture's plan results (`xcsh tree fixtures/sessions/plan.jsonl`): #5 and
        // #11 on the shared trunk (#1..14), #25 on the first branch, #34 on the second.
        let summary: Vec<(u64, usize, usize)> = got
            .iter()
            .map(|(id, p)| (*id, p.completed(), p.items.len()))
            .collect();
        expect_test::expect![[r#"
            [
                (
                    5,
                    0,
                    3,
                ),
                (
                    11,
                    1,
                    3,
                ),
                (
                    25,
                    2,
                    3,
                ),
                (
                    34,
                    1,
                    4,
                ),
            ]
        "#]]
        .assert_debug_eq(&summary);
    }
}
