//! The derived index of a session log: `<session>.jsonl.idx` beside the log, an rkyv
//! archive of every entry's offset, id, parent, type and hash, and a compact summary
//! of what `tree`, `stats`, `sessions` and resume need (step usage and timing, tool
//! results, run ends, prompts' first characters, labels, compactions), so that those
//! open a huge session without parsing it.
//!
//! The index is never the truth. It covers a prefix of the log (`covered` bytes of
//! complete lines) and is used only while that prefix is unchanged as far as can be
//! checked cheaply: the log is at least that long, and the first and the last covered
//! lines are byte for byte the ones indexed (their hashes, recomputed from their bytes
//! and their parents' indexed hashes, match; the last one chains to every entry on its
//! branch). Lines appended since are read, verified and added. A missing, unreadable,
//! corrupt (rkyv validation fails), old-version or stale index is rebuilt from the log;
//! writing it back is best effort (a read-only directory only costs speed), through a
//! temporary file and a rename, so a reader never sees half an index. Small logs
//! (under [`INDEX_MIN_BYTES`]) are indexed in memory only.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rkyv::rancor::Error as RkyvError;
use rkyv::util::AlignedVec;

mod builder;
pub use crate::entry::{ArchivedKind, Kind};
pub use builder::IndexBuilder;

use super::entry::{Body, Entry, EntryHash, Record, line_hash};
use super::error::LogError;
use super::reader::{LogReader, READ_BUFFER};
use xcsh_machine::{
    Decision, EntryId, FinishReason, ProviderError, ProviderErrorKind, StepOutcome, StopReason,
    StreamEvent, ToolStatus, UserOrigin,
};

/// The format version of the index file; another version is rebuilt. (6: the
/// memory entry kinds, which renumber the decisions' kinds; 7: `check_failed`; 8:
/// `provider`.)
pub const INDEX_VERSION: u32 = 8;

/// Logs shorter than this are indexed in memory only (parsing them is quick).
pub const INDEX_MIN_BYTES: u64 = 1 << 20;

/// Characters of a prompt kept in the index: its whitespace-collapsed start, enough
/// for any one-line preview of fewer than 120 characters.
pub const PREVIEW_CHARS: usize = 128;

/// No parent (the header).
pub const NO_PARENT: u32 = u32::MAX;

/// No value (a step without events has no time to first token).
pub const NONE: u64 = u64::MAX;

/// `<log>.idx`.
pub fn index_path(log: &Path) -> PathBuf {
    let mut s = log.as_os_str().to_os_string();
    s.push(".idx");
    PathBuf::from(s)
}

/// Declares the index's plain rows: `Copy` data, archived by rkyv as it is.
macro_rules! rows {
    ($($(#[$meta:meta])* pub struct $name:ident $body:tt)*) => {$(
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, Default, PartialEq, Eq, rkyv::Archive, rkyv::Serialize,
            rkyv::Deserialize,
        )]
        pub struct $name $body
    )*};
}

