//! The terminal UI's sessions: resuming one (its conversation shown, what a crash
//! interrupted in it said), the session picker, and the status line's context of
//! the branch at the leaf.

use std::path::Path;

use anyhow::Result;
use xcsh_log::read_session;
use xcsh_tui::cells::Level as NoticeLevel;
use xcsh_tui::overlay;

use super::Controller;
use crate::interactive::commands;
use crate::sessions;

impl Controller {
    /// The status line's context becomes that of the branch the session's leaf
    /// moved to (`/at`, Enter in `/tree`), not the one left.
    pub(super) fn branch_context(&mut self, path: &Path) -> Result<()> {
        let log = read_session(path)?;
        self.app.set_context(commands::branch_context(&log)?);
        Ok(())
    }

    /// Makes the session at `path` the current one (`--resume`, a pick): its
    /// conversation so far, then what a crash interrupted in it, before anything
    /// changes the session (§21.6). The session xcsh is in already is not shown
    /// again: its conversation is on screen.
    pub(super) fn resume(&mut self, path: &Path) -> Result<()> {
        if self.session.as_deref().is_some_and(|s| same_file(s, path)) {
            let id = sessions::display_name(path);
            self.app
                .notice(NoticeLevel::Info, format!("already in session {id}"));
            return Ok(());
        }
        self.show_session(path)?;
        for line in crate::undo::interrupted_at_leaf(path)? {
            self.app.notice(NoticeLevel::Warning, line);
        }
        self.session = Some(path.to_path_buf());
        Ok(())
    }

    /// Opens the session picker on this workspace's sessions (`/resume`), the
    /// current one marked; an unreadable file hides no other session: the picker
    /// names it.
    pub(super) fn open_picker(&mut self) -> Result<()> {
        let (rows, unreadable) = picker_rows(&sessions::workspace_root(&self.setup.cwd)?)?;
        let current = (rows.iter().map(|r| &r.path))
            .find(|p| self.session.as_deref().is_some_and(|s| same_file(p, s)))
            .cloned();
        let picker = overlay::Picker::new(rows, now_unix_ms())
            .with_unreadable(unreadable)
            .with_current(current);
        self.app.open_overlay(Box::new(picker));
        Ok(())
    }

    /// Shows the conversation of the session at `path` (from its entries) and
    /// makes it the current one.
    fn show_session(&mut self, path: &Path) -> Result<()> {
        let log = read_session(path)?;
        for cell in xcsh_tui::cells::from_entries(&log, log.leaf())? {
            self.app.push_cell(cell);
        }
        let id = xcsh_log::session_id(path, &log.header().session_id).to_string();
        self.app.notice(
            NoticeLevel::Info,
            format!("continuing session {id} ({})", path.display()),
        );
        self.app.info_mut().session_id = Some(id);
        // The status line's context is this session's, not the one shown before.
        self.app.set_context(commands::branch_context(&log)?);
        Ok(())
    }
}

fn now_unix_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Whether `a` and `b` name the same file (spelled alike, or alike once resolved).
fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || a.canonicalize()
            .ok()
            .is_some_and(|a| b.canonicalize().ok() == Some(a))
}

/// The sessions of this workspace for the picker (most recently active first, as
/// `xcsh sessions` lists them), and the files that could not be read, each as its
/// error.
fn picker_rows(workspace: &Path) -> Result<(Vec<overlay::PickerRow>, Vec<String>)> {
    let listing = sessions::summaries(workspace, false)?;
    let rows = listing
        .sessions
        .iter()
        .map(|(summary, size)| overlay::PickerRow::from_summary(summary, *size))
        .collect();
    Ok((rows, listing.unreadable))
}
