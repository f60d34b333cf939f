//! `xcsh tree`: the branch DAG drawn as a tree. One line per turn (where it starts,
//! the user's message, steps, tool calls, tokens, how its run ended), branch points,
//! labels, compactions, the recorded leaf marked, and the fork origin; with `full`,
//! one line per entry.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use xcsh_core::log::index::{ArchivedIndexData, Kind, index_of, open_index};
use xcsh_core::log::{Body, Dag, Entry, Record, SessionLog, read_session};
use xcsh_core::machine::{Decision, EntryId, StepOutcome, UserOrigin};

use crate::common::{entry_text, one_line, stop_text};
use crate::error::InspectError;
use crate::style::Style;

/// The tree of a session.
#[derive(Debug, Clone, Serialize)]
pub struct Tree {
    /// One node per entry.
    pub full: bool,
    pub session_id: String,
    pub cwd: String,
    /// `SESSION @ ENTRY`: the header's `forked_from`, or the origin label of a fork
    /// made by `xcsh fork`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<String>,
    /// The recorded leaf (where the next run continues).
    pub leaf: EntryId,
    /// The nodes from the root, in order; branches hang off their last node.
    pub root: Vec<Node>,
}

/// A run of entries shown on one line: a turn (from its user message up to the next
/// one or a branch point), the session header, a `branch` record, or (with `full`)
/// a single entry.
#[derive(Debug, Clone, Serialize)]
pub struct Node {
    pub first: EntryId,
    pub last: EntryId,
    /// `session`, `turn`, `branch` or `entries`; with `full`, the entry type.
    pub kind: String,
    pub text: String,
    pub steps: u32,
    pub tool_calls: u32,
    pub tokens: u64,
    /// How the run ended, if its `run_finished` is in this node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    pub steers: u32,
    pub follow_ups: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<Label>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compactions: Vec<Compaction>,
    /// The recorded leaf is in this node.
    pub leaf: bool,
    /// Where the branches of a branch point go: one list of nodes per child, in file
    /// order (empty unless this node's last entry has two children or more).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub branches: Vec<Vec<Node>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Label {
    pub entry: EntryId,
    pub target: EntryId,
    pub name: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Compaction {
    pub entry: EntryId,
    pub tokens_before: u64,
    pub tokens_after: u64,
}

struct Builder<'a> {
    log: &'a SessionLog,
    dag: Dag,
    full: bool,
    labels: BTreeMap<EntryId, Vec<Label>>,
}

fn is_label(e: &Entry) -> bool {
    matches!(e.body, Body::Record(Record::Label { .. }))
}