rows! {
    /// A string in [`IndexData::text`].
    pub struct StrRef {
        pub start: u32,
        pub len: u32,
    }

    /// A `step` record.
    pub struct StepRow {
        pub step: u32,
        pub input_tokens: u64,
        pub output_tokens: u64,
        pub cache_read_tokens: u64,
        pub cache_write_tokens: u64,
        /// `ms` of the first text, reasoning or tool-call-start event ([`NONE`]: none).
        pub ttft_ms: u64,
        /// `ms` of the last event ([`NONE`]: no events).
        pub stream_ms: u64,
        pub retries: u32,
        /// The assembled message's tool calls (whatever the outcome).
        pub tool_calls: u32,
        /// Their ids: `call_ids[calls_start..calls_start + tool_calls]`.
        pub calls_start: u32,
        /// 0 completed, 1 failed, 2 aborted.
        pub outcome: u8,
        /// The message finished with `error`.
        pub finish_error: bool,
        /// The usage is xcsh's estimate (`Usage::estimated`).
        pub estimated: bool,
        /// For a failed step: the error's kind ([`kind_code`]) and message.
        pub error_kind: u8,
        pub error_message: StrRef,
    }

    /// A `tool_result` record or a `synthetic_result` decision.
    pub struct ToolRow {
        pub call_id: StrRef,
        pub name: StrRef,
        /// 0 ok, 1 error, 2 cancelled, 3 answered without running (synthetic).
        pub status: u8,
        pub duration_ms: u64,
    }

    /// A `run_finished` decision.
    pub struct FinishRow {
        /// `usage.spend()` of the run.
        pub spend: u64,
        /// `usage.estimated` of the run.
        pub estimated: bool,
        /// The stop reason: see [`IndexData::stop_reason`].
        pub reason: u8,
        pub a: u64,
        pub b: u64,
        pub error_kind: u8,
        pub error_message: StrRef,
    }

    /// A `user_message`, `compact`, `steer` or `follow_up` record.
    pub struct PromptRow {
        /// The text's first [`PREVIEW_CHARS`] characters, whitespace collapsed.
        pub preview: StrRef,
        /// The run's `max_tokens` (prompts and compactions; 0 otherwise).
        pub max_tokens: u64,
    }

    /// A `label` record.
    pub struct LabelRow {
        pub target: u64,
        pub name: StrRef,
    }

    /// A `compacted` decision.
    pub struct CompactionRow {
        pub tokens_before: u64,
        pub tokens_after: u64,
    }

    /// A `tool_dispatched` decision (or, with `step` 0, an `approval_answer` record: its
    /// call; or an `approval` decision: its tool as `name`).
    pub struct CallRow {
        pub call_id: StrRef,
        pub name: StrRef,
        pub step: u32,
    }
}

/// A snapshot of the machine after the entry at `pos` (see [`super::resume`]).
#[derive(Debug, Clone, Default, PartialEq, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct SnapshotRow {
    /// The position of the entry the machine was at rest after.
    pub pos: u32,
    /// [`super::resume::machine_build`] of the binary that took it.
    pub machine: [u8; 32],
    /// The [`xcsh_machine::MachineSnapshot`] as JSON.
    pub json: String,
}

/// The index: per entry (file order) its offset, id, parent position, kind, hash,
/// timestamp and the row of its kind's table (`aux`), plus the tables.
#[derive(Debug, Clone, Default, PartialEq, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct IndexData {
    pub version: u32,
    /// Bytes of complete lines covered (the offset after the last indexed line).
    pub covered: u64,
    pub session_id: String,
    pub cwd: String,
    pub forked_from: Option<(String, u64)>,
    /// The header's timestamp, in ms since the epoch.
    pub started_ms: i64,
    /// Where each line starts; one more item at the end: `covered`.
    pub offsets: Vec<u64>,
    pub ids: Vec<u64>,
    /// The position of each entry's parent ([`NO_PARENT`] for the header).
    pub parents: Vec<u32>,
    pub kinds: Vec<Kind>,
    /// The row in the kind's table ([`Kind::Delivered`]: the origin code;
    /// [`Kind::StepStarted`] and [`Kind::LateEvent`]: the step number).
    pub aux: Vec<u32>,
    pub hashes: Vec<[u8; 32]>,
    /// Timestamps, in ns since the epoch (`i64::MIN`: out of that range).
    pub ts_ns: Vec<i64>,
    pub steps: Vec<StepRow>,
    /// `tool_dispatched`, `approval_answer` and `approval` entries.
    pub calls: Vec<CallRow>,
    pub tools: Vec<ToolRow>,
    pub finishes: Vec<FinishRow>,
    pub prompts: Vec<PromptRow>,
    pub labels: Vec<LabelRow>,
    pub compactions: Vec<CompactionRow>,
    /// `from_leaf` of `branch` records.
    pub branches: Vec<u64>,
    pub call_ids: Vec<StrRef>,
    /// Type names of unknown entries.
    pub unknown: Vec<StrRef>,
    pub text: String,
    /// The machine at rest at an entry, for resuming without replaying the branch
    /// up to it (written by resume, kept when the index is extended).
    pub snapshot: Option<SnapshotRow>,
}

