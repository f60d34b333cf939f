//! Reading a session log: every complete line is decoded and verified (hash chain,
//! parent order, unique ids, a `session` header first); a torn last line is reported,
//! never skipped silently, and unknown entry types are kept and listed.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use super::entry::{Body, DecodeError, Entry, EntryHash, Record, SessionHeader};
use super::error::LogError;
use crate::machine::EntryId;

/// A last line without its newline: the bytes a crash left behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// Byte offset where the torn line starts (the length of the complete lines).
    pub offset: u64,
    /// Length of the torn bytes.
    pub len: u64,
    /// Where the torn bytes were copied when the writer repaired the file; `None`
    /// when the file was only read.
    pub sidecar: Option<PathBuf>,
}

/// A whole session log, read and verified.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionLog {
    pub path: PathBuf,
    /// Every entry of the file, in file order (unknown types included).
    pub entries: Vec<Entry>,
    /// The 1-based line number of each entry of `entries`.
    pub lines: Vec<u32>,
    /// The torn last line, if the file did not end in a newline.
    pub torn_tail: Option<TornTail>,
    /// Lines whose entry type this version does not know: (line, type).
    pub unknown: Vec<(u32, String)>,
    header: SessionHeader,
    /// Position in `entries` of each id, built once when the log is read.
    index: HashMap<EntryId, usize>,
}

impl SessionLog {
    pub(crate) fn new(
        path: &Path,
        entries: Vec<Entry>,
        lines: Vec<u32>,
        torn_tail: Option<TornTail>,
        unknown: Vec<(u32, String)>,
    ) -> Result<SessionLog, LogError> {
        let header = match entries.first().map(|e| &e.body) {
            Some(Body::Record(Record::Session(h))) => h.clone(),
            _ => {
                return Err(LogError::NotASession {
                    path: path.to_path_buf(),
                });
            }
        };
        let index = entries
            .iter()
            .enumerate()
            .map(|(pos, e)| (e.id, pos))
            .collect();
        Ok(SessionLog {
            path: path.to_path_buf(),
            entries,
            lines,
            torn_tail,
            unknown,
            header,
            index,
        })
    }

    /// The entry with this id.
    pub fn get(&self, id: EntryId) -> Option<&Entry> {
        self.index.get(&id).and_then(|&pos| self.entries.get(pos))
    }

    /// The 1-based line number of the entry with this id.
    pub fn line_of(&self, id: EntryId) -> Option<u32> {
        self.index
            .get(&id)
            .and_then(|&pos| self.lines.get(pos))
            .copied()
    }

    /// The session header (the first line).
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The current leaf: the id of the last entry in the file that is not a `label`
    /// record (every run appends on its branch, and continuing from an earlier entry
    /// writes a `branch` record there first).
    pub fn leaf(&self) -> EntryId {
        self.entries
            .iter()
            .rev()
            .find(|e| !matches!(e.body, Body::Record(Record::Label { .. })))
            .map_or(EntryId(0), |e| e.id)
    }

    /// The error for a command that named entry `id`, which this session does not
    /// hold: it says which entries there are.
    pub fn no_entry(&self, id: EntryId) -> LogError {
        let ids = self.entries.iter().map(|e| e.id);
        LogError::NoSuchEntry {
            path: self.path.clone(),
            id,
            first: ids.clone().min().unwrap_or(EntryId(0)),
            last: ids.max().unwrap_or(EntryId(0)),
        }
    }
}

/// The read buffer for whole files: big enough that almost every line is decoded
/// in place, without a copy.
pub(crate) const READ_BUFFER: usize = 4 << 20;

/// Reads and verifies a whole session log without changing it. A torn last line is
/// reported in [`SessionLog::torn_tail`] (with `sidecar: None`), not repaired.
pub fn read_session(path: &Path) -> Result<SessionLog, LogError> {
    let file = File::open(path).map_err(|e| LogError::io(path, e))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    Ok(read_log(path, BufReader::with_capacity(READ_BUFFER, file), size)?.log)
}

/// What [`read_log`] found: the log, the torn bytes, the hash of every entry and the
/// length of the complete lines.
pub(crate) struct ReadOutcome {
    pub log: SessionLog,
    pub torn: Option<Vec<u8>>,
    pub hashes: HashIndex,
    pub end: u64,
}

