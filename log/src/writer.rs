//! The only writer of a session file: holds its advisory lock, repairs a torn tail on
//! open, appends each entry as one whole line with a single `write_all`, and syncs
//! when asked (group commit).

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use super::entry::{Body, Entry, EntryHash, Record, SessionHeader, format_ts};
use super::error::LogError;
use super::reader::TornTail;
use super::reader::{READ_BUFFER, ReadOutcome, SessionLog, read_log};
use super::verify::HashIndex;
use crate::secrets::Secrets;
use xcsh_machine::{EntryId, Machine};

/// Appends to one session file while holding its advisory lock (released on drop).
///
/// Every line is written with one `write_all` on the unbuffered file opened for
/// append, so a killed process leaves at most a torn last line (which the next
/// [`SessionWriter::open`] repairs) and never loses a complete one. Lines reach the
/// disk when [`SessionWriter::sync`] is called (and, best effort, on drop).
#[derive(Debug)]
pub struct SessionWriter {
    /// Declared first so that it is dropped (the note removed) before `file` is
    /// closed (the lock released).
    _note: LockNote,
    path: PathBuf,
    file: File,
    hashes: HashIndex,
    /// `None` once `u64::MAX` is given: nothing more can be appended.
    next_id: Option<EntryId>,
    last_id: EntryId,
    /// Bytes of complete lines in the file (where a failed append is cut back to).
    len: u64,
    dirty: bool,
    failed: bool,
    /// Replaced by their placeholders in every line appended (§21.5).
    secrets: Secrets,
}

/// The id after `id`; `None` after `u64::MAX` (which a hostile or damaged log can
/// hold: appending then fails with [`LogError::IdsExhausted`], nothing panics).
fn id_after(id: EntryId) -> Option<EntryId> {
    id.0.checked_add(1).map(EntryId)
}

impl SessionWriter {
    /// Creates a new session file holding only `header` (entry 0, no parent), locks
    /// it, and makes it and its directory entry durable.
    pub fn create(
        path: &Path,
        header: SessionHeader,
        ts: DateTime<Utc>,
    ) -> Result<SessionWriter, LogError> {
        let io = |e| LogError::io(path, e);
        let dir = parent_dir(path);
        fs::create_dir_all(dir).map_err(|e| LogError::io(dir, e))?;
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .open(path)
            .map_err(io)?;
        let note = lock(path, &file, ts)?;
        let id = EntryId(0);
        let body = Body::Record(Record::Session(Box::new(header)));
        let (line, hash) = Entry::encode(id, None, None, ts, &body);
        (&file).write_all(&line).map_err(io)?;
        file.sync_all().map_err(io)?;
        sync_dir(path)?;
        let mut hashes = HashIndex::default();
        hashes.insert(id, hash);
        let len = line.len() as u64;
        Ok(SessionWriter::new(
            note,
            path,
            file,
            hashes,
            Some(EntryId(1)),
            id,
            len,
        ))
    }

    /// The writer of the locked file `file` at `path`, `len` bytes long, whose
    /// entries' hashes are `hashes`.
    fn new(
        note: LockNote,
        path: &Path,
        file: File,
        hashes: HashIndex,
        next_id: Option<EntryId>,
        last_id: EntryId,
        len: u64,
    ) -> SessionWriter {
        SessionWriter {
            _note: note,
            path: path.to_path_buf(),
            file,
            hashes,
            next_id,
            last_id,
            len,
            dirty: false,
            failed: false,
            secrets: Secrets::default(),
        }
    }

