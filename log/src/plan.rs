//! The task plan (SPEC.md §27): what the `plan` tool's arguments are (`Plan`,
//! `PlanItem`, `PlanStatus`), the one check of them (`Plan::parse`), the checklist it
//! is shown as, and the fold: the plan at an entry is the last `plan` call on the path
//! from the root to it whose `tool_result` is ok. No entry type of its own: a plan
//! update is an ordinary tool call, so it is branch-aware, resumed, forked and
//! replayed like any other.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::entry::{Body, Entry, Record};
use xcsh_machine::{CallId, Decision, EntryId, ToolStatus};

/// The name of the tool.
pub const PLAN_TOOL: &str = "plan";

/// At most this many items in a plan.
pub const MAX_ITEMS: usize = 50;

/// At most this many characters in an item's text.
pub const MAX_TEXT_CHARS: usize = 300;

/// At most this many characters in the explanation.
pub const MAX_EXPLANATION_CHARS: usize = 1000;

/// Where an item of the plan is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    Pending,
    InProgress,
    Completed,
}

impl PlanStatus {
    /// The mark of the checklist: `[x]` completed, `[>]` in progress, `[ ]` pending.
    pub fn mark(self) -> &'static str {
        match self {
            PlanStatus::Pending => "[ ]",
            PlanStatus::InProgress => "[>]",
            PlanStatus::Completed => "[x]",
        }
    }

    /// The status as the tool's arguments spell it.
    pub fn name(self) -> &'static str {
        match self {
            PlanStatus::Pending => "pending",
            PlanStatus::InProgress => "in_progress",
            PlanStatus::Completed => "completed",
        }
    }
}

/// One step of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanItem {
    pub text: String,
    pub status: PlanStatus,
}

/// A whole plan: what one `plan` call sets (each call replaces the plan).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// Why the plan is what it is now (optional, shown above the items).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    pub items: Vec<PlanItem>,
}

/// What is wrong with a `plan` call's arguments (the model reads it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("the arguments are not a plan: {0}")]
    Shape(String),
    #[error("the plan has {count} items; at most {MAX_ITEMS} are allowed")]
    TooManyItems { count: usize },
    #[error("item {item} has an empty text")]
    EmptyText { item: usize },
    #[error("item {item}'s text is {chars} characters long; at most {MAX_TEXT_CHARS} are allowed")]
    TextTooLong { item: usize, chars: usize },
    #[error("item {item}'s text is not one line")]
    MultiLine { item: usize },
    #[error("items {first} and {second} are both in_progress; at most one item may be in_progress")]
    TwoInProgress { first: usize, second: usize },
    #[error(
        "the explanation is {chars} characters long; at most {MAX_EXPLANATION_CHARS} are allowed"
    )]
    ExplanationTooLong { chars: usize },
}

impl Plan {
    /// The plan a `plan` call's arguments (JSON text) set, checked: the shape (an
    /// object of `explanation`? and `items`, each `{text, status}`, nothing else) and
    /// what a schema cannot say (at most one item `in_progress`, each text one
    /// non-blank line of at most [`MAX_TEXT_CHARS`], at most [`MAX_ITEMS`] items, an
    /// explanation of at most [`MAX_EXPLANATION_CHARS`]). Items are numbered from 1.
    pub fn parse(arguments: &str) -> Result<Plan, PlanError> {
        let plan: Plan =
            serde_json::from_str(arguments).map_err(|e| PlanError::Shape(e.to_string()))?;
        plan.check()?;
        Ok(plan)
    }

    /// The rules beyond the shape (see [`Plan::parse`]).
    pub fn check(&self) -> Result<(), PlanError> {
        if self.items.len() > MAX_ITEMS {
            return Err(PlanError::TooManyItems {
                count: self.items.len(),
            });
        }
        if let Some(chars) = self
            .explanation
            .as_deref()
            .map(|e| e.chars().count())
            .filter(|&n| n > MAX_EXPLANATION_CHARS)
        {
            return Err(PlanError::ExplanationTooLong { chars });
        }
        let mut in_progress = None;
        for (i, item) in self.items.iter().enumerate() {
            let item_no = i + 1;
            if item.text.trim().is_empty() {
                return Err(PlanError::EmptyText { item: item_no });
            }
            if item.text.contains(['\n', '\r']) {
                return Err(PlanError::MultiLine { item: item_no });
            }
            let chars = item.text.chars().count();
            if chars > MAX_TEXT_CHARS {
                return Err(PlanError::TextTooLong {
                    item: item_no,
                    chars,
                });
            }
            if item.status == PlanStatus::InProgress {
                if let Some(first) = in_progress {
                    return Err(PlanError::TwoInProgress {
                        first,
                        second: item_no,
                    });
                }
                in_progress = Some(item_no);
            }
        }
        Ok(())
    }

