//! Log entries: the envelope, the typed bodies (records and decisions), the exact
//! JSONL encoding and the blake3 hash chain.
//!
//! A line is `{"v":1,"id":N,"parent":P,"ts":"…","type":"…","data":{…},"hash":"…"}`.
//! `hash` is always last: it is blake3(parent's hash bytes ‖ every byte of the line
//! before `,"hash":"`), so verifying a line never re-serializes it.

use std::path::{Path, PathBuf};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::secrets::Secrets;

use xcsh_machine::{
    ApprovalScope, Assembled, CallId, Decision, EntryId, RunConfig, StepNo, StepOutcome,
    StreamEvent, ToolOutcome, Verdict,
};

/// The log format version written in every envelope.
pub const FORMAT_VERSION: u32 = 1;

const HASH_MARK: &[u8] = b",\"hash\":\"";

/// A blake3 hash of an entry (chained to its parent's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct EntryHash(pub [u8; 32]);

impl EntryHash {
    pub fn to_hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }

    pub fn from_hex(s: &str) -> Option<EntryHash> {
        blake3::Hash::from_hex(s)
            .ok()
            .map(|h| EntryHash(*h.as_bytes()))
    }

    /// The hash of a line given its parent's hash and the bytes before `,"hash":"`.
    pub fn compute(parent: Option<&EntryHash>, prefix: &[u8]) -> EntryHash {
        let mut h = blake3::Hasher::new();
        if let Some(p) = parent {
            h.update(&p.0);
        }
        h.update(prefix);
        EntryHash(*h.finalize().as_bytes())
    }
}

/// One JSONL line of a session log.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub v: u32,
    pub id: EntryId,
    /// Absent only for the session header.
    pub parent: Option<EntryId>,
    pub ts: DateTime<Utc>,
    pub body: Body,
    pub hash: EntryHash,
}

/// An entry's body: structure, an input record, a decision, or a type this version
/// does not know (kept verbatim, reported, never dropped).
#[derive(Debug, Clone)]
pub enum Body {
    Record(Record),
    Decision(Decision),
    Unknown {
        type_name: String,
        data: Box<RawValue>,
    },
}

impl PartialEq for Body {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Body::Record(a), Body::Record(b)) => a == b,
            (Body::Decision(a), Body::Decision(b)) => a == b,
            (
                Body::Unknown {
                    type_name: a,
                    data: da,
                },
                Body::Unknown {
                    type_name: b,
                    data: db,
                },
            ) => a == b && da.get() == db.get(),
            (Body::Record(_) | Body::Decision(_) | Body::Unknown { .. }, _) => false,
        }
    }
}

impl Body {
    pub fn type_name(&self) -> &str {
        match self {
            Body::Record(r) => r.type_name(),
            Body::Decision(d) => d.type_name(),
            Body::Unknown { type_name, .. } => type_name,
        }
    }

    /// Whether this entry records an input to the machine.
    pub fn is_input(&self) -> bool {
        match self {
            Body::Record(r) => r.is_input(),
            Body::Decision(_) | Body::Unknown { .. } => false,
        }
    }
}