/// `size` (the source's length, if known, else 0) sizes the entries' vector. The
/// lines are decoded on worker threads ([`super::parallel`]), verified in order.
pub(crate) fn read_log<R: BufRead + Send>(
    path: &Path,
    reader: R,
    size: u64,
) -> Result<ReadOutcome, LogError> {
    // Room for lines of 256 bytes and more, so that the entries are not moved again
    // and again as the vector grows (room never used is never touched).
    let guess = usize::try_from(size / 256).unwrap_or(0);
    let mut entries = Vec::with_capacity(guess);
    let mut lines = Vec::with_capacity(guess);
    let read = super::parallel::read_parallel(
        path,
        reader,
        |entry| entry,
        |line, entry| {
            lines.push(line);
            entries.push(entry);
            true
        },
    )?;
    let end = read.offset;
    let torn_tail = read.torn.as_ref().map(|bytes| TornTail {
        offset: end,
        len: bytes.len() as u64,
        sidecar: None,
    });
    let log = SessionLog::new(path, entries, lines, torn_tail, read.unknown)?;
    Ok(ReadOutcome {
        log,
        torn: read.torn,
        hashes: read.hashes,
        end,
    })
}

/// Streams the verified entries of a session log from any `BufRead`, so that a big
/// file need not be held whole. Yields `(line number, entry)`; after the first error
/// it yields nothing more. A last line without a newline is not yielded: it is kept
/// as [`LogReader::torn_tail`] once the iterator has returned `None`. A source with
/// no complete line yields [`LogError::NotASession`].
#[derive(Debug)]
pub struct LogReader<R> {
    path: PathBuf,
    reader: R,
    buf: Vec<u8>,
    line: u32,
    offset: u64,
    hashes: HashIndex,
    torn: Option<Vec<u8>>,
    unknown: Vec<(u32, String)>,
    done: bool,
}

impl<R: BufRead> LogReader<R> {
    /// `path` names the source in errors.
    pub fn new(path: impl Into<PathBuf>, reader: R) -> LogReader<R> {
        LogReader {
            path: path.into(),
            reader,
            buf: Vec::new(),
            line: 0,
            offset: 0,
            hashes: HashIndex::default(),
            torn: None,
            unknown: Vec::new(),
            done: false,
        }
    }

    /// A reader of the lines that follow `lines` lines already verified (whose ids
    /// and hashes are `known`): line numbers continue from there, and parents may be
    /// among the known entries.
    pub(crate) fn continuing(
        path: impl Into<PathBuf>,
        reader: R,
        lines: u32,
        known: &[(EntryId, EntryHash)],
    ) -> LogReader<R> {
        let mut r = LogReader::new(path, reader);
        r.line = lines;
        for (id, hash) in known {
            r.hashes.insert(*id, *hash);
        }
        r
    }

    /// Reads every complete line in the reader's buffer at once and appends the
    /// entries to `out`: the lines are decoded on two threads (and most hashes
    /// checked there), then verified in file order exactly as [`Iterator::next`]
    /// does, so the entries, the first error and the torn tail are the same. `None`
    /// at the end; `Some(Err)` after the entries before the bad line were appended.
    pub fn next_batch(&mut self, out: &mut Vec<(u32, Entry)>) -> Option<Result<(), LogError>> {
        self.batch(out, None)
    }

    /// [`LogReader::next_batch`], also appending where each line starts (relative
    /// to where this reader started) to `offsets`.
    pub fn next_batch_with_offsets(
        &mut self,
        out: &mut Vec<(u32, Entry)>,
        offsets: &mut Vec<u64>,
    ) -> Option<Result<(), LogError>> {
        self.batch(out, Some(offsets))
    }

