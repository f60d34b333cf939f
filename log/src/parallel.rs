//! Reading a whole session log on persistent worker threads: each worker takes the
//! next chunk of complete lines from the source, decodes them and checks the hash of
//! every line whose parent is in the same chunk; the calling thread puts the chunks
//! back in file order and makes every check that needs the lines before (header,
//! duplicate id, orphan, missing parent, the hashes left), exactly as
//! [`super::LogReader`] does, so the entries, the first error and the torn tail are
//! the same. The workers also turn each entry into what the caller keeps of it, so
//! that work runs in parallel too. Memory is bounded: a fixed number of chunks is in
//! flight, and their buffers are reused.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};

use super::entry::{DecodeError, Entry, EntryHash, Envelope, Kind};
use super::error::LogError;
use super::verify::{Chain, Facts, HashIndex, decode_one, line_text};
use xcsh_machine::EntryId;

/// The bytes a worker reads at once (whole lines: a longer line grows the chunk).
const CHUNK: usize = 1 << 20;
/// Chunks in flight at most (read, decoded or waiting for their turn): enough for
/// the workers to read ahead while the caller is busy with something else. Each
/// chunk keeps the room its decoded lines took (a chunk of small entries decodes to
/// about twice its bytes), so more costs memory, not speed: 8 against 32 read a
/// 300k-entry session as fast and `check` of it in 152 against 232 MB (labels),
/// `replay` in 48 against 102 MB (2026-12-04).
const IN_FLIGHT: usize = 8;

/// What [`read_parallel`] found besides the entries.
#[derive(Debug)]
pub struct ParallelRead {
    /// Complete lines read (and verified).
    pub lines: u32,
    /// Bytes of complete lines (where a torn tail starts).
    pub offset: u64,
    /// The bytes after the last newline, if any.
    pub torn: Option<Vec<u8>>,
    /// Lines of entry types this version does not know: (line, type).
    pub unknown: Vec<(u32, String)>,
    /// Whether `each` stopped the reading (then the figures above are of the lines
    /// read until then).
    pub stopped: bool,
    pub(crate) hashes: HashIndex,
}

/// How much a parallel read holds at once: chunks of `chunk` bytes (at least;
/// whole lines, a longer line grows its chunk), `in_flight` of them at most.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    chunk: usize,
    in_flight: usize,
}

impl Default for Window {
    fn default() -> Window {
        Window {
            chunk: CHUNK,
            in_flight: IN_FLIGHT,
        }
    }
}

impl Window {
    /// At most `in_flight` chunks of 1 MiB in flight (at least one per worker and
    /// one more): less read ahead, for a caller whose `keep` makes something bigger
    /// than the lines and who wants its memory small.
    pub fn in_flight(in_flight: usize) -> Window {
        Window {
            chunk: CHUNK,
            in_flight,
        }
    }
}

/// Reads and verifies every complete line of `source` (`path` names it in errors),
/// on worker threads; `keep` turns each decoded entry into what the caller keeps
/// (on the workers), and `each` receives it with its 1-based line number, in file
/// order, on this thread, and returns whether to go on (`false` stops the reading).
/// After the first error nothing more is delivered and the error is returned. A
/// source without a complete line is [`LogError::NotASession`].
/// `window` bounds what is read ahead ([`Window::default`] for most callers).
pub fn read_parallel<T: Send>(
    path: &Path,
    source: impl Read + Send,
    window: Window,
    keep: impl Fn(Entry) -> T + Sync,
    each: impl FnMut(u32, T) -> bool,
) -> Result<ParallelRead, LogError> {
    read_with(path, source, window, &Whole(keep), each)
}

/// What [`read_lines_parallel`]'s `keep` gets of a line: its envelope, the body not
/// decoded ([`Envelope::entry`] decodes it), or, for a line not in the writer's
/// form, the entry decoded whole.
pub enum Line<'a> {
    Envelope(&'a Envelope<'a>),
    Entry(Box<Entry>),
}