    /// Opens an existing session for appending: takes the lock first, then reads and
    /// verifies the whole file. A torn last line (no trailing newline) is copied to
    /// `<path>.torn-<offset>` (synced), cut off the session file (synced), and
    /// reported in [`SessionLog::torn_tail`]. A malformed complete line anywhere is an
    /// error and nothing is changed.
    pub fn open(path: &Path) -> Result<(SessionWriter, SessionLog), LogError> {
        let (file, note) = open_locked(path)?;
        let ReadOutcome {
            mut log,
            torn,
            hashes,
            end,
        } = read_log(
            path,
            BufReader::with_capacity(READ_BUFFER, &file),
            file.metadata().map(|m| m.len()).unwrap_or(0),
        )?;
        if let Some(bytes) = torn {
            let sidecar = cut_torn(path, &file, end, &bytes)?;
            if let Some(t) = &mut log.torn_tail {
                t.sidecar = Some(sidecar);
            }
        }
        let max_id = log.entries.iter().map(|e| e.id).max().unwrap_or(EntryId(0));
        let last_id = log.entries.last().map_or(EntryId(0), |e| e.id);
        let writer = SessionWriter::new(note, path, file, hashes, id_after(max_id), last_id, end);
        Ok((writer, log))
    }

    /// Opens an existing session for appending at its leaf, reading only what
    /// resuming there needs: the entries on the branch that ends at the leaf, in
    /// order, go to `each` — the header and every input decoded (and checked to
    /// carry the id and hash the index has for its line), decisions and structure by
    /// id and kind only.
    /// The rest of the file is known from its derived index (see [`super::index`]):
    /// validated against the log and extended by the lines appended since, or
    /// rebuilt from the log, which then verifies every line as
    /// [`SessionWriter::open`] does. A torn last line is repaired as there.
    pub fn open_branch(
        path: &Path,
        each: &mut dyn FnMut(BranchEntry),
    ) -> Result<(SessionWriter, BranchInfo), LogError> {
        let io = |e| LogError::io(path, e);
        let (file, note) = open_locked(path)?;
        let index = super::index::open_index(path)?;
        let d = index.data();
        let end = d.covered.to_native();
        let len = file.metadata().map_err(io)?.len();
        let mut torn_tail = None;
        if len > end {
            let mut bytes = vec![0u8; usize::try_from(len - end).unwrap_or(0)];
            {
                use std::io::{Read, Seek, SeekFrom};
                let mut f = &file;
                f.seek(SeekFrom::Start(end)).map_err(io)?;
                f.read_exact(&mut bytes).map_err(io)?;
            }
            let sidecar = cut_torn(path, &file, end, &bytes)?;
            torn_tail = Some(TornTail {
                offset: end,
                len: bytes.len() as u64,
                sidecar: Some(sidecar),
            });
        }
        // The branch: positions from the header down to the leaf.
        let leaf = d.leaf();
        let mut branch = Vec::new();
        let mut at = Some(leaf);
        while let Some(p) = at {
            if branch.len() > d.len() {
                return Err(LogError::Cycle {
                    path: path.to_path_buf(),
                    id: d.id(leaf),
                });
            }
            branch.push(p);
            at = d.parent(p);
        }
        branch.reverse();
        // With a snapshot on the branch: the header, the snapshot, then only the
        // entries after it.
        let header = match super::resume::usable_snapshot(d, &branch) {
            Some((at, machine)) => {
                let mut read = vec![branch[0]];
                read.extend_from_slice(&branch[at + 1..]);
                let mut snapshot = Some((d.id(branch[at]), machine));
                stream_branch(path, &file, d, &read, &mut |item| {
                    each(item);
                    if let Some((at, machine)) = snapshot.take() {
                        each(BranchEntry::Snapshot {
                            at,
                            machine: Box::new(machine),
                        });
                    }
                })?
            }
            None => stream_branch(path, &file, d, &branch, each)?,
        };
        let mut hashes = HashIndex::default();
        let mut max_id = EntryId(0);
        for p in 0..d.len() {
            hashes.insert(d.id(p), d.hash(p));
            max_id = max_id.max(d.id(p));
        }
        let last_id = d.id(d.len() - 1);
        let writer = SessionWriter::new(note, path, file, hashes, id_after(max_id), last_id, end);
        let info = BranchInfo {
            workspace: super::workspace::recorded_workspace_in(path, d, None)?,
            header,
            leaf: d.id(leaf),
            torn_tail,
            unknown: (0..d.len())
                .filter(|&p| d.kind(p) == super::index::Kind::Unknown)
                .map(|p| {
                    (
                        u32::try_from(p + 1).unwrap_or(u32::MAX),
                        d.type_name(p).to_string(),
                    )
                })
                .collect(),
        };
        Ok((writer, info))
    }

