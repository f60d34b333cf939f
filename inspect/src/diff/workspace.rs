//! `xcsh diff --workspace`: the files a session changed (from `tool_result.changes`,
//! every branch, in file order): for each file, its content before the session's
//! first change against its content now (or the session's last change, if the file
//! moved on since), as a unified diff. A file that an `undo` put back, and that is
//! still as the undo left it, is `reverted`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use similar::TextDiff;
use xcsh_log::{Body, Record, SessionLog};
use xcsh_machine::EntryId;

use crate::style::{Paint, Style};

#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    pub path: PathBuf,
    /// The session created the file (it did not exist before its first change).
    pub created: bool,
    /// The `tool_result` entries that changed it, in order.
    pub entries: Vec<EntryId>,
    pub before_hash: Option<String>,
    /// The hash after the session's last change.
    pub after_hash: String,
    /// `same` (the file is as the session left it), `reverted` (as the `undo` named by
    /// `undone_by` put it back), `changed` (it moved on since), `missing` (it is gone),
    /// `unreadable`.
    pub now: &'static str,
    /// The `undo` entry that last put the file back (when no change of the session
    /// came after it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undone_by: Option<EntryId>,
    pub diff: String,
    /// The content before the session's first change (empty when it created the
    /// file): the old side of `diff`.
    #[serde(skip)]
    pub before_text: String,
    /// The content now (empty when the file is missing or unreadable): the new side
    /// of `diff`.
    #[serde(skip)]
    pub now_text: String,
}

struct Acc {
    before: Option<String>,
    before_hash: Option<String>,
    after_hash: String,
    entries: Vec<EntryId>,
    /// Per run (its `user_message`), the file's hash before the run's first change.
    before_run: BTreeMap<EntryId, Option<String>>,
    /// The last `undo` of the file and the hash it put back (`None`: removed), unless
    /// a change came after it.
    undone: Option<(EntryId, Option<String>)>,
}

