//! What the branch records of where and with what a session runs at an entry: the
//! workspace its tools run in (the `to` of the last `workspace` entry on the path
//! from the root to that entry, else the header's `cwd`) and the provider its runs
//! are made of (the last `provider` entry there, else the header's `provider`). Read through the
//! derived index, so that only that entry's line is decoded.

use std::path::Path;

use super::entry::{Body, ProviderRecord, Record};
use super::error::LogError;
use super::index::{ArchivedIndexData, Kind, LogLines, open_index};
use xcsh_machine::EntryId;

/// The recorded workspace of the session at `log`, at entry `at` (the leaf when
/// `None`).
pub fn recorded_workspace(log: &Path, at: Option<EntryId>) -> Result<String, LogError> {
    let index = open_index(log)?;
    recorded_workspace_in(log, index.data(), at)
}

/// [`recorded_workspace`] with the log's index open already.
pub fn recorded_workspace_in(
    log: &Path,
    d: &ArchivedIndexData,
    at: Option<EntryId>,
) -> Result<String, LogError> {
    match last_on_branch(log, d, at, Kind::Workspace)? {
        Some((_, Record::Workspace { to, .. })) => Ok(to),
        Some((p, _)) => Err(unreadable(log, p, "workspace")),
        None => Ok(d.cwd.as_str().to_string()),
    }
}

/// The recorded provider of the session at `log` at entry `at` (the leaf when
/// `None`): the last `provider` entry on the branch, else the header's (the first
/// run's); `None` when neither has one (SPEC.md §22.2).
pub fn recorded_provider(
    log: &Path,
    at: Option<EntryId>,
) -> Result<Option<ProviderRecord>, LogError> {
    let index = open_index(log)?;
    match last_on_branch(log, index.data(), at, Kind::Provider)? {
        Some((_, Record::Provider(p))) => Ok(Some(p)),
        Some((p, _)) => Err(unreadable(log, p, "provider")),
        None => Ok(crate::read_header(log)?.provider),
    }
}

/// The position and record of the last entry of `kind` on the path from the root
/// to `at` (the leaf when `None`); `None` when there is none.
fn last_on_branch(
    log: &Path,
    d: &ArchivedIndexData,
    at: Option<EntryId>,
    kind: Kind,
) -> Result<Option<(usize, Record)>, LogError> {
    let start =
        match at {
            None => d.leaf(),
            Some(id) => (0..d.len()).rev().find(|&p| d.id(p) == id).ok_or_else(|| {
                LogError::UnknownEntry {
                    path: log.to_path_buf(),
                    id,
                }
            })?,
        };
    let mut pos = Some(start);
    while let Some(p) = pos {
        if d.kind(p) == kind {
            return match LogLines::open(log)?.entry(d, p).map(|e| e.body) {
                Some(Body::Record(record)) => Ok(Some((p, record))),
                Some(Body::Decision(_) | Body::Unknown { .. }) | None => {
                    Err(unreadable(log, p, kind.name()))
                }
            };
        }
        // Parents precede their children in a verified log, so this ends.
        pos = d.parent(p).filter(|&q| q < p);
    }
    Ok(None)
}