/// The code of a provider error kind in the index.
pub fn kind_code(kind: ProviderErrorKind) -> u8 {
    match kind {
        ProviderErrorKind::Http => 0,
        ProviderErrorKind::Api => 1,
        ProviderErrorKind::Disconnected => 2,
        ProviderErrorKind::IdleTimeout => 3,
        ProviderErrorKind::Malformed => 4,
        ProviderErrorKind::ScriptExhausted => 5,
        ProviderErrorKind::ContextOverflow => 6,
    }
}

fn error_kind(code: u8) -> ProviderErrorKind {
    match code {
        0 => ProviderErrorKind::Http,
        1 => ProviderErrorKind::Api,
        2 => ProviderErrorKind::Disconnected,
        3 => ProviderErrorKind::IdleTimeout,
        4 => ProviderErrorKind::Malformed,
        6 => ProviderErrorKind::ContextOverflow,
        _ => ProviderErrorKind::ScriptExhausted,
    }
}

/// The whitespace-collapsed first [`PREVIEW_CHARS`] characters of `text`.
pub fn preview(text: &str) -> String {
    let mut out = String::new();
    let mut n = 0;
    for word in text.split_whitespace() {
        if n > 0 {
            out.push(' ');
            n += 1;
        }
        for c in word.chars() {
            if n >= PREVIEW_CHARS {
                return out;
            }
            out.push(c);
            n += 1;
        }
        if n >= PREVIEW_CHARS {
            return out;
        }
    }
    out
}

/// Where an index's bytes live.
enum Backing {
    Map(memmap2::Mmap),
    Owned(AlignedVec),
}

/// A session log opened for reading the lines an index points at (one positioned
/// read per line: nothing of the file is held).
pub struct LogLines(File);

impl LogLines {
    pub fn open(log: &Path) -> Result<LogLines, LogError> {
        Ok(LogLines(File::open(log).map_err(io(log))?))
    }

    /// The line (without its newline) at position `pos` of `index`.
    pub fn line(&self, index: &ArchivedIndexData, pos: usize) -> Option<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        let (start, end) = index.line_range(pos);
        let mut buf = vec![0u8; usize::try_from(end.checked_sub(start)?).ok()?];
        self.0.read_exact_at(&mut buf, start).ok()?;
        Some(buf)
    }

    /// The entry at position `pos` of `index`, decoded from its line.
    pub fn entry(&self, index: &ArchivedIndexData, pos: usize) -> Option<Entry> {
        let line = self.line(index, pos)?;
        Entry::decode(std::str::from_utf8(&line).ok()?).ok()
    }
}

/// A validated index, ready to read.
pub struct SessionIndex {
    backing: Backing,
    /// What opening it took.
    pub source: IndexSource,
}

impl std::fmt::Debug for SessionIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionIndex")
            .field("source", &self.source)
            .finish()
    }
}

/// How [`open_index`] got the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexSource {
    /// The file beside the log was valid and covered every complete line.
    Valid,
    /// It was valid for a prefix; `lines` lines appended since were read and added.
    Extended { lines: usize },
    /// There was none, or it was unusable (`reason`): the log was read whole.
    Rebuilt { reason: &'static str },
}

impl SessionIndex {
    fn bytes(&self) -> &[u8] {
        match &self.backing {
            Backing::Map(m) => m,
            Backing::Owned(v) => v,
        }
    }

    /// The archived index (validated when it was opened).
    pub fn data(&self) -> &ArchivedIndexData {
        // SAFETY: the bytes were validated with `rkyv::access` when this value was
        // made (`SessionIndex::from_backing`) and are immutable since: an owned
        // buffer we never mutate, or a private read-only map of a file that this
        // process only replaces by rename (a new inode), never rewrites in place.
        unsafe { rkyv::access_unchecked::<ArchivedIndexData>(self.bytes()) }
    }

