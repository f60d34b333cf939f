//! Finding a sub-agent's session from its parent's side: the file in the parent's
//! folder whose header links it to a `task` call (for recovery on `--continue`).

use std::path::{Path, PathBuf};

use xcsh_log::{ChildRun, read_header};
use xcsh_machine::{CallId, EntryId};

/// The sub-agent session that the `task` call `call_id` of the session `parent_id`
/// (whose file is `parent_path`) started: among the files beside it whose header
/// names that session and call, the one of the latest dispatch (a call id may come
/// back in a later step; the call a crash cut off is the latest). `None` when the
/// call died before its child's file was made.
pub(crate) fn find_child(
    parent_path: &Path,
    parent_id: &str,
    call_id: &CallId,
) -> Option<(PathBuf, ChildRun)> {
    let dir = parent_path.parent()?;
    let mut best: Option<(EntryId, PathBuf, ChildRun)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path == parent_path || path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let Ok(header) = read_header(&path) else {
            continue;
        };
        let Some(link) = &header.parent else {
            continue;
        };
        if link.session_id != parent_id || link.call_id != *call_id {
            continue;
        }
        if best.as_ref().is_some_and(|(at, ..)| *at >= link.entry) {
            continue;
        }
        let child = ChildRun {
            session_id: xcsh_log::session_id(&path, &header.session_id).to_string(),
            file: path.file_name()?.to_string_lossy().into_owned(),
            usage: None,
        };
        best = Some((link.entry, path, child));
    }
    best.map(|(_, path, child)| (path, child))
}