/// The error for an entry at position `p` the index says is a `name` entry and
/// that does not read as one.
fn unreadable(log: &Path, p: usize, name: &str) -> LogError {
    LogError::io(
        log,
        std::io::Error::other(format!(
            "line {}: cannot read the `{name}` entry the index points at",
            p + 1
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::writer::testutil::{header, ts};
    use crate::{SessionWriter, read_session};

    fn moved(from: &str, to: &str) -> Body {
        Body::Record(Record::Workspace {
            from: from.into(),
            to: to.into(),
        })
    }

    #[test]
    fn a_workspace_entry_round_trips_as_one_line() {
        let (_dir, path) = crate::writer::testutil::scratch();
        let mut w = SessionWriter::create(&path, header(), ts(0)).unwrap();
        w.append(EntryId(0), ts(1), &moved("/a", "/b")).unwrap();
        drop(w);
        let text = std::fs::read_to_string(&path).unwrap();
        let line = text.lines().nth(1).unwrap();
        assert!(
            line.contains(r#""type":"workspace","data":{"from":"/a","to":"/b"}"#),
            "{line}"
        );
        let log = read_session(&path).unwrap();
        assert_eq!(log.entries[1].body, moved("/a", "/b"));
        assert!(!log.entries[1].body.is_input());
    }

    #[test]
    fn the_index_kind_of_a_workspace_entry_is_structure() {
        assert_eq!(Kind::of(&moved("/a", "/b")), Kind::Workspace);
        assert_eq!(Kind::Workspace.name(), "workspace");
        assert!(!Kind::Workspace.is_input() && !Kind::Workspace.is_decision());
    }

    #[test]
    fn the_workspace_is_the_last_move_on_the_branch_else_the_headers() {
        let (_dir, path) = crate::writer::testutil::scratch();
        let cwd = header().cwd;
        let mut w = SessionWriter::create(&path, header(), ts(0)).unwrap();
        let steer = Body::Record(Record::Steer { text: "s".into() });
        let (a, _) = w.append(EntryId(0), ts(1), &steer).unwrap();
        let (m1, _) = w.append(a, ts(2), &moved(&cwd, "/b")).unwrap();
        let (b, _) = w.append(m1, ts(3), &steer).unwrap();
        let (m2, _) = w.append(b, ts(4), &moved("/b", "/c")).unwrap();
        let (c, _) = w.append(m2, ts(5), &steer).unwrap();
        // Another branch from `a`: no move on it.
        let (d, _) = w.append(a, ts(6), &steer).unwrap();
        drop(w);
        let at = |e| recorded_workspace(&path, Some(e)).unwrap();
        assert_eq!(
            [at(a), at(m1), at(b), at(m2), at(c), at(d)],
            [
                cwd.clone(),
                "/b".into(),
                "/b".into(),
                "/c".into(),
                "/c".into(),
                cwd.clone()
            ]
        );
        // The leaf is `d`.
        assert_eq!(recorded_workspace(&path, None).unwrap(), cwd);
        assert!(matches!(
            recorded_workspace(&path, Some(EntryId(99))),
            Err(LogError::UnknownEntry {
                id: EntryId(99),
                ..
            })
        ));
    }

    fn provider(name: &str, model: &str) -> ProviderRecord {
        ProviderRecord {
            provider: name.into(),
            model: Some(model.into()),
            base_url: None,
            script: None,
        }
    }

    #[test]
    fn the_provider_is_the_last_provider_entry_on_the_branch_else_none() {
        let (_dir, path) = crate::writer::testutil::scratch();
        let mut w = SessionWriter::create(&path, header(), ts(0)).unwrap();
        let steer = Body::Record(Record::Steer { text: "s".into() });
        let recorded = |p: ProviderRecord| Body::Record(Record::Provider(p));
        let (a, _) = w.append(EntryId(0), ts(1), &steer).unwrap();
        let (p1, _) = w
            .append(a, ts(2), &recorded(provider("openai", "m1")))
            .unwrap();
        let (b, _) = w.append(p1, ts(3), &steer).unwrap();
        let (p2, _) = w
            .append(b, ts(4), &recorded(provider("anthropic", "m2")))
            .unwrap();
        let (c, _) = w.append(p2, ts(5), &steer).unwrap();
        // Another branch from `b` (the first provider's), one from `a` (none).
        let (d, _) = w.append(b, ts(6), &steer).unwrap();
        let (e, _) = w.append(a, ts(7), &steer).unwrap();
        drop(w);
        let at = |e| recorded_provider(&path, Some(e)).unwrap();
        let (first, second) = (provider("openai", "m1"), provider("anthropic", "m2"));
        assert_eq!(
            [at(a), at(p1), at(b), at(p2), at(c), at(d), at(e)],
            [
                None,
                Some(first.clone()),
                Some(first.clone()),
                Some(second.clone()),
                Some(second),
                Some(first),
                None
            ]
        );
        // The leaf is `e`, on a branch without one.
        assert_eq!(recorded_provider(&path, None).unwrap(), None);
        // A `provider` entry moves no workspace.
        assert_eq!(recorded_workspace(&path, Some(c)).unwrap(), header().cwd);
    }
}
