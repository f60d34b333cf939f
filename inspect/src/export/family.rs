//! `xcsh export` on a family (SPEC.md §29.6): after the session's own export, each
//! `task` call's child, in the order of their results, depth first: in Markdown a
//! section per sub-agent (its transcript, headings one level deeper per
//! generation), in HTML the same transcripts in a "Sub-agents" section, in JSON a
//! `family` member holding each child's link and whole export. A child that cannot be
//! read is named with the reason. Members come from the one loader.

use std::path::Path;

use serde_json::{Value, json};
use xcsh_log::family::{Child, Depth, Member, load_with};
use xcsh_log::{SessionLog, read_session};

use super::markdown_level;
use crate::error::InspectError;
use crate::source::Streamed;

/// The Markdown transcript of the session at `path` (the branch ending at `leaf`:
/// `N`, `#N` or a label's name), then its sub-agents'.
/// Every member is streamed from its file (its header and links through its index).
pub fn markdown_family(path: &Path, leaf: Option<&str>) -> Result<String, InspectError> {
    let family = load_with(path, Depth::All, &mut |p| {
        let o = crate::family::open_indexed(p)?;
        Ok(xcsh_log::family::Opened {
            header: o.header,
            links: o.links,
            data: Streamed::new(p),
        })
    })?;
    let mut out = markdown_level(&family.data, leaf, 0)?;
    children_markdown(&family, 1, &mut out)?;
    Ok(out)
}

/// The note that introduces a child's transcript (or says why there is none).
fn child_note<M>(parent: &str, c: &Child<M>) -> String {
    let mut s = format!(
        "\n---\n\n_Sub-agent {} of {parent}: started by the `task` call {} (its result is entry {}), file `{}`._\n\n",
        c.link.child.session_id, c.link.call_id.0, c.link.result, c.link.child.file
    );
    for p in c.problems() {
        s.push_str(&format!("_{p}_\n\n"));
    }
    s
}

fn children_markdown(
    m: &Member<Streamed>,
    level: usize,
    out: &mut String,
) -> Result<(), InspectError> {
    for c in &m.children {
        out.push_str(&child_note(&m.session_id, c));
        if let Some(k) = c.state.member() {
            out.push_str(&markdown_level(&k.data, None, level)?);
            children_markdown(k, level + 1, out)?;
        }
    }
    Ok(())
}

/// The sub-agents' transcripts of the session at `path` (empty when it has no
/// children), for the HTML page's "Sub-agents" section.
pub(super) fn children_text(path: &Path) -> Result<String, InspectError> {
    // The session itself is not read again: only its links.
    let mut first = true;
    let family = load_with(path, Depth::All, &mut |p| {
        if std::mem::take(&mut first) {
            let o = crate::family::open_indexed(p)?;
            return Ok(xcsh_log::family::Opened {
                header: o.header,
                links: o.links,
                data: None,
            });
        }
        let log = read_session(p)?;
        Ok(xcsh_log::family::Opened {
            header: log.header().clone(),
            links: xcsh_log::family::links_of(&log),
            data: Some(log),
        })
    })?;
    let mut out = String::new();
    fn walk(
        m: &Member<Option<SessionLog>>,
        level: usize,
        out: &mut String,
    ) -> Result<(), InspectError> {
        for c in &m.children {
            out.push_str(&child_note(&m.session_id, c));
            if let Some(k) = c.state.member()
                && let Some(log) = &k.data
            {
                out.push_str(&markdown_level(log, None, level)?);
                walk(k, level + 1, out)?;
            }
        }
        Ok(())
    }
    walk(&family, 1, &mut out)?;
    Ok(out)
}

/// The `family` member of the JSON export of the session at `path`: one object per
/// child (its link, state, problems, and its whole export as `export`), or `None`
/// when the session has no children.
pub(super) fn children_json(path: &Path) -> Result<Option<Value>, InspectError> {
    let family = load_with(path, Depth::All, &mut |p| {
        let o = crate::family::open_indexed(p)?;
        Ok(xcsh_log::family::Opened {
            header: o.header,
            links: o.links,
            data: (),
        })
    })?;
    if family.children.is_empty() {
        return Ok(None);
    }
    fn kids(m: &Member<()>) -> Result<Value, InspectError> {
        let mut list = Vec::new();
        for c in &m.children {
            let export = match c.state.member() {
                Some(k) => {
                    let mut buf = Vec::new();
                    super::write_json_member(&k.path, &mut buf, &k.path, Some(kids(k)?))?;
                    serde_json::from_slice(&buf).unwrap_or(Value::Null)
                }
                None => Value::Null,
            };
            list.push(json!({
                "call_id": c.link.call_id.0,
                "result": c.link.result,
                "dispatch": c.link.dispatch,
                "session_id": c.link.child.session_id,
                "file": c.link.child.file,
                "state": c.state.word(),
                "problems": c.problems(),
                "export": export,
            }));
        }
        Ok(Value::Array(list))
    }
    kids(&family).map(Some)
}
