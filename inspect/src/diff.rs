//! `xcsh diff`: two sessions, or two branches of one, compared. The common history
//! is found by hash (a shared prefix of identical entries, whichever file they are
//! in); the two paths are aligned on their structure (prompts, steps, tool calls and
//! results, deliveries, compactions, finishes), never on prose; the first divergence
//! is reported first (where, what kind, what differs), then a readable diff of the
//! rest: word-level inside messages, JSON-aware for tool arguments (parsed, keys
//! sorted, pretty-printed). Times, durations, ids and hashes are not compared.
//! `context` compares the model context each branch would send next; `workspace`
//! shows the file changes a session made.

pub mod context;
pub mod workspace;

use std::collections::HashMap;

use serde::Serialize;
use similar::{Algorithm, ChangeTag, DiffOp, TextDiff, capture_diff_slices};
use xcsh_log::{Body, Entry, Record, SessionLog, memory_record, setting_record};
use xcsh_machine::{Decision, EntryId, RunEnd, StepOutcome};

use crate::common::{args_pretty, branch_path, outcome_text, serde_name, stop_text};
use crate::error::InspectError;
use crate::style::{Paint, Style};

/// Appends a unified diff, its added lines green and its removed lines red.
fn push_unified(out: &mut String, diff: &str, style: Style) {
    for line in diff.lines() {
        let l = if line.starts_with('+') && !line.starts_with("+++") {
            style.paint(Paint::Green, line)
        } else if line.starts_with('-') && !line.starts_with("---") {
            style.paint(Paint::Red, line)
        } else {
            line.to_string()
        };
        out.push_str(&l);
        out.push('\n');
    }
}

/// One side of a comparison: a session and the leaf of the branch compared.
pub struct Side<'a> {
    /// What to call it in the output (`A`, a file name, `S@E`).
    pub name: String,
    pub log: &'a SessionLog,
    pub leaf: EntryId,
}

