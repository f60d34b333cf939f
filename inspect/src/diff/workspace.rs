//! `xcsh diff --workspace`: the files a session changed (from `tool_result.changes`,
//! every branch, in file order): for each file, its content before the session's
//! first change against its content now (or the session's last change, if the file
//! moved on since), as a unified diff.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use similar::TextDiff;
use xcsh_core::log::{Body, Record, SessionLog};
use xcsh_core::machine::EntryId;

use crate::style::Style;

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
    /// `same` (the file is as the session left it), `changed` (it moved on since),
    /// `missing` (it is gone), `unreadable`.
    pub now: &'static str,
    pub diff: String,
}

struct Acc {
    before: Option<String>,
    before_hash: Option<String>,
    after_hash: String,
    entries: Vec<EntryId>,
}

/// The file changes of `log`.
pub fn changes(log: &SessionLog) -> Vec<FileReport> {
    let mut files: BTreeMap<PathBuf, Acc> = BTreeMap::new();
    for e in &log.entries {
        if let Body::Record(Record::ToolResult(t)) = &e.body {
            for c in &t.changes {
                let acc = files.entry(c.path.clone()).or_insert_with(|| Acc {
                    before: c.before.clone(),
                    before_hash: c.before_hash.clone(),
                    after_hash: String::new(),
                    entries: Vec::new(),
                });
                acc.after_hash.clone_from(&c.after_hash);
                acc.entries.push(e.id);
            }
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
    let (now, current) = match std::fs::read(&path) {
        Ok(bytes) => {
            let same = blake3::hash(&bytes).to_hex().to_string() == acc.after_hash;
            (
                if same { "same" } else { "changed" },
                String::from_utf8_lossy(&bytes).into_owned(),
            )
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => ("missing", String::new()),
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
        diff,
    }
}

pub fn render(files: &[FileReport], style: Style) -> String {
    if files.is_empty() {
        return "the session changed no files (no tool result records a change)\n".into();
    }
    let mut out = String::new();
    for f in files {
        let ids: Vec<String> = f.entries.iter().map(|e| format!("#{e}")).collect();
        out.push_str(&style.bold(&format!(
            "{} — {} by {}{}\n",
            f.path.display(),
            if f.created { "created" } else { "changed" },
            ids.join(", "),
            match f.now {
                "same" => "",
                "changed" => "; changed since",
                "missing" => "; gone now",
                _ => "; unreadable now",
            }
        )));
        if f.now == "missing" {
            out.push_str(&style.dim(
                "  (the file is gone now; the log keeps only the hash of what the session wrote)\n",
            ));
        }
        if f.diff.is_empty() {
            out.push_str(&style.dim("  (no textual difference)\n"));
        }
        for line in f.diff.lines() {
            let l = if line.starts_with('+') && !line.starts_with("+++") {
                style.green(line)
            } else if line.starts_with('-') && !line.starts_with("---") {
                style.red(line)
            } else {
                line.to_string()
            };
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}
