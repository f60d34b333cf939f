//! `xcsh fork` and `xcsh label`: the two writers of the toolkit.
//!
//! A fork is a new session file holding the path from the root to an entry E of
//! another session, every line copied byte for byte (so ids and hashes are kept and
//! the shared history is recognizable by hash), followed by one `label` entry on E
//! naming the origin (`forked from SESSION @ E`). The header cannot say it: its
//! `forked_from` would change the header's bytes and so every hash after it. A label
//! does not move the leaf, so the fork continues from E. The file is written to a
//! temporary name in the same directory, synced, and renamed into place. A fork is
//! refused at an entry inside a run (a step streaming, tool calls unsettled, a
//! compaction running, or decisions still owed), naming the settled boundary to use.
//!
//! `label` appends a `label` entry (parent E, through the locking `SessionWriter`)
//! without moving the leaf.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use xcsh_log::machine_at::{rebuild_machine, settled_boundary};
use xcsh_log::{Body, Dag, Entry, Record, SessionWriter, TornTail, read_session};
use xcsh_machine::EntryId;

use crate::error::InspectError;

/// What a fork wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forked {
    pub path: PathBuf,
    /// Entries copied (the path root → E).
    pub copied: usize,
    /// The origin label's entry and its name.
    pub label: EntryId,
    pub label_name: String,
}

/// How the origin label of a fork starts.
pub const ORIGIN_PREFIX: &str = "forked from ";

/// The name of the origin label of a fork of `origin` at `at`.
pub fn origin_label(origin: &str, at: EntryId) -> String {
    format!("{ORIGIN_PREFIX}{origin} @ {at}")
}

/// Forks the session at `source` at entry `at` into the new file `out`. `origin`
/// names the source in the label (its session id); `now` stamps the label.
pub fn fork(
    source: &Path,
    at: EntryId,
    origin: &str,
    out: &Path,
    now: DateTime<Utc>,
) -> Result<Forked, InspectError> {
    if out.exists() {
        return Err(InspectError::Exists {
            path: out.to_path_buf(),
        });
    }
    let bytes = std::fs::read(source).map_err(|e| InspectError::io(source, e))?;
    let log = read_session(source)?;
    let target = log.get(at).ok_or_else(|| log.no_entry(at))?;
    let (machine, boundary) = rebuild_machine(&log, at)?;
    settled_boundary(&log, &machine, boundary, at).map_err(InspectError::NotABoundary)?;
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let path = Dag::from_log(&log).path_to_root(at)?;
    let mut text = Vec::with_capacity(bytes.len());
    for id in &path {
        let line = log
            .line_of(*id)
            .and_then(|l| lines.get(l as usize - 1))
            .ok_or_else(|| InspectError::NoSuchEntry {
                path: source.to_path_buf(),
                id: *id,
            })?;
        text.extend_from_slice(line);
        text.push(b'\n');
    }
    let max_id = log.entries.iter().map(|e| e.id).max().unwrap_or(EntryId(0));
    let Some(label_id) = max_id.0.checked_add(1).map(EntryId) else {
        return Err(xcsh_log::LogError::IdsExhausted {
            path: source.to_path_buf(),
            id: max_id,
        }
        .into());
    };
    let label_name = origin_label(origin, at);
    let (line, _) = Entry::encode(
        label_id,
        Some(at),
        Some(&target.hash),
        now,
        &Body::Record(Record::Label {
            target: at,
            name: label_name.clone(),
        }),
    );
    text.extend_from_slice(&line);
    write_new(out, &text)?;
    // What was written reads back clean, with E as its leaf.
    let written = read_session(out)?;
    debug_assert_eq!(written.leaf(), at);
    Ok(Forked {
        path: out.to_path_buf(),
        copied: path.len(),
        label: label_id,
        label_name,
    })
}

