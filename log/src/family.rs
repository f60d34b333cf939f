//! A session's family (SPEC.md §29.6): the sub-agent sessions its `task` calls
//! started, found by following each `task` result's `child` link to a file in the
//! parent file's folder, checking that the child's header names the parent back, and
//! recursing (a child may delegate too) with a cycle guard. The one loader of every
//! family view (`tree`, `events --deep`, `stats`, `sessions`, `export`, `replay
//! --deep`): generic over what a view keeps of a member (a whole `SessionLog`, or an
//! index), so the rules of the links are written once. A child file that is missing,
//! broken or already in the family is a state of that child, never an error of the
//! parent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use xcsh_machine::{CallId, Decision, EntryId};

use crate::{Body, ChildRun, Entry, LogError, Record, SessionHeader, SessionLog, read_session};

/// The tool whose results link to a child session.
pub const TASK_TOOL: &str = "task";

/// One `child` link as a member's log records it: the `tool_result` of a `task` call
/// naming the child run, and the `tool_dispatched` entry of that call (if the log has
/// it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkRef {
    pub result: EntryId,
    pub dispatch: Option<EntryId>,
    pub call_id: CallId,
    pub child: ChildRun,
}

/// What opening a member's file gives the loader: its header, its links (in file
/// order) and what the view keeps of it.
pub struct Opened<M> {
    pub header: SessionHeader,
    pub links: Vec<LinkRef>,
    pub data: M,
}

/// One session of a family.
#[derive(Debug)]
pub struct Member<M> {
    pub path: PathBuf,
    /// Its id as users see it (the id in its file name, else its header's).
    pub session_id: String,
    /// 0 for the session the family was loaded from.
    pub depth: usize,
    pub data: M,
    /// Its `task` calls' children, in file order of their results.
    pub children: Vec<Child<M>>,
}

/// One `task` call's child, as far as it could be followed.
#[derive(Debug)]
pub struct Child<M> {
    pub link: LinkRef,
    /// The child's file: the link's `file` in the parent file's folder.
    pub path: PathBuf,
    pub state: ChildState<M>,
    /// Where the child's header does not name this parent and call back.
    pub warnings: Vec<String>,
}

/// Whether a child was loaded, and why not.
#[derive(Debug)]
pub enum ChildState<M> {
    Loaded(Box<Member<M>>),
    /// Not followed: `--deep` was not asked for below the first generation.
    NotFollowed,
    /// No file at the child's path.
    Missing,
    /// The file is there but cannot be read as a session (the reader's error).
    Broken(String),
    /// The link's `file` is not a plain file name in the parent's folder.
    BadName,
    /// The file is already in the family (a cycle, or a child linked twice).
    Repeated,
}

impl<M> ChildState<M> {
    /// The child's state in a word (`loaded`, `missing`, `broken`, …).
    pub fn word(&self) -> &'static str {
        match self {
            ChildState::Loaded(_) => "loaded",
            ChildState::NotFollowed => "not followed",
            ChildState::Missing => "missing",
            ChildState::Broken(_) => "broken",
            ChildState::BadName => "bad file name",
            ChildState::Repeated => "already in the family",
        }
    }

    pub fn member(&self) -> Option<&Member<M>> {
        match self {
            ChildState::Loaded(m) => Some(m),
            ChildState::NotFollowed
            | ChildState::Missing
            | ChildState::Broken(_)
            | ChildState::BadName
            | ChildState::Repeated => None,
        }
    }
}

impl<M> Child<M> {
    /// What a view says of a child it could not load (None when loaded), and the
    /// warnings, one line each: `child ID (FILE): missing (no file PATH)`.
    pub fn problems(&self) -> Vec<String> {
        let who = format!(
            "child {} ({})",
            self.link.child.session_id, self.link.child.file
        );
        let mut out: Vec<String> = match &self.state {
            ChildState::Loaded(_) | ChildState::NotFollowed => Vec::new(),
            ChildState::Missing => {
                vec![format!("{who}: missing (no file {})", self.path.display())]
            }
            ChildState::Broken(e) => vec![format!("{who}: broken: {e}")],
            ChildState::BadName => vec![format!(
                "{who}: not followed: the file is not a plain file name in the parent's folder"
            )],
            ChildState::Repeated => vec![format!(
                "{who}: already in the family (a cycle, or linked twice); shown once"
            )],
        };
        out.extend(self.warnings.iter().map(|w| format!("{who}: {w}")));
        out
    }
}

/// How far the loader follows the links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// The session's own children (their files opened), not theirs.
    Children,
    /// Every generation.
    All,
}

impl<M> Member<M> {
    /// Every loaded member, the session first, then each child's family after the
    /// member it is under (depth first, in link order).
    pub fn members(&self) -> Vec<&Member<M>> {
        let mut out = Vec::new();
        self.walk(&mut out);
        out
    }

    fn walk<'a>(&'a self, out: &mut Vec<&'a Member<M>>) {
        out.push(self);
        for c in &self.children {
            if let Some(m) = c.state.member() {
                m.walk(out);
            }
        }
    }

    /// Every child problem in the family (missing, broken, mismatched links), one
    /// line each, in the order of [`Member::members`].
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for m in self.members() {
            for c in &m.children {
                out.extend(c.problems());
            }
        }
        out
    }

    /// The child of the `task` call whose result is `result`.
    pub fn child_at(&self, result: EntryId) -> Option<&Child<M>> {
        self.children.iter().find(|c| c.link.result == result)
    }

    /// The child of the `task` call whose result is `result`.
    pub fn child_of_dispatch(&self, dispatch: EntryId) -> Option<&Child<M>> {
        self.children
            .iter()
            .find(|c| c.link.dispatch == Some(dispatch))
    }
}

