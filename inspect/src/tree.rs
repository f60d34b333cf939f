//! `xcsh tree`: the branch DAG drawn as a tree. One line per turn (where it starts,
//! the user's message, steps, tool calls, tokens, how its run ended), branch points,
//! labels, compactions, the recorded leaf marked, and the fork origin; with `full`,
//! one line per entry.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Serialize;
use xcsh_core::log::index::{ArchivedIndexData, Kind, index_of, open_index};
use xcsh_core::log::{Body, Dag, Entry, Record, SessionLog, read_session};
use xcsh_core::machine::{Decision, EntryId, StepOutcome, UserOrigin};

use crate::common::{cut, entry_text, one_line, stop_text};
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
    /// The other branches of a branch point: one list of nodes per child, in file
    /// order (empty unless this node's last entry has two children or more). One
    /// child is not among them: its branch goes on in this node's own list, right
    /// after this node (the branch toward the recorded leaf, else the one with the
    /// most entries), so lists nest at most log2(entries) deep.
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
    /// The session's id ([`xcsh_core::log::session_id`]).
    session_id: &'a str,
    /// The recorded leaf (found once: [`SessionLog::leaf`] walks back over labels).
    leaf: EntryId,
    dag: Dag,
    full: bool,
    labels: BTreeMap<EntryId, Vec<Label>>,
    /// The position of each entry, its subtree's size and whether it is on the way
    /// to the leaf ([`Straight`]).
    pos: HashMap<EntryId, usize>,
    straight: Straight,
}

/// Which branch of a branch point continues its lane (drawn straight on, not
/// indented): the one toward the recorded leaf, else the one with the most entries
/// (the last of those in file order). So the leaf's branch runs down the left margin,
/// and every other branch is indented by one level more only where it has at most
/// half the entries of its branch point's subtree: at most log2(entries) levels deep,
/// however many branches the session has.
struct Straight {
    /// Entries (shown in the tree) in the subtree of each position.
    size: Vec<u32>,
    /// One bit per position: whether it is on the path from the root to the leaf.
    on_leaf: Vec<u64>,
}

impl Straight {
    /// From each position's parent position (`None`: a root; every parent before its
    /// child), whether it is shown, and the leaf's position; one pass from the end,
    /// each position's children being after it. Nothing is computed when the session
    /// has no branch point (`branched` false): then no branch is picked.
    fn new(
        n: usize,
        parent: impl Fn(usize) -> Option<usize>,
        shown: impl Fn(usize) -> bool,
        leaf: usize,
        branched: bool,
    ) -> Straight {
        if !branched {
            return Straight {
                size: Vec::new(),
                on_leaf: Vec::new(),
            };
        }
        let mut size = vec![0u32; n];
        let mut on_leaf = vec![0u64; n.div_ceil(64)];
        let bit = |v: &[u64], p: usize| v[p / 64] & (1 << (p % 64)) != 0;
        if leaf < n {
            on_leaf[leaf / 64] |= 1 << (leaf % 64);
        }
        for p in (0..n).rev() {
            let Some(q) = parent(p).filter(|&q| q < p) else {
                continue;
            };
            if shown(p) {
                size[p] = size[p].saturating_add(1);
                size[q] = size[q].saturating_add(size[p]);
            }
            if bit(&on_leaf, p) {
                on_leaf[q / 64] |= 1 << (q % 64);
            }
        }
        Straight { size, on_leaf }
    }

    /// Of the children at these positions (two or more), the one that goes on.
    fn pick(&self, kids: &[usize]) -> usize {
        let on_leaf = |k: usize| self.on_leaf[k / 64] & (1 << (k % 64)) != 0;
        kids.iter()
            .copied()
            .find(|&k| on_leaf(k))
            .or_else(|| kids.iter().copied().max_by_key(|&k| (self.size[k], k)))
            .unwrap_or(kids[0])
    }
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