impl<'a> Side<'a> {
    /// The branch of `log` ending at `leaf`, called `name`.
    pub fn new(name: impl Into<String>, log: &'a SessionLog, leaf: EntryId) -> Side<'a> {
        Side {
            name: name.into(),
            log,
            leaf,
        }
    }
}

/// How a field is compared and shown.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "as", content = "value", rename_all = "snake_case")]
pub enum Field {
    /// Prose: a word-level diff.
    Text(String),
    /// Tool arguments as produced: compared parsed, shown pretty-printed.
    Json(String),
    /// A short value, compared as is.
    Value(String),
}

impl Field {
    fn same(&self, other: &Field) -> bool {
        match (self, other) {
            (Field::Json(a), Field::Json(b)) => args_pretty(a) == args_pretty(b),
            (a, b) => a == b,
        }
    }
}

/// One aligned unit of a path: its structural key and its compared content.
#[derive(Debug, Clone)]
pub struct Unit<'a> {
    /// Where it sits in the structure: `run 1 step 2 call 1 result`.
    pub key: String,
    pub entry: &'a Entry,
    pub fields: Vec<(&'static str, Field)>,
}

/// A prompt or a compaction request: the entries that start a run of units.
fn starts_run(e: &Entry) -> bool {
    matches!(
        &e.body,
        Body::Record(Record::UserMessage { .. } | Record::Compact { .. })
    )
}

/// The units of a path made by its entries from `from` on, in order. Their keys
/// count within a run, so the walk starts at the run `from` is in; the runs before
/// it are only counted.
pub fn units<'a>(path: &[&'a Entry], from: usize) -> Vec<Unit<'a>> {
    let mut out = Vec::new();
    let start = path[..from]
        .iter()
        .rposition(|e| starts_run(e))
        .unwrap_or(0);
    let mut run = path[..start].iter().filter(|e| starts_run(e)).count() as u32;
    let mut counts: HashMap<String, u32> = HashMap::new();
    // Call id → (step, ordinal, name) for the current run.
    let mut calls: HashMap<String, (u32, usize, String)> = HashMap::new();
    let v = |s: String| Field::Value(s);
    for (i, e) in path.iter().enumerate().skip(start) {
        let made = out.len();
        let r = format!("run {run}");
        let call_key =
            |calls: &HashMap<String, (u32, usize, String)>, id: &str, name: &str| match calls
                .get(id)
            {
                Some((s, i, n)) => format!("run {run} step {s} call {i} ({n})"),
                None => format!("run {run} call {id} ({name})"),
            };
        let mut push = |key: String, fields: Vec<(&'static str, Field)>| {
            out.push(Unit {
                key,
                entry: e,
                fields,
            })
        };
        match &e.body {
            Body::Record(rec) => match rec {
                Record::Session(_)
                | Record::Branch { .. }
                | Record::Label { .. }
                | Record::Undo { .. }
                | setting_record!()
                | Record::Foreign(_)
                | memory_record!()
                | Record::LateEvent { .. } => {}
                Record::UserMessage { text, config } => {
                    run += 1;
                    counts.clear();
                    calls.clear();
                    push(
                        format!("run {run} prompt"),
                        vec![
                            ("text", Field::Text(text.clone())),
                            ("tools", v(config.tools.join(", "))),
                            ("limits", v(format!("{:?}", config.limits))),
                        ],
                    );
                }
                Record::Steer { text } | Record::FollowUp { text } => {
                    let key = nth(&mut counts, format!("{r} {} arrived", e.type_name()));
                    push(key, vec![("text", Field::Text(text.clone()))]);
                }
                Record::Interrupt {} => push(nth(&mut counts, format!("{r} interrupt")), vec![]),
                Record::Step(s) => {
                    let step = s.step.0;
                    let m = &s.message;
                    for (i, c) in m.tool_calls.iter().enumerate() {
                        calls.insert(c.id.0.clone(), (step, i + 1, c.name.clone()));
                    }
                    let u = &m.usage;
                    push(
                        format!("{r} step {step} model"),
                        vec![
                            ("text", Field::Text(m.text.clone())),
                            ("reasoning", Field::Text(m.reasoning.clone())),
                            ("calls", v(m.tool_calls.len().to_string())),
                            (
                                "finish",
                                v(m.finish.as_ref().map(serde_name).unwrap_or_default()),
                            ),
                            ("outcome", v(outcome_text(&s.outcome))),
                            (
                                "usage",
                                v(format!(
                                    "in {} out {} cache r {} w {}",
                                    u.input_tokens,
                                    u.output_tokens,
                                    u.cache_read_tokens,
                                    u.cache_write_tokens
                                )),
                            ),
                        ],
                    );
                    if let StepOutcome::Completed = s.outcome {
                        // Each requested call, so that calls align even when one
                        // side ran it and the other did not.
                        for (i, c) in m.tool_calls.iter().enumerate() {
                            out.push(Unit {
                                key: format!("{r} step {step} call {} ({})", i + 1, c.name),
                                entry: e,
                                fields: vec![
                                    ("name", v(c.name.clone())),
                                    ("arguments", Field::Json(c.arguments.clone())),
                                ],
                            });
                        }
                    }
                }
                Record::ToolResult(t) => push(
                    format!("{} result", call_key(&calls, &t.call_id.0, &t.name)),
                    vec![
                        ("status", v(serde_name(&t.outcome.status))),
                        ("content", Field::Text(t.outcome.content.clone())),
                    ],
                ),
                Record::CompactionSummary { summary, error } => push(
                    nth(&mut counts, format!("{r} compaction summary")),
                    vec![
                        ("summary", Field::Text(summary.clone().unwrap_or_default())),
                        (
                            "error",
                            v(error
                                .as_ref()
                                .map(|e| e.message.clone())
                                .unwrap_or_default()),
                        ),
                    ],
                ),
                Record::Recovered { .. } => push(format!("{r} recovered"), vec![]),
                Record::Compact { .. } => {
                    run += 1;
                    counts.clear();
                    calls.clear();
                    push(format!("run {run} compact"), vec![]);
                }
                Record::CheckFailed { call_id, content } => push(
                    format!("{} check", call_key(&calls, &call_id.0, "?")),
                    vec![("error", Field::Text(content.clone()))],
                ),
                Record::ApprovalAnswer {
                    call_id,
                    verdict,
                    scope,
                    ..
                } => push(
                    format!("{} answer", call_key(&calls, &call_id.0, "?")),
                    vec![
                        ("verdict", v(serde_name(verdict))),
                        ("scope", v(serde_name(scope))),
                    ],
                ),
            },
            Body::Decision(d) => match d {
                Decision::StepStarted { .. }
                | Decision::CompactionStarted { .. }
                | Decision::ToolDispatched { .. } => {}
                Decision::Delivered { origin, text, .. } => push(
                    nth(&mut counts, format!("{r} delivered {}", serde_name(origin))),
                    vec![("text", Field::Text(text.clone()))],
                ),
                Decision::Approval {
                    call_id,
                    tool,
                    verdict,
                    by,
                } => push(
                    format!("{} approval", call_key(&calls, &call_id.0, tool)),
                    vec![
                        ("verdict", v(serde_name(verdict))),
                        ("by", v(serde_name(by))),
                    ],
                ),
                Decision::SyntheticResult {
                    call,
                    reason,
                    content,
                } => push(
                    format!("{} result", call_key(&calls, &call.id.0, &call.name)),
                    vec![
                        ("status", v(format!("not run: {}", serde_name(reason)))),
                        ("content", Field::Text(content.clone())),
                    ],
                ),
                Decision::Compacted {
                    summary,
                    tokens_before,
                    tokens_after,
                    ..
                } => push(
                    nth(&mut counts, format!("{r} compacted")),
                    vec![
                        ("summary", Field::Text(summary.clone())),
                        ("tokens", v(format!("{tokens_before} -> {tokens_after}"))),
                    ],
                ),
                Decision::Ignored { reason } => push(
                    nth(&mut counts, format!("{r} ignored")),
                    vec![("reason", v(serde_name(reason)))],
                ),
                Decision::RunFinished(RunEnd {
                    reason,
                    steps,
                    usage,
                    ..
                }) => push(
                    format!("{r} finished"),
                    vec![
                        ("reason", v(stop_text(reason))),
                        ("steps", v(steps.to_string())),
                        ("tokens", v(usage.spend().to_string())),
                    ],
                ),
            },
            Body::Unknown { type_name, .. } => {
                push(nth(&mut counts, format!("{r} {type_name}")), vec![])
            }
        }
        if i < from {
            out.truncate(made);
        }
    }
    out
}

