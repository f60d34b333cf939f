//! The process groups of the MCP servers that run, process-wide, so that an exit
//! that skips destructors (a second Ctrl-C) still kills them ([`kill_all`]).

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

pub(crate) fn remember(pgid: i32) {
    GROUPS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(pgid);
}

pub(crate) fn forget(pgid: i32) {
    GROUPS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&pgid);
}

/// Kills the process group of every MCP server still running (SIGKILL); returns
/// how many there were.
pub fn kill_all() -> usize {
    let groups = std::mem::take(&mut *GROUPS.lock().unwrap_or_else(PoisonError::into_inner));
    for pgid in &groups {
        // SAFETY: killpg only sends a signal, to a group a server of ours leads.
        unsafe {
            libc::killpg(*pgid, libc::SIGKILL);
        }
    }
    groups.len()
}