impl Builder<'_> {
    /// Children shown in the tree: labels are annotations unless every entry is shown.
    fn children(&self, id: EntryId) -> Vec<EntryId> {
        self.dag
            .children(id)
            .into_iter()
            .filter(|c| self.full || !self.log.get(*c).is_some_and(is_label))
            .collect()
    }

    fn starts_turn(&self, id: EntryId) -> bool {
        self.log.get(id).is_some_and(|e| {
            matches!(
                e.body,
                Body::Record(
                    Record::UserMessage { .. } | Record::Branch { .. } | Record::Compact { .. }
                )
            )
        })
    }

    /// The nodes from `start` down its chain; branch points recurse (so the depth of
    /// recursion is the nesting of branches, not the length of the session).
    fn lane(&self, start: EntryId) -> Vec<Node> {
        let mut lane = Vec::new();
        let mut first = start;
        loop {
            let mut ids = vec![first];
            let mut kids = self.children(first);
            while !self.full && kids.len() == 1 && !self.starts_turn(kids[0]) {
                ids.push(kids[0]);
                kids = self.children(kids[0]);
            }
            let mut node = self.node(&ids);
            match kids.as_slice() {
                [next] => {
                    first = *next;
                    lane.push(node);
                }
                [] => {
                    lane.push(node);
                    return lane;
                }
                many => {
                    node.branches = many.iter().map(|k| self.lane(*k)).collect();
                    lane.push(node);
                    return lane;
                }
            }
        }
    }

    fn node(&self, ids: &[EntryId]) -> Node {
        let entries: Vec<&Entry> = ids.iter().filter_map(|id| self.log.get(*id)).collect();
        let first = entries[0];
        let mut node = Node {
            first: first.id,
            last: ids[ids.len() - 1],
            kind: String::new(),
            text: String::new(),
            steps: 0,
            tool_calls: 0,
            tokens: 0,
            stop: None,
            steers: 0,
            follow_ups: 0,
            labels: Vec::new(),
            compactions: Vec::new(),
            leaf: ids.contains(&self.log.leaf()),
            branches: Vec::new(),
        };
        (node.kind, node.text) = match &first.body {
            _ if self.full => (first.type_name().to_string(), entry_text(first)),
            Body::Record(Record::Session(h)) => {
                ("session".into(), format!("{} {}", h.session_id, h.cwd))
            }
            Body::Record(Record::UserMessage { text, .. }) => {
                ("turn".into(), format!("{:?}", one_line(text, 50)))
            }
            Body::Record(Record::Compact { .. }) => ("compact".into(), "/compact".into()),
            Body::Record(Record::Branch { from_leaf }) => (
                "branch".into(),
                format!("new branch (the leaf was #{from_leaf})"),
            ),
            _ => (
                "entries".into(),
                format!("{} {}", first.type_name(), entry_text(first)),
            ),
        };
        for e in &entries {
            match &e.body {
                Body::Record(Record::Step(s)) => {
                    node.steps += 1;
                    node.tokens += s.message.usage.spend();
                    if matches!(s.outcome, StepOutcome::Completed) {
                        node.tool_calls +=
                            u32::try_from(s.message.tool_calls.len()).unwrap_or(u32::MAX);
                    }
                }
                Body::Decision(Decision::RunFinished { reason, .. }) => {
                    node.stop = Some(stop_text(reason));
                }
                Body::Decision(Decision::Delivered { origin, .. }) => match origin {
                    UserOrigin::Steer => node.steers += 1,
                    UserOrigin::FollowUp | UserOrigin::Prompt => node.follow_ups += 1,
                },
                Body::Decision(Decision::Compacted {
                    tokens_before,
                    tokens_after,
                    ..
                }) => node.compactions.push(Compaction {
                    entry: e.id,
                    tokens_before: *tokens_before,
                    tokens_after: *tokens_after,
                }),
                _ => {}
            }
            if !self.full
                && let Some(labels) = self.labels.get(&e.id)
            {
                node.labels.extend(labels.iter().cloned());
            }
        }
        node
    }
}

/// The tree of `log`; `full` shows every entry (labels as entries too).
pub fn build(log: &SessionLog, full: bool) -> Tree {
    if full {
        return build_full(log);
    }
    match index_of(log, None) {
        Ok(index) => build_indexed(index.data(), &mut |pos| log.entries.get(pos).cloned()),
        // Building an index in memory does not fail for a log that was read.
        Err(_) => build_full_or_turns(log, false),
    }
}

/// The tree of the session file at `path`: from its index (built or extended when
/// needed) unless `full`, which needs every entry.
pub fn build_path(path: &Path, full: bool) -> Result<Tree, InspectError> {
    if full {
        return Ok(build_full(&read_session(path)?));
    }
    let index = open_index(path)?;
    let data = index.data();
    let mut file = std::fs::File::open(path).map_err(|e| InspectError::io(path, e))?;
    Ok(build_indexed(data, &mut |pos| {
        crate::common::entry_at(&mut file, data, pos)
    }))
}

fn build_full(log: &SessionLog) -> Tree {
    build_full_or_turns(log, true)
}

