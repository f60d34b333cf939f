//! The one verifier of a session log's lines, read in file order: the line rules
//! (not empty, not NUL bytes, UTF-8, one entry), the hash of every entry by id, and
//! the checks that need the lines before, in one order (a parentless `session`
//! header first, then for every other line: duplicate id, orphan, missing parent,
//! hash). Every reader of a log goes through [`Chain`]: [`super::LogReader`],
//! [`super::parallel::read_parallel`] (and so `read_session`, the writer's reopen and
//! replay), the index's extension, `xcsh events --follow` and `xcsh check` (which
//! reads on after an error, [`Chain::verify_line_leniently`]); each error has one
//! wording, naming the file and the line.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::entry::{Body, DecodeError, Entry, EntryHash, Record};
use super::error::LogError;
use xcsh_machine::EntryId;

/// A decoded line: the entry, the length of the bytes its hash covers, and whether
/// its hash matched, when the decoder knew the parent's hash (`None`: not checked).
pub(crate) struct Decoded {
    pub entry: Entry,
    pub prefix: usize,
    pub hash_ok: Option<bool>,
}

/// Decodes one line (without its newline); checks its hash when `parent_hash` can
/// tell the parent's (a decoding worker that decoded the parent itself).
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

/// The text of a complete line, or why it cannot be an entry.
pub(crate) fn line_text(bytes: &[u8]) -> Result<&str, DecodeError> {
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

/// What the checks in file order need of a decoded line (so that a decoding worker
/// can keep the entry itself in another form).
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

impl Facts {
    pub(crate) fn of(d: &Decoded) -> Facts {
        let entry = &d.entry;
        Facts {
            id: entry.id,
            parent: entry.parent,
            hash: entry.hash,
            session: matches!(entry.body, Body::Record(Record::Session(_))),
            unknown: match &entry.body {
                Body::Unknown { type_name, .. } => Some(type_name.as_str().into()),
                Body::Record(_) | Body::Decision(_) => None,
            },
            prefix: d.prefix,
            hash_ok: d.hash_ok,
        }
    }
}

/// The verification of a log's lines in file order: the line number, the hash of
/// every entry verified so far and the lines of unknown types.
#[derive(Debug, Clone)]
pub struct Chain {
    path: PathBuf,
    line: u32,
    hashes: HashIndex,
    unknown: Vec<(u32, String)>,
}

impl Chain {
    /// The chain of the log at `path` (which names it in errors), before its first
    /// line.
    pub fn new(path: impl Into<PathBuf>) -> Chain {
        Chain {
            path: path.into(),
            line: 0,
            hashes: HashIndex::default(),
            unknown: Vec::new(),
        }
    }

    /// The chain after `lines` lines already verified, whose ids and hashes are
    /// `known`: line numbers continue from there, and parents may be among them.
    pub(crate) fn continuing(
        path: impl Into<PathBuf>,
        lines: u32,
        known: &[(EntryId, EntryHash)],
    ) -> Chain {
        let mut chain = Chain::new(path);
        chain.line = lines;
        for (id, hash) in known {
            chain.hashes.insert(*id, *hash);
        }
        chain
    }

    /// Decodes and verifies `bytes`, the next line (without its newline).
    pub fn verify_line(&mut self, bytes: &[u8]) -> Result<Entry, LogError> {
        self.verify(bytes, decode_one(bytes, None))
    }

    /// Decodes and verifies `bytes`, the next line, leniently (`xcsh check`, which
    /// reports every error instead of stopping at the first): a line that decodes
    /// comes back with the error of its checks, if any, and unless its id is a
    /// duplicate it is known to the chain from then on under the hash it records, so
    /// that its children still verify.
    pub fn verify_line_leniently(
        &mut self,
        bytes: &[u8],
    ) -> Result<(Entry, Option<LogError>), LogError> {
        let d = decode_one(bytes, None).map_err(|source| self.malformed(bytes, source))?;
        let (id, hash) = (d.entry.id, d.entry.hash);
        match self.check(bytes, Facts::of(&d)) {
            Ok(_) => Ok((d.entry, None)),
            Err(e) => {
                if !matches!(e, LogError::DuplicateId { .. }) {
                    self.admit(id, hash);
                }
                Ok((d.entry, Some(e)))
            }
        }
    }

    /// Takes `id` as known under the hash `hash` its line records, without verifying
    /// it (a line that failed, which the lenient checker reads on from); false if
    /// the id is known already.
    pub fn admit(&mut self, id: EntryId, hash: EntryHash) -> bool {
        self.hashes.insert(id, hash)
    }

    /// Verifies the next line, `bytes`, decoded as `decoded`.
    pub(crate) fn verify(
        &mut self,
        bytes: &[u8],
        decoded: Result<Decoded, DecodeError>,
    ) -> Result<Entry, LogError> {
        match decoded {
            Ok(d) => {
                self.check(bytes, Facts::of(&d))?;
                Ok(d.entry)
            }
            Err(source) => Err(self.malformed(bytes, source)),
        }
    }

    /// The error of the next line, `bytes`, which does not decode.
    pub(crate) fn malformed(&mut self, bytes: &[u8], source: DecodeError) -> LogError {
        self.line = self.line.saturating_add(1);
        LogError::malformed(&self.path, self.line, bytes, source)
    }

    /// The checks of the next line, `bytes`, decoded as `facts`; its line number.
    pub(crate) fn check(&mut self, bytes: &[u8], facts: Facts) -> Result<u32, LogError> {
        self.line = self.line.saturating_add(1);
        let (path, line) = (&self.path, self.line);
        let parent_hash = if line == 1 {
            if facts.parent.is_some() || !facts.session {
                return Err(LogError::NotASession {
                    path: path.to_path_buf(),
                });
            }
            None
        } else {
            if self.hashes.get(facts.id).is_some() {
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
            match self.hashes.get(parent) {
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
        self.hashes.insert(facts.id, facts.hash);
        if let Some(type_name) = facts.unknown {
            self.unknown.push((line, type_name.into_string()));
        }
        Ok(line)
    }

    /// The wording of `error`, of line `line`, without the file and line it starts
    /// with (for a report that names them itself: `xcsh check`).
    pub fn message(&self, error: &LogError, line: u32) -> String {
        let full = error.to_string();
        let at_line = format!("{}:{line}: ", self.path.display());
        let at_file = format!("{}: ", self.path.display());
        let rest = full.strip_prefix(&at_line).or(full.strip_prefix(&at_file));
        rest.unwrap_or(&full).to_string()
    }

    /// The file the chain is of.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Lines verified so far (or that failed).
    pub fn lines(&self) -> u32 {
        self.line
    }

    /// The hash of an entry verified so far.
    pub fn hash_of(&self, id: EntryId) -> Option<EntryHash> {
        self.hashes.get(id).copied()
    }

    /// Lines of entry types this version does not know so far: (line, type).
    pub fn unknown(&self) -> &[(u32, String)] {
        &self.unknown
    }

    /// The hashes and the lines of unknown types, once the reading is over.
    pub(crate) fn into_parts(self) -> (HashIndex, Vec<(u32, String)>) {
        (self.hashes, self.unknown)
    }
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