/// Entries that are not decisions: the session header, DAG structure, and inputs.
///
/// The four large variants are boxed: unboxed they made every `Entry` 344 bytes, more
/// than a small entry's line, and the views that hold a log as entries (`check`, `diff`,
/// the HTML export) peaked at 2.1-3.6x the file (README, "Missed targets").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum Record {
    /// The first line of every session file.
    Session(Box<SessionHeader>),
    /// The leaf moved: the branch that follows continues from this entry's parent
    /// (an earlier entry) instead of the previous leaf `from_leaf`.
    Branch { from_leaf: EntryId },
    /// A name for an entry; does not move the leaf.
    Label { target: EntryId, name: String },
    /// Input: a user prompt, with the configuration its run is decided under.
    UserMessage { text: String, config: RunConfig },
    /// Input: a steer arrived (delivered later by a `delivered` decision).
    Steer { text: String },
    /// Input: a follow-up arrived (delivered later by a `delivered` decision).
    FollowUp { text: String },
    /// Input: the user interrupted.
    Interrupt {},
    /// Input: one provider step settled: its normalized events with their timing
    /// relative to the request, how it ended, and the assembled message.
    Step(Box<StepRecord>),
    /// Input: a dispatched tool call settled.
    ToolResult(Box<ToolResultRecord>),
    /// Input: the compaction summary (or why it failed).
    CompactionSummary {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<xcsh_machine::ProviderError>,
    },
    /// Input: this process found the previous run unsettled (crash or kill).
    Recovered { note: String },
    /// Input: a stream event that arrived after its step settled.
    LateEvent { step: StepNo, event: StreamEvent },
    /// The user reverted the file changes of the run that starts at `run` (`/undo`):
    /// each file in `files` was put back as it was before that run. With a `note`
    /// (written since issue 13) it is an input: the note tells the model, on this
    /// branch; without one (older entries) it is structure.
    Undo {
        run: EntryId,
        files: Vec<PathBuf>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// Input: the user asked to compact the context now (`/compact`).
    Compact { config: RunConfig },
    /// Input: the user answered an approval question (`y`/`a`/`A`/`n`). `message`:
    /// what the user told the model with a denial (omitted when none, and in entries
    /// written before it existed).
    ApprovalAnswer {
        call_id: CallId,
        verdict: Verdict,
        scope: ApprovalScope,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// Input: checked before the user was asked, call `call_id` could not succeed;
    /// `content` is the error it would have returned (SPEC.md §18.3).
    CheckFailed { call_id: CallId, content: String },
    /// The session moved from the workspace `from` to `to` (`--resume S --workspace
    /// DIR`): on the branch after it, the tools run in `to`. Feeds nothing to the
    /// machine.
    Workspace { from: String, to: String },
    /// What the runs on the branch after it are made of (the provider, model, base
    /// URL, faux script; never a key), written when a run starts with another than
    /// the last one on its branch; `--resume` and `--continue` take it (SPEC.md
    /// §22.2). Feeds nothing to the machine.
    Provider(ProviderRecord),
    /// Input: the memory index the next turn's requests carry (SPEC.md §28).
    MemoryIndex(memory::MemoryIndexRecord),
    /// The memory extraction after a completed turn (SPEC.md §28): a step of its
    /// own kind, feeding the machine nothing.
    MemoryExtraction(Box<memory::ExtractionRecord>),
    /// The memory notes after an extraction's notes were written.
    MemorySnapshot(memory::SnapshotRecord),
    /// The user forgot (deleted) a memory note.
    MemoryForget(memory::ForgetRecord),
    /// A record of an imported session that has no xcsh equivalent, kept verbatim
    /// (`xcsh import`, SPEC.md §33). Feeds the machine nothing.
    Foreign(foreign::ForeignRecord),
}

/// The pattern of the four memory records (SPEC.md §28), for the matches that treat
/// them alike (memory is around the turn, not in it): `memory_record!()` in a pattern
/// position, e.g. `Record::Label { .. } | memory_record!() => {}`. A new memory
/// record goes here, and so into every such match at once.
#[macro_export]
macro_rules! memory_record {
    () => {
        $crate::Record::MemoryIndex(_)
            | $crate::Record::MemoryExtraction(_)
            | $crate::Record::MemorySnapshot(_)
            | $crate::Record::MemoryForget(_)
    };
}

/// The pattern of the records of what a session runs with (its workspace, its
/// provider: SPEC.md §22.2), for the matches that treat them alike (structure a run
/// reads as it starts, feeding the machine nothing): `setting_record!()` in a
/// pattern position. A new such record goes here, and so into every such match.
#[macro_export]
macro_rules! setting_record {
    () => {
        $crate::Record::Workspace { .. } | $crate::Record::Provider(_)
    };
}

/// The record vocabulary, written once: every [`Record`] variant with its entry type
/// name (its serde tag) and its class (`input`: it records machine inputs;
/// `structure`: it feeds the machine nothing; `noted`: an input only with a note).
/// `$m` is called with `records: [Variant "name" class, …]` after the tokens
/// `$extra`; from it come [`Record::type_name`], [`Record::TYPE_NAMES`],
/// [`Record::is_input`] and the index's kinds (see [`super::index::Kind`]).
macro_rules! for_each_record {
    ($m:ident $($extra:tt)*) => {
        $m! {
            $($extra)*
            records: [
                Session "session" structure,
                Branch "branch" structure,
                Label "label" structure,
                UserMessage "user_message" input,
                Steer "steer" input,
                FollowUp "follow_up" input,
                Interrupt "interrupt" input,
                Step "step" input,
                ToolResult "tool_result" input,
                CompactionSummary "compaction_summary" input,
                Recovered "recovered" input,
                LateEvent "late_event" input,
                ApprovalAnswer "approval_answer" input,
                CheckFailed "check_failed" input,
                Compact "compact" input,
                Undo "undo" noted,
                Workspace "workspace" structure,
                Provider "provider" structure,
                MemoryIndex "memory_index" input,
                MemoryExtraction "memory_extraction" structure,
                MemorySnapshot "memory_snapshot" structure,
                MemoryForget "memory_forget" structure,
                Foreign "foreign" structure,
            ]
        }
    };
}

/// Whether a record of a class records inputs (`$r`: the record).
macro_rules! record_is_input {
    (input, $r:expr) => {
        true
    };
    (structure, $r:expr) => {
        false
    };
    // An `undo` written before the note existed is structure (see `Record::Undo`).
    (noted, $r:expr) => {
        matches!($r, Record::Undo { note: Some(_), .. })
    };
}

/// [`Record::type_name`], [`Record::TYPE_NAMES`] and [`Record::is_input`] from the
/// vocabulary.
macro_rules! record_names {
    (records: [$($v:ident $name:literal $class:ident,)*]) => {
        impl Record {
            pub const TYPE_NAMES: [&'static str; [$($name),*].len()] = [$($name),*];

            pub fn type_name(&self) -> &'static str {
                match self {
                    $(Record::$v { .. } => $name,)*
                }
            }

            pub fn is_input(&self) -> bool {
                match self {
                    $(Record::$v { .. } => record_is_input!($class, self),)*
                }
            }
        }
    };
}
for_each_record!(record_names);

/// The header of a session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionHeader {
    pub session_id: String,
    /// The session's workspace when it was created: the workspace root its tools
    /// run in (a later `workspace` entry on a branch moves it).
    pub cwd: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkOrigin>,
    /// A sub-agent's session (SPEC.md "Delegation"): the parent session and the
    /// `tool_dispatched` entry of the `task` call that started it. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<ParentLink>,
    /// An imported session (SPEC.md §33): the agent and file it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<foreign::ImportedFrom>,
    /// What the provider of the session's first run was made of (SPEC.md §22.2);
    /// a later run with another writes a `provider` entry. Absent in sessions
    /// written before it existed, and in imported ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderRecord>,
}

