//! Where the views that show one branch take their entries from: a log held in
//! memory ([`SessionLog`]) or its file streamed in two verified passes ([`Streamed`]).
//! The first pass keeps only the shape of the DAG ([`Shapes`]: ids, parents, the
//! header, the labels' targets); the second hands the views the entries they ask for,
//! in file order, decoded on worker threads, so that memory grows with the ids, not
//! with the bytes of the entries. Both passes check every line through the one
//! chain verifier, so a broken log fails with the reader's first error (§12.5); the
//! second hashes again only the lines it hands on (a line it skips must carry the
//! id and hash the first pass verified), and stops after the last one wanted.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use xcsh_log::index::Kind;
use xcsh_log::parallel::{Line, Window, read_lines_parallel, reread_lines_parallel};
use xcsh_log::{Body, Entry, EntryHash, LogError, Record, SessionHeader, SessionLog};
use xcsh_machine::EntryId;

use crate::error::InspectError;

/// No parent (the header), in [`Shapes`]'s table of parent positions.
const NONE: u32 = u32::MAX;

/// Chunks of the file in flight in each pass: enough for the workers to stay busy.
const IN_FLIGHT: usize = 6;

/// The shape of a session's DAG: every entry's id and parent position in file
/// order, the header and the labels' targets (labels are shown beside the entry
/// they name, which comes before them in the file).
#[derive(Debug)]
pub struct Shapes {
    pub file: PathBuf,
    /// The first line (the `session` record).
    pub first: Entry,
    ids: Vec<EntryId>,
    parents: Vec<u32>,
    is_label: Vec<bool>,
    /// Each entry's hash, as the first pass verified it: a later pass need not hash
    /// again a line it does not read (`Streamed::entries`).
    hashes: Vec<EntryHash>,
    /// Each `label` entry's id and target, in file order.
    pub labels: Vec<(EntryId, EntryId)>,
    positions: Positions,
}

/// Where each entry is, by id. Ids are given in file order from 0, so most entries
/// sit at their id; only the others (those of a fork's file, those after an
/// import's gaps) are kept in a map.
#[derive(Debug, Default)]
struct Positions(HashMap<EntryId, u32>);

impl Positions {
    /// The position of `id` among `ids`.
    fn find(&self, ids: &[EntryId], id: EntryId) -> Option<usize> {
        let at_id = usize::try_from(id.0)
            .ok()
            .filter(|&p| ids.get(p) == Some(&id));
        at_id.or_else(|| self.0.get(&id).map(|&p| p as usize))
    }

    /// `id` is at `pos`.
    fn note(&mut self, id: EntryId, pos: u32) {
        if id.0 != u64::from(pos) {
            self.0.insert(id, pos);
        }
    }
}

/// What the first pass keeps of an entry.
struct Shape {
    id: EntryId,
    parent: Option<EntryId>,
    hash: EntryHash,
    /// The target of a label.
    target: Option<EntryId>,
    /// The whole entry, for the header only.
    whole: Option<Box<Entry>>,
}

impl Shape {
    fn of(entry: &Entry) -> Shape {
        Shape {
            id: entry.id,
            parent: entry.parent,
            hash: entry.hash,
            target: match entry.body {
                Body::Record(Record::Label { target, .. }) => Some(target),
                _ => None,
            },
            // Only the header lacks a parent in a verified log.
            whole: entry.parent.is_none().then(|| Box::new(entry.clone())),
        }
    }
}

/// [`Shapes`] as the first pass finds them, entry by entry.
struct Building {
    file: PathBuf,
    first: Option<Entry>,
    ids: Vec<EntryId>,
    parents: Vec<u32>,
    is_label: Vec<bool>,
    hashes: Vec<EntryHash>,
    labels: Vec<(EntryId, EntryId)>,
    positions: Positions,
}

impl Building {
    fn new(file: &Path) -> Building {
        Building {
            file: file.to_path_buf(),
            first: None,
            ids: Vec::new(),
            parents: Vec::new(),
            is_label: Vec::new(),
            hashes: Vec::new(),
            labels: Vec::new(),
            positions: Positions::default(),
        }
    }

    fn push(&mut self, s: Shape) {
        let pos = self.ids.len() as u32;
        let parent = s.parent.and_then(|p| self.positions.find(&self.ids, p));
        self.parents.push(parent.map_or(NONE, |p| p as u32));
        self.ids.push(s.id);
        self.positions.note(s.id, pos);
        self.is_label.push(s.target.is_some());
        self.hashes.push(s.hash);
        if let Some(target) = s.target {
            self.labels.push((s.id, target));
        }
        if let Some(e) = s.whole.filter(|_| pos == 0) {
            self.first = Some(*e);
        }
    }