    /// How many items are completed.
    pub fn completed(&self) -> usize {
        self.items
            .iter()
            .filter(|i| i.status == PlanStatus::Completed)
            .count()
    }

    /// The checklist, one line per item (`[x] text`, `[>] text`, `[ ] text`), the
    /// explanation first when there is one; `(no items)` for an empty plan. Each line
    /// ends with a newline.
    pub fn checklist(&self) -> String {
        let mut out = String::new();
        if let Some(explanation) = self.explanation.as_deref().filter(|e| !e.trim().is_empty()) {
            for line in explanation.trim().lines() {
                let _ = writeln!(out, "{line}");
            }
        }
        if self.items.is_empty() {
            out.push_str("(no items)\n");
        }
        for item in &self.items {
            let _ = writeln!(out, "{} {}", item.status.mark(), item.text.trim());
        }
        out
    }

    /// What the `plan` tool answers: a count and the checklist.
    pub fn tool_result(&self) -> String {
        format!(
            "Plan updated ({} of {} completed):\n{}",
            self.completed(),
            self.items.len(),
            self.checklist()
        )
    }
}

/// One valid update of the plan on a path: the `tool_result` entry that made it the
/// plan (an ok result of a `plan` call), the call, and the plan it set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanUpdate {
    /// The `tool_result` entry of the call.
    pub entry: EntryId,
    /// The `tool_dispatched` entry of the call.
    pub dispatched: EntryId,
    pub call_id: CallId,
    pub plan: Plan,
}

/// Every valid update of the plan on `path` (entries from the root, in path order),
/// oldest first: each `plan` call dispatched on the path whose `tool_result` there is
/// ok and whose arguments pass [`Plan::parse`]. A call that was denied, failed,
/// cancelled or got a synthetic result changes nothing.
pub fn plan_history<'a>(path: impl IntoIterator<Item = &'a Entry>) -> Vec<PlanUpdate> {
    let mut fold = PlanFold::default();
    path.into_iter()
        .filter_map(|entry| fold.enter(entry).1)
        .collect()
}

/// Whether [`plan_history`] looks at `entry` at all (a `plan` call dispatched, or a
/// `plan` call's result): a caller that streams a path keeps only these for it.
pub fn concerns_plan(entry: &Entry) -> bool {
    match &entry.body {
        Body::Decision(Decision::ToolDispatched { call, .. }) => call.name == PLAN_TOOL,
        Body::Record(Record::ToolResult(r)) => r.name == PLAN_TOOL,
        _ => false,
    }
}

/// Every valid update of the plan in `entries` (a whole session in file order, so
/// parents before children), on any branch, in file order: for each `tool_result`
/// entry, the update [`plan_history`] finds there on the path from the root to it.
/// One walk over the tree (the fold entered and undone along a depth-first walk),
/// so linear in the entries however many branches there are; an entry whose parent
/// is not in `entries` starts a tree of its own.
pub fn plan_updates_in_tree(entries: &[Entry]) -> Vec<PlanUpdate> {
    let position: HashMap<EntryId, usize> =
        entries.iter().enumerate().map(|(i, e)| (e.id, i)).collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
    let mut roots = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        match e.parent.and_then(|p| position.get(&p)) {
            Some(&p) if p != i => children[p].push(i),
            Some(_) | None => roots.push(i),
        }
    }
    let mut fold = PlanFold::default();
    let mut found: Vec<(usize, PlanUpdate)> = Vec::new();
    // `Enter(i)` applies entry i and schedules its children and its own undo;
    // `Leave(change)` undoes what entering one entry changed.
    enum Visit {
        Enter(usize),
        Leave(FoldChange),
    }
    let mut stack: Vec<Visit> = roots.into_iter().rev().map(Visit::Enter).collect();
    while let Some(visit) = stack.pop() {
        match visit {
            Visit::Enter(i) => {
                let (change, update) = fold.enter(&entries[i]);
                if let Some(u) = update {
                    found.push((i, u));
                }
                stack.push(Visit::Leave(change));
                stack.extend(children[i].iter().rev().map(|&c| Visit::Enter(c)));
            }
            Visit::Leave(change) => fold.undo(change),
        }
    }
    found.sort_by_key(|(i, _)| *i);
    found.into_iter().map(|(_, u)| u).collect()
}