    fn from_backing(backing: Backing, source: IndexSource) -> Result<SessionIndex, &'static str> {
        let index = SessionIndex { backing, source };
        let data = rkyv::access::<ArchivedIndexData, RkyvError>(index.bytes())
            .map_err(|_| "it does not validate")?;
        if data.version.to_native() != INDEX_VERSION {
            return Err("it is of another version");
        }
        let n = data.ids.len();
        if n == 0
            || data.offsets.len() != n + 1
            || data.parents.len() != n
            || data.kinds.len() != n
            || data.aux.len() != n
            || data.hashes.len() != n
            || data.ts_ns.len() != n
        {
            return Err("its tables disagree");
        }
        Ok(index)
    }

    /// An index of `data` held in memory.
    pub fn from_data(data: &IndexData, source: IndexSource) -> Result<SessionIndex, LogError> {
        let bytes = rkyv::to_bytes::<RkyvError>(data).map_err(|e| LogError::Io {
            path: PathBuf::new(),
            error: std::io::Error::other(format!("cannot serialize the index: {e}")),
        })?;
        SessionIndex::from_backing(Backing::Owned(bytes), source).map_err(|why| LogError::Io {
            path: PathBuf::new(),
            error: std::io::Error::other(format!("the index just built is unusable: {why}")),
        })
    }
}

impl ArchivedIndexData {
    #[inline]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    #[inline]
    pub fn str(&self, r: &ArchivedStrRef) -> &str {
        let start = r.start.to_native() as usize;
        let end = start + r.len.to_native() as usize;
        self.text.get(start..end).unwrap_or("")
    }

    #[inline]
    pub fn kind(&self, pos: usize) -> Kind {
        Kind::from_archived(&self.kinds[pos])
    }

    #[inline]
    pub fn id(&self, pos: usize) -> EntryId {
        EntryId(self.ids[pos].to_native())
    }

    #[inline]
    pub fn parent(&self, pos: usize) -> Option<usize> {
        let p = self.parents[pos].to_native();
        (p != NO_PARENT).then_some(p as usize)
    }

    #[inline]
    pub fn aux(&self, pos: usize) -> usize {
        self.aux[pos].to_native() as usize
    }

    /// The timestamp in ns since the epoch (`i64::MIN`: out of that range).
    #[inline]
    pub fn ts_ns(&self, pos: usize) -> i64 {
        self.ts_ns[pos].to_native()
    }

    #[inline]
    pub fn hash(&self, pos: usize) -> EntryHash {
        EntryHash(self.hashes[pos])
    }

    /// The entry's type name.
    pub fn type_name(&self, pos: usize) -> &str {
        match self.kind(pos) {
            Kind::Unknown => self
                .unknown
                .get(self.aux(pos))
                .map_or("unknown", |r| self.str(r)),
            k => k.name(),
        }
    }

    /// The byte range of the entry's line (without its newline).
    #[inline]
    pub fn line_range(&self, pos: usize) -> (u64, u64) {
        let start = self.offsets[pos].to_native();
        let end = self.offsets[pos + 1].to_native();
        (start, end.saturating_sub(1))
    }

    /// The current leaf: the last entry that is not a label (as [`SessionLog::leaf`]).
    ///
    /// [`SessionLog::leaf`]: super::SessionLog::leaf
    pub fn leaf(&self) -> usize {
        (0..self.len())
            .rev()
            .find(|&p| self.kind(p) != Kind::Label)
            .unwrap_or(0)
    }

    /// The stop reason of a `run_finished` row.
    pub fn stop_reason(&self, row: &ArchivedFinishRow) -> StopReason {
        match row.reason {
            0 => StopReason::Completed,
            1 => StopReason::MaxSteps {
                limit: u32::try_from(row.a.to_native()).unwrap_or(u32::MAX),
            },
            2 => StopReason::MaxTokens {
                limit: row.a.to_native(),
                spent: row.b.to_native(),
            },
            3 => StopReason::OutputLimit,
            4 => StopReason::ContentFilter,
            5 => StopReason::Interrupted,
            6 => StopReason::ProviderError {
                error: ProviderError {
                    kind: error_kind(row.error_kind),
                    message: self.str(&row.error_message).to_string(),
                },
            },
            8 => StopReason::ContextOverflow {
                error: ProviderError {
                    kind: error_kind(row.error_kind),
                    message: self.str(&row.error_message).to_string(),
                },
                compacted: row.a.to_native() != 0,
            },
            _ => StopReason::Crashed,
        }
    }