impl SessionHeader {
    /// The header of a new top-level session: not forked, no parent.
    pub fn new(session_id: impl Into<String>, cwd: impl Into<String>) -> SessionHeader {
        SessionHeader {
            session_id: session_id.into(),
            cwd: cwd.into(),
            forked_from: None,
            parent: None,
            imported: None,
            provider: None,
        }
    }
}

/// What a session's runs are made of from a `provider` entry on (SPEC.md §22.2):
/// the provider as `--provider` spells it, the model it calls (a wire protocol's),
/// the base URL the flags or the config gave (not one that carries credentials),
/// the faux provider's script as an absolute path. Never a key: keys come from the
/// environment on every run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderRecord {
    pub provider: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<PathBuf>,
}

/// `anthropic · MODEL · URL`, `faux · script PATH`: the parts that are there.
impl std::fmt::Display for ProviderRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.provider)?;
        for part in [&self.model, &self.base_url].into_iter().flatten() {
            write!(f, " · {part}")?;
        }
        if let Some(script) = &self.script {
            write!(f, " · script {}", script.display())?;
        }
        Ok(())
    }
}

/// Where a sub-agent's session came from: its parent's session id, the parent's
/// `tool_dispatched` entry of the `task` call, and that call's id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParentLink {
    pub session_id: String,
    pub entry: EntryId,
    pub call_id: CallId,
}

/// The sub-agent run a `task` call started: the child's session id and its file's
/// name (in the parent file's folder).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildRun {
    pub session_id: String,
    pub file: String,
    /// What the sub-agent's run spent, as the parent counted it against its spend
    /// budget (SPEC.md §29.3): the `spent` of the call's `ToolSettled` input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<xcsh_machine::Usage>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkOrigin {
    pub session_id: String,
    pub entry: EntryId,
}

