//! Entries of imported sessions (SPEC.md §33): the `foreign` record, which keeps a
//! record of another agent's session that has no xcsh equivalent verbatim, and the
//! header's note of where an imported log came from.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// The agent whose session file an imported log was made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceFormat {
    /// A Codex rollout (`~/.codex/sessions/…/rollout-*.jsonl`).
    Codex,
    /// A pi session (`~/.pi/agent/sessions/…/*.jsonl`).
    Pi,
    /// A Claude Code project transcript (`~/.claude/projects/…/*.jsonl`).
    Claude,
}

impl SourceFormat {
    pub const ALL: [SourceFormat; 3] =
        [SourceFormat::Codex, SourceFormat::Pi, SourceFormat::Claude];

    /// The name `--from` takes and the summary prints.
    pub fn name(self) -> &'static str {
        match self {
            SourceFormat::Codex => "codex",
            SourceFormat::Pi => "pi",
            SourceFormat::Claude => "claude",
        }
    }

    pub fn parse(s: &str) -> Option<SourceFormat> {
        SourceFormat::ALL.into_iter().find(|f| f.name() == s)
    }
}

impl fmt::Display for SourceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A JSON value kept byte for byte as the source had it (compared by its text).
#[derive(Debug, Clone)]
pub struct RawJson(pub Box<RawValue>);

impl RawJson {
    /// The value of `text`, which must be one JSON value.
    pub fn parse(text: &str) -> Result<RawJson, serde_json::Error> {
        RawValue::from_string(text.to_string()).map(RawJson)
    }

    pub fn get(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl Eq for RawJson {}

impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawJson, D::Error> {
        Box::<RawValue>::deserialize(d).map(RawJson)
    }
}

/// A source record without an xcsh equivalent, kept verbatim: the format, the line
/// of the source file it was on (1-based), the record's own type tag as the source
/// wrote it (`None`: it had none, or the line was malformed and kept under
/// `--lenient`), and the record itself (a malformed line: as a JSON string).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignRecord {
    pub format: SourceFormat,
    pub line: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_type: Option<String>,
    pub raw: RawJson,
}

/// Where an imported log came from (the header's `imported`): the source format and
/// its version as the file names it (pi's `version`, Codex's `cli_version`, Claude
/// Code's `version`), the source file's path as given, and the blake3 (hex) of its
/// bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportedFrom {
    pub format: SourceFormat,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format_version: Option<String>,
    pub source: String,
    pub blake3: String,
    /// A Codex fork: the parent rollout's session id and the number of its records
    /// that are this session's history (they are in the parent's file, not here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForeignFork>,
}

/// The session another agent forked an imported session from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignFork {
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<u64>,
}