/// `WHAT N`: the N-th unit of this kind in the run.
fn nth(counts: &mut HashMap<String, u32>, what: String) -> String {
    let n = counts.entry(what.clone()).or_insert(0);
    *n += 1;
    format!("{what} {n}")
}

/// One difference between the aligned paths.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// `changed`, `only_a` or `only_b`.
    pub op: &'static str,
    pub key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a: Option<EntryId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b: Option<EntryId>,
    /// The fields that differ (for `changed`), or every field (for `only_*`).
    pub fields: Vec<FieldChange>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FieldChange {
    pub field: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a: Option<Field>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b: Option<Field>,
}

/// The comparison of two paths.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub a: String,
    pub b: String,
    /// Entries at the start of both paths with identical hashes.
    pub common_entries: usize,
    /// The last of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub common_ancestor: Option<EntryId>,
    /// Units compared after the common history, and how many were equal.
    pub compared: usize,
    pub equal: usize,
    /// In path order; the first is the first divergence.
    pub changes: Vec<Change>,
    /// The task plans at the two ends, when they differ (SPEC.md §27.4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plans: Option<PlanChange>,
}

/// The plans at the ends of the two branches, which differ.
#[derive(Debug, Clone, Serialize)]
pub struct PlanChange {
    pub a: crate::plan::PlanView,
    pub b: crate::plan::PlanView,
}