/// A stream event and when it arrived, in milliseconds after the request started.
/// (Deserialized by hand, in one pass: see [`fast`]; the derived form buffers every
/// event twice, for `flatten` and for the internal tag.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimedEvent {
    pub ms: u64,
    #[serde(flatten)]
    pub event: StreamEvent,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRecord {
    pub step: StepNo,
    pub events: Vec<TimedEvent>,
    pub outcome: StepOutcome,
    /// The assistant message assembled from `events` (derived, kept for readers).
    pub message: Assembled,
}

/// (Deserialized by hand, in one pass: see [`fast`].)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolResultRecord {
    pub call_id: CallId,
    pub name: String,
    #[serde(flatten)]
    pub outcome: ToolOutcome,
    pub duration_ms: u64,
    /// The files the call changed (edit, write), for workspace diff and undo.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FileChange>,
    /// The sub-agent a `task` call ran (SPEC.md "Delegation"); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child: Option<ChildRun>,
}

/// One file changed by an `edit` or `write` call, for the session's workspace diff and
/// undo: the content hashes (blake3, hex) before and after, and the content before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// Absolute, resolved path (inside the workspace root).
    pub path: PathBuf,
    /// `None` when the call created the file.
    pub before_hash: Option<String>,
    pub after_hash: String,
    /// The content before the call; `None` when the call created the file.
    pub before: Option<String>,
}

impl FileChange {
    /// The change from `before` (absent for a new file) to `after` at `path`.
    pub fn new(path: &Path, before: Option<&str>, after: &str) -> FileChange {
        FileChange {
            path: path.to_path_buf(),
            before_hash: before.map(|b| blake3::hash(b.as_bytes()).to_hex().to_string()),
            after_hash: blake3::hash(after.as_bytes()).to_hex().to_string(),
            before: before.map(str::to_owned),
        }
    }
}

/// Errors decoding one line (the reader adds the file and line number). The JSON
/// error is part of the message, not its source (see [`crate::LogError`]).
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("not valid JSON for an entry: {0}")]
    Json(serde_json::Error),
    #[error("the line has no trailing \"hash\" field")]
    NoHash,
    #[error("the hash is not 64 hex digits")]
    BadHash,
    #[error("bad timestamp {0:?}")]
    BadTimestamp(String),
}

impl From<serde_json::Error> for DecodeError {
    fn from(error: serde_json::Error) -> DecodeError {
        DecodeError::Json(error)
    }
}

pub(crate) fn format_ts(ts: &DateTime<Utc>) -> String {
    ts.to_rfc3339_opts(SecondsFormat::Millis, true)
}

impl Entry {
    /// Encodes the entry as one line (with its trailing newline), computing the hash
    /// from `parent_hash`. Returns the line and the hash it carries.
    pub fn encode(
        id: EntryId,
        parent: Option<EntryId>,
        parent_hash: Option<&EntryHash>,
        ts: DateTime<Utc>,
        body: &Body,
    ) -> (Vec<u8>, EntryHash) {
        Entry::encode_redacted(id, parent, parent_hash, ts, body, &Secrets::default())
    }

    /// This entry encoded again (its id, parent, time and body) as the child of an
    /// entry whose hash is `parent_hash`: the line and the hash it carries.
    pub fn reencode(&self, parent_hash: Option<&EntryHash>) -> (Vec<u8>, EntryHash) {
        Entry::encode(self.id, self.parent, parent_hash, self.ts, &self.body)
    }

    /// [`Entry::encode`] with every known secret value in the line replaced by its
    /// placeholder before the line is hashed (the session writer's one choke point,
    /// §21.5).
    pub fn encode_redacted(
        id: EntryId,
        parent: Option<EntryId>,
        parent_hash: Option<&EntryHash>,
        ts: DateTime<Utc>,
        body: &Body,
        secrets: &Secrets,
    ) -> (Vec<u8>, EntryHash) {
        use std::io::Write;
        let mut line = Vec::with_capacity(256);
        // Writes into a Vec cannot fail.
        let _ = write!(line, "{{\"v\":{FORMAT_VERSION},\"id\":{}", id.0);
        if let Some(p) = parent {
            let _ = write!(line, ",\"parent\":{}", p.0);
        }
        let _ = write!(line, ",\"ts\":\"{}\",", format_ts(&ts));
        match body {
            Body::Record(r) => push_inner(&mut line, r),
            Body::Decision(d) => push_inner(&mut line, d),
            Body::Unknown { type_name, data } => {
                line.extend_from_slice(b"\"type\":");
                push_json(&mut line, type_name);
                line.extend_from_slice(b",\"data\":");
                line.extend_from_slice(data.get().as_bytes());
            }
        }
        if let std::borrow::Cow::Owned(redacted) = secrets.redact_bytes(&line) {
            line = redacted;
        }
        let hash = EntryHash::compute(parent_hash, &line);
        line.extend_from_slice(HASH_MARK);
        line.extend_from_slice(hash.to_hex().as_bytes());
        line.extend_from_slice(b"\"}\n");
        (line, hash)
    }