/// The file changes of `log`.
pub fn changes(log: &SessionLog) -> Vec<FileReport> {
    let mut files: BTreeMap<PathBuf, Acc> = BTreeMap::new();
    // A run's entries are consecutive in the file (it holds the lock).
    let mut run = EntryId(0);
    for e in &log.entries {
        match &e.body {
            Body::Record(Record::UserMessage { .. }) => run = e.id,
            Body::Record(Record::ToolResult(t)) => {
                for c in &t.changes {
                    let acc = files.entry(c.path.clone()).or_insert_with(|| Acc {
                        before: c.before.clone(),
                        before_hash: c.before_hash.clone(),
                        after_hash: String::new(),
                        entries: Vec::new(),
                        before_run: BTreeMap::new(),
                        undone: None,
                    });
                    acc.after_hash.clone_from(&c.after_hash);
                    acc.entries.push(e.id);
                    acc.before_run
                        .entry(run)
                        .or_insert_with(|| c.before_hash.clone());
                    acc.undone = None;
                }
            }
            Body::Record(Record::Undo {
                run: undone,
                files: reverted,
                ..
            }) => {
                for f in reverted {
                    if let Some(acc) = files.get_mut(f)
                        && let Some(hash) = acc.before_run.get(undone)
                    {
                        acc.undone = Some((e.id, hash.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    let cwd = PathBuf::from(&log.header().cwd);
    files
        .into_iter()
        .map(|(path, acc)| report(&cwd, path, acc))
        .collect()
}

fn report(cwd: &Path, path: PathBuf, acc: Acc) -> FileReport {
    let shown = path
        .strip_prefix(cwd)
        .unwrap_or(&path)
        .display()
        .to_string();
    let undone_by = acc.undone.as_ref().map(|(id, _)| *id);
    let (now, current) = match std::fs::read(&path) {
        Ok(bytes) => {
            let hash = blake3::hash(&bytes).to_hex().to_string();
            let now = match &acc.undone {
                Some((_, put_back)) if put_back.as_deref() == Some(hash.as_str()) => "reverted",
                Some(_) => "changed",
                None if hash == acc.after_hash => "same",
                None => "changed",
            };
            (now, String::from_utf8_lossy(&bytes).into_owned())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match &acc.undone {
            // The undo removed a file its run had created.
            Some((_, None)) => ("reverted", String::new()),
            Some(_) | None => ("missing", String::new()),
        },
        Err(_) => ("unreadable", String::new()),
    };
    let before = acc.before.clone().unwrap_or_default();
    let old_name = if acc.before.is_some() {
        format!("a/{shown} (before the session)")
    } else {
        "/dev/null (created by the session)".to_string()
    };
    let new_name = match now {
        "same" => format!("b/{shown} (now, as the session left it)"),
        "reverted" => format!("b/{shown} (now, as /undo put it back)"),
        "changed" => format!("b/{shown} (now; it changed after the session's last change)"),
        _ => format!("b/{shown} ({now})"),
    };
    let diff = TextDiff::from_lines(&before, &current)
        .unified_diff()
        .context_radius(3)
        .header(&old_name, &new_name)
        .to_string();
    FileReport {
        path,
        created: acc.before.is_none(),
        entries: acc.entries,
        before_hash: acc.before_hash,
        after_hash: acc.after_hash,
        now,
        undone_by,
        diff,
        before_text: before,
        now_text: current,
    }
}

/// The line naming a file of the report: `PATH — changed by #6, #9; reverted by
/// /undo #11`.
pub fn heading(f: &FileReport) -> String {
    let ids: Vec<String> = f.entries.iter().map(|e| format!("#{e}")).collect();
    format!(
        "{} — {} by {}{}",
        f.path.display(),
        if f.created { "created" } else { "changed" },
        ids.join(", "),
        match (f.now, f.undone_by) {
            ("same", _) => String::new(),
            ("reverted", Some(u)) => format!("; reverted by /undo #{u}"),
            ("changed", _) => "; changed since".into(),
            ("missing", _) => "; gone now".into(),
            _ => "; unreadable now".into(),
        }
    )
}

/// What is said of a file beside (or instead of) its diff: gone, reverted, no
/// textual difference.
pub fn notes(f: &FileReport) -> Vec<&'static str> {
    let mut notes = Vec::new();
    if f.now == "missing" {
        notes.push("(the file is gone now; the log keeps only the hash of what the session wrote)");
    }
    if f.diff.is_empty() && f.now == "reverted" {
        notes.push(if f.created {
            "(reverted: the file is gone again, as before the session)"
        } else {
            "(reverted: the file is as it was before the session)"
        });
    } else if f.diff.is_empty() {
        notes.push("(no textual difference)");
    }
    notes
}

pub fn render(files: &[FileReport], style: Style) -> String {
    if files.is_empty() {
        return "the session changed no files (no tool result records a change)\n".into();
    }
    let mut out = String::new();
    for f in files {
        out.push_str(&style.paint(Paint::Bold, &format!("{}\n", heading(f))));
        for note in notes(f) {
            out.push_str(&style.paint(Paint::Dim, &format!("  {note}\n")));
        }
        super::push_unified(&mut out, &f.diff, style);
    }
    out
}

#[cfg(test)]
mod tests {
    use xcsh_log::{FileChange, ToolResultRecord};
    use xcsh_machine::{CallId, ToolOutcome, ToolStatus};

    use super::*;
    use crate::testkit::Kit;

    /// A run that changes `changed` (from "old") and creates `created`, then what
    /// `undo` says it put back.
    fn session(dir: &Path, undo: bool, after: bool) -> SessionLog {
        let changed = dir.join("f.txt");
        let created = dir.join("g.txt");
        let mut k = Kit::new("w");
        k.prompt("rewrite f, create g");
        let run = EntryId(1);
        // The test tools have no `write`: `echo` calls stand in for it.
        k.step(1, "", &[("echo", "{\"n\":1}"), ("echo", "{\"n\":2}")]);
        let results = [
            (&changed, Some("old\n"), "new\n"),
            (&created, None, "made\n"),
        ];
        for (call, (path, before, now)) in k.calls.clone().iter().zip(results) {
            k.record(Record::ToolResult(Box::new(ToolResultRecord {
                call_id: CallId(call.id.0.clone()),
                name: call.name.clone(),
                outcome: ToolOutcome {
                    status: ToolStatus::Ok,
                    content: "written".into(),
                },
                duration_ms: 1,
                changes: vec![FileChange::new(path, before, now)],
                child: None,
            })));
        }
        k.step(2, "done", &[]);
        std::fs::write(&changed, "new\n").unwrap();
        std::fs::write(&created, "made\n").unwrap();
        if undo {
            k.record(Record::Undo {
                run,
                files: vec![changed.clone(), created.clone()],
                note: Some("[Note: reverted]".into()),
            });
            std::fs::write(&changed, "old\n").unwrap();
            std::fs::remove_file(&created).unwrap();
        }
        if after {
            std::fs::write(&changed, "later\n").unwrap();
        }
        let (_dir, log) = k.finish();
        log
    }

    #[test]
    fn files_put_back_by_an_undo_are_reverted_not_changed_since() {
        let dir = tempfile::tempdir().unwrap();
        let log = session(dir.path(), true, false);
        let files = changes(&log);
        let undo = log
            .entries
            .iter()
            .find(|e| matches!(e.body, Body::Record(Record::Undo { .. })))
            .unwrap()
            .id;
        let now: Vec<(&str, Option<EntryId>)> =
            files.iter().map(|f| (f.now, f.undone_by)).collect();
        assert_eq!(now, [("reverted", Some(undo)), ("reverted", Some(undo))]);
        let text = render(&files, Style::plain());
        let shown = text.replace(&dir.path().display().to_string(), "DIR");
        expect_test::expect![[r#"
            DIR/f.txt — changed by #6; reverted by /undo #11
              (reverted: the file is as it was before the session)
            DIR/g.txt — created by #7; reverted by /undo #11
              (reverted: the file is gone again, as before the session)
        "#]]
        .assert_eq(&shown);
    }

    #[test]
    fn a_file_edited_after_the_undo_is_changed_since() {
        let dir = tempfile::tempdir().unwrap();
        let log = session(dir.path(), true, true);
        let files = changes(&log);
        assert_eq!(files[0].now, "changed");
        assert!(render(&files, Style::plain()).contains("f.txt — changed by #6; changed since"));
        // Without an undo, the session's own state is `same`.
        let dir = tempfile::tempdir().unwrap();
        let files = changes(&session(dir.path(), false, false));
        let now: Vec<&str> = files.iter().map(|f| f.now).collect();
        assert_eq!(now, ["same", "same"]);
    }
}