    /// The nodes from `start` down its chain; at a branch point the other branches
    /// recurse and one goes on ([`Straight`]), so the depth of recursion is at most
    /// log2 of the entries.
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
                [next] => first = *next,
                [] => {
                    lane.push(node);
                    return lane;
                }
                many => {
                    let at: Vec<usize> = many.iter().map(|k| self.pos[k]).collect();
                    let on = self.straight.pick(&at);
                    node.branches = many
                        .iter()
                        .zip(&at)
                        .filter(|(_, p)| **p != on)
                        .map(|(k, _)| self.lane(*k))
                        .collect();
                    first = self.log.entries[on].id;
                }
            }
            lane.push(node);
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
            leaf: ids.contains(&self.leaf),
            branches: Vec::new(),
        };
        (node.kind, node.text) = match &first.body {
            Body::Record(Record::Session(h)) => {
                let mut text = format!("{} {}", self.session_id, h.cwd);
                if let Some(f) = h.forked_from.as_ref().filter(|_| self.full) {
                    text.push_str(&format!(" (forked from {} @ {})", f.session_id, f.entry));
                }
                ("session".into(), text)
            }
            _ if self.full => (first.type_name().to_string(), entry_text(first)),
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
                    node.tokens = node.tokens.saturating_add(s.message.usage.spend());
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
                    UserOrigin::FollowUp | UserOrigin::Prompt | UserOrigin::Undo => {
                        node.follow_ups += 1
                    }
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
        Ok(index) => build_indexed(index.data(), &log.path, &mut |pos| {
            log.entries.get(pos).cloned()
        }),
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
    Ok(build_indexed(data, path, &mut |pos| {
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
    let header = log.header();
    let session_id = xcsh_core::log::session_id(&log.path, &header.session_id);
    let leaf = log.leaf();
    let pos: HashMap<EntryId, usize> = log
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id, i))
        .collect();
    let straight = Straight::new(
        log.entries.len(),
        |p| log.entries[p].parent.and_then(|q| pos.get(&q).copied()),
        |p| full || !is_label(&log.entries[p]),
        pos.get(&leaf).copied().unwrap_or(0),
        true,
    );
    let b = Builder {
        log,
        session_id,
        leaf,
        dag: Dag::from_log(log),
        full,
        labels,
        pos,
        straight,
    };
    Tree {
        full,
        session_id: session_id.to_string(),
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
        leaf,
        root: b.lane(EntryId(0)),
    }
}

mod indexed;

pub use indexed::build_indexed;

/// The tree as text.
pub fn render(tree: &Tree, style: Style) -> String {
    let mut out = String::new();
    render_with(tree, style, &mut |line| out.push_str(line));
    out
}

/// [`render`], line by line (each with its newline) to `emit`: a huge tree is
/// written out as it is drawn, never held whole.
pub fn render_with(tree: &Tree, style: Style, emit: &mut dyn FnMut(&str)) {
    let mut line = String::new();
    if let Some(f) = &tree.forked_from {
        line.push_str(&style.blue(&format!("forked from {f}")));
        line.push('\n');
        emit(&line);
    }
    for_each_row(tree, &mut |row| {
        line.clear();
        line.push_str(row.guide);
        push_node_line(&mut line, row.node, style, tree.full);
        line.push('\n');
        emit(&line);
    });
}

/// One row of the drawn tree: the guide drawn before the node's line (`├─ `, `│  `)
/// and the node; `depth` is how many branch lists it is nested in (0: the lane from
/// the root).
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    pub guide: &'a str,
    pub node: &'a Node,
    pub depth: usize,
}