/// The fold of [`plan_history`] along a path: the `plan` calls dispatched and not yet
/// settled by an ok result. [`PlanFold::enter`] takes the next entry of the path;
/// [`PlanFold::undo`] takes back what entering one did (for the tree walk).
#[derive(Default)]
struct PlanFold {
    dispatched: BTreeMap<CallId, (EntryId, String)>,
}

/// What entering one entry changed in a [`PlanFold`].
enum FoldChange {
    Nothing,
    /// A `plan` call was dispatched; the dispatch of the same call id it replaced.
    Dispatched(CallId, Option<(EntryId, String)>),
    /// An ok result settled the call dispatched at the entry kept here.
    Settled(CallId, (EntryId, String)),
}

impl PlanFold {
    fn enter(&mut self, entry: &Entry) -> (FoldChange, Option<PlanUpdate>) {
        match &entry.body {
            Body::Decision(Decision::ToolDispatched { call, .. }) if call.name == PLAN_TOOL => {
                let replaced = self
                    .dispatched
                    .insert(call.id.clone(), (entry.id, call.arguments.clone()));
                (FoldChange::Dispatched(call.id.clone(), replaced), None)
            }
            Body::Record(Record::ToolResult(r))
                if r.name == PLAN_TOOL && r.outcome.status == ToolStatus::Ok =>
            {
                let Some((at, arguments)) = self.dispatched.remove(&r.call_id) else {
                    return (FoldChange::Nothing, None);
                };
                let update = Plan::parse(&arguments).ok().map(|plan| PlanUpdate {
                    entry: entry.id,
                    dispatched: at,
                    call_id: r.call_id.clone(),
                    plan,
                });
                (
                    FoldChange::Settled(r.call_id.clone(), (at, arguments)),
                    update,
                )
            }
            _ => (FoldChange::Nothing, None),
        }
    }

    fn undo(&mut self, change: FoldChange) {
        match change {
            FoldChange::Nothing => {}
            FoldChange::Dispatched(id, None) => {
                self.dispatched.remove(&id);
            }
            FoldChange::Dispatched(id, Some(before)) | FoldChange::Settled(id, before) => {
                self.dispatched.insert(id, before);
            }
        }
    }
}

/// The plan at the end of `path` (entries from the root): the last valid update on
/// it, or `None` when the model never set one there.
pub fn plan_at<'a>(path: impl IntoIterator<Item = &'a Entry>) -> Option<PlanUpdate> {
    plan_history(path).pop()
}