pub(crate) fn build_full_or_turns(log: &SessionLog, full: bool) -> Tree {
    let mut labels: BTreeMap<EntryId, Vec<Label>> = BTreeMap::new();
    for e in &log.entries {
        if let Body::Record(Record::Label { target, name }) = &e.body {
            labels.entry(*target).or_default().push(Label {
                entry: e.id,
                target: *target,
                name: name.clone(),
            });
        }
    }
    let b = Builder {
        log,
        dag: Dag::from_log(log),
        full,
        labels,
    };
    let header = log.header();
    Tree {
        full,
        session_id: header.session_id.clone(),
        cwd: header.cwd.clone(),
        // The header's `forked_from`, or the origin label `xcsh fork` writes.
        forked_from: header
            .forked_from
            .as_ref()
            .map(|f| format!("{} @ {}", f.session_id, f.entry))
            .or_else(|| {
                log.entries.iter().find_map(|e| match &e.body {
                    Body::Record(Record::Label { name, .. }) => name
                        .strip_prefix(crate::fork::ORIGIN_PREFIX)
                        .map(str::to_string),
                    _ => None,
                })
            }),
        leaf: log.leaf(),
        root: b.lane(EntryId(0)),
    }
}

/// Children lists of every position (labels left out), as one flat array.
struct Children {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Children {
    fn of(&self, pos: usize) -> &[u32] {
        &self.list[self.start[pos] as usize..self.start[pos + 1] as usize]
    }
}

struct IndexedBuilder<'a> {
    d: &'a ArchivedIndexData,
    children: Children,
    labels: BTreeMap<EntryId, Vec<Label>>,
    leaf: usize,
    fetch: &'a mut dyn FnMut(usize) -> Option<Entry>,
}

impl IndexedBuilder<'_> {
    fn starts_turn(&self, pos: usize) -> bool {
        matches!(
            self.d.kind(pos),
            Kind::UserMessage | Kind::Branch | Kind::Compact
        )
    }

    /// As [`Builder::lane`], over positions.
    fn lane(&mut self, start: usize) -> Vec<Node> {
        let mut lane = Vec::new();
        let mut first = start;
        loop {
            let mut ids = vec![first];
            let mut kids = self.children.of(first);
            while kids.len() == 1 && !self.starts_turn(kids[0] as usize) {
                ids.push(kids[0] as usize);
                kids = self.children.of(kids[0] as usize);
            }
            let kids: Vec<usize> = kids.iter().map(|&k| k as usize).collect();
            let mut node = self.node(&ids);
            match kids.as_slice() {
                [next] => {
                    first = *next;
                    lane.push(node);
                }
                [] => {
                    lane.push(node);
                    return lane;
                }
                many => {
                    node.branches = many.iter().map(|k| self.lane(*k)).collect();
                    lane.push(node);
                    return lane;
                }
            }
        }
    }

    fn node(&mut self, ids: &[usize]) -> Node {
        let d = self.d;
        let first = ids[0];
        let mut node = Node {
            first: d.id(first),
            last: d.id(ids[ids.len() - 1]),
            kind: String::new(),
            text: String::new(),
            steps: 0,
            tool_calls: 0,
            tokens: 0,
            stop: None,
            steers: 0,
            follow_ups: 0,
            labels: Vec::new(),
            compactions: Vec::new(),
            leaf: ids.contains(&self.leaf),
            branches: Vec::new(),
        };
        (node.kind, node.text) = match d.kind(first) {
            Kind::Session => (
                "session".into(),
                format!("{} {}", d.session_id.as_str(), d.cwd.as_str()),
            ),
            Kind::UserMessage => {
                let preview = d.str(&d.prompts[d.aux(first)].preview);
                ("turn".into(), format!("{:?}", one_line(preview, 50)))
            }
            Kind::Compact => ("compact".into(), "/compact".into()),
            Kind::Branch => (
                "branch".into(),
                format!(
                    "new branch (the leaf was #{})",
                    d.branches[d.aux(first)].to_native()
                ),
            ),
            _ => (
                "entries".into(),
                format!(
                    "{} {}",
                    d.type_name(first),
                    (self.fetch)(first)
                        .map(|e| entry_text(&e))
                        .unwrap_or_default()
                ),
            ),
        };
        for &pos in ids {
            match d.kind(pos) {
                Kind::Step => {
                    let s = &d.steps[d.aux(pos)];
                    node.steps += 1;
                    node.tokens += s.input_tokens.to_native()
                        + s.output_tokens.to_native()
                        + s.cache_read_tokens.to_native()
                        + s.cache_write_tokens.to_native();
                    if s.outcome == 0 {
                        node.tool_calls += s.tool_calls.to_native();
                    }
                }
                Kind::RunFinished => {
                    node.stop = Some(stop_text(&d.stop_reason(&d.finishes[d.aux(pos)])));
                }
                Kind::Delivered => match d.aux(pos) {
                    1 => node.steers += 1,
                    _ => node.follow_ups += 1,
                },
                Kind::Compacted => {
                    let c = &d.compactions[d.aux(pos)];
                    node.compactions.push(Compaction {
                        entry: d.id(pos),
                        tokens_before: c.tokens_before.to_native(),
                        tokens_after: c.tokens_after.to_native(),
                    });
                }
                _ => {}
            }
            if let Some(labels) = self.labels.get(&d.id(pos)) {
                node.labels.extend(labels.iter().cloned());
            }
        }
        node
    }
}