/// Compares the branch of `a` with the branch of `b`.
pub fn compare(a: &Side<'_>, b: &Side<'_>) -> Result<Report, InspectError> {
    let pa = branch_path(a.log, a.leaf)?;
    let pb = branch_path(b.log, b.leaf)?;
    let common = pa
        .iter()
        .zip(&pb)
        .take_while(|(x, y)| x.hash == y.hash)
        .count();
    // Units made by the common entries are equal by construction: not made.
    let (ua, ub) = (units(&pa, common), units(&pb, common));
    let ka: Vec<&str> = ua.iter().map(|u| u.key.as_str()).collect();
    let kb: Vec<&str> = ub.iter().map(|u| u.key.as_str()).collect();
    let mut changes = Vec::new();
    let mut equal = 0;
    let all = |u: &Unit<'_>, side_a: bool| -> Vec<FieldChange> {
        u.fields
            .iter()
            .map(|(f, v)| FieldChange {
                field: f,
                a: side_a.then(|| v.clone()),
                b: (!side_a).then(|| v.clone()),
            })
            .collect()
    };
    for op in capture_diff_slices(Algorithm::Patience, &ka, &kb) {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for k in 0..len {
                    let (x, y) = (&ua[old_index + k], &ub[new_index + k]);
                    let fields: Vec<FieldChange> = x
                        .fields
                        .iter()
                        .zip(&y.fields)
                        .filter(|((_, fa), (_, fb))| !fa.same(fb))
                        .map(|((f, fa), (_, fb))| FieldChange {
                            field: f,
                            a: Some(fa.clone()),
                            b: Some(fb.clone()),
                        })
                        .collect();
                    if fields.is_empty() {
                        equal += 1;
                    } else {
                        changes.push(Change {
                            op: "changed",
                            key: x.key.clone(),
                            a: Some(x.entry.id),
                            b: Some(y.entry.id),
                            fields,
                        });
                    }
                }
            }
            DiffOp::Delete {
                old_index, old_len, ..
            } => {
                for u in &ua[old_index..old_index + old_len] {
                    changes.push(only("only_a", u, all(u, true)));
                }
            }
            DiffOp::Insert {
                new_index, new_len, ..
            } => {
                for u in &ub[new_index..new_index + new_len] {
                    changes.push(only("only_b", u, all(u, false)));
                }
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                for u in &ua[old_index..old_index + old_len] {
                    changes.push(only("only_a", u, all(u, true)));
                }
                for u in &ub[new_index..new_index + new_len] {
                    changes.push(only("only_b", u, all(u, false)));
                }
            }
        }
    }
    Ok(Report {
        a: a.name.clone(),
        b: b.name.clone(),
        common_entries: common,
        common_ancestor: common.checked_sub(1).map(|i| pa[i].id),
        compared: ua.len().max(ub.len()),
        equal,
        changes,
        plans: plan_change((a.leaf, &pa), (b.leaf, &pb)),
    })
}

/// The plans at the ends of the two branches (each its leaf and path), if they
/// differ.
fn plan_change(a: (EntryId, &[&Entry]), b: (EntryId, &[&Entry])) -> Option<PlanChange> {
    let (va, vb) = (
        crate::plan::view_on(a.0, a.1),
        crate::plan::view_on(b.0, b.1),
    );
    let plan = |v: &crate::plan::PlanView| v.plan.as_ref().map(|u| u.plan.clone());
    (plan(&va) != plan(&vb)).then_some(PlanChange { a: va, b: vb })
}

fn only(op: &'static str, u: &Unit<'_>, fields: Vec<FieldChange>) -> Change {
    Change {
        op,
        key: u.key.clone(),
        a: (op == "only_a").then_some(u.entry.id),
        b: (op == "only_b").then_some(u.entry.id),
        fields,
    }
}

/// A word-level diff of two texts: `[-removed-]{+added+}` (red and green in color),
/// each run of changed words shown once.
pub fn word_diff(a: &str, b: &str, style: Style) -> String {
    let diff = TextDiff::from_words(a, b);
    let mut out = String::new();
    let (mut del, mut ins) = (String::new(), String::new());
    let flush = |out: &mut String, del: &mut String, ins: &mut String| {
        if !del.is_empty() {
            out.push_str(&style.paint(Paint::Red, &format!("[-{del}-]")));
        }
        if !ins.is_empty() {
            out.push_str(&style.paint(Paint::Green, &format!("{{+{ins}+}}")));
        }
        del.clear();
        ins.clear();
    };
    let changes: Vec<_> = diff.iter_all_changes().collect();
    for (i, c) in changes.iter().enumerate() {
        let s = c.value();
        match c.tag() {
            // Whitespace between two changed words belongs to the change.
            ChangeTag::Equal
                if s.trim().is_empty()
                    && (!del.is_empty() || !ins.is_empty())
                    && changes
                        .get(i + 1)
                        .is_some_and(|n| n.tag() != ChangeTag::Equal) =>
            {
                del.push_str(s);
                ins.push_str(s);
            }
            ChangeTag::Equal => {
                flush(&mut out, &mut del, &mut ins);
                out.push_str(s);
            }
            ChangeTag::Delete => del.push_str(s),
            ChangeTag::Insert => ins.push_str(s),
        }
    }
    flush(&mut out, &mut del, &mut ins);
    out
}

/// A line diff: `-`, `+` and ` ` prefixed lines.
pub fn line_diff(a: &str, b: &str, style: Style) -> String {
    let diff = TextDiff::from_lines(a, b);
    let mut out = String::new();
    for c in diff.iter_all_changes() {
        let line = c.value().trim_end_matches('\n');
        let text = match c.tag() {
            ChangeTag::Equal => format!(" {line}"),
            ChangeTag::Delete => style.paint(Paint::Red, &format!("-{line}")),
            ChangeTag::Insert => style.paint(Paint::Green, &format!("+{line}")),
        };
        out.push_str(&text);
        out.push('\n');
    }
    out
}