    /// Appends an entry under `parent` (which must be an entry of this session) and
    /// returns its id and hash. The line is written but not synced.
    pub fn append(
        &mut self,
        parent: EntryId,
        ts: DateTime<Utc>,
        body: &Body,
    ) -> Result<(EntryId, EntryHash), LogError> {
        if self.failed {
            return Err(LogError::Unwritable {
                path: self.path.clone(),
            });
        }
        let parent_hash = *self
            .hashes
            .get(parent)
            .ok_or_else(|| LogError::UnknownEntry {
                path: self.path.clone(),
                id: parent,
            })?;
        let id = self.next_id.ok_or_else(|| LogError::IdsExhausted {
            path: self.path.clone(),
            id: EntryId(u64::MAX),
        })?;
        let (line, hash) = Entry::encode_redacted(
            id,
            Some(parent),
            Some(&parent_hash),
            ts,
            body,
            &self.secrets,
        );
        if let Err(e) = (&self.file).write_all(&line) {
            // Cut a partly written line back off, so that the next line does not
            // join it; if even that fails, refuse further appends.
            if self.file.set_len(self.len).is_err() {
                self.failed = true;
            }
            return Err(LogError::io(&self.path, e));
        }
        self.len += line.len() as u64;
        self.hashes.insert(id, hash);
        self.next_id = id_after(id);
        self.last_id = id;
        self.dirty = true;
        Ok((id, hash))
    }

    /// From now on, every known secret value in an appended line is replaced by its
    /// placeholder before the line is hashed and written.
    pub fn set_secrets(&mut self, secrets: Secrets) {
        self.secrets = secrets;
    }

    /// The secret values this writer keeps out of the file.
    pub fn secrets(&self) -> &Secrets {
        &self.secrets
    }