/// The turn tree (not `full`) from an index; `fetch` gives the entry at a position
/// for the rare node that starts with an entry the index does not describe.
pub fn build_indexed(d: &ArchivedIndexData, fetch: &mut dyn FnMut(usize) -> Option<Entry>) -> Tree {
    let n = d.len();
    let mut labels: BTreeMap<EntryId, Vec<Label>> = BTreeMap::new();
    let mut counts = vec![0u32; n + 1];
    let mut forked_label = None;
    for pos in 0..n {
        let kind = d.kind(pos);
        if kind == Kind::Label {
            let l = &d.labels[d.aux(pos)];
            let target = EntryId(l.target.to_native());
            let name = d.str(&l.name);
            if forked_label.is_none() {
                forked_label = name
                    .strip_prefix(crate::fork::ORIGIN_PREFIX)
                    .map(str::to_string);
            }
            labels.entry(target).or_default().push(Label {
                entry: d.id(pos),
                target,
                name: name.to_string(),
            });
            continue;
        }
        if let Some(p) = d.parent(pos) {
            counts[p + 1] += 1;
        }
    }
    for i in 1..=n {
        counts[i] += counts[i - 1];
    }
    let mut fill = counts.clone();
    let mut list = vec![0u32; counts[n] as usize];
    for pos in 0..n {
        if d.kind(pos) == Kind::Label {
            continue;
        }
        if let Some(p) = d.parent(pos) {
            list[fill[p] as usize] = u32::try_from(pos).unwrap_or(u32::MAX);
            fill[p] += 1;
        }
    }
    let leaf = d.leaf();
    let forked_from = d
        .forked_from
        .as_ref()
        .map(|f| format!("{} @ {}", f.0.as_str(), f.1.to_native()))
        .or(forked_label);
    let mut b = IndexedBuilder {
        d,
        children: Children {
            start: counts,
            list,
        },
        labels,
        leaf,
        fetch,
    };
    let root = if n == 0 { Vec::new() } else { b.lane(0) };
    Tree {
        full: false,
        session_id: d.session_id.as_str().to_string(),
        cwd: d.cwd.as_str().to_string(),
        forked_from,
        leaf: d.id(leaf),
        root,
    }
}

/// The tree as text.
pub fn render(tree: &Tree, style: Style) -> String {
    let mut out = String::new();
    if let Some(f) = &tree.forked_from {
        out.push_str(&style.blue(&format!("forked from {f}")));
        out.push('\n');
    }
    render_lane(&tree.root, "", "", &mut out, (style, tree.full));
    out
}

/// `first` prefixes the lane's first line, `rest` its other lines (and the lines
/// of its branches).
fn render_lane(lane: &[Node], first: &str, rest: &str, out: &mut String, how: (Style, bool)) {
    for (i, node) in lane.iter().enumerate() {
        out.push_str(if i == 0 { first } else { rest });
        out.push_str(&node_line(node, how.0, how.1));
        out.push('\n');
        let n = node.branches.len();
        for (k, branch) in node.branches.iter().enumerate() {
            let last = k + 1 == n;
            let head = format!("{rest}{}", if last { "└─ " } else { "├─ " });
            let tail = format!("{rest}{}", if last { "   " } else { "│  " });
            render_lane(branch, &head, &tail, out, how);
        }
    }
}

