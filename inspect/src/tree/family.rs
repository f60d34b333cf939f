//! `xcsh tree` on a family (SPEC.md §29.6): each `task` call's node marked with its
//! child (session id, steps, tokens, how its run ended, or why it could not be
//! read), and with `deep` the child's own tree under the mark, indented, down every
//! generation. Members are loaded by the one loader, `xcsh_log::family`.

use std::path::Path;

use serde::Serialize;
use xcsh_log::LogError;
use xcsh_log::family::{ChildState, Depth, Member, Opened, load_with};
use xcsh_machine::EntryId;

use super::{Node, Tree, build_indexed, render_prefixed};
use crate::error::InspectError;
use crate::style::{Paint, Style};

/// A `task` call's child, as its parent's tree shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ChildMark {
    pub call_id: String,
    /// The `tool_result` entry that names the child.
    pub result: EntryId,
    /// The call's `tool_dispatched` entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispatch: Option<EntryId>,
    pub session_id: String,
    pub file: String,
    /// `loaded`, `missing`, `broken`, `bad file name`, `already in the family`.
    pub state: String,
    /// How the child's last run ended (on its leaf's branch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    /// The child's steps and tokens, every branch.
    pub steps: u32,
    pub tokens: u64,
    /// What is wrong with the child or its link, one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// The child's tree (`--deep`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree: Option<Box<Tree>>,
}

/// The tree of the session at `path` with its `task` calls marked with their
/// children; `deep` draws every generation's tree under its mark.
pub fn build_family_path(path: &Path, full: bool, deep: bool) -> Result<Tree, InspectError> {
    let depth = if deep { Depth::All } else { Depth::Children };
    let family = load_with(path, depth, &mut |p| open_tree(p, full))?;
    Ok(marked(family, deep))
}

/// A member's tree, from its index unless `full`.
fn open_tree(path: &Path, full: bool) -> Result<Opened<Tree>, LogError> {
    if full {
        return super::build_full(path);
    }
    let opened = crate::family::open_indexed(path)?;
    let d = opened.data.data();
    let mut file = std::fs::File::open(path).map_err(|e| LogError::io(path, e))?;
    let tree = build_indexed(d, path, false, &mut |pos| {
        crate::common::entry_at(&mut file, d, pos).map(|e| crate::common::entry_text(&e))
    });
    Ok(Opened {
        header: opened.header,
        links: opened.links,
        data: tree,
    })
}

/// The member's tree with its children's marks in the nodes of their results.
fn marked(member: Member<Tree>, deep: bool) -> Tree {
    let mut tree = member.data;
    for child in member.children {
        let problems = child.problems();
        let state = child.state.word().to_string();
        let (stop, steps, tokens, sub) = match child.state {
            ChildState::Loaded(m) => {
                let t = marked(*m, deep);
                let (steps, tokens) = totals(&t.root);
                (last_stop(&t.root), steps, tokens, deep.then(|| Box::new(t)))
            }
            ChildState::NotFollowed
            | ChildState::Missing
            | ChildState::Broken(_)
            | ChildState::BadName
            | ChildState::Repeated => (None, 0, 0, None),
        };
        let mark = ChildMark {
            call_id: child.link.call_id.0.clone(),
            result: child.link.result,
            dispatch: child.link.dispatch,
            session_id: child.link.child.session_id.clone(),
            file: child.link.child.file.clone(),
            state,
            stop,
            steps,
            tokens,
            problems,
            tree: sub,
        };
        if let Some(node) = node_of(&mut tree.root, mark.result) {
            node.children.push(mark);
        }
    }
    tree
}

/// The node whose entry range holds `id` (the narrowest, for ranges of branches
/// continued later).
fn node_of(lane: &mut [Node], id: EntryId) -> Option<&mut Node> {
    fn best(
        lane: &[Node],
        id: EntryId,
        path: &mut Vec<usize>,
        found: &mut Option<(u64, Vec<usize>)>,
    ) {
        for (i, n) in lane.iter().enumerate() {
            path.push(i);
            if n.first <= id && id <= n.last {
                let width = n.last.0 - n.first.0;
                if found.as_ref().is_none_or(|(w, _)| width < *w) {
                    *found = Some((width, path.clone()));
                }
            }
            for (b, branch) in n.branches.iter().enumerate() {
                path.push(b);
                best(branch, id, path, found);
                path.pop();
            }
            path.pop();
        }
    }
    let mut found = None;
    best(lane, id, &mut Vec::new(), &mut found);
    let (_, path) = found?;
    // The path alternates: a node's place in its lane, then a branch's among the
    // node's branches.
    let mut lane = lane;
    let mut steps = path.chunks(2);
    loop {
        let step = steps.next()?;
        let node = lane.get_mut(step[0])?;
        match step.get(1) {
            None => return Some(node),
            Some(&b) => lane = node.branches.get_mut(b)?,
        }
    }
}

/// Steps and tokens over every node.
fn totals(lane: &[Node]) -> (u32, u64) {
    lane.iter().fold((0, 0), |(s, t), n| {
        let (bs, bt) = n
            .branches
            .iter()
            .map(|b| totals(b))
            .fold((0, 0), |(a, b), (c, d)| (a + c, b + d));
        (s + n.steps + bs, t + n.tokens + bt)
    })
}

/// How the last finished run of the lane (the leaf's branch) ended.
fn last_stop(lane: &[Node]) -> Option<String> {
    lane.iter().rev().find_map(|n| n.stop.clone())
}

/// The lines of a node's marks (and with `deep` the children's trees), each after
/// `cont`, the lane's guide.
pub(super) fn render_marks(
    marks: &[ChildMark],
    style: Style,
    cont: &str,
    emit: &mut dyn FnMut(&str),
) {
    use std::fmt::Write;
    for m in marks {
        let mut line = format!("{cont}  ");
        line.push_str(&style.paint(
            Paint::Blue,
            &format!("⤷ task {} #{} → {}", m.call_id, m.result, m.session_id),
        ));
        if m.state == "loaded" {
            let _ = write!(
                line,
                " · {} step{} · {} tok",
                m.steps,
                if m.steps == 1 { "" } else { "s" },
                m.tokens
            );
            match m.stop.as_deref() {
                Some("completed") => line.push_str(" · completed"),
                Some(s) => {
                    line.push_str(" · ");
                    line.push_str(&style.paint(Paint::Red, s));
                }
                None => {
                    line.push_str(" · ");
                    line.push_str(&style.paint(Paint::Yellow, "unfinished"));
                }
            }
        } else if m.state != "not followed" {
            line.push_str(" · ");
            line.push_str(&style.paint(Paint::Red, &m.state));
        }
        line.push('\n');
        emit(&line);
        for p in &m.problems {
            emit(&format!(
                "{cont}    {}\n",
                style.paint(Paint::Yellow, &format!("! {p}"))
            ));
        }
        if let Some(t) = &m.tree {
            render_prefixed(t, style, &format!("{cont}    "), emit);
        }
    }
}