    fn finish(self) -> Result<Shapes, LogError> {
        let Some(first) = self
            .first
            .filter(|e| matches!(e.body, Body::Record(Record::Session(_))))
        else {
            return Err(LogError::NotASession { path: self.file });
        };
        Ok(Shapes {
            file: self.file,
            first,
            ids: self.ids,
            parents: self.parents,
            is_label: self.is_label,
            hashes: self.hashes,
            labels: self.labels,
            positions: self.positions,
        })
    }
}

impl Shapes {
    /// The session header.
    pub fn header(&self) -> &SessionHeader {
        match &self.first.body {
            Body::Record(Record::Session(h)) => h,
            _ => unreachable!("checked when built"),
        }
    }

    /// Entries read in the first pass.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// The id of the entry at `pos` (its line is `pos + 1`: every line of a verified
    /// log is an entry).
    pub fn id(&self, pos: usize) -> EntryId {
        self.ids[pos]
    }

    /// Whether the first pass verified entry `id` with this `hash`.
    pub fn verified(&self, id: EntryId, hash: EntryHash) -> bool {
        self.position(id)
            .is_some_and(|pos| self.hashes[pos] == hash)
    }

    /// The position of the parent of the entry at `pos` (none for the header).
    pub fn parent(&self, pos: usize) -> Option<usize> {
        let p = self.parents[pos];
        (p != NONE).then_some(p as usize)
    }

    /// Whether the entry at `pos` is a `label` record.
    pub fn is_label(&self, pos: usize) -> bool {
        self.is_label[pos]
    }

    /// The position of the entry `id`.
    pub fn position(&self, id: EntryId) -> Option<usize> {
        self.positions.find(&self.ids, id)
    }

    /// Whether the first pass read no entry (never, for a session: it has a header).
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The current leaf (§12.6): the last entry that is not a `label` record.
    pub fn leaf(&self) -> EntryId {
        (0..self.len())
            .rev()
            .find(|&i| !self.is_label[i])
            .map_or(EntryId(0), |i| self.ids[i])
    }

    /// Leaves of branches: entries that are not labels and have no children other
    /// than labels, in file order.
    pub fn branch_leaves(&self) -> Vec<EntryId> {
        let mut has_child = vec![false; self.len()];
        for i in 0..self.len() {
            if self.parents[i] != NONE && !self.is_label[i] {
                has_child[self.parents[i] as usize] = true;
            }
        }
        (0..self.len())
            .filter(|&i| !self.is_label[i] && !has_child[i])
            .map(|i| self.ids[i])
            .collect()
    }

    /// The ids from the root to `leaf` (root first); the reader's error for an
    /// entry the session does not hold.
    pub fn path_to(&self, leaf: EntryId) -> Result<Vec<EntryId>, LogError> {
        let Some(start) = self.position(leaf) else {
            return Err(LogError::NoSuchEntry {
                path: self.file.clone(),
                id: leaf,
                first: self.ids.iter().copied().min().unwrap_or(EntryId(0)),
                last: self.ids.iter().copied().max().unwrap_or(EntryId(0)),
            });
        };
        let mut path = Vec::new();
        let mut at = start as u32;
        while at != NONE {
            path.push(self.ids[at as usize]);
            at = self.parents[at as usize];
        }
        path.reverse();
        Ok(path)
    }
}

/// What one [`Source::entries`] pass reads: the entries `want` accepts, each made
/// into what `keep` makes of it (on worker threads for a streamed file), handed to
/// `each` until it returns `false`.
pub struct Visit<'a, T> {
    pub want: &'a (dyn Fn(EntryId) -> bool + Sync),
    pub keep: &'a (dyn Fn(&Entry) -> T + Sync),
    pub each: &'a mut dyn FnMut(T) -> bool,
}

/// A source of a session's entries for the views of one branch.
pub trait Source {
    /// The file the entries come from.
    fn file(&self) -> &Path;
    /// The shape of the DAG (the first pass).
    fn shapes(&self) -> Result<Shapes, InspectError>;
    /// The entries of `visit`, in file order; only the first `shapes.len()` entries
    /// (lines appended after the first pass are left out). A streamed file is read up
    /// to the last entry wanted, and its lines not wanted are checked against the
    /// first pass (their ids and hashes in the chain) without hashing them again.
    fn entries<T: Send>(&self, shapes: &Shapes, visit: Visit<'_, T>) -> Result<(), InspectError>;
}

impl Source for SessionLog {
    fn file(&self) -> &Path {
        &self.path
    }