    /// Makes every appended line durable (`fdatasync`), if any was appended since the
    /// last sync. The runtime calls it before starting a model call or a tool and at
    /// the end of a run.
    pub fn sync(&mut self) -> Result<(), LogError> {
        if self.dirty {
            self.file
                .sync_data()
                .map_err(|e| LogError::io(&self.path, e))?;
            self.dirty = false;
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The id the next appended entry gets.
    /// (`u64::MAX` once that id is given: then [`SessionWriter::append`] fails.)
    pub fn next_id(&self) -> EntryId {
        self.next_id.unwrap_or(EntryId(u64::MAX))
    }

    /// The id of the last line written or read.
    pub fn last_id(&self) -> EntryId {
        self.last_id
    }

    /// The hash of an entry of this session.
    pub fn hash_of(&self, id: EntryId) -> Option<EntryHash> {
        self.hashes.get(id).copied()
    }
}

impl Drop for SessionWriter {
    fn drop(&mut self) {
        // Best effort: a caller that needs to know calls `sync` itself.
        let _ = self.sync();
    }
}

/// One entry of the branch [`SessionWriter::open_branch`] reads. (Mostly decoded
/// entries, handed over at once: boxing them would only add an allocation each.)
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum BranchEntry {
    /// The header or an input, decoded.
    Decoded(Entry),
    /// A decision (not decoded: resuming only counts them).
    Decision(EntryId),
    /// Structure or an unknown type (no input, no decision).
    Other(EntryId),
    /// The machine at rest after entry `at`, from the index's snapshot (see
    /// [`super::resume`]): the entries before it are not given; it comes right
    /// after the header.
    Snapshot { at: EntryId, machine: Box<Machine> },
}

/// What [`SessionWriter::open_branch`] learned of the session.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchInfo {
    pub header: SessionHeader,
    /// The recorded workspace at the leaf (see [`super::recorded_workspace`]).
    pub workspace: String,
    /// The leaf (the last entry that is not a label).
    pub leaf: EntryId,
    pub torn_tail: Option<TornTail>,
    /// Lines of entry types this version does not know: (line, type).
    pub unknown: Vec<(u32, String)>,
}

/// Decodes the header and the inputs at `branch` (positions in the index, root
/// first), checking each line's hash, and gives every branch entry to `each` in
/// order. The branch is read in spans of about [`SPAN`] bytes; another thread
/// decodes two spans of every three meanwhile (a few spans ahead at most, so memory
/// stays small). Returns the header.
fn stream_branch(
    path: &Path,
    file: &File,
    d: &super::index::ArchivedIndexData,
    branch: &[usize],
    each: &mut dyn FnMut(BranchEntry),
) -> Result<SessionHeader, LogError> {
    use std::os::unix::fs::FileExt;
    let decoded = |p: usize| d.kind(p).is_input() || p == 0;
    // Spans of consecutive branch positions, each read with one system call.
    let mut spans: Vec<&[usize]> = Vec::new();
    let mut start = 0;
    for i in 1..=branch.len() {
        let span_bytes = |j: usize| d.line_range(branch[j]).1 - d.line_range(branch[start]).0;
        if i == branch.len() || span_bytes(i) > SPAN {
            spans.push(&branch[start..i]);
            start = i;
        }
    }
    let read_span = |span: &[usize]| -> Result<Vec<(usize, Option<Entry>)>, LogError> {
        let (Some(&first), Some(&last)) = (span.first(), span.last()) else {
            return Ok(Vec::new());
        };
        let from = d.line_range(first).0;
        let to = d.line_range(last).1;
        let mut buf = vec![0u8; usize::try_from(to - from).unwrap_or(0)];
        file.read_exact_at(&mut buf, from)
            .map_err(|e| LogError::io(path, e))?;
        span.iter()
            .map(|&p| {
                if !decoded(p) {
                    return Ok((p, None));
                }
                let (a, b) = d.line_range(p);
                let raw = usize::try_from(a - from)
                    .ok()
                    .zip(usize::try_from(b - from).ok())
                    .and_then(|(a, b)| buf.get(a..b))
                    .unwrap_or_default();
                decode_checked(path, d, p, raw).map(|e| (p, Some(e)))
            })
            .collect()
    };
    let mut header = None;
    let mut give = |p: usize, entry: Option<Entry>| match entry {
        Some(e) => {
            if let Body::Record(Record::Session(h)) = &e.body
                && p == 0
            {
                header = Some(SessionHeader::clone(h));
            }
            each(BranchEntry::Decoded(e));
        }
        None if d.kind(p).is_decision() => each(BranchEntry::Decision(d.id(p))),
        None => each(BranchEntry::Other(d.id(p))),
    };
    let mine = |k: usize| k.is_multiple_of(3);
    std::thread::scope(|s| -> Result<(), LogError> {
        let (tx, rx) = std::sync::mpsc::sync_channel(4);
        let spans = &spans;
        s.spawn(move || {
            for (k, span) in spans.iter().enumerate() {
                if mine(k) {
                    continue;
                }
                let done = read_span(span);
                let failed = done.is_err();
                if tx.send(done).is_err() || failed {
                    return;
                }
            }
        });
        for (k, span) in spans.iter().enumerate() {
            let entries = if mine(k) {
                read_span(span)?
            } else {
                rx.recv().unwrap_or_else(|_| {
                    Err(LogError::io(
                        path,
                        std::io::Error::other("a decoding thread stopped"),
                    ))
                })?
            };
            for (p, e) in entries {
                give(p, e);
            }
        }
        Ok(())
    })?;
    header.ok_or_else(|| LogError::NotASession {
        path: path.to_path_buf(),
    })
}

/// Bytes of the log read at once when resuming.
const SPAN: u64 = 512 * 1024;

/// Decodes the line at position `p` and checks that it carries the hash the index
/// has for it. (The line's hash is not recomputed: the index was validated against
/// the log as a whole when it was opened, see [`super::index`].)
fn decode_checked(
    path: &Path,
    d: &super::index::ArchivedIndexData,
    p: usize,
    raw: &[u8],
) -> Result<Entry, LogError> {
    let line = u32::try_from(p + 1).unwrap_or(u32::MAX);
    let malformed = |source| LogError::malformed(path, line, raw, source);
    let entry =
        Entry::decode(super::verify::line_text(raw).map_err(malformed)?).map_err(malformed)?;
    if entry.hash != d.hash(p) || entry.id != d.id(p) {
        return Err(LogError::HashMismatch {
            path: path.to_path_buf(),
            line,
            id: entry.id,
        });
    }
    Ok(entry)
}

/// `<path><suffix>`, e.g. `s.jsonl.lock`.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = OsString::from(path.as_os_str());
    s.push(suffix);
    PathBuf::from(s)
}

