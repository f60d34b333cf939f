//! What can go wrong importing a session: each error names the file (and line).

use std::path::PathBuf;

use xcsh_log::LogError;
use xcsh_log::foreign::SourceFormat;

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{path}: {source}", path = path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: malformed {format} record: {message} (--lenient keeps it as a foreign entry)", path = path.display())]
    Malformed {
        path: PathBuf,
        line: u64,
        format: SourceFormat,
        message: String,
    },
    #[error("{path}: not a session file of Codex, pi or Claude Code that this version knows (say which with --from codex|pi|claude)", path = path.display())]
    Undetected { path: PathBuf },
    #[error("{path}: holds no {format} session header (an empty file, or not {format})", path = path.display())]
    NoHeader { path: PathBuf, format: SourceFormat },
    #[error("{path}: exists already; choose another output with -o", path = path.display())]
    Exists { path: PathBuf },
    #[error(transparent)]
    Log(#[from] LogError),
    #[error("encoding a record: {0}")]
    Json(#[from] serde_json::Error),
}