/// How two plans differ, item by item (for `diff`): `None` when they are equal.
/// Each line is `  a: <mark> text` / `  b: <mark> text` under the item's number, or
/// `  only in a` / `only in b`; the explanation is compared too.
pub fn plan_difference(a: Option<&Plan>, b: Option<&Plan>) -> Option<String> {
    if a == b {
        return None;
    }
    let mut out = String::new();
    let (Some(a), Some(b)) = (a, b) else {
        let (side, plan) = match (a, b) {
            (Some(p), None) => ("a", p),
            (None, Some(p)) => ("b", p),
            (Some(_), Some(_)) | (None, None) => return None,
        };
        let _ = writeln!(out, "only {side} has a plan:");
        for line in plan.checklist().lines() {
            let _ = writeln!(out, "  {line}");
        }
        return Some(out);
    };
    if a.explanation != b.explanation {
        let show = |e: &Option<String>| e.clone().unwrap_or_else(|| "(none)".into());
        let _ = writeln!(out, "explanation:");
        let _ = writeln!(out, "  a: {}", show(&a.explanation));
        let _ = writeln!(out, "  b: {}", show(&b.explanation));
    }
    for i in 0..a.items.len().max(b.items.len()) {
        let (x, y) = (a.items.get(i), b.items.get(i));
        if x == y {
            continue;
        }
        let _ = writeln!(out, "item {}:", i + 1);
        for (side, item) in [("a", x), ("b", y)] {
            match item {
                Some(item) => {
                    let _ = writeln!(out, "  {side}: {} {}", item.status.mark(), item.text);
                }
                None => {
                    let _ = writeln!(out, "  {side}: (none)");
                }
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(text: &str, status: PlanStatus) -> PlanItem {
        PlanItem {
            text: text.into(),
            status,
        }
    }

    #[test]
    fn a_valid_plan_parses_and_reads_back_as_a_checklist() {
        let plan = Plan::parse(
            r#"{"explanation":"Fix the bug.","items":[{"text":"Read the code","status":"completed"},{"text":"Write the fix","status":"in_progress"},{"text":"Run the tests","status":"pending"}]}"#,
        )
        .unwrap();
        assert_eq!(
            plan,
            Plan {
                explanation: Some("Fix the bug.".into()),
                items: vec![
                    item("Read the code", PlanStatus::Completed),
                    item("Write the fix", PlanStatus::InProgress),
                    item("Run the tests", PlanStatus::Pending),
                ],
            }
        );
        expect_test::expect![[r#"
            Plan updated (1 of 3 completed):
            Fix the bug.
            [x] Read the code
            [>] Write the fix
            [ ] Run the tests
        "#]]
        .assert_eq(&plan.tool_result());
    }

    #[test]
    fn every_broken_plan_is_named() {
        let long = "x".repeat(MAX_TEXT_CHARS + 1);
        let many: Vec<String> = (0..=MAX_ITEMS)
            .map(|i| format!(r#"{{"text":"step {i}","status":"pending"}}"#))
            .collect();
        let cases = [
            r#""a plan""#.to_owned(),
            r#"{"items":[{"text":"a","status":"done"}]}"#.to_owned(),
            r#"{"items":[{"text":"a","status":"pending","note":1}]}"#.to_owned(),
            r#"{"items":[{"text":"a","status":"in_progress"},{"text":"b","status":"in_progress"}]}"#
                .to_owned(),
            r#"{"items":[{"text":"  ","status":"pending"}]}"#.to_owned(),
            r#"{"items":[{"text":"a\nb","status":"pending"}]}"#.to_owned(),
            format!(r#"{{"items":[{{"text":"{long}","status":"pending"}}]}}"#),
            format!(r#"{{"items":[{}]}}"#, many.join(",")),
            format!(r#"{{"explanation":"{}","items":[]}}"#, "e".repeat(1001)),
        ];
        let got: Vec<String> = cases
            .iter()
            .map(|c| Plan::parse(c).unwrap_err().to_string())
            .collect();
        expect_test::expect![[r#"
            [
                "the arguments are not a plan: invalid type: string \"a plan\", expected struct Plan at line 1 column 8",
                "the arguments are not a plan: unknown variant `done`, expected one of `pending`, `in_progress`, `completed` at line 1 column 37",
                "the arguments are not a plan: unknown field `note`, expected `text` or `status` at line 1 column 47",
                "items 1 and 2 are both in_progress; at most one item may be in_progress",
                "item 1 has an empty text",
                "item 1's text is not one line",
                "item 1's text is 301 characters long; at most 300 are allowed",
                "the plan has 51 items; at most 50 are allowed",
                "the explanation is 1001 characters long; at most 1000 are allowed",
            ]
        "#]]
        .assert_debug_eq(&got);
    }

    #[test]
    fn an_empty_plan_is_valid_and_says_so() {
        let plan = Plan::parse(r#"{"items":[]}"#).unwrap();
        assert_eq!(plan.checklist(), "(no items)\n");
    }

    #[test]
    fn the_difference_names_the_items_that_differ() {
        let a = Plan {
            explanation: None,
            items: vec![
                item("Read", PlanStatus::Completed),
                item("Fix", PlanStatus::InProgress),
            ],
        };
        let b = Plan {
            explanation: None,
            items: vec![
                item("Read", PlanStatus::Completed),
                item("Fix", PlanStatus::Completed),
                item("Test", PlanStatus::Pending),
            ],
        };
        assert_eq!(plan_difference(Some(&a), Some(&a)), None);
        assert_eq!(plan_difference(None, None), None);
        expect_test::expect![[r#"
            item 2:
              a: [>] Fix
              b: [x] Fix
            item 3:
              a: (none)
              b: [ ] Test
        "#]]
        .assert_eq(&plan_difference(Some(&a), Some(&b)).unwrap());
        expect_test::expect![[r#"
            only b has a plan:
              [x] Read
              [>] Fix
        "#]]
        .assert_eq(&plan_difference(None, Some(&a)).unwrap());
    }
}