    fn batch(
        &mut self,
        out: &mut Vec<(u32, Entry)>,
        mut offsets: Option<&mut Vec<u64>>,
    ) -> Option<Result<(), LogError>> {
        if self.done {
            return None;
        }
        let available = match self.reader.fill_buf() {
            Ok(available) => available,
            Err(e) => {
                self.done = true;
                return Some(Err(LogError::io(&self.path, e)));
            }
        };
        let Some(last) = memchr::memrchr(b'\n', available) else {
            // A line longer than the buffer, or the end: one line the usual way.
            let start = self.offset;
            return self.next().map(|r| {
                r.map(|item| {
                    if let Some(o) = offsets.as_deref_mut() {
                        o.push(start);
                    }
                    out.push(item);
                })
            });
        };
        let complete = &available[..=last];
        let mut bounds = Vec::with_capacity(complete.len() / 256);
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', complete) {
            bounds.push((start, nl));
            start = nl + 1;
        }
        let decoded = decode_parallel(complete, &bounds);
        let mut failed = None;
        for ((a, b), result) in bounds.iter().zip(decoded) {
            self.line = self.line.saturating_add(1);
            let line_start = self.offset;
            self.offset += (b - a + 1) as u64;
            let line = self.line;
            let checked = result
                .map_err(|source| LogError::malformed(&self.path, line, &complete[*a..*b], source))
                .and_then(|d| {
                    let bytes = &complete[*a..*b];
                    check_decoded(
                        &self.path,
                        line,
                        bytes,
                        d,
                        &mut self.hashes,
                        &mut self.unknown,
                    )
                });
            match checked {
                Ok(entry) => {
                    if let Some(o) = offsets.as_deref_mut() {
                        o.push(line_start);
                    }
                    out.push((line, entry));
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        self.reader.consume(last + 1);
        match failed {
            Some(e) => {
                self.done = true;
                Some(Err(e))
            }
            None => Some(Ok(())),
        }
    }

    /// Complete lines read so far.
    pub fn lines_read(&self) -> u32 {
        self.line
    }

    /// Bytes of complete lines read so far (where a torn tail starts).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The bytes after the last newline, once the iterator has returned `None`.
    pub fn torn_tail(&self) -> Option<&[u8]> {
        self.torn.as_deref()
    }

    /// Lines of entry types this version does not know so far: (line, type).
    pub fn unknown(&self) -> &[(u32, String)] {
        &self.unknown
    }

    /// The hash of an entry read so far.
    pub fn hash_of(&self, id: EntryId) -> Option<EntryHash> {
        self.hashes.get(id).copied()
    }
}

/// Decodes and verifies `bytes` (one line without its newline) as line `line`,
/// against the hashes of the lines before it.
fn verify_bytes(
    path: &Path,
    line: u32,
    bytes: &[u8],
    hashes: &mut HashIndex,
    unknown: &mut Vec<(u32, String)>,
) -> Result<Entry, LogError> {
    let decoded =
        decode_one(bytes, None).map_err(|source| LogError::malformed(path, line, bytes, source))?;
    check_decoded(path, line, bytes, decoded, hashes, unknown)
}

/// A decoded line: the entry, the length of the bytes its hash covers, and whether
/// its hash matched, when the decoder knew the parent's hash (`None`: not checked).
pub(crate) struct Decoded {
    pub entry: Entry,
    pub prefix: usize,
    pub hash_ok: Option<bool>,
}

/// Decodes one line; checks its hash when `parent_hash` can tell the parent's.
pub(crate) fn decode_one(
    bytes: &[u8],
    parent_hash: Option<&dyn Fn(EntryId) -> Option<EntryHash>>,
) -> Result<Decoded, DecodeError> {
    let text = line_text(bytes)?;
    let (entry, prefix) = Entry::decode_line(text)?;
    let hash_ok = match (parent_hash, entry.parent) {
        (Some(lookup), Some(p)) => {
            lookup(p).map(|h| EntryHash::compute(Some(&h), prefix) == entry.hash)
        }
        (Some(_), None) | (None, _) => None,
    };
    let prefix = prefix.len();
    Ok(Decoded {
        entry,
        prefix,
        hash_ok,
    })
}

/// Decodes the lines `bounds` of `bytes` on two threads, each checking the hashes of
/// lines whose parent it decoded itself.
fn decode_parallel(bytes: &[u8], bounds: &[(usize, usize)]) -> Vec<Result<Decoded, DecodeError>> {
    let run = |part: &[(usize, usize)]| {
        let mut seen: HashMap<EntryId, EntryHash> = HashMap::with_capacity(part.len());
        let mut out = Vec::with_capacity(part.len());
        for &(a, b) in part {
            let lookup = |id: EntryId| seen.get(&id).copied();
            let d = decode_one(&bytes[a..b], Some(&lookup));
            if let Ok(d) = &d {
                seen.insert(d.entry.id, d.entry.hash);
            }
            out.push(d);
        }
        out
    };
    if bounds.len() < 64 {
        return run(bounds);
    }
    let (first, second) = bounds.split_at(bounds.len() / 2);
    std::thread::scope(|s| {
        let later = s.spawn(|| run(second));
        let mut out = run(first);
        match later.join() {
            Ok(rest) => out.extend(rest),
            // Decoding does not panic; if it did, decode that half here.
            Err(_) => out.extend(run(second)),
        }
        out
    })
}

/// The checks of a decoded line that need the lines before it, in the order the
/// reader makes them (header, duplicate id, orphan, missing parent, hash).
fn check_decoded(
    path: &Path,
    line: u32,
    bytes: &[u8],
    decoded: Decoded,
    hashes: &mut HashIndex,
    unknown: &mut Vec<(u32, String)>,
) -> Result<Entry, LogError> {
    let Decoded {
        entry,
        prefix,
        hash_ok,
    } = decoded;
    let facts = Facts {
        id: entry.id,
        parent: entry.parent,
        hash: entry.hash,
        session: matches!(entry.body, Body::Record(Record::Session(_))),
        unknown: match &entry.body {
            Body::Unknown { type_name, .. } => Some(type_name.as_str().into()),
            Body::Record(_) | Body::Decision(_) => None,
        },
        prefix,
        hash_ok,
    };
    check_facts(path, line, bytes, facts, hashes, unknown)?;
    Ok(entry)
}

/// What the checks in file order need of a decoded line.
pub(crate) struct Facts {
    pub id: EntryId,
    pub parent: Option<EntryId>,
    pub hash: EntryHash,
    /// Whether it is a `session` record.
    pub session: bool,
    /// Its type, if this version does not know it.
    pub unknown: Option<Box<str>>,
    /// The length of the bytes its hash covers.
    pub prefix: usize,
    /// Whether its hash matched, when the decoder knew the parent's hash.
    pub hash_ok: Option<bool>,
}

/// [`check_decoded`] on the facts of the line `bytes` (without its newline).
pub(crate) fn check_facts(
    path: &Path,
    line: u32,
    bytes: &[u8],
    facts: Facts,
    hashes: &mut HashIndex,
    unknown: &mut Vec<(u32, String)>,
) -> Result<(), LogError> {
    let parent_hash = if line == 1 {
        if facts.parent.is_some() || !facts.session {
            return Err(LogError::NotASession {
                path: path.to_path_buf(),
            });
        }
        None
    } else {
        if hashes.get(facts.id).is_some() {
            return Err(LogError::DuplicateId {
                path: path.to_path_buf(),
                line,
                id: facts.id,
            });
        }
        let Some(parent) = facts.parent else {
            return Err(LogError::Orphan {
                path: path.to_path_buf(),
                line,
                id: facts.id,
            });
        };
        match hashes.get(parent) {
            Some(h) => Some(*h),
            None => {
                return Err(LogError::MissingParent {
                    path: path.to_path_buf(),
                    line,
                    id: facts.id,
                    parent,
                });
            }
        }
    };
    let ok = match facts.hash_ok {
        Some(ok) if line > 1 => ok,
        Some(_) | None => {
            EntryHash::compute(parent_hash.as_ref(), &bytes[..facts.prefix]) == facts.hash
        }
    };
    if !ok {
        return Err(LogError::HashMismatch {
            path: path.to_path_buf(),
            line,
            id: facts.id,
        });
    }
    hashes.insert(facts.id, facts.hash);
    if let Some(type_name) = facts.unknown {
        unknown.push((line, type_name.into_string()));
    }
    Ok(())
}

impl<R: BufRead> Iterator for LogReader<R> {
    type Item = Result<(u32, Entry), LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        // The usual case: the whole line is in the reader's buffer, decoded in place.
        let available = match self.reader.fill_buf() {
            Ok(available) => available,
            Err(e) => {
                self.done = true;
                return Some(Err(LogError::io(&self.path, e)));
            }
        };
        if let Some(nl) = memchr::memchr(b'\n', available) {
            self.line = self.line.saturating_add(1);
            self.offset += nl as u64 + 1;
            let result = verify_bytes(
                &self.path,
                self.line,
                &available[..nl],
                &mut self.hashes,
                &mut self.unknown,
            );
            self.reader.consume(nl + 1);
            let result = result.map(|entry| (self.line, entry));
            if result.is_err() {
                self.done = true;
            }
            return Some(result);
        }
        self.buf.clear();
        let n = match self.reader.read_until(b'\n', &mut self.buf) {
            Ok(n) => n,
            Err(e) => {
                self.done = true;
                return Some(Err(LogError::io(&self.path, e)));
            }
        };
        if n == 0 || self.buf.last() != Some(&b'\n') {
            self.done = true;
            if n > 0 {
                self.torn = Some(std::mem::take(&mut self.buf));
            }
            if self.line == 0 {
                return Some(Err(LogError::NotASession {
                    path: self.path.clone(),
                }));
            }
            return None;
        }
        self.buf.pop();
        self.line = self.line.saturating_add(1);
        self.offset += n as u64;
        let result = verify_bytes(
            &self.path,
            self.line,
            &self.buf,
            &mut self.hashes,
            &mut self.unknown,
        )
        .map(|entry| (self.line, entry));
        if result.is_err() {
            self.done = true;
        }
        Some(result)
    }
}

/// The text of a complete line, or why it cannot be an entry.
fn line_text(bytes: &[u8]) -> Result<&str, DecodeError> {
    fn custom(msg: String) -> DecodeError {
        DecodeError::Json(<serde_json::Error as serde::de::Error>::custom(msg))
    }
    if bytes.is_empty() {
        return Err(custom("the line is empty".into()));
    }
    if bytes.iter().all(|&b| b == 0) {
        return Err(custom(format!(
            "the line is {} NUL bytes (a write lost in a power cut?)",
            bytes.len()
        )));
    }
    std::str::from_utf8(bytes).map_err(|e| custom(format!("the line is not valid UTF-8 ({e})")))
}

/// The hash of every entry by id, compact for the usual dense ids (a vector indexed
/// by id) and still correct for sparse ones (a fork keeps the ids of the path it
/// copies, leaving gaps), which go to a map when they are far beyond the dense part.
#[derive(Debug, Clone, Default)]
pub(crate) struct HashIndex {
    dense: Vec<Option<EntryHash>>,
    /// How many slots of `dense` hold a hash.
    filled: usize,
    sparse: HashMap<EntryId, EntryHash>,
}

/// Ids up to this far beyond the dense part extend it; ids further out go to the map.
const MAX_DENSE_GAP: u64 = 4096;

impl HashIndex {
    pub fn get(&self, id: EntryId) -> Option<&EntryHash> {
        let dense = usize::try_from(id.0)
            .ok()
            .and_then(|i| self.dense.get(i))
            .and_then(Option::as_ref);
        dense.or_else(|| self.sparse.get(&id))
    }