    /// The outcome of a `step` row.
    pub fn step_outcome(&self, row: &ArchivedStepRow) -> StepOutcome {
        match row.outcome {
            0 => StepOutcome::Completed,
            1 => StepOutcome::Failed {
                error: ProviderError {
                    kind: error_kind(row.error_kind),
                    message: self.str(&row.error_message).to_string(),
                },
            },
            _ => StepOutcome::Aborted,
        }
    }

    /// The ids of a step's tool calls.
    pub fn step_calls(&self, row: &ArchivedStepRow) -> impl Iterator<Item = &str> {
        let start = row.calls_start.to_native() as usize;
        let n = row.tool_calls.to_native() as usize;
        self.call_ids
            .get(start..start + n)
            .unwrap_or_default()
            .iter()
            .map(|r| self.str(r))
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> LogError + '_ {
    move |e| LogError::io(path, e)
}

/// Reads `len` bytes at `offset`.
fn read_at(file: &mut File, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(&mut buf)?;
    Ok(buf)
}

/// Whether the line at `pos` in the log is the one indexed: its bytes hash, under
/// its parent's indexed hash, to its indexed hash.
fn line_matches(file: &mut File, data: &ArchivedIndexData, pos: usize) -> bool {
    let (start, end) = data.line_range(pos);
    let Ok(len) = usize::try_from(end + 1 - start) else {
        return false;
    };
    let Ok(line) = read_at(file, start, len) else {
        return false;
    };
    let Some((&b'\n', body)) = line.split_last() else {
        return false;
    };
    let parent = data.parent(pos).map(|p| data.hash(p));
    Entry::verify(body, parent.as_ref()).unwrap_or(false)
        && line_hash(body).is_ok_and(|h| h == data.hash(pos))
}

/// The index beside `log` if it is usable for it: `Err` says why not.
fn load(log: &Path, file: &mut File, log_len: u64) -> Result<SessionIndex, &'static str> {
    let idx = File::open(index_path(log)).map_err(|_| "there is none")?;
    // SAFETY: a read-only private map; the index file is only ever replaced by a
    // rename (a new inode), so the mapped bytes do not change under us. A file
    // truncated by someone else could fault; that is the usual caveat of mapping.
    let map = unsafe { memmap2::Mmap::map(&idx) }.map_err(|_| "it cannot be mapped")?;
    let index = SessionIndex::from_backing(Backing::Map(map), IndexSource::Valid)?;
    let data = index.data();
    let covered = data.covered.to_native();
    if covered > log_len || data.offsets[data.len()].to_native() != covered {
        return Err("the log is shorter than what it covers");
    }
    if !line_matches(file, data, 0) || !line_matches(file, data, data.len() - 1) {
        return Err("the log's lines differ from the indexed ones");
    }
    Ok(index)
}

/// Reads every complete line of `reader` (starting at byte `start` of the log, line
/// `line0 + 1`) into `builder`, verifying each as the reader does; returns the
/// offset after the last complete line and the number of lines.
fn add_lines<R: std::io::BufRead>(
    log: &Path,
    reader: R,
    builder: &mut IndexBuilder,
    start: u64,
) -> Result<(u64, usize), LogError> {
    let mut r = if builder.is_empty() {
        LogReader::new(log, reader)
    } else {
        let known: Vec<(EntryId, EntryHash)> = builder
            .data
            .ids
            .iter()
            .zip(&builder.data.hashes)
            .map(|(id, h)| (EntryId(*id), EntryHash(*h)))
            .collect();
        LogReader::continuing(
            log,
            reader,
            u32::try_from(builder.len()).unwrap_or(u32::MAX),
            &known,
        )
    };
    let mut n = 0;
    let mut batch = Vec::new();
    let mut offsets = Vec::new();
    while let Some(result) = r.next_batch_with_offsets(&mut batch, &mut offsets) {
        result?;
        for ((_, entry), offset) in batch.drain(..).zip(offsets.drain(..)) {
            builder.push(start + offset, &entry);
            n += 1;
        }
    }
    Ok((start + r.offset(), n))
}