/// The file describing the lock holder.
pub fn lock_info_path(path: &Path) -> PathBuf {
    with_suffix(path, ".lock")
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        Some(_) | None => Path::new("."),
    }
}

fn sync_dir(path: &Path) -> Result<(), LogError> {
    let dir = parent_dir(path);
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| LogError::io(dir, e))
}

/// The basename of this process's command (`xcsh`).
fn command_name() -> String {
    std::env::args_os()
        .next()
        .and_then(|arg| {
            Path::new(&arg)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "xcsh".to_string())
}

fn holder_description(since: DateTime<Utc>) -> String {
    format!(
        "pid {} ({}) since {}",
        std::process::id(),
        command_name(),
        format_ts(&since)
    )
}

/// `<path>.lock` while a writer holds the lock: removed when it is dropped, which
/// [`SessionWriter`] does before it releases the lock. A note left by a writer that
/// was killed is stale: the next writer gets the lock and writes its own over it.
#[derive(Debug)]
struct LockNote(PathBuf);

impl Drop for LockNote {
    fn drop(&mut self) {
        // Best effort: a note already gone (or a read-only directory) is no error.
        let _ = fs::remove_file(&self.0);
    }
}

/// Takes the advisory lock on the session file itself, then describes the holder in
/// `<path>.lock` for whoever is refused next (replacing a stale note).
fn lock(path: &Path, file: &File, since: DateTime<Utc>) -> Result<LockNote, LogError> {
    let info = lock_info_path(path);
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let holder = fs::read_to_string(&info)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "an unknown process".to_string());
            return Err(LogError::Locked {
                path: path.to_path_buf(),
                holder,
            });
        }
        Err(TryLockError::Error(e)) => return Err(LogError::io(path, e)),
    }
    fs::write(&info, format!("{}\n", holder_description(since)))
        .map_err(|e| LogError::io(&info, e))?;
    Ok(LockNote(info))
}

/// Copies torn bytes to `<path>.torn-<offset>` (or `…-<offset>.<n>` if an earlier
/// repair at the same offset left one) and makes it durable.
/// An existing session file opened for reading and appending, and its lock taken.
fn open_locked(path: &Path) -> Result<(File, LockNote), LogError> {
    let file = OpenOptions::new()
        .read(true)
        .append(true)
        .open(path)
        .map_err(|e| LogError::io(path, e))?;
    let note = lock(path, &file, Utc::now())?;
    Ok((file, note))
}

/// Copies the torn bytes after `end` aside (the sidecar, returned) and cuts them
/// off `file`, synced.
fn cut_torn(path: &Path, file: &File, end: u64, bytes: &[u8]) -> Result<PathBuf, LogError> {
    let io = |e| LogError::io(path, e);
    let sidecar = write_sidecar(path, end, bytes)?;
    file.set_len(end).map_err(io)?;
    file.sync_all().map_err(io)?;
    Ok(sidecar)
}

fn write_sidecar(path: &Path, offset: u64, bytes: &[u8]) -> Result<PathBuf, LogError> {
    let base = with_suffix(path, &format!(".torn-{offset}"));
    let mut candidate = base.clone();
    let mut n = 1u32;
    let mut file = loop {
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(f) => break f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => {
                candidate = with_suffix(&base, &format!(".{n}"));
                n += 1;
            }
            Err(e) => return Err(LogError::io(&candidate, e)),
        }
    };
    let io = |e| LogError::io(&candidate, e);
    file.write_all(bytes).map_err(io)?;
    file.sync_all().map_err(io)?;
    sync_dir(&candidate)?;
    Ok(candidate)
}

#[cfg(test)]
pub(crate) mod testutil;

#[cfg(test)]
mod tests;
