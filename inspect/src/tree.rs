//! `xcsh tree`: the branch DAG drawn as a tree. One line per turn (where it starts,
//! the user's message, steps, tool calls, tokens, how its run ended), branch points,
//! labels, compactions, the recorded leaf marked, and the fork origin; with `full`,
//! one line per entry.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Serialize;
use xcsh_log::family::{Links, Opened};
use xcsh_log::index::{
    ArchivedIndexData, IndexBuilder, IndexSource, Kind, SessionIndex, index_of, open_index,
};
use xcsh_log::parallel::{Window, read_parallel};
use xcsh_log::{Body, LogError, Record, SessionLog};
use xcsh_machine::EntryId;

use crate::common::{cut, entry_text, stop_text};
use crate::error::InspectError;
use crate::style::{Paint, Style};

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
    /// The children of the `task` calls whose results are in this node (a family,
    /// SPEC.md §29.6), in file order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ChildMark>,
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

/// The tree of `log`; `full` shows every entry (labels as entries too). Built from
/// the log's index, made in memory: the one builder of [`build_path`] too.
pub fn build(log: &SessionLog, full: bool) -> Tree {
    match index_of(log, None) {
        Ok(index) => build_indexed(index.data(), &log.path, full, &mut |pos| {
            log.entries.get(pos).map(entry_text)
        }),
        // An index is made of any log but one without entries, whose tree is empty.
        Err(_) => Tree {
            full,
            session_id: xcsh_log::session_id(&log.path, "").to_string(),
            cwd: String::new(),
            forked_from: None,
            leaf: EntryId(0),
            root: Vec::new(),
        },
    }
}

/// The tree of the session file at `path`: from its index (built or extended when
/// needed) unless `full`, which reads every entry ([`build_full`]).
pub fn build_path(path: &Path, full: bool) -> Result<Tree, InspectError> {
    if full {
        return Ok(build_full(path)?.data);
    }
    let index = open_index(path)?;
    let data = index.data();
    let mut file = std::fs::File::open(path).map_err(|e| InspectError::io(path, e))?;
    Ok(build_indexed(data, path, false, &mut |pos| {
        crate::common::entry_at(&mut file, data, pos).map(|e| entry_text(&e))
    }))
}

/// The tree with every entry (`--full`) of the session file at `path`, in one
/// verified pass over the file that keeps of each entry only its row of an index
/// made in memory and its text (made on the worker threads), not the entry; with
/// the header and the links of the `task` results (SPEC.md §29.6).
pub fn build_full(path: &Path) -> Result<Opened<Tree>, LogError> {
    let file = std::fs::File::open(path).map_err(|e| LogError::io(path, e))?;
    let mut builder = IndexBuilder::new();
    let mut texts: Vec<String> = Vec::new();
    let mut links = Links::default();
    let mut header = None;
    read_parallel(
        path,
        file,
        Window::in_flight(6),
        |e| {
            let text = entry_text(&e);
            (e, text)
        },
        |_, (e, text)| {
            builder.push(0, &e);
            links.push(&e);
            if let Body::Record(Record::Session(h)) = &e.body
                && header.is_none()
            {
                header = Some(h.clone());
            }
            texts.push(text);
            true
        },
    )?;
    let Some(header) = header else {
        return Err(LogError::NotASession {
            path: path.to_path_buf(),
        });
    };
    let index = SessionIndex::from_data(
        &builder.finish(0),
        IndexSource::Rebuilt {
            reason: "in memory",
        },
    )?;
    // Each entry starts its own node, so each text is taken once.
    let tree = build_indexed(index.data(), path, true, &mut |pos| {
        texts.get_mut(pos).map(std::mem::take)
    });
    Ok(Opened {
        header: *header,
        links: links.finish(),
        data: tree,
    })
}

mod build;
mod family;

pub use build::build_indexed;
pub use family::{ChildMark, build_family_path};

/// The tree as text.
pub fn render(tree: &Tree, style: Style) -> String {
    let mut out = String::new();
    render_with(tree, style, &mut |line| out.push_str(line));
    out
}

/// [`render`], line by line (each with its newline) to `emit`: a huge tree is
/// written out as it is drawn, never held whole.
pub fn render_with(tree: &Tree, style: Style, emit: &mut dyn FnMut(&str)) {
    render_prefixed(tree, style, "", emit);
}

/// [`render_with`], every line after `prefix` (a child's tree drawn under its
/// `task` call is indented by it).
fn render_prefixed(tree: &Tree, style: Style, prefix: &str, emit: &mut dyn FnMut(&str)) {
    let mut line = String::new();
    if let Some(f) = &tree.forked_from {
        line.push_str(prefix);
        line.push_str(&style.paint(Paint::Blue, &format!("forked from {f}")));
        line.push('\n');
        emit(&line);
    }
    for_each_row(tree, &mut |row| {
        line.clear();
        line.push_str(prefix);
        line.push_str(row.guide);
        push_node_line(&mut line, row.node, style, tree.full);
        line.push('\n');
        emit(&line);
        if !row.node.children.is_empty() {
            // The marks go on in the lane's column: `├─ ` becomes `│  `.
            let cont = match row.guide.strip_suffix("├─ ") {
                Some(head) => format!("{prefix}{head}│  "),
                None => format!("{prefix}{}", row.guide),
            };
            family::render_marks(&row.node.children, style, &cont, emit);
        }
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
    // `paint(out, Paint::Red, text)`: the text, painted when the style colors.
    let paint = |out: &mut String, how: Paint, text: &str| {
        if style.color {
            out.push_str(&style.paint(how, text));
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
    paint(out, Paint::Dim, &ids);
    out.push(' ');
    match node.kind.as_str() {
        "turn" => {
            out.push_str("user ");
            paint(out, Paint::Cyan, &node.text);
        }
        "branch" => paint(out, Paint::Blue, &format!("↳ {}", node.text)),
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
                Paint::Blue,
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
                paint(out, Paint::Red, s);
            }
            None if node.kind == "turn" => {
                fact(out);
                paint(out, Paint::Yellow, "unfinished");
            }
            None => {}
        }
    }
    for l in &node.labels {
        paint(
            out,
            Paint::Magenta,
            &format!(" [#{}: {}]", l.target, l.name),
        );
    }
    // The other branches hang off the node; one more goes on below it.
    if !node.branches.is_empty() {
        paint(
            out,
            Paint::Blue,
            &format!(" ┬ {} branches at #{}", node.branches.len() + 1, node.last),
        );
    }
    if node.leaf {
        out.push_str(&style.paint(Paint::Bold, &style.paint(Paint::Green, " ◀ leaf")));
    }
}

#[cfg(test)]
mod tests;