    /// Records the hash of `id`; returns false (and changes nothing) if `id` is known.
    pub fn insert(&mut self, id: EntryId, hash: EntryHash) -> bool {
        if self.get(id).is_some() {
            return false;
        }
        let len = self.dense.len() as u64;
        // The dense part stays at most about twice the ids it holds, however the
        // ids of a (hostile) file jump: memory is bounded by the entries read.
        let roomy = (id.0 as usize) < 2 * self.filled + MAX_DENSE_GAP as usize;
        match usize::try_from(id.0) {
            Ok(i) if id.0 < len => {
                self.dense[i] = Some(hash);
                self.filled += 1;
            }
            Ok(i) if id.0 - len <= MAX_DENSE_GAP && roomy => {
                self.dense.resize(i, None);
                self.dense.push(Some(hash));
                self.filled += 1;
            }
            Ok(_) | Err(_) => {
                self.sparse.insert(id, hash);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::writer::testutil::{header, sample_bodies, ts, write_sample};

    fn lines_of(path: &Path) -> Vec<Vec<u8>> {
        let bytes = std::fs::read(path).unwrap();
        bytes
            .split_inclusive(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect()
    }

    fn write_lines(path: &Path, lines: &[Vec<u8>]) {
        std::fs::write(path, lines.concat()).unwrap();
    }

    fn read_err(path: &Path) -> String {
        read_session(path).unwrap_err().to_string()
    }

    #[test]
    fn a_written_log_reads_back_with_line_numbers_and_no_findings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let entries = write_sample(&path);
        let log = read_session(&path).unwrap();
        assert_eq!(log.entries, entries);
        assert_eq!(log.lines, vec![1, 2, 3, 4, 5]);
        assert_eq!(log.torn_tail, None);
        assert_eq!(log.unknown, vec![]);
        assert_eq!(log.header(), &header());
        assert_eq!(log.get(EntryId(3)), Some(&entries[3]));
        assert_eq!(log.get(EntryId(9)), None);
        assert_eq!(log.line_of(EntryId(3)), Some(4));
        assert_eq!(log.leaf(), EntryId(4));
    }

    #[test]
    fn an_edited_line_is_a_hash_mismatch_naming_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        write_sample(&path);
        let mut lines = lines_of(&path);
        let edited = String::from_utf8(lines[2].clone())
            .unwrap()
            .replace("hello", "HELLO");
        assert_ne!(edited.as_bytes(), lines[2].as_slice());
        lines[2] = edited.into_bytes();
        write_lines(&path, &lines);
        assert_eq!(
            read_err(&path),
            format!(
                "{}:3: entry 2 fails its hash check (the line or its parent was altered)",
                path.display()
            )
        );
    }

    #[test]
    fn a_removed_middle_line_is_a_missing_parent_naming_the_next_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        write_sample(&path);
        let mut lines = lines_of(&path);
        lines.remove(2);
        write_lines(&path, &lines);
        assert_eq!(
            read_err(&path),
            format!(
                "{}:3: entry 3 names parent 2, which does not appear earlier in the file",
                path.display()
            )
        );
    }

    #[test]
    fn a_malformed_complete_line_in_the_middle_names_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        write_sample(&path);
        let mut lines = lines_of(&path);
        lines[3] = b"{\"v\":1,\"id\":\n".to_vec();
        write_lines(&path, &lines);
        assert_eq!(
            read_err(&path),
            format!(
                "{}:4: malformed entry: the line has no trailing \"hash\" field",
                path.display()
            )
        );
    }