/// Writes `bytes` to a temporary file beside `out`, syncs it, renames it to `out`
/// (unless a file appeared there meanwhile) and syncs the directory; the temporary
/// file never outlives the call.
fn write_new(out: &Path, bytes: &[u8]) -> Result<(), InspectError> {
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        Some(_) | None => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| InspectError::io(&dir, e))?;
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "fork.jsonl".into());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| InspectError::io(&tmp, e))?;
        f.write_all(bytes).map_err(|e| InspectError::io(&tmp, e))?;
        f.sync_all().map_err(|e| InspectError::io(&tmp, e))?;
        if out.exists() {
            return Err(InspectError::Exists {
                path: out.to_path_buf(),
            });
        }
        std::fs::rename(&tmp, out).map_err(|e| InspectError::io(out, e))?;
        File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| InspectError::io(&dir, e))
    })();
    let _ = std::fs::remove_file(&tmp);
    result
}

/// Appends a label named `name` on entry `target` of the session at `path`, through
/// the locking writer (a torn last line is repaired first, as for any append).
/// Returns the label's id and the repaired tail, if there was one.
pub fn label(
    path: &Path,
    target: EntryId,
    name: &str,
    now: DateTime<Utc>,
) -> Result<(EntryId, Option<TornTail>), InspectError> {
    let (mut writer, log) = SessionWriter::open(path)?;
    if log.get(target).is_none() {
        return Err(log.no_entry(target).into());
    }
    let (id, _) = writer.append(
        target,
        now,
        &Body::Record(Record::Label {
            target,
            name: name.to_string(),
        }),
    )?;
    writer.sync()?;
    Ok((id, log.torn_tail))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;

    #[test]
    fn a_fork_copies_the_path_byte_for_byte_and_labels_its_origin() {
        let (dir, log) = testkit::branched_session();
        let out = dir.path().join("fork.jsonl");
        // Entry 12 ends the second run, on the branch that is not the leaf's.
        let f = fork(&log.path, EntryId(12), "abc", &out, testkit::t0()).unwrap();
        assert_eq!(f.copied, 13);
        assert_eq!(f.label, EntryId(18));
        let original = std::fs::read_to_string(&log.path).unwrap();
        let forked = std::fs::read_to_string(&out).unwrap();
        let lines: Vec<&str> = forked.lines().collect();
        for l in &lines[..13] {
            assert!(original.lines().any(|o| o == *l), "copied verbatim: {l}");
        }
        let back = read_session(&out).unwrap();
        assert_eq!(back.leaf(), EntryId(12), "the label does not move the leaf");
        assert_eq!(
            back.get(EntryId(12)).unwrap().hash,
            log.get(EntryId(12)).unwrap().hash
        );
        assert!(
            lines[13]
                .contains(r#""type":"label","data":{"target":12,"name":"forked from abc @ 12"}"#)
        );
        let report = crate::check::check_file(&out).unwrap();
        assert!(report.findings.is_empty(), "{:?}", report.findings);
        assert!(
            !dir.path().read_dir().unwrap().any(|e| e
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".tmp-"))
        );
        // Never over an existing file.
        let again = fork(&log.path, EntryId(12), "abc", &out, testkit::t0()).unwrap_err();
        assert!(matches!(again, InspectError::Exists { .. }));
    }

    #[test]
    fn a_fork_inside_a_run_is_refused_naming_the_boundaries() {
        let (dir, log) = testkit::steer_session();
        let out = dir.path().join("fork.jsonl");
        let err = fork(&log.path, EntryId(6), "abc", &out, testkit::t0()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot fork at entry 6: it is inside a run (2 tool call(s) of step 1 running); fork at a settled boundary instead: entry 0 (the session start) or entry 16 (where this run finished)"
        );
        let err = fork(&log.path, EntryId(2), "abc", &out, testkit::t0()).unwrap_err();
        assert!(err.to_string().contains("(step 1 streaming)"), "{err}");
        assert!(!out.exists());
    }

    #[test]
    fn a_label_does_not_move_the_leaf() {
        let (_dir, log) = testkit::steer_session();
        let (id, torn) = label(&log.path, EntryId(4), "the tool step", testkit::t0()).unwrap();
        assert_eq!((id, torn), (EntryId(17), None));
        let back = read_session(&log.path).unwrap();
        assert_eq!(back.leaf(), log.leaf());
        assert_eq!(back.get(id).unwrap().parent, Some(EntryId(4)));
        let err = label(&log.path, EntryId(99), "x", testkit::t0()).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("no entry 99 (the session has entries 0-17)"),
            "{err}"
        );
    }
}
