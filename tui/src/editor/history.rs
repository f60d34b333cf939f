//! The prompt history: entries in memory, a file in rustyline's format on disk.
//!
//! The file is the one today's line mode writes through rustyline 19
//! (`~/.xcsh/history`): a first line `#V2`, then one entry per line with a
//! backslash written `\\` and a newline `\n`. A file without the `#V2` line (an
//! older rustyline's) is read one raw entry per line. Empty lines are skipped; an
//! entry with an unknown escape is kept as written (as rustyline does).

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// How many entries a history keeps unless told otherwise.
pub const DEFAULT_HISTORY_CAP: usize = 1000;

const VERSION_LINE: &str = "#V2";

/// Reading or writing a history file failed.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("cannot read the history file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write the history file {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Prompt history, oldest first: consecutive duplicates dropped, at most `cap`
/// entries, blank entries never kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    entries: Vec<String>,
    cap: usize,
    path: Option<PathBuf>,
    /// Entries recorded since the last [`History::save`], oldest first.
    unsaved: Vec<String>,
}

impl Default for History {
    fn default() -> Self {
        History::new(DEFAULT_HISTORY_CAP)
    }
}

impl History {
    /// An empty history held only in memory.
    pub fn new(cap: usize) -> History {
        History {
            entries: Vec::new(),
            cap: cap.max(1),
            path: None,
            unsaved: Vec::new(),
        }
    }

    /// The history of the file at `path` (empty if the file does not exist); later
    /// entries are saved there by [`History::save`].
    pub fn load(path: &Path, cap: usize) -> Result<History, HistoryError> {
        let mut history = History::new(cap);
        history.path = Some(path.to_path_buf());
        match std::fs::read(path) {
            Ok(bytes) => {
                for entry in parse(&String::from_utf8_lossy(&bytes)) {
                    history.push(entry);
                }
                Ok(history)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(history),
            Err(source) => Err(HistoryError::Read {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds `entry` in memory (not if blank or equal to the newest entry); true if
    /// added. The next [`History::save`] writes it to the file.
    pub fn record(&mut self, entry: &str) -> bool {
        let added = self.push(entry.to_string());
        if added {
            self.unsaved.push(entry.to_string());
        }
        added
    }

    fn push(&mut self, entry: String) -> bool {
        if entry.trim().is_empty() || self.entries.last() == Some(&entry) {
            return false;
        }
        self.entries.push(entry);
        if self.entries.len() > self.cap {
            let excess = self.entries.len() - self.cap;
            self.entries.drain(..excess);
        }
        true
    }

    /// Writes the entries recorded since the last save to the file (a history
    /// without a file does nothing). The file is read again first, so that entries
    /// another xcsh added meanwhile are kept; it is rewritten whole (capped) through
    /// a temporary file and a rename, readable by the owner only; its folder is
    /// made if it is missing.
    pub fn save(&mut self) -> Result<(), HistoryError> {
        let Some(path) = self.path.clone() else {
            self.unsaved.clear();
            return Ok(());
        };
        if self.unsaved.is_empty() {
            return Ok(());
        }
        let mut merged = History::load(&path, self.cap)?;
        for entry in &self.unsaved {
            merged.push(entry.clone());
        }
        let write_err = |source| HistoryError::Write {
            path: path.clone(),
            source,
        };
        // A new xcsh home: the history is the first thing written there.
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(write_err)?;
        }
        let tmp = path.with_extension("tmp");
        {
            let mut file = open_private(&tmp).map_err(write_err)?;
            file.write_all(format(&merged.entries).as_bytes())
                .map_err(write_err)?;
            file.sync_all().map_err(write_err)?;
        }
        std::fs::rename(&tmp, &path).map_err(write_err)?;
        self.unsaved.clear();
        Ok(())
    }
}

fn open_private(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    options.open(path)
}

/// The entries of a history file's text, oldest first.
pub fn parse(text: &str) -> Vec<String> {
    let mut lines = text.lines();
    let mut entries = Vec::new();
    let v2 = match lines.next() {
        Some(VERSION_LINE) => true,
        Some(first) => {
            if !first.is_empty() {
                entries.push(first.to_string());
            }
            false
        }
        None => return entries,
    };
    for line in lines {
        if line.is_empty() {
            continue;
        }
        entries.push(if v2 {
            unescape(line).unwrap_or_else(|| line.to_string())
        } else {
            line.to_string()
        });
    }
    entries
}

fn unescape(line: &str) -> Option<String> {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('\\') => out.push('\\'),
                Some(_) | None => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// A history file's text for `entries` (rustyline's `#V2` format).
pub fn format(entries: &[String]) -> String {
    let mut out = String::from(VERSION_LINE);
    out.push('\n');
    for entry in entries {
        for c in entry.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                c => out.push(c),
            }
        }
        out.push('\n');
    }
    out
}