/// The text of one node's line (without the tree drawing).
pub fn node_line(node: &Node, style: Style, full: bool) -> String {
    let ids = if node.first == node.last {
        format!("#{}", node.first)
    } else {
        format!("#{}..{}", node.first, node.last)
    };
    let mut parts = vec![style.dim(&ids)];
    match node.kind.as_str() {
        "turn" => parts.push(format!("user {}", style.cyan(&node.text))),
        "branch" => parts.push(style.blue(&format!("↳ {}", node.text))),
        "session" => parts.push(format!("session {}", node.text)),
        kind => parts.push(format!("{kind} {}", node.text).trim_end().to_string()),
    }
    let mut facts = Vec::new();
    if full {
        // The entry's own text says it all.
    } else if node.kind == "turn" || node.steps > 0 {
        facts.push(plural(node.steps, "step"));
        facts.push(plural(node.tool_calls, "tool call"));
        facts.push(format!("{} tok", node.tokens));
    }
    if !full {
        if node.steers > 0 {
            facts.push(plural(node.steers, "steer"));
        }
        if node.follow_ups > 0 {
            facts.push(plural(node.follow_ups, "follow-up"));
        }
        for c in &node.compactions {
            facts.push(style.blue(&format!(
                "compacted #{} {}→{} tok",
                c.entry, c.tokens_before, c.tokens_after
            )));
        }
        match &node.stop {
            Some(s) if s == "completed" => facts.push(s.clone()),
            Some(s) => facts.push(style.red(s)),
            None if node.kind == "turn" => facts.push(style.yellow("unfinished")),
            None => {}
        }
    }
    let mut text = parts.join(" ");
    if !facts.is_empty() {
        text.push_str(" · ");
        text.push_str(&facts.join(" · "));
    }
    for l in &node.labels {
        text.push_str(&style.magenta(&format!(" [#{}: {}]", l.target, l.name)));
    }
    if node.branches.len() > 1 {
        text.push_str(&style.blue(&format!(
            " ┬ {} branches at #{}",
            node.branches.len(),
            node.last
        )));
    }
    if node.leaf {
        text.push_str(&style.bold(&style.green(" ◀ leaf")));
    }
    text
}

fn plural(n: u32, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;

    #[test]
    fn a_branched_session_draws_both_branches_and_marks_the_leaf() {
        let (_dir, log) = testkit::branched_session();
        expect_test::expect![[r##"
            #0 session fixture /workspace
            #1..8 user "first task" · 2 steps · 1 tool call · 370 tok · completed ┬ 2 branches at #8
            ├─ #9..12 user "second task" · 1 step · 0 tool calls · 110 tok · completed
            └─ #13 ↳ new branch (the leaf was #12)
               #14..17 user "instead, another task" · 1 step · 0 tool calls · 160 tok · completed ◀ leaf
        "##]].assert_eq(&render(&build(&log, false), Style::plain()));
    }

    #[test]
    fn full_shows_every_entry() {
        let (_dir, log) = testkit::steer_session();
        expect_test::expect![[r##"
            #0 session fixture /workspace
            #1 user_message "list the files and say hello"
            #2 step_started step 1 with 1 message(s)
            #3 steer "also check b"
            #4 step step 1 "looking" calls echo,echo completed
            #5 tool_dispatched step 1 call_1_1 echo {"a":1}
            #6 tool_dispatched step 1 call_1_2 echo {"b":2}
            #7 follow_up "then summarize"
            #8 tool_result call_1_1 echo ok 30ms "{\"a\":1}"
            #9 tool_result call_1_2 echo ok 30ms "{\"b\":2}"
            #10 delivered steer from 3: "also check b"
            #11 step_started step 2 with 5 message(s)
            #12 step step 2 "done with both" completed
            #13 delivered follow_up from 7: "then summarize"
            #14 step_started step 3 with 7 message(s)
            #15 step step 3 "summary: all good" completed
            #16 run_finished completed after 3 step(s), 730 tokens ◀ leaf
        "##]]
        .assert_eq(&render(&build(&log, true), Style::plain()));
    }
}