/// The links of a whole log: each `task` result with a `child`, in file order, with
/// its call's dispatch entry.
pub fn links_of(log: &SessionLog) -> Vec<LinkRef> {
    let mut links = Links::default();
    for e in &log.entries {
        links.push(e);
    }
    links.finish()
}

/// [`links_of`] entry by entry, for a reader that streams the log (in file order).
#[derive(Debug, Default)]
pub struct Links {
    dispatches: BTreeMap<String, EntryId>,
    out: Vec<LinkRef>,
}

impl Links {
    /// Takes the next entry of the log.
    pub fn push(&mut self, e: &Entry) {
        match &e.body {
            Body::Decision(Decision::ToolDispatched { call, .. }) => {
                self.dispatches.insert(call.id.0.clone(), e.id);
            }
            Body::Record(Record::ToolResult(r)) if r.name == TASK_TOOL => {
                if let Some(child) = &r.child {
                    self.out.push(LinkRef {
                        result: e.id,
                        dispatch: self.dispatches.get(r.call_id.0.as_str()).copied(),
                        call_id: r.call_id.clone(),
                        child: child.clone(),
                    });
                }
            }
            _ => {}
        }
    }

    /// The links found.
    pub fn finish(self) -> Vec<LinkRef> {
        self.out
    }
}

/// The family of the session file at `path`, each member read whole and verified
/// (`read_session`). An error only when the session itself cannot be read.
pub fn load_family(path: &Path, depth: Depth) -> Result<Member<SessionLog>, LogError> {
    load_with(path, depth, &mut |p| {
        let log = read_session(p)?;
        Ok(Opened {
            header: log.header().clone(),
            links: links_of(&log),
            data: log,
        })
    })
}

/// The family of the session file at `path`, each member opened by `open`.
pub fn load_with<M>(
    path: &Path,
    depth: Depth,
    open: &mut dyn FnMut(&Path) -> Result<Opened<M>, LogError>,
) -> Result<Member<M>, LogError> {
    let opened = open(path)?;
    let mut seen = vec![canonical(path)];
    Ok(member(
        path.to_path_buf(),
        opened,
        0,
        depth,
        open,
        &mut seen,
    ))
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

fn member<M>(
    path: PathBuf,
    opened: Opened<M>,
    level: usize,
    depth: Depth,
    open: &mut dyn FnMut(&Path) -> Result<Opened<M>, LogError>,
    seen: &mut Vec<PathBuf>,
) -> Member<M> {
    let session_id = crate::session_id(&path, &opened.header.session_id).to_string();
    let folder = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let follow = level == 0 || depth == Depth::All;
    let children = opened
        .links
        .into_iter()
        .map(|link| {
            let child_path = folder.join(&link.child.file);
            let (state, warnings) = 'state: {
                if !follow {
                    break 'state (ChildState::NotFollowed, Vec::new());
                }
                let plain = Path::new(&link.child.file).file_name()
                    == Some(std::ffi::OsStr::new(&link.child.file))
                    && link.child.file != ".."
                    && link.child.file != ".";
                if !plain {
                    break 'state (ChildState::BadName, Vec::new());
                }
                if !child_path.exists() {
                    break 'state (ChildState::Missing, Vec::new());
                }
                let key = canonical(&child_path);
                if seen.contains(&key) {
                    break 'state (ChildState::Repeated, Vec::new());
                }
                seen.push(key);
                match open(&child_path) {
                    Err(e) => (ChildState::Broken(e.to_string()), Vec::new()),
                    Ok(o) => {
                        let warnings = mismatches(&session_id, &link, &child_path, &o.header);
                        let m = member(child_path.clone(), o, level + 1, depth, open, seen);
                        (ChildState::Loaded(Box::new(m)), warnings)
                    }
                }
            };
            Child {
                link,
                path: child_path,
                state,
                warnings,
            }
        })
        .collect();
    Member {
        path,
        session_id,
        depth: level,
        data: opened.data,
        children,
    }
}

/// Where the child's header and file do not name the parent, its entry and call, and
/// the child's own id as the parent's link says.
fn mismatches(parent_id: &str, link: &LinkRef, path: &Path, header: &SessionHeader) -> Vec<String> {
    let mut out = Vec::new();
    let child_id = crate::session_id(path, &header.session_id);
    if child_id != link.child.session_id {
        out.push(format!(
            "the link names session {}, the file holds session {child_id}",
            link.child.session_id
        ));
    }
    match &header.parent {
        None => out.push("its header names no parent session".to_string()),
        Some(p) => {
            if p.session_id != parent_id {
                out.push(format!(
                    "its header names parent session {}, not {parent_id}",
                    p.session_id
                ));
            }
            if p.call_id != link.call_id {
                out.push(format!(
                    "its header names call {}, not {}",
                    p.call_id.0, link.call_id.0
                ));
            }
            if let Some(d) = link.dispatch
                && p.entry != d
            {
                out.push(format!(
                    "its header names parent entry #{}, the call was dispatched at #{d}",
                    p.entry
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