fn indent(text: &str, by: &str) -> String {
    text.lines()
        .map(|l| format!("{by}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn field_text(f: &Field) -> String {
    match f {
        Field::Text(t) | Field::Value(t) => t.clone(),
        Field::Json(j) => args_pretty(j),
    }
}

fn render_field(fc: &FieldChange, style: Style) -> String {
    match (&fc.a, &fc.b) {
        (Some(Field::Json(a)), Some(Field::Json(b))) => format!(
            "    {}:\n{}",
            fc.field,
            indent(
                &line_diff(&args_pretty(a), &args_pretty(b), style),
                "      "
            )
        ),
        (Some(Field::Text(a)), Some(Field::Text(b))) => format!(
            "    {}: {}",
            fc.field,
            indent(&word_diff(a, b, style), "      ").trim_start()
        ),
        (Some(a), Some(b)) => format!(
            "    {}: {} -> {}",
            fc.field,
            style.paint(Paint::Red, &field_text(a)),
            style.paint(Paint::Green, &field_text(b))
        ),
        (Some(x), None) | (None, Some(x)) => {
            let t = field_text(x);
            if t.is_empty() {
                String::new()
            } else {
                format!(
                    "    {}: {}",
                    fc.field,
                    indent(&crate::common::cap(&t, 8, 600), "      ").trim_start()
                )
            }
        }
        (None, None) => String::new(),
    }
}

fn where_(c: &Change) -> String {
    match (c.a, c.b) {
        (Some(a), Some(b)) => format!("A #{a} / B #{b}"),
        (Some(a), None) => format!("only in A, #{a}"),
        (None, Some(b)) => format!("only in B, #{b}"),
        (None, None) => String::new(),
    }
}

/// The report as text: common history, the first divergence, then the rest.
pub fn render(report: &Report, style: Style) -> String {
    let mut out = String::new();
    out.push_str(&format!("A = {}\nB = {}\n", report.a, report.b));
    match report.common_ancestor {
        Some(id) => out.push_str(&format!(
            "common history: {} entr{} up to #{id}, identical by hash\n",
            report.common_entries,
            if report.common_entries == 1 {
                "y"
            } else {
                "ies"
            }
        )),
        None => out.push_str("common history: none (the headers differ); aligned from the start\n"),
    }
    let Some(first) = report.changes.first() else {
        out.push_str(&style.paint(
            Paint::Green,
            &format!(
                "no divergence: {} unit(s) after the common history are equal\n",
                report.equal
            ),
        ));
        out.push_str(&plans_section(report));
        return out;
    };
    let kind = match first.op {
        "changed" => {
            let names: Vec<&str> = first.fields.iter().map(|f| f.field).collect();
            format!("{} differs", names.join(", "))
        }
        "only_a" => "only A has it".to_string(),
        _ => "only B has it".to_string(),
    };
    out.push_str(&style.paint(
        Paint::Bold,
        &format!(
            "first divergence: {} ({}): {kind}\n",
            first.key,
            where_(first)
        ),
    ));
    for fc in &first.fields {
        let t = render_field(fc, style);
        if !t.is_empty() {
            out.push_str(&t);
            out.push('\n');
        }
    }
    out.push_str(&format!(
        "\n{} difference(s) in {} aligned unit(s) ({} equal):\n",
        report.changes.len(),
        report.compared,
        report.equal
    ));
    for c in &report.changes {
        let mark = match c.op {
            "changed" => style.paint(Paint::Yellow, "~"),
            "only_a" => style.paint(Paint::Red, "-"),
            _ => style.paint(Paint::Green, "+"),
        };
        out.push_str(&format!("{mark} {} ({})\n", c.key, where_(c)));
        for fc in &c.fields {
            let t = render_field(fc, style);
            if !t.is_empty() {
                out.push_str(&t);
                out.push('\n');
            }
        }
    }
    out.push_str(&plans_section(report));
    out
}

/// `\nplans differ …` and how, or nothing when the plans are the same.
fn plans_section(report: &Report) -> String {
    report
        .plans
        .as_ref()
        .and_then(|p| crate::plan::difference(&p.a, &p.b))
        .map(|d| format!("\n{d}"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