/// [`read_parallel`] for a caller that needs the bodies of some lines only (a scan
/// by type): every line is verified the same (the line rules, and the envelope's
/// id, parent and hash in the chain), but a line in the writer's form reaches
/// `keep` as its [`Envelope`], its body decoded only if `keep` asks.
pub fn read_lines_parallel<T: Send>(
    path: &Path,
    source: impl Read + Send,
    window: Window,
    keep: impl Fn(Line<'_>) -> Result<T, DecodeError> + Sync,
    each: impl FnMut(u32, T) -> bool,
) -> Result<ParallelRead, LogError> {
    read_with(
        path,
        source,
        window,
        &Lazy(keep, |_: &Envelope<'_>| false),
        each,
    )
}

/// [`read_lines_parallel`] for another pass over lines verified already (a view
/// that reads a file twice, the first time for its shape): a line in the writer's
/// form that `verified` vouches for (by its envelope: the id and hash the first pass
/// verified, and a body the caller will not read) is not hashed again. Every other
/// line, each one the caller decodes among them, is verified as in the first pass,
/// and the chain is checked line by line all the same.
pub fn reread_lines_parallel<T: Send>(
    path: &Path,
    source: impl Read + Send,
    window: Window,
    verified: impl Fn(&Envelope<'_>) -> bool + Sync,
    keep: impl Fn(Line<'_>) -> Result<T, DecodeError> + Sync,
    each: impl FnMut(u32, T) -> bool,
) -> Result<ParallelRead, LogError> {
    read_with(path, source, window, &Lazy(keep, verified), each)
}

/// How a worker turns a line into the facts the chain checks and what the caller
/// keeps; `lookup` tells the hashes of the lines before it in the same chunk.
trait Decode<T>: Sync {
    fn decode(
        &self,
        bytes: &[u8],
        lookup: &dyn Fn(EntryId) -> Option<EntryHash>,
    ) -> Result<(Facts, T), DecodeError>;
}

/// Every line decoded whole.
struct Whole<K>(K);

impl<T, K: Fn(Entry) -> T + Sync> Decode<T> for Whole<K> {
    fn decode(
        &self,
        bytes: &[u8],
        lookup: &dyn Fn(EntryId) -> Option<EntryHash>,
    ) -> Result<(Facts, T), DecodeError> {
        let d = decode_one(bytes, Some(lookup))?;
        Ok((Facts::of(&d), (self.0)(d.entry)))
    }
}

/// A line in the writer's form read by its envelope, any other decoded whole; the
/// hash of a line the second closure vouches for is not computed again.
struct Lazy<K, V>(K, V);

impl<T, K, V> Decode<T> for Lazy<K, V>
where
    K: Fn(Line<'_>) -> Result<T, DecodeError> + Sync,
    V: Fn(&Envelope<'_>) -> bool + Sync,
{
    fn decode(
        &self,
        bytes: &[u8],
        lookup: &dyn Fn(EntryId) -> Option<EntryHash>,
    ) -> Result<(Facts, T), DecodeError> {
        let Some(env) = Envelope::read(line_text(bytes)?) else {
            let d = decode_one(bytes, Some(lookup))?;
            return Ok((Facts::of(&d), (self.0)(Line::Entry(Box::new(d.entry)))?));
        };
        let kind = Kind::named(env.type_name);
        let facts = Facts {
            id: env.id,
            parent: env.parent,
            hash: env.hash,
            session: kind == Kind::Session,
            unknown: (kind == Kind::Unknown).then(|| env.type_name.into()),
            prefix: env.prefix,
            hash_ok: if (self.1)(&env) {
                Some(true)
            } else {
                env.parent
                    .and_then(lookup)
                    .map(|h| EntryHash::compute(Some(&h), &bytes[..env.prefix]) == env.hash)
            },
        };
        Ok((facts, (self.0)(Line::Envelope(&env))?))
    }
}

fn read_with<R, T, D, F>(
    path: &Path,
    source: R,
    window: Window,
    decoder: &D,
    mut each: F,
) -> Result<ParallelRead, LogError>
where
    R: Read + Send,
    T: Send,
    D: Decode<T>,
    F: FnMut(u32, T) -> bool,
{
    // One worker more than cores: the calling thread waits on the workers part of
    // the time and the workers on the lock and the reads, so one extra keeps every
    // core busy (replay of a 1M-entry log on 2 cores: 2.29 s with 2 workers, 2.12 s
    // with 3, medians of 3 back-to-back runs; `check` the same either way).
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8)) + 1;
    let source = Mutex::new(Source {
        reader: source,
        chunk: window.chunk.max(1),
        carry: Vec::new(),
        seq: 0,
        done: false,
        torn: None,
    });
    let stop = AtomicBool::new(false);
    let (pool_tx, pool_rx) = mpsc::channel::<Chunk<T>>();
    for _ in 0..window.in_flight.max(workers + 1) {
        // Cannot fail: the receiver is alive.
        let _ = pool_tx.send(Chunk::default());
    }
    let pool_rx = Mutex::new(pool_rx);
    let (done_tx, done_rx) = mpsc::channel::<Decoded<T>>();
    let mut v = Verifier {
        chain: Chain::new(path),
        offset: 0,
    };
    let mut stopped = false;
    let failed = std::thread::scope(|s| {
        for _ in 0..workers {
            let done_tx = done_tx.clone();
            let (source, pool_rx, stop) = (&source, &pool_rx, &stop);
            s.spawn(move || work(source, pool_rx, stop, decoder, &done_tx));
        }
        drop(done_tx);
        let mut pool_tx = Some(pool_tx);
        let mut waiting: BTreeMap<u64, Decoded<T>> = BTreeMap::new();
        let mut next = 0u64;
        let mut failed = None;
        for decoded in done_rx.iter() {
            if failed.is_some() || stopped {
                continue;
            }
            waiting.insert(decoded.seq, decoded);
            while let Some(mut d) = waiting.remove(&next) {
                next += 1;
                let result = v.batch(&mut d, &mut each);
                if !matches!(result, Ok(true)) {
                    match result {
                        Err(e) => failed = Some(e),
                        Ok(_) => stopped = true,
                    }
                    stop.store(true, Ordering::Relaxed);
                    // No more chunks: the workers see the pool closed and end.
                    pool_tx = None;
                    waiting.clear();
                    break;
                }
                if let Some(tx) = &pool_tx {
                    // The workers outlive this loop, so the pool is still open.
                    let _ = tx.send(d.chunk);
                }
            }
        }
        failed
    });
    if let Some(e) = failed {
        return Err(e);
    }
    let source = source.into_inner().map_err(|_| poisoned(path))?;
    let lines = v.chain.lines();
    if lines == 0 && !stopped {
        return Err(LogError::NotASession {
            path: path.to_path_buf(),
        });
    }
    let (hashes, unknown) = v.chain.into_parts();
    Ok(ParallelRead {
        lines,
        offset: v.offset,
        torn: source.torn,
        unknown,
        stopped,
        hashes,
    })
}

fn poisoned(path: &Path) -> LogError {
    LogError::io(path, std::io::Error::other("a reading thread panicked"))
}

/// The source shared by the workers: each takes the next chunk of complete lines.
struct Source<R> {
    reader: R,
    /// The bytes to read at once.
    chunk: usize,
    /// The start of a line that the last chunk cut.
    carry: Vec<u8>,
    /// The number of the next chunk.
    seq: u64,
    done: bool,
    torn: Option<Vec<u8>>,
}

/// A buffer of complete lines and what a worker decoded from it (reused). The
/// lines are decoded up to the first that does not decode (nothing after it is
/// ever delivered).
struct Chunk<T> {
    bytes: Vec<u8>,
    /// How many bytes of `bytes` hold lines.
    filled: usize,
    /// The decoded lines.
    lines: Vec<(Facts, T)>,
    /// Where each line of `lines` ends (its newline), then where the line of
    /// `failed` ends.
    ends: Vec<usize>,
    /// Why the line after `lines` does not decode.
    failed: Option<DecodeError>,
}

impl<T> Default for Chunk<T> {
    fn default() -> Self {
        Chunk {
            bytes: Vec::new(),
            filled: 0,
            lines: Vec::new(),
            ends: Vec::new(),
            failed: None,
        }
    }
}

/// A chunk back from a worker, numbered in file order.
struct Decoded<T> {
    seq: u64,
    chunk: Chunk<T>,
    error: Option<std::io::Error>,
}

impl<R: Read> Source<R> {
    /// Fills `chunk` with the next complete lines; `None` at the end (when a torn
    /// tail is kept), `Some(Err)` for a failed read.
    fn next(&mut self, chunk: &mut Chunk<impl Sized>) -> Option<(u64, std::io::Result<()>)> {
        if self.done {
            return None;
        }
        if chunk.bytes.len() < self.chunk {
            chunk.bytes.resize(self.chunk, 0);
        }
        let carried = self.carry.len();
        if chunk.bytes.len() < carried * 2 {
            chunk.bytes.resize(carried * 2, 0);
        }
        chunk.bytes[..carried].copy_from_slice(&self.carry);
        self.carry.clear();
        let mut filled = carried;
        let mut searched = 0;
        loop {
            let eof = loop {
                if filled == chunk.bytes.len() {
                    break false;
                }
                match self.reader.read(&mut chunk.bytes[filled..]) {
                    Ok(0) => break true,
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        self.done = true;
                        chunk.filled = 0;
                        let seq = self.seq;
                        self.seq += 1;
                        return Some((seq, Err(e)));
                    }
                }
            };
            match memchr::memrchr(b'\n', &chunk.bytes[searched..filled]) {
                Some(nl) => {
                    let end = searched + nl + 1;
                    self.carry.extend_from_slice(&chunk.bytes[end..filled]);
                    chunk.filled = end;
                    let seq = self.seq;
                    self.seq += 1;
                    if eof {
                        self.finish();
                    }
                    return Some((seq, Ok(())));
                }
                None if eof => {
                    if filled > 0 {
                        self.torn = Some(chunk.bytes[..filled].to_vec());
                    }
                    self.done = true;
                    return None;
                }
                None => {
                    // A line longer than the chunk: grow it.
                    searched = filled;
                    let len = chunk.bytes.len();
                    chunk.bytes.resize(len * 2, 0);
                }
            }
        }
    }

    /// The end of the source: what is carried is a torn tail.
    fn finish(&mut self) {
        self.done = true;
        if !self.carry.is_empty() {
            self.torn = Some(std::mem::take(&mut self.carry));
        }
    }
}

/// A worker: takes chunks and decodes them until the source ends or reading stops.
fn work<R: Read, T>(
    source: &Mutex<Source<R>>,
    pool: &Mutex<mpsc::Receiver<Chunk<T>>>,
    stop: &AtomicBool,
    decoder: &impl Decode<T>,
    done: &mpsc::Sender<Decoded<T>>,
) {
    let mut seen: HashMap<EntryId, EntryHash, BuildHasherDefault<IdHasher>> = HashMap::default();
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let chunk = match pool.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(mut chunk) = chunk else { return };
        let next = match source.lock() {
            Ok(mut s) => s.next(&mut chunk),
            Err(_) => return,
        };
        let Some((seq, read)) = next else { return };
        let error = read.err();
        if error.is_none() {
            decode_chunk(&mut chunk, &mut seen, decoder);
        }
        if done.send(Decoded { seq, chunk, error }).is_err() {
            return;
        }
    }
}

/// Decodes every line of `chunk`, checking the hashes of lines whose parent it holds.
fn decode_chunk<T>(
    chunk: &mut Chunk<T>,
    seen: &mut HashMap<EntryId, EntryHash, BuildHasherDefault<IdHasher>>,
    decoder: &impl Decode<T>,
) {
    seen.clear();
    chunk.lines.clear();
    chunk.ends.clear();
    chunk.failed = None;
    let bytes = &chunk.bytes[..chunk.filled];
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', bytes) {
        let lookup = |id: EntryId| seen.get(&id).copied();
        chunk.ends.push(nl);
        match decoder.decode(&bytes[start..nl], &lookup) {
            Ok((facts, item)) => {
                seen.insert(facts.id, facts.hash);
                chunk.lines.push((facts, item));
            }
            Err(e) => {
                chunk.failed = Some(e);
                return;
            }
        }
        start = nl + 1;
    }
}

/// The checks made in file order.
struct Verifier {
    chain: Chain,
    offset: u64,
}

impl Verifier {
    /// Verifies the lines of a chunk in order and hands each entry to `each`;
    /// `Ok(false)` when `each` stopped.
    fn batch<T>(
        &mut self,
        d: &mut Decoded<T>,
        each: &mut impl FnMut(u32, T) -> bool,
    ) -> Result<bool, LogError> {
        if let Some(e) = d.error.take() {
            return Err(LogError::io(self.chain.path(), e));
        }
        let bytes = &d.chunk.bytes;
        let mut ends = d.chunk.ends.iter();
        let mut start = 0;
        for (facts, item) in d.chunk.lines.drain(..) {
            // One end for each line decoded.
            let end = ends.next().copied().unwrap_or(start);
            self.offset += (end - start + 1) as u64;
            let line = self.chain.check(&bytes[start..end], facts)?;
            if !each(line, item) {
                return Ok(false);
            }
            start = end + 1;
        }
        match d.chunk.failed.take() {
            Some(source) => {
                // The failed line is the one after the last decoded.
                let end = ends.next().copied().unwrap_or(start).max(start);
                Err(self.chain.malformed(&bytes[start..end], source))
            }
            None => Ok(true),
        }
    }
}

/// A hasher for entry ids (small integers): one multiplication.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LogReader;

    /// What reading line by line finds: the entries, or the first error.
    fn one_by_one(path: &Path, bytes: &[u8]) -> Result<Vec<(u32, Entry)>, String> {
        LogReader::new(path, bytes)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())
    }

    fn parallel(path: &Path, bytes: &[u8], chunk: usize) -> Result<Vec<(u32, Entry)>, String> {
        let mut got = Vec::new();
        read_parallel(
            path,
            bytes,
            Window {
                chunk,
                in_flight: IN_FLIGHT,
            },
            |e| e,
            |line, e| {
                got.push((line, e));
                true
            },
        )
        .map(|_| got)
        .map_err(|e| e.to_string())
    }

    /// The parallel reading finds what reading line by line finds: the same entries,
    /// the same first error wherever it is, the same torn tail, whatever the chunks.
    #[test]
    fn parallel_reading_matches_line_by_line_reading_on_damaged_logs() {
        let dir = tempfile::tempdir().unwrap();
        let (path, good) = crate::writer::testutil::generated(dir.path());
        for chunk in [1, 700, 4096, 1 << 20] {
            assert_eq!(parallel(&path, &good, chunk), one_by_one(&path, &good));
        }
        let lines: Vec<Vec<u8>> = good
            .split_inclusive(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect();
        let mut errors = 0;
        for (case, k, bytes) in crate::writer::testutil::damaged_copies(&lines, 5) {
            let want = one_by_one(&path, &bytes);
            errors += usize::from(want.is_err());
            for chunk in [900, 8192] {
                assert_eq!(
                    parallel(&path, &bytes, chunk),
                    want,
                    "case {case} at line {k}"
                );
            }
        }
        assert!(errors > 30, "{errors}");
    }

    #[test]
    fn a_torn_tail_is_kept_and_an_empty_source_is_not_a_session() {
        let (_dir, path) = crate::writer::testutil::scratch();
        let entries = crate::writer::testutil::write_sample(&path);
        let mut bytes = std::fs::read(&path).unwrap();
        let complete = bytes.len() as u64;
        bytes.extend_from_slice(b"{\"v\"");
        for chunk in [1, 64, 1 << 20] {
            let mut got = Vec::new();
            let read = read_parallel(
                &path,
                bytes.as_slice(),
                Window {
                    chunk,
                    in_flight: IN_FLIGHT,
                },
                |e| e,
                |_, e| {
                    got.push(e);
                    true
                },
            )
            .unwrap();
            assert_eq!(got, entries);
            assert_eq!(read.torn.as_deref(), Some(&b"{\"v\""[..]));
            assert_eq!(
                (read.lines, read.offset, read.stopped),
                (5, complete, false)
            );
        }
        for source in [&b""[..], b"{\"v\":1"] {
            let read = read_parallel(&path, source, Window::default(), |e| e, |_, _| true);
            assert!(matches!(read, Err(LogError::NotASession { .. })));
        }
    }

    /// A second pass hashes again only the lines the first pass does not vouch for:
    /// an edit of a line's body (its hash left as it was) fails every reading that
    /// hashes that line, and no other.
    #[test]
    fn a_reread_hashes_again_only_the_lines_not_vouched_for() {
        let (_dir, path) = crate::writer::testutil::scratch();
        let entries = crate::writer::testutil::write_sample(&path);
        let mut bytes = std::fs::read(&path).unwrap();
        // Line 3's year, 2026 -> 3026: still a valid entry, no longer its hash.
        let line3 = bytes
            .split(|&b| b == b'\n')
            .take(2)
            .map(|l| l.len() + 1)
            .sum::<usize>();
        let year = line3
            + bytes[line3..]
                .windows(6)
                .position(|w| w == b"\"ts\":\"")
                .unwrap()
            + 6;
        assert_eq!(bytes[year], b'2');
        bytes[year] = b'3';
        let edited = entries[2].id;
        let reread = |vouched: &(dyn Fn(EntryId) -> bool + Sync)| {
            reread_lines_parallel(
                &path,
                bytes.as_slice(),
                Window::default(),
                |env| vouched(env.id),
                |_| Ok(()),
                |_, ()| true,
            )
            .map(|read| read.lines)
            .map_err(|e| e.to_string())
        };
        let mismatch = Err(format!(
            "{}:3: entry {} fails its hash check (the line or its parent was altered)",
            path.display(),
            edited.0
        ));
        let first = read_lines_parallel(
            &path,
            bytes.as_slice(),
            Window::default(),
            |_| Ok(()),
            |_, ()| true,
        );
        assert_eq!(first.map(|r| r.lines).map_err(|e| e.to_string()), mismatch);
        assert_eq!(reread(&|_| false), mismatch);
        assert_eq!(reread(&|id| id != edited), mismatch);
        assert_eq!(reread(&|id| id == edited), Ok(5));
    }

    #[test]
    fn the_caller_can_stop_the_reading() {
        let (_dir, path) = crate::writer::testutil::scratch();
        crate::writer::testutil::write_sample(&path);
        let bytes = std::fs::read(&path).unwrap();
        let mut seen = 0;
        let read = read_parallel(
            &path,
            bytes.as_slice(),
            Window {
                chunk: 1,
                in_flight: IN_FLIGHT,
            },
            |e| e,
            |_, _| {
                seen += 1;
                seen < 2
            },
        )
        .unwrap();
        assert_eq!((seen, read.lines, read.stopped), (2, 2, true));
    }
}