    fn shapes(&self) -> Result<Shapes, InspectError> {
        let mut b = Building::new(&self.path);
        for e in &self.entries {
            b.push(Shape::of(e));
        }
        Ok(b.finish()?)
    }

    fn entries<T: Send>(&self, shapes: &Shapes, visit: Visit<'_, T>) -> Result<(), InspectError> {
        let Visit { want, keep, each } = visit;
        for e in self.entries.iter().take(shapes.len()) {
            if want(e.id) && !each(keep(e)) {
                break;
            }
        }
        Ok(())
    }
}

/// A session file read in two verified passes (see the module's doc).
#[derive(Debug, Clone)]
pub struct Streamed {
    pub path: PathBuf,
}

impl Streamed {
    pub fn new(path: &Path) -> Streamed {
        Streamed {
            path: path.to_path_buf(),
        }
    }

    fn open(&self) -> Result<File, InspectError> {
        File::open(&self.path).map_err(|e| InspectError::io(&self.path, e))
    }

    /// The first pass with every line's body decoded too, so that a body that would
    /// not decode fails it, before anything is written (the JSON export).
    pub fn shapes_decoding_every_line(&self) -> Result<Shapes, InspectError> {
        self.first_pass(true)
    }

    /// The first pass: every line verified through the chain; of a line in the
    /// writer's form only its envelope is read unless `decode_all`, but for the
    /// header and the labels, whose bodies the shape keeps.
    fn first_pass(&self, decode_all: bool) -> Result<Shapes, InspectError> {
        let mut b = Building::new(&self.path);
        read_lines_parallel(
            &self.path,
            self.open()?,
            Window::in_flight(IN_FLIGHT),
            |line| match line {
                Line::Entry(e) => Ok(Shape::of(&e)),
                Line::Envelope(env)
                    if decode_all
                        || env.parent.is_none()
                        || Kind::named(env.type_name) == Kind::Label =>
                {
                    Ok(Shape::of(&env.entry()?))
                }
                Line::Envelope(env) => Ok(Shape {
                    id: env.id,
                    parent: env.parent,
                    hash: env.hash,
                    target: None,
                    whole: None,
                }),
            },
            |_, s| {
                b.push(s);
                true
            },
        )?;
        Ok(b.finish()?)
    }
}

impl Source for Streamed {
    fn file(&self) -> &Path {
        &self.path
    }

    /// Every line verified; of a line in the writer's form only its envelope is read,
    /// but for the header and the labels, whose bodies the shape keeps.
    fn shapes(&self) -> Result<Shapes, InspectError> {
        self.first_pass(false)
    }

    fn entries<T: Send>(&self, shapes: &Shapes, visit: Visit<'_, T>) -> Result<(), InspectError> {
        let Visit { want, keep, each } = visit;
        // Read up to the last entry wanted only (a branch that ends early in the file,
        // the labels of a short branch).
        let n = (0..shapes.len())
            .rev()
            .find(|&pos| want(shapes.id(pos)))
            .map_or(0, |pos| pos + 1);
        if n == 0 {
            return Ok(());
        }
        let mut read = 0usize;
        reread_lines_parallel(
            &self.path,
            self.open()?,
            Window::in_flight(IN_FLIGHT),
            // A line not wanted, as the first pass verified it, is not hashed again.
            |env| !want(env.id) && shapes.verified(env.id, env.hash),
            |line| match line {
                Line::Entry(e) => Ok(want(e.id).then(|| keep(&e))),
                Line::Envelope(env) if want(env.id) => Ok(Some(keep(&env.entry()?))),
                Line::Envelope(_) => Ok(None),
            },
            |_, kept| {
                read += 1;
                if let Some(t) = kept
                    && !each(t)
                {
                    return false;
                }
                read < n
            },
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry found at its id or, off it (a fork's file: ids kept from its source),
    /// through the map; an id the file does not hold is not found.
    #[test]
    fn positions_find_entries_at_their_ids_and_off_them() {
        let ids: Vec<EntryId> = [0, 1, 2, 9, 10, 4].map(EntryId).to_vec();
        let mut positions = Positions::default();
        for (pos, &id) in ids.iter().enumerate() {
            positions.note(id, pos as u32);
        }
        assert_eq!(
            positions.0.len(),
            3,
            "only the entries off their ids are mapped"
        );
        let found: Vec<Option<usize>> = [0, 1, 2, 9, 10, 4, 3, 5, 11]
            .map(|id| positions.find(&ids, EntryId(id)))
            .to_vec();
        assert_eq!(
            found,
            [
                Some(0),
                Some(1),
                Some(2),
                Some(3),
                Some(4),
                Some(5),
                None,
                None,
                None
            ]
        );
    }
}