/// Every row of `tree` in drawing order (the lines [`render_with`] draws after the
/// `forked from` line), to `visit`: the one walk of the tree's drawing, for `xcsh
/// tree` and the interactive navigator.
pub fn for_each_row(tree: &Tree, visit: &mut dyn FnMut(Row<'_>)) {
    visit_lane(&tree.root, "", "", 0, visit);
}

/// `first` prefixes the lane's first row, `rest` its other rows (and the rows of
/// its branches).
fn visit_lane(
    lane: &[Node],
    first: &str,
    rest: &str,
    depth: usize,
    visit: &mut dyn FnMut(Row<'_>),
) {
    for (i, node) in lane.iter().enumerate() {
        let guide = if i == 0 { first } else { rest };
        visit(Row { guide, node, depth });
        // The other branches hang off the node; the lane goes on below them.
        if !node.branches.is_empty() {
            let head = format!("{rest}├─ ");
            let tail = format!("{rest}│  ");
            for branch in &node.branches {
                visit_lane(branch, &head, &tail, depth + 1, visit);
            }
        }
    }
}

/// The text of one node's line (without the tree drawing).
pub fn node_line(node: &Node, style: Style, full: bool) -> String {
    let mut text = String::new();
    push_node_line(&mut text, node, style, full);
    text
}

/// [`node_line`], appended to `out` (the tree is drawn line by line into one buffer).
fn push_node_line(out: &mut String, node: &Node, style: Style, full: bool) {
    use std::fmt::Write;
    // `paint(out, Style::red, text)`: the text, painted when the style colors.
    let paint = |out: &mut String, how: fn(&Style, &str) -> String, text: &str| {
        if style.color {
            out.push_str(&how(&style, text));
        } else {
            out.push_str(text);
        }
    };
    // Writing to a `String` cannot fail.
    let ids = if node.first == node.last {
        format!("#{}", node.first)
    } else {
        format!("#{}..{}", node.first, node.last)
    };
    paint(out, Style::dim, &ids);
    out.push(' ');
    match node.kind.as_str() {
        "turn" => {
            out.push_str("user ");
            paint(out, Style::cyan, &node.text);
        }
        "branch" => paint(out, Style::blue, &format!("↳ {}", node.text)),
        "session" => {
            let _ = write!(out, "session {}", node.text);
        }
        kind => {
            let _ = write!(out, "{kind} {}", node.text);
            out.truncate(out.trim_end().len());
        }
    }
    let fact = |out: &mut String| out.push_str(" · ");
    let count = |out: &mut String, n: u32, what: &str| {
        fact(out);
        let _ = write!(out, "{n} {what}{}", if n == 1 { "" } else { "s" });
    };
    if !full && (node.kind == "turn" || node.steps > 0) {
        count(out, node.steps, "step");
        count(out, node.tool_calls, "tool call");
        fact(out);
        let _ = write!(out, "{} tok", node.tokens);
    }
    if !full {
        if node.steers > 0 {
            count(out, node.steers, "steer");
        }
        if node.follow_ups > 0 {
            count(out, node.follow_ups, "follow-up");
        }
        for c in &node.compactions {
            fact(out);
            paint(
                out,
                Style::blue,
                &format!(
                    "compacted #{} {}→{} tok",
                    c.entry, c.tokens_before, c.tokens_after
                ),
            );
        }
        match &node.stop {
            Some(s) if s == "completed" => {
                fact(out);
                out.push_str(s);
            }
            Some(s) => {
                fact(out);
                paint(out, Style::red, s);
            }
            None if node.kind == "turn" => {
                fact(out);
                paint(out, Style::yellow, "unfinished");
            }
            None => {}
        }
    }
    for l in &node.labels {
        paint(
            out,
            Style::magenta,
            &format!(" [#{}: {}]", l.target, l.name),
        );
    }
    // The other branches hang off the node; one more goes on below it.
    if !node.branches.is_empty() {
        paint(
            out,
            Style::blue,
            &format!(" ┬ {} branches at #{}", node.branches.len() + 1, node.last),
        );
    }
    if node.leaf {
        out.push_str(&style.bold(&style.green(" ◀ leaf")));
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
            #13 ↳ new branch (the leaf was #12)
            #14..17 user "instead, another task" · 1 step · 0 tool calls · 160 tok · completed ◀ leaf
        "##]].assert_eq(&render(&build(&log, false), Style::plain()));
    }

    /// The branch toward the leaf goes on at the left margin even when it was
    /// written first; the other hangs off the branch point.
    #[test]
    fn the_leaf_branch_goes_straight_on_and_the_others_hang_off() {
        let mut k = testkit::Kit::new("back");
        k.prompt("first");
        k.step(1, "one", &[]);
        let first = k.leaf();
        k.prompt("second");
        k.step(1, "two", &[]);
        let second = k.leaf();
        k.branch_at(first);
        k.prompt("instead");
        k.step(1, "three", &[]);
        k.branch_at(second);
        k.prompt("back to the second");
        k.step(1, "four", &[]);
        let (_dir, log) = k.finish();
        let text = render(&build(&log, false), Style::plain());
        expect_test::expect![[r##"
            #0 session fixture /workspace
            #1..4 user "first" · 1 step · 0 tool calls · 110 tok · completed ┬ 2 branches at #4
            ├─ #9 ↳ new branch (the leaf was #8)
            │  #10..13 user "instead" · 1 step · 0 tool calls · 110 tok · completed
            #5..8 user "second" · 1 step · 0 tool calls · 110 tok · completed
            #14 ↳ new branch (the leaf was #13)
            #15..18 user "back to the second" · 1 step · 0 tool calls · 110 tok · completed ◀ leaf
        "##]]
        .assert_eq(&text);
        assert_eq!(
            text,
            render(&build_full_or_turns(&log, false), Style::plain())
        );
    }

    /// The deepest nesting of branch lists in a tree.
    fn depth(lane: &[Node]) -> usize {
        lane.iter()
            .flat_map(|n| n.branches.iter().map(|b| 1 + depth(b)))
            .max()
            .unwrap_or(0)
    }

    /// A run per branch, each from one of the last few boundaries: hundreds of
    /// branches, each nested in the one before it when every branch is indented.
    /// Drawn with one branch going straight on at every branch point, the nesting
    /// stays below log2 of the entries, so the text grows with the entries only.
    #[test]
    fn a_session_of_hundreds_of_nested_branches_draws_a_shallow_tree() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("branches.jsonl");
        let shape = xcsh_core::journal::synth::SynthShape {
            branch_per_mille: 1000,
            max_rounds: 1,
            label_chain: 0,
        };
        let opts = xcsh_core::journal::synth::SynthOptions {
            entries: 4_000,
            seed: 5,
        };
        let report = xcsh_core::journal::synth::generate_shaped(&path, opts, shape).unwrap();
        assert!(report.branches > 300, "{report:?}");
        let log = read_session(&path).unwrap();
        let bytes = std::fs::metadata(&path).unwrap().len() as usize;
        for full in [false, true] {
            let tree = build(&log, full);
            let text = render(&tree, Style::plain());
            assert!(
                depth(&tree.root) <= 12,
                "full {full}: depth {}",
                depth(&tree.root)
            );
            assert!(text.len() < bytes / 2, "full {full}: {} bytes", text.len());
        }
    }

    /// A fork keeps its source's header (so that its hashes stay valid); the tree
    /// names it by its own id, the one in its file name, as `xcsh sessions` does.
    #[test]
    fn a_fork_is_shown_under_its_own_id() {
        let (dir, log) = testkit::branched_session();
        let fork = dir
            .path()
            .join("2026-01-01T00-00-00-000Z_f0e1d2c3b4a5.jsonl");
        crate::fork::fork(&log.path, EntryId(12), "origin", &fork, testkit::t0()).unwrap();
        let first_lines = |full: bool| {
            let tree = build_path(&fork, full).unwrap();
            let text = render(&tree, Style::plain());
            let lines: Vec<String> = text.lines().take(2).map(str::to_string).collect();
            (tree.session_id, lines)
        };
        let want = |session: &str| {
            (
                "f0e1d2c3b4a5".to_string(),
                vec![
                    "forked from origin @ 12".to_string(),
                    format!("#0 session {session}"),
                ],
            )
        };
        assert_eq!(first_lines(false), want("f0e1d2c3b4a5 /workspace"));
        assert_eq!(first_lines(true), want("f0e1d2c3b4a5 /workspace"));
        assert_eq!(
            crate::summary::summarize_path(&fork).unwrap().id,
            "f0e1d2c3b4a5"
        );
    }

    #[test]
    fn quoting_is_debug_formatting() {
        for text in [
            "plain words",
            "it's",
            "say \"hi\"",
            "back\\slash",
            "tab\there",
            "é ü",
            "…",
            "cut…",
            "…cut…",
            "",
        ] {
            assert_eq!(indexed::quoted(text), format!("{text:?}"), "{text}");
        }
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
