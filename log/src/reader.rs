//! Reading a session log: every complete line is decoded and verified (hash chain,
//! parent order, unique ids, a `session` header first); a torn last line is reported,
//! never skipped silently, and unknown entry types are kept and listed.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use super::entry::{Body, DecodeError, Entry, EntryHash, Record, SessionHeader};
use super::error::LogError;
use super::verify::{Chain, Decoded, HashIndex, decode_one};
use xcsh_machine::EntryId;

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
            header: *header,
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

    /// The entries from the root to `leaf`, root first (following each entry's
    /// parent); `missing` is the error for an entry the log does not hold.
    pub fn branch(
        &self,
        leaf: EntryId,
        missing: impl Fn(EntryId) -> LogError,
    ) -> Result<Vec<&Entry>, LogError> {
        let mut path = Vec::new();
        let mut current = Some(leaf);
        while let Some(id) = current {
            let entry = self.get(id).ok_or_else(|| missing(id))?;
            if path.len() >= self.entries.len() {
                return Err(LogError::Cycle {
                    path: self.path.clone(),
                    id: leaf,
                });
            }
            path.push(entry);
            current = entry.parent;
        }
        path.reverse();
        Ok(path)
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
        super::parallel::Window::default(),
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
    reader: R,
    buf: Vec<u8>,
    offset: u64,
    chain: Chain,
    torn: Option<Vec<u8>>,
    done: bool,
}

impl<R: BufRead> LogReader<R> {
    /// `path` names the source in errors.
    pub fn new(path: impl Into<PathBuf>, reader: R) -> LogReader<R> {
        LogReader::with_chain(reader, Chain::new(path))
    }

    fn with_chain(reader: R, chain: Chain) -> LogReader<R> {
        LogReader {
            reader,
            buf: Vec::new(),
            offset: 0,
            chain,
            torn: None,
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
        LogReader::with_chain(reader, Chain::continuing(path, lines, known))
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

    /// Ends the reading on an error of the file.
    fn fail(&mut self, e: std::io::Error) -> LogError {
        self.done = true;
        LogError::io(self.chain.path(), e)
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
            Err(e) => return Some(Err(self.fail(e))),
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
            let line_start = self.offset;
            self.offset += (b - a + 1) as u64;
            match self.chain.verify(&complete[*a..*b], result) {
                Ok(entry) => {
                    if let Some(o) = offsets.as_deref_mut() {
                        o.push(line_start);
                    }
                    out.push((self.chain.lines(), entry));
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
        self.chain.lines()
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
        self.chain.unknown()
    }

    /// The hash of an entry read so far.
    pub fn hash_of(&self, id: EntryId) -> Option<EntryHash> {
        self.chain.hash_of(id)
    }
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

impl<R: BufRead> Iterator for LogReader<R> {
    type Item = Result<(u32, Entry), LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        // The usual case: the whole line is in the reader's buffer, decoded in place.
        let available = match self.reader.fill_buf() {
            Ok(available) => available,
            Err(e) => return Some(Err(self.fail(e))),
        };
        if let Some(nl) = memchr::memchr(b'\n', available) {
            self.offset += nl as u64 + 1;
            let result = self.chain.verify_line(&available[..nl]);
            self.reader.consume(nl + 1);
            let result = result.map(|entry| (self.chain.lines(), entry));
            if result.is_err() {
                self.done = true;
            }
            return Some(result);
        }
        self.buf.clear();
        let n = match self.reader.read_until(b'\n', &mut self.buf) {
            Ok(n) => n,
            Err(e) => return Some(Err(self.fail(e))),
        };
        if n == 0 || self.buf.last() != Some(&b'\n') {
            self.done = true;
            if n > 0 {
                self.torn = Some(std::mem::take(&mut self.buf));
            }
            if self.chain.lines() == 0 {
                return Some(Err(LogError::NotASession {
                    path: self.chain.path().to_path_buf(),
                }));
            }
            return None;
        }
        self.buf.pop();
        self.offset += n as u64;
        let result = self
            .chain
            .verify_line(&self.buf)
            .map(|entry| (self.chain.lines(), entry));
        if result.is_err() {
            self.done = true;
        }
        Some(result)
    }
}

#[cfg(test)]
mod tests;
