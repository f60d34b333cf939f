//! Errors of the inspect toolkit: every one about a file names it.

use std::path::PathBuf;

use xcsh_log::LogError;
use xcsh_machine::EntryId;

#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    #[error(transparent)]
    Log(#[from] LogError),
    /// An operating-system error on this file.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A command named an entry the session does not hold.
    #[error("{}: there is no entry {id} in this session", path.display())]
    NoSuchEntry { path: PathBuf, id: EntryId },
    /// A fork at an entry inside a run.
    #[error(
        "cannot fork at entry {}: it is inside a run ({}); fork at a settled boundary instead: {}",
        .0.entry, .0.phase, .0.suggestion
    )]
    NotABoundary(xcsh_log::machine_at::Unsettled),
    /// The output file of a fork or export exists already.
    #[error("{} exists already; choose another path with -o", path.display())]
    Exists { path: PathBuf },
    /// A followed file got shorter: it was replaced or truncated under us.
    #[error(
        "{}: the file shrank from {was} to {now} bytes while it was followed (replaced or truncated)",
        path.display()
    )]
    Shrunk { path: PathBuf, was: u64, now: u64 },
    /// A name given for an entry that is neither an entry id nor a label of the
    /// session; `labels` are its newest label names (at most 5), `more` how many
    /// other names it has.
    #[error("{}", no_such_label(path, name, labels, *more))]
    NoSuchLabel {
        path: PathBuf,
        name: String,
        labels: Vec<String>,
        more: usize,
    },
    /// A bad command-line value (entry spec and the like).
    #[error("{0}")]
    Usage(String),
}

/// `no entry or label "NAME" in PATH; its labels, newest first: "a", "b" (and 3 more)`
/// (or `; it has no labels`).
fn no_such_label(path: &std::path::Path, name: &str, labels: &[String], more: usize) -> String {
    let quoted = xcsh_log::describe::quoted;
    let known = if labels.is_empty() {
        "it has no labels".to_string()
    } else {
        let names: Vec<String> = labels.iter().map(|n| quoted(n)).collect();
        let more = match more {
            0 => String::new(),
            n => format!(" (and {n} more)"),
        };
        format!("its labels, newest first: {}{more}", names.join(", "))
    };
    format!(
        "no entry or label {} in {}; {known}",
        quoted(name),
        path.display()
    )
}

impl InspectError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> InspectError {
        InspectError::Io {
            path: path.into(),
            source,
        }
    }
}