    /// Decodes one line (without its newline). Does not check the hash chain: see
    /// [`Entry::verify`] (or [`Entry::decode_line`], which hands back what to hash).
    pub fn decode(line: &str) -> Result<Entry, DecodeError> {
        let (_, hash) = split_hash(line.as_bytes())?;
        decode_body(line, hash)
    }

    /// Decodes one line and returns it with the bytes its hash covers, so that the
    /// caller verifies it (once it knows the parent's hash) without splitting the
    /// line again: `EntryHash::compute(parent_hash, prefix) == entry.hash`.
    pub fn decode_line(line: &str) -> Result<(Entry, &[u8]), DecodeError> {
        let (prefix, hash) = split_hash(line.as_bytes())?;
        Ok((decode_body(line, hash)?, prefix))
    }

    /// Checks the hash of `line` (the encoded form of `self`, without newline) against
    /// its parent's hash.
    pub fn verify(line: &[u8], parent_hash: Option<&EntryHash>) -> Result<bool, DecodeError> {
        let (prefix, hash) = split_hash(line)?;
        Ok(EntryHash::compute(parent_hash, prefix) == hash)
    }

    pub fn type_name(&self) -> &str {
        self.body.type_name()
    }
}

/// Decodes a line whose trailing hash was split off already: one typed pass over the
/// JSON (see [`wire`]).
fn decode_body(line: &str, hash: EntryHash) -> Result<Entry, DecodeError> {
    let parts: wire::Parts<'_> = serde_json::from_str(line)?;
    let ts = parse_ts(&parts.ts).ok_or_else(|| DecodeError::BadTimestamp(parts.ts.to_string()))?;
    Ok(Entry {
        v: parts.v,
        id: parts.id,
        parent: parts.parent,
        ts,
        body: parts.body,
        hash,
    })
}