/// Writes `data` beside `log` (through a temporary file and a rename); best effort.
pub fn write_index(log: &Path, data: &IndexData) -> bool {
    let Ok(bytes) = rkyv::to_bytes::<RkyvError>(data) else {
        return false;
    };
    let target = index_path(log);
    let mut tmp = target.as_os_str().to_os_string();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let written = File::create(&tmp)
        .and_then(|mut f| f.write_all(&bytes))
        .and_then(|()| std::fs::rename(&tmp, &target));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.is_ok()
}

/// The index of the session log at `log`: the one beside it when valid (extended by
/// the lines appended since), else rebuilt from the log (and written beside it when
/// the log is at least [`INDEX_MIN_BYTES`]). Errors are the log's own (a malformed
/// line, a broken hash chain), exactly as [`super::read_session`] reports them.
pub fn open_index(log: &Path) -> Result<SessionIndex, LogError> {
    let mut file = File::open(log).map_err(io(log))?;
    let log_len = file.metadata().map_err(io(log))?.len();
    let reason = match existing(log, &mut file, log_len)? {
        Ok(index) => return Ok(index),
        Err(reason) => reason,
    };
    file.seek(SeekFrom::Start(0)).map_err(io(log))?;
    let mut builder = IndexBuilder::new();
    let (end, _) = add_lines(
        log,
        BufReader::with_capacity(READ_BUFFER, &mut file),
        &mut builder,
        0,
    )?;
    let data = builder.finish(end);
    if log_len >= INDEX_MIN_BYTES {
        write_index(log, &data);
    }
    SessionIndex::from_data(&data, IndexSource::Rebuilt { reason })
}

/// The index beside `log` if it is valid (extended by the lines appended since, as
/// [`open_index`] does); `None` instead of rebuilding it.
pub fn open_existing_index(log: &Path) -> Result<Option<SessionIndex>, LogError> {
    let mut file = File::open(log).map_err(io(log))?;
    let log_len = file.metadata().map_err(io(log))?.len();
    Ok(existing(log, &mut file, log_len)?.ok())
}

/// The valid index beside `log`, extended; `Ok(Err(why))` when there is none.
fn existing(
    log: &Path,
    file: &mut File,
    log_len: u64,
) -> Result<Result<SessionIndex, &'static str>, LogError> {
    match load(log, file, log_len) {
        Ok(index) => {
            let covered = index.data().covered.to_native();
            if covered == log_len {
                return Ok(Ok(index));
            }
            // Lines appended since (or only a torn tail): read them.
            let tail = usize::try_from(log_len - covered)
                .ok()
                .and_then(|n| read_at(file, covered, n).ok())
                .ok_or_else(|| LogError::io(log, std::io::Error::other("cannot read the tail")))?;
            if memchr::memchr(b'\n', &tail).is_none() {
                return Ok(Ok(index));
            }
            let data: IndexData = rkyv::deserialize::<IndexData, RkyvError>(index.data())
                .map_err(|e| LogError::io(log, std::io::Error::other(format!("index: {e}"))))?;
            drop(index);
            let mut builder = IndexBuilder::resume(data);
            let (end, lines) = add_lines(log, tail.as_slice(), &mut builder, covered)?;
            let data = builder.finish(end);
            if log_len >= INDEX_MIN_BYTES {
                write_index(log, &data);
            }
            SessionIndex::from_data(&data, IndexSource::Extended { lines }).map(Ok)
        }
        Err(reason) => Ok(Err(reason)),
    }
}

/// The index of a log read already (in memory; nothing is written).
pub fn index_of(
    log: &super::SessionLog,
    offsets: Option<&[u64]>,
) -> Result<SessionIndex, LogError> {
    let mut builder = IndexBuilder::new();
    for (i, e) in log.entries.iter().enumerate() {
        builder.push(offsets.and_then(|o| o.get(i).copied()).unwrap_or(0), e);
    }
    let data = builder.finish(0);
    SessionIndex::from_data(
        &data,
        IndexSource::Rebuilt {
            reason: "in memory",
        },
    )
}

#[cfg(test)]
mod tests;