    #[test]
    fn an_empty_line_is_malformed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        write_sample(&path);
        let mut lines = lines_of(&path);
        lines.insert(2, b"\n".to_vec());
        write_lines(&path, &lines);
        assert_eq!(
            read_err(&path),
            format!(
                "{}:3: malformed entry: not valid JSON for an entry: the line is empty",
                path.display()
            )
        );
    }

    #[test]
    fn a_complete_line_of_nul_bytes_is_malformed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        write_sample(&path);
        let mut lines = lines_of(&path);
        lines.insert(4, b"\0\0\0\0\n".to_vec());
        write_lines(&path, &lines);
        assert_eq!(
            read_err(&path),
            format!(
                "{}:5: malformed entry: not valid JSON for an entry: the line is 4 NUL bytes (a write lost in a power cut?)",
                path.display()
            )
        );
    }

    #[test]
    fn a_line_of_invalid_utf8_is_malformed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        write_sample(&path);
        let mut lines = lines_of(&path);
        lines[1][20] = 0xff;
        write_lines(&path, &lines);
        assert_eq!(
            read_err(&path),
            format!(
                "{}:2: malformed entry: not valid JSON for an entry: the line is not valid UTF-8 (invalid utf-8 sequence of 1 bytes from index 20)",
                path.display()
            )
        );
    }

    #[test]
    fn a_duplicate_id_names_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        write_sample(&path);
        let mut lines = lines_of(&path);
        let again = lines[2].clone();
        lines.push(again);
        write_lines(&path, &lines);
        assert_eq!(
            read_err(&path),
            format!("{}:6: entry id 2 appears a second time", path.display())
        );
    }

    #[test]
    fn a_file_not_starting_with_a_session_record_is_not_a_session() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        write_sample(&path);
        let mut lines = lines_of(&path);
        lines.remove(0);
        write_lines(&path, &lines);
        assert_eq!(
            read_err(&path),
            format!(
                "{}: not a session log (the first line is not a parentless `session` record)",
                path.display()
            )
        );
    }

    #[test]
    fn an_empty_file_is_not_a_session() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, b"").unwrap();
        assert!(matches!(
            read_session(&path),
            Err(LogError::NotASession { path: p }) if p == path
        ));
    }

    #[test]
    fn a_parentless_line_after_the_header_is_an_orphan() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        write_sample(&path);
        let mut lines = lines_of(&path);
        let (orphan, _) = Entry::encode(EntryId(5), None, None, ts(5), &sample_bodies()[0]);
        lines.push(orphan);
        write_lines(&path, &lines);
        assert_eq!(
            read_err(&path),
            format!(
                "{}:6: entry 5 has no parent (only the session header may lack one)",
                path.display()
            )
        );
    }

    #[test]
    fn reading_reports_a_torn_tail_without_repairing_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let entries = write_sample(&path);
        let full = std::fs::read(&path).unwrap();
        let mut torn = full.clone();
        torn.extend_from_slice(b"{\"v\":1,\"id\":5");
        std::fs::write(&path, &torn).unwrap();
        let log = read_session(&path).unwrap();
        assert_eq!(log.entries, entries);
        assert_eq!(
            log.torn_tail,
            Some(TornTail {
                offset: full.len() as u64,
                len: 13,
                sidecar: None
            })
        );
        assert_eq!(std::fs::read(&path).unwrap(), torn);
    }

    #[test]
    fn an_unknown_entry_type_is_kept_and_listed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut entries = write_sample(&path);
        let (mut w, _) = crate::log::SessionWriter::open(&path).unwrap();
        let body = Body::Unknown {
            type_name: "from_the_future".into(),
            data: serde_json::value::RawValue::from_string(r#"{"x":[1,2]}"#.into()).unwrap(),
        };
        let (id, hash) = w.append(EntryId(4), ts(5), &body).unwrap();
        drop(w);
        entries.push(Entry {
            v: 1,
            id,
            parent: Some(EntryId(4)),
            ts: ts(5),
            body,
            hash,
        });
        let log = read_session(&path).unwrap();
        assert_eq!(log.entries, entries);
        assert_eq!(log.unknown, vec![(6, "from_the_future".to_string())]);
    }

    #[test]
    fn the_streaming_reader_yields_numbered_entries_and_keeps_the_torn_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let entries = write_sample(&path);
        let mut bytes = std::fs::read(&path).unwrap();
        let complete = bytes.len() as u64;
        bytes.extend_from_slice(b"{\"v\"");
        let mut reader = LogReader::new(&path, bytes.as_slice());
        let got: Vec<(u32, Entry)> = (&mut reader).map(Result::unwrap).collect();
        let want: Vec<(u32, Entry)> = (1..).zip(entries.iter().cloned()).collect();
        assert_eq!(got, want);
        assert_eq!(reader.torn_tail(), Some(&b"{\"v\""[..]));
        assert_eq!(reader.offset(), complete);
        assert_eq!(reader.lines_read(), 5);
        assert_eq!(reader.hash_of(EntryId(4)), Some(entries[4].hash));
    }

    /// The batched, two-thread reading (`read_session`) finds what reading line by
    /// line finds: the same entries, or the same first error, wherever it is.
    #[test]
    fn batched_reading_matches_line_by_line_reading_on_damaged_logs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        crate::journal::synth::generate(
            &path,
            crate::journal::synth::SynthOptions {
                entries: 2_000,
                seed: 11,
            },
        )
        .unwrap();
        let good = std::fs::read(&path).unwrap();
        let one_by_one = |bytes: &[u8]| -> Result<Vec<(u32, Entry)>, String> {
            LogReader::new(&path, bytes)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())
        };
        let batched = |bytes: &[u8]| -> Result<Vec<(u32, Entry)>, String> {
            read_log(&path, bytes, 0)
                .map(|o| o.log.lines.into_iter().zip(o.log.entries).collect())
                .map_err(|e| e.to_string())
        };
        assert_eq!(batched(&good), one_by_one(&good));
        let lines = lines_of(&path);
        let mut errors = 0;
        for (case, k, bytes) in crate::log::writer::testutil::damaged_copies(&lines, 5) {
            let (a, b) = (batched(&bytes), one_by_one(&bytes));
            errors += usize::from(a.is_err());
            assert_eq!(a, b, "case {case} at line {k}");
        }
        assert!(errors > 30, "{errors}");
    }

    #[test]
    fn the_hash_index_holds_dense_and_sparse_ids() {
        let mut index = HashIndex::default();
        let h = |n: u8| EntryHash([n; 32]);
        assert!(index.insert(EntryId(0), h(0)));
        assert!(index.insert(EntryId(2), h(2)));
        assert!(index.insert(EntryId(1_000_000), h(9)));
        assert!(index.insert(EntryId(1), h(1)));
        assert!(!index.insert(EntryId(2), h(7)));
        assert!(!index.insert(EntryId(1_000_000), h(7)));
        assert_eq!(index.dense.len(), 3);
        assert_eq!(
            [0, 1, 2, 3, 1_000_000].map(|i| index.get(EntryId(i)).copied()),
            [Some(h(0)), Some(h(1)), Some(h(2)), None, Some(h(9))]
        );
    }
}
