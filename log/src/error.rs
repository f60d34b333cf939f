//! Errors of the session log: every variant about a file names it, and the 1-based
//! line number where one applies, so that a reader never fails anonymously.

use std::path::PathBuf;

use super::entry::DecodeError;
use xcsh_machine::EntryId;

/// An error reading, verifying, writing or querying a session log.
///
/// Each message is whole: a cause (a decoding error, an OS error) is part of the
/// text and is not also given as [`std::error::Error::source`], so that a printer
/// that follows the chain (`{:#}`) says it once. The cause fields are therefore not
/// named `source`, which thiserror would make the source.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// A complete line could not be decoded (bad JSON, empty, NUL bytes, not UTF-8).
    #[error("{}:{line}: malformed entry: {cause}", path.display())]
    Malformed {
        path: PathBuf,
        line: u32,
        cause: DecodeError,
    },
    /// A line's hash does not match its bytes and its parent's hash (edited or corrupt).
    #[error(
        "{}:{line}: entry {id} fails its hash check (the line or its parent was altered)",
        path.display()
    )]
    HashMismatch {
        path: PathBuf,
        line: u32,
        id: EntryId,
    },
    /// A line names a parent that does not appear earlier in the file.
    #[error(
        "{}:{line}: entry {id} names parent {parent}, which does not appear earlier in the file",
        path.display()
    )]
    MissingParent {
        path: PathBuf,
        line: u32,
        id: EntryId,
        parent: EntryId,
    },
    /// A line other than the session header has no parent.
    #[error(
        "{}:{line}: entry {id} has no parent (only the session header may lack one)",
        path.display()
    )]
    Orphan {
        path: PathBuf,
        line: u32,
        id: EntryId,
    },
    /// Two lines carry the same id.
    #[error("{}:{line}: entry id {id} appears a second time", path.display())]
    DuplicateId {
        path: PathBuf,
        line: u32,
        id: EntryId,
    },
    /// The file does not start with a `session` record (or holds no complete line).
    #[error(
        "{}: not a session log (the first line is not a parentless `session` record)",
        path.display()
    )]
    NotASession { path: PathBuf },
    /// The first line is not JSON at all: some other file was given for a session.
    #[error("{}: not a session log (line 1 is not JSON)", path.display())]
    NotJson { path: PathBuf },
    /// Another writer holds the session's advisory lock.
    #[error(
        "session {} is already being written by {holder}; wait for it to finish, or stop that process",
        path.display()
    )]
    Locked { path: PathBuf, holder: String },
    /// An earlier append to this writer failed and could not be undone; the file may
    /// end in a partial line, which reopening repairs.
    #[error(
        "session {}: an earlier write failed and could not be undone; reopen the session to repair it",
        path.display()
    )]
    Unwritable { path: PathBuf },
    /// The session's largest entry id is `u64::MAX`: the next entry has no id.
    #[error(
        "{}: entry {id} has the largest possible id; nothing can be appended to this session",
        path.display()
    )]
    IdsExhausted { path: PathBuf, id: EntryId },
    /// An operating-system error on this file.
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// Continuing from an entry inside a run (`--at`, `/at`).
    #[error(
        "entry {} is inside a run ({}); continue from a settled boundary instead: {}",
        .0.entry, .0.phase, .0.suggestion
    )]
    NotABoundary(super::machine_at::Unsettled),
    /// A lookup named an entry the session does not hold.
    #[error("{}: there is no entry {id}", path.display())]
    UnknownEntry { path: PathBuf, id: EntryId },
    /// A command named an entry the session does not hold ([`super::SessionLog::no_entry`]).
    #[error(
        "{}: no entry {id} (the session has entries {first}-{last})",
        path.display()
    )]
    NoSuchEntry {
        path: PathBuf,
        id: EntryId,
        first: EntryId,
        last: EntryId,
    },
    /// Following parent links from this entry comes back to it (only possible in
    /// entries that were not read through the verifying reader).
    #[error("{}: the parent links from entry {id} form a cycle", path.display())]
    Cycle { path: PathBuf, id: EntryId },
    /// The newest compaction on a path keeps from an entry that is not on that path.
    #[error(
        "{}: compaction entry {id} keeps from entry {first_kept}, which is not on the path to the leaf",
        path.display()
    )]
    CompactionOffPath {
        path: PathBuf,
        id: EntryId,
        first_kept: EntryId,
    },
}

impl LogError {
    /// Line `line` (`bytes`, without its newline) could not be decoded: a malformed
    /// entry, or, when it is the first line and [`LogError::not_json`], a file that
    /// is not a session log ([`LogError::NotJson`]).
    pub fn malformed(
        path: impl Into<PathBuf>,
        line: u32,
        bytes: &[u8],
        cause: DecodeError,
    ) -> LogError {
        let path = path.into();
        if line == 1 && LogError::not_json(bytes) {
            return LogError::NotJson { path };
        }
        LogError::Malformed { path, line, cause }
    }

    /// Whether a first line that does not decode is some other file's, not a
    /// damaged entry: it is not JSON and does not start as an entry does (`{`), and
    /// it is not empty or all NUL bytes (what a crash leaves of a real line).
    pub fn not_json(bytes: &[u8]) -> bool {
        !bytes.is_empty()
            && bytes.iter().any(|&b| b != 0)
            && !bytes.starts_with(b"{")
            && serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_err()
    }

    /// Wraps an IO error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, error: std::io::Error) -> LogError {
        LogError::Io {
            path: path.into(),
            error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LogError;

    /// The error and its sources, each after `: `, as a printer that follows the
    /// chain (anyhow's `{:#}`) shows them.
    fn chain(error: &LogError) -> String {
        let mut text = error.to_string();
        let mut cause = std::error::Error::source(error);
        while let Some(c) = cause {
            text.push_str(&format!(": {c}"));
            cause = c.source();
        }
        text
    }

    #[test]
    fn a_malformed_line_says_its_cause_once_along_the_error_chain() {
        let (_dir, path) = crate::writer::testutil::scratch();
        std::fs::write(&path, "{\"v\":1,\"id\":0,\"type\":\"session\"\n").unwrap();
        let error = crate::read_session(&path).unwrap_err();
        assert_eq!(
            chain(&error),
            format!(
                "{}:1: malformed entry: the line has no trailing \"hash\" field",
                path.display()
            )
        );
    }

    #[test]
    fn an_os_error_says_its_cause_once_along_the_error_chain() {
        let error = LogError::io("/s/a.jsonl", std::io::Error::other("disk on fire"));
        assert_eq!(chain(&error), "/s/a.jsonl: disk on fire");
    }

    #[test]
    fn a_line_that_is_not_json_says_the_json_error_once_along_the_error_chain() {
        let (_dir, path) = crate::writer::testutil::scratch();
        let hash = "0".repeat(64);
        std::fs::write(&path, format!("{{\"v\":1 oops,\"hash\":\"{hash}\"}}\n")).unwrap();
        let error = crate::read_session(&path).unwrap_err();
        assert_eq!(
            chain(&error),
            format!(
                "{}:1: malformed entry: not valid JSON for an entry: expected `,` or `}}` at line 1 column 8",
                path.display()
            )
        );
    }
}