/// Parses an RFC 3339 timestamp. The writer's own form (`2026-11-30T03:00:00.125Z`)
/// is read directly; anything else goes through chrono's parser.
pub(crate) fn parse_ts(text: &str) -> Option<DateTime<Utc>> {
    fast_ts(text.as_bytes()).or_else(|| {
        DateTime::parse_from_rfc3339(text)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    })
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` exactly; `None` for any other shape (or a leap second),
/// which the caller hands to chrono.
fn fast_ts(b: &[u8]) -> Option<DateTime<Utc>> {
    if b.len() != 24
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[19] != b'.'
        || b[23] != b'Z'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        b[r].iter().try_fold(0u32, |acc, &c| {
            c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
        })
    };
    let date =
        chrono::NaiveDate::from_ymd_opt(i32::try_from(num(0..4)?).ok()?, num(5..7)?, num(8..10)?)?;
    let time = chrono::NaiveTime::from_hms_milli_opt(
        num(11..13)?,
        num(14..16)?,
        num(17..19)?,
        num(20..23)?,
    )?;
    Some(date.and_time(time).and_utc())
}

/// The hash a line carries (its last 64 hex digits), without decoding the rest.
pub fn line_hash(line: &[u8]) -> Result<EntryHash, DecodeError> {
    split_hash(line).map(|(_, h)| h)
}

/// Splits a line into the hashed prefix and the hash it carries.
fn split_hash(line: &[u8]) -> Result<(&[u8], EntryHash), DecodeError> {
    // `,"hash":"` + 64 hex + `"}`
    const TAIL: usize = HASH_MARK.len() + 64 + 2;
    if line.len() < TAIL || !line.ends_with(b"\"}") {
        return Err(DecodeError::NoHash);
    }
    let start = line.len() - TAIL;
    if &line[start..start + HASH_MARK.len()] != HASH_MARK {
        return Err(DecodeError::NoHash);
    }
    let hash =
        decode_hex(&line[start + HASH_MARK.len()..line.len() - 2]).ok_or(DecodeError::BadHash)?;
    Ok((&line[..start], hash))
}

/// 64 hex digits (either case, as blake3's parser takes them) to 32 bytes.
fn decode_hex(hex: &[u8]) -> Option<EntryHash> {
    /// The value of each byte as a hex digit; 0xff for a byte that is not one.
    const NIBBLE: [u8; 256] = {
        let mut t = [0xffu8; 256];
        let mut i = 0;
        while i < 10 {
            t[b'0' as usize + i] = i as u8;
            i += 1;
        }
        let mut i = 0;
        while i < 6 {
            t[b'a' as usize + i] = 10 + i as u8;
            t[b'A' as usize + i] = 10 + i as u8;
            i += 1;
        }
        t
    };
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    let mut bad = 0u8;
    for (o, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        let (hi, lo) = (NIBBLE[usize::from(pair[0])], NIBBLE[usize::from(pair[1])]);
        bad |= (hi | lo) & 0xf0;
        *o = (hi << 4) | (lo & 0x0f);
    }
    (bad == 0).then_some(EntryHash(out))
}

/// Appends `{"type":…,"data":…}` of an adjacently tagged value without its braces.
fn push_inner<T: Serialize>(line: &mut Vec<u8>, value: &T) {
    // Serializing these plain data types to JSON cannot fail.
    let bytes = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    line.extend_from_slice(&bytes[1..bytes.len() - 1]);
}

fn push_json<T: Serialize + ?Sized>(line: &mut Vec<u8>, value: &T) {
    // A string always serializes.
    let _ = serde_json::to_writer(&mut *line, value);
}

#[cfg(test)]
mod derived;
pub mod envelope;
mod fast;
pub use envelope::Envelope;
pub mod foreign;
mod kind;
pub use kind::{ArchivedKind, Kind};
pub mod memory;
mod wire;

#[cfg(test)]
mod tests {
    use super::derived::{DerivedEvent, DerivedResult};
    use super::*;
    use xcsh_machine::{CallId, RunEnd, StopReason, Usage, UserOrigin};

    fn ts() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-30T03:00:00.125Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    fn roundtrip(body: Body) -> String {
        let (line, hash) = Entry::encode(EntryId(3), Some(EntryId(2)), None, ts(), &body);
        let text = std::str::from_utf8(&line).unwrap().trim_end().to_string();
        let entry = Entry::decode(&text).unwrap();
        assert_eq!(entry.body, body);
        assert_eq!(entry.hash, hash);
        assert!(Entry::verify(text.as_bytes(), None).unwrap());
        let (again, _) = Entry::encode(entry.id, entry.parent, None, entry.ts, &entry.body);
        assert_eq!(again, line, "re-encoding is byte for byte");
        text
    }

    /// Every entry type of the vocabulary, from the fixture sessions and a body for
    /// each type they lack, encodes and decodes to itself under its own name and
    /// index kind; a type without a body here fails the test, so that no type can
    /// be forgotten and decode as `Unknown`.
    #[test]
    fn every_entry_type_round_trips_and_none_decodes_as_unknown() {
        let mut bodies: Vec<Body> = Vec::new();
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/sessions");
        // The sessions and those of a family's folder (`delegation/`).
        let mut files = Vec::new();
        for file in std::fs::read_dir(dir).unwrap() {
            let path = file.unwrap().path();
            if path.is_dir() {
                files.extend(std::fs::read_dir(&path).unwrap().map(|f| f.unwrap().path()));
            } else {
                files.push(path);
            }
        }
        for file in files {
            let log = crate::read_session(&file).unwrap();
            bodies.extend(log.entries.into_iter().map(|e| e.body));
        }
        let config = crate::writer::testutil::config();
        bodies.extend([
            Body::Record(Record::Recovered { note: "n".into() }),
            Body::Record(Record::LateEvent {
                step: StepNo(1),
                event: StreamEvent::TextDelta { text: "x".into() },
            }),
            Body::Record(Record::ApprovalAnswer {
                call_id: CallId("c".into()),
                verdict: xcsh_machine::Verdict::Deny,
                scope: xcsh_machine::ApprovalScope::Once,
                message: Some("no".into()),
            }),
            Body::Record(Record::CheckFailed {
                call_id: CallId("c".into()),
                content: "error: `a` was not read".into(),
            }),
            Body::Record(Record::Compact { config }),
            Body::Record(Record::Undo {
                run: EntryId(1),
                files: vec!["/w/f".into()],
                note: Some("[Note]".into()),
            }),
            Body::Record(Record::Workspace {
                from: "/a".into(),
                to: "/b".into(),
            }),
            Body::Record(Record::Provider(ProviderRecord {
                provider: "anthropic".into(),
                model: Some("claude-x".into()),
                base_url: Some("http://127.0.0.1:4000".into()),
                script: None,
            })),
            Body::Record(Record::Provider(ProviderRecord {
                provider: "faux".into(),
                model: None,
                base_url: None,
                script: Some("/s/demo.jsonl".into()),
            })),
            Body::Record(Record::MemoryForget(memory::ForgetRecord {
                scope: memory::MemoryScope::User,
                name: "n".into(),
                hash: "h".into(),
            })),
            Body::Decision(Decision::Ignored {
                reason: xcsh_machine::IgnoreReason::NoRunInProgress,
            }),
            Body::Record(Record::Foreign(foreign::ForeignRecord {
                format: foreign::SourceFormat::Pi,
                line: 7,
                source_type: Some("custom".into()),
                raw: foreign::RawJson::parse(r#"{"type":"custom","x":[1, 2]}"#).unwrap(),
            })),
        ]);
        let mut seen = std::collections::BTreeSet::new();
        for body in bodies {
            let name = body.type_name().to_string();
            let text = roundtrip(body.clone());
            assert!(
                text.contains(&format!(r#""type":"{name}","data""#)),
                "{text}"
            );
            assert!(
                !matches!(body, Body::Unknown { .. }),
                "{name} decodes as unknown"
            );
            assert_eq!(crate::index::Kind::of(&body).name(), name);
            seen.insert(name);
        }
        let all: std::collections::BTreeSet<String> = Record::TYPE_NAMES
            .iter()
            .chain(&Decision::TYPE_NAMES)
            .map(|n| n.to_string())
            .collect();
        assert_eq!(seen, all);
    }

    #[test]
    fn decision_line_is_flat_and_round_trips() {
        let text = roundtrip(Body::Decision(Decision::RunFinished(RunEnd {
            reason: StopReason::MaxSteps { limit: 4 },
            steps: 4,
            usage: Usage {
                input_tokens: 10,
                output_tokens: 2,
                ..Usage::default()
            },
            undelivered: vec![],
        })));
        expect_test::expect![[r#"{"v":1,"id":3,"parent":2,"ts":"2026-11-30T03:00:00.125Z","type":"run_finished","data":{"reason":{"kind":"max_steps","limit":4},"steps":4,"usage":{"input_tokens":10,"output_tokens":2}},"hash":"71334168724e07f3226dd0c8215cdc887eef39f5872af858cab471ffc4c851f8"}"#]].assert_eq(&text);
    }

    #[test]
    fn record_and_unknown_lines_round_trip() {
        roundtrip(Body::Record(Record::UserMessage {
            text: "hi \"there\"\n".into(),
            config: crate::writer::testutil::config(),
        }));
        roundtrip(Body::Record(Record::Interrupt {}));
        roundtrip(Body::Decision(Decision::Delivered {
            origin: UserOrigin::Steer,
            queued: EntryId(1),
            text: "s".into(),
        }));
        let unknown = roundtrip(Body::Unknown {
            type_name: "from_the_future".into(),
            data: RawValue::from_string(r#"{"x":[1,2]}"#.into()).unwrap(),
        });
        assert!(unknown.contains(r#""type":"from_the_future","data":{"x":[1,2]}"#));
    }

    #[test]
    fn hand_written_deserializers_take_what_the_derived_ones_take() {
        let events = [
            r#"{"ms":1,"kind":"text_delta","text":"a\"b"}"#,
            r#"{"kind":"text_delta","ms":1,"text":"x"}"#,
            r#"{"text":"x","kind":"text_delta","ms":1}"#,
            r#"{"ms":2,"kind":"reasoning_delta","text":"r","extra":[1,{"a":2}]}"#,
            r#"{"ms":3,"kind":"reasoning_signature","signature":"s"}"#,
            r#"{"ms":4,"kind":"tool_call_start","index":0,"id":"c","name":"echo"}"#,
            r#"{"ms":5,"kind":"tool_call_delta","index":0,"arguments":"{}"}"#,
            r#"{"ms":6,"kind":"tool_call_end","index":1}"#,
            r#"{"ms":7,"kind":"usage","usage":{"input_tokens":1,"output_tokens":2}}"#,
            r#"{"ms":8,"kind":"finish","reason":"tool_calls"}"#,
            r#"{"reason":"stop","ms":8,"kind":"finish"}"#,
            r#"{"ms":9,"kind":"retrying","attempt":1,"reason":"429","delay_ms":5}"#,
            r#"{"ms":9,"kind":"skipped","event_type":"ping"}"#,
            r#"{"ms":9,"kind":"restarted","reason":"message_start before message_stop"}"#,
            r#"{"ms":9,"kind":"reasoning_block_start"}"#,
            r#"{"ms":9,"kind":"reasoning_redacted","data":"EmwKAhgB"}"#,
            r#"{"ms":9,"kind":"output_limit_exceeded","max_output_tokens":10,"output_bytes":9000}"#,
        ];
        for text in events {
            let want: DerivedEvent = serde_json::from_str(text).unwrap();
            let got: TimedEvent = serde_json::from_str(text).unwrap();
            assert_eq!((got.ms, got.event), (want.ms, want.event), "{text}");
        }
        for bad in [
            r#"{"ms":1,"kind":"text_delta"}"#,
            r#"{"kind":"text_delta","text":"x"}"#,
            r#"{"ms":1,"text":"x"}"#,
            r#"{"ms":1,"kind":"nope"}"#,
            r#"{"ms":1,"kind":"finish","reason":"later"}"#,
            r#"{"ms":"1","kind":"tool_call_end","index":0}"#,
        ] {
            assert!(serde_json::from_str::<DerivedEvent>(bad).is_err(), "{bad}");
            assert!(serde_json::from_str::<TimedEvent>(bad).is_err(), "{bad}");
        }
        let results = [
            r#"{"call_id":"c","name":"n","status":"ok","content":"x","duration_ms":3}"#,
            r#"{"duration_ms":3,"content":"x","status":"error","name":"n","call_id":"c","z":1}"#,
            r#"{"call_id":"c","name":"n","status":"cancelled","content":"","duration_ms":0,"changes":[{"path":"/a","before_hash":null,"after_hash":"h","before":null}]}"#,
        ];
        for text in results {
            let want: DerivedResult = serde_json::from_str(text).unwrap();
            let got: ToolResultRecord = serde_json::from_str(text).unwrap();
            assert_eq!(
                (
                    got.call_id,
                    got.name,
                    got.outcome,
                    got.duration_ms,
                    got.changes
                ),
                (
                    want.call_id,
                    want.name,
                    want.outcome,
                    want.duration_ms,
                    want.changes
                ),
                "{text}"
            );
        }
        for bad in [
            r#"{"call_id":"c","name":"n","status":"ok","duration_ms":3}"#,
            r#"{"call_id":"c","name":"n","status":"maybe","content":"x","duration_ms":3}"#,
        ] {
            assert!(serde_json::from_str::<DerivedResult>(bad).is_err(), "{bad}");
            assert!(
                serde_json::from_str::<ToolResultRecord>(bad).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn record_and_decision_type_names_are_disjoint() {
        for name in Record::TYPE_NAMES {
            assert!(!Decision::TYPE_NAMES.contains(&name), "{name} is both");
        }
    }

    #[test]
    fn an_edited_line_fails_verification() {
        let (line, _) = Entry::encode(
            EntryId(1),
            Some(EntryId(0)),
            None,
            ts(),
            &Body::Record(Record::Steer { text: "a".into() }),
        );
        let text = String::from_utf8(line).unwrap().replace("\"a\"", "\"b\"");
        assert!(!Entry::verify(text.trim_end().as_bytes(), None).unwrap());
    }
}
