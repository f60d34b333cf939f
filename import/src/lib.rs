//! `xcsh import` (SPEC.md §33): sessions of other agents (Codex rollouts, pi sessions,
//! Claude Code transcripts) as ordinary xcsh logs, with a hash chain and the branch
//! DAG, so that the toolkit works on them. One module per format reads its records
//! into the common [`builder`]; a record without an xcsh equivalent is kept verbatim
//! as a `foreign` entry, and the [`Summary`] says how many of each kind were mapped
//! and kept.

mod builder;
mod claude;
mod codex;
mod content;
mod error;
mod pi;
mod summary;

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use xcsh_log::SessionHeader;
use xcsh_log::foreign::{ForeignFork, ImportedFrom, SourceFormat};

pub use error::ImportError;
pub use summary::{Counts, Summary};

use builder::Builder;

/// How to import.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// The format (`--from`); `None`: detected from the file.
    pub from: Option<SourceFormat>,
    /// `--lenient`: a malformed line is kept as a foreign entry and counted.
    pub lenient: bool,
}

/// What one import made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    pub format: SourceFormat,
    pub source: PathBuf,
    pub out: PathBuf,
    pub session_id: String,
    pub summary: Summary,
}

/// The source file, read whole, and its lines.
pub(crate) struct Source {
    pub path: PathBuf,
    pub format: SourceFormat,
    pub lenient: bool,
    /// Every line that is not blank: (1-based line number, text).
    pub lines: Vec<(u64, String)>,
}

impl Source {
    /// The line `no` parsed as `T`: a malformed line is an error naming it (`None`
    /// under `--lenient`: the caller keeps it as foreign).
    pub fn parse<T: DeserializeOwned>(
        &self,
        no: u64,
        text: &str,
    ) -> Result<Option<T>, ImportError> {
        match serde_json::from_str(text) {
            Ok(t) => Ok(Some(t)),
            Err(_) if self.lenient => Ok(None),
            Err(e) => Err(self.malformed(no, e.to_string())),
        }
    }

    pub fn malformed(&self, line: u64, message: String) -> ImportError {
        ImportError::Malformed {
            path: self.path.clone(),
            line,
            format: self.format,
            message,
        }
    }
}

/// What a format's first records say about the session, for the header.
pub(crate) struct Head {
    pub session_id: String,
    pub cwd: String,
    pub version: Option<String>,
    pub ts: Option<DateTime<Utc>>,
    pub forked_from: Option<ForeignFork>,
}

/// An RFC 3339 time of a source record.
pub(crate) fn parse_ts(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// The default output of importing `source`: beside it, `NAME.xcsh.jsonl` for
/// `NAME.jsonl` (a name without `.jsonl` gets `.xcsh.jsonl` appended).
pub fn default_output(source: &Path) -> PathBuf {
    let name = source
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
    source.with_file_name(format!("{stem}.xcsh.jsonl"))
}

/// Whether `path` is the output of an import (left out by [`session_files`]).
pub fn is_import_output(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(".xcsh.jsonl"))
}

/// The first records, enough to tell the formats apart.
#[derive(Deserialize)]
struct Probe {
    #[serde(rename = "type")]
    kind: Option<String>,
    payload: Option<IgnoredAny>,
    #[serde(rename = "parentUuid")]
    parent_uuid: Option<IgnoredAny>,
    #[serde(rename = "sessionId")]
    session_id: Option<IgnoredAny>,
    cwd: Option<IgnoredAny>,
}

/// The format of a session file from its first records: Codex (`{timestamp, type,
/// payload}` lines, `session_meta` first), pi (a `session` header line with `id` and
/// `cwd`), Claude Code (records with `sessionId`, `uuid`/`parentUuid`).
pub fn detect<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<SourceFormat> {
    for text in lines.into_iter().take(50) {
        let Ok(p) = serde_json::from_str::<Probe>(text) else {
            continue;
        };
        if p.payload.is_some() && p.kind.is_some() {
            return Some(SourceFormat::Codex);
        }
        if p.kind.as_deref() == Some("session") && p.cwd.is_some() {
            return Some(SourceFormat::Pi);
        }
        if p.session_id.is_some() || p.parent_uuid.is_some() {
            return Some(SourceFormat::Claude);
        }
    }
    None
}

/// Imports the session file `source` into the new xcsh log `out`.
pub fn import(source: &Path, out: &Path, opts: ImportOptions) -> Result<Imported, ImportError> {
    let io = |e| ImportError::Io {
        path: source.to_path_buf(),
        source: e,
    };
    let bytes = std::fs::read(source).map_err(io)?;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<(u64, String)> = text
        .split('\n')
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i as u64 + 1, l.trim_end_matches('\r').to_string()))
        .collect();
    let format = match opts.from {
        Some(f) => f,
        None => detect(lines.iter().map(|(_, l)| l.as_str())).ok_or_else(|| {
            ImportError::Undetected {
                path: source.to_path_buf(),
            }
        })?,
    };
    let src = Source {
        path: source.to_path_buf(),
        format,
        lenient: opts.lenient,
        lines,
    };
    let head = match format {
        SourceFormat::Codex => codex::head(&src),
        SourceFormat::Pi => pi::head(&src),
        SourceFormat::Claude => claude::head(&src),
    }
    .ok_or_else(|| ImportError::NoHeader {
        path: source.to_path_buf(),
        format,
    })?;
    let header = SessionHeader {
        imported: Some(ImportedFrom {
            format,
            format_version: head.version.clone(),
            source: source.display().to_string(),
            blake3: blake3::hash(&bytes).to_hex().to_string(),
            forked_from: head.forked_from.clone(),
        }),
        ..SessionHeader::new(head.session_id.clone(), head.cwd.clone())
    };
    let ts = head.ts.unwrap_or(DateTime::<Utc>::UNIX_EPOCH);
    let mut b = Builder::create(out, format, header, ts)?;
    let done = match format {
        SourceFormat::Codex => codex::import(&src, &mut b),
        SourceFormat::Pi => pi::import(&src, &mut b),
        SourceFormat::Claude => claude::import(&src, &mut b),
    }
    .and_then(|()| b.finish());
    match done {
        Ok(summary) => Ok(Imported {
            format,
            source: source.to_path_buf(),
            out: out.to_path_buf(),
            session_id: head.session_id,
            summary,
        }),
        Err(e) => {
            // No half-made log is left behind (the writer is closed by now).
            let _ = std::fs::remove_file(out);
            Err(e)
        }
    }
}

/// Every `*.jsonl` file under `dir` (sub-folders too, so Claude Code's sub-agent
/// files come along; earlier imports' outputs left out), sorted by path.
pub fn session_files(dir: &Path) -> Result<Vec<PathBuf>, ImportError> {
    let mut files = xcsh_log::jsonl_files_under(dir)?;
    files.retain(|path| !is_import_output(path));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_is_told_by_its_first_records() {
        let codex = r#"{"timestamp":"2026-12-02T07:05:39.939Z","type":"session_meta","payload":{"id":"x","cwd":"/w"}}"#;
        let pi = r#"{"type":"session","version":3,"id":"x","timestamp":"2026-12-02T07:05:04.098Z","cwd":"/w"}"#;
        let claude_queue = r#"{"type":"queue-operation","operation":"enqueue","timestamp":"2026-12-02T07:05:04.098Z"}"#;
        let claude = r#"{"parentUuid":null,"type":"user","uuid":"u","sessionId":"s","cwd":"/w"}"#;
        let found: Vec<Option<SourceFormat>> = vec![
            detect([codex]),
            detect([pi]),
            detect([claude_queue, claude]),
            detect(["not json", "{}"]),
        ];
        assert_eq!(
            found,
            vec![
                Some(SourceFormat::Codex),
                Some(SourceFormat::Pi),
                Some(SourceFormat::Claude),
                None
            ]
        );
    }

    #[test]
    fn the_default_output_is_beside_the_source() {
        let outs: Vec<PathBuf> = ["/s/rollout-1.jsonl", "/s/notes", "a.jsonl"]
            .iter()
            .map(|p| default_output(Path::new(p)))
            .collect();
        assert_eq!(
            outs,
            vec![
                PathBuf::from("/s/rollout-1.xcsh.jsonl"),
                PathBuf::from("/s/notes.xcsh.jsonl"),
                PathBuf::from("a.xcsh.jsonl"),
            ]
        );
        assert!(is_import_output(Path::new("/s/rollout-1.xcsh.jsonl")));
    }
}
