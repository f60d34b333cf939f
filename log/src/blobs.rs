//! Before-images (SPEC.md §21.6): before a mutating file call changes anything, the
//! current content of every file it will change is stored content-addressed
//! (blake3) under `$XCSH_HOME/blobs/`, with a manifest named by the call's durable
//! dispatch entry (session + entry id), so that whatever a crash interrupts can be
//! listed and put back. Kept here, beside the tools that write it, rather than in
//! `log`: it is the tools' side of write-ahead, not part of the session log (which
//! stays the truth: a manifest is only ever used for a call the log shows
//! dispatched).
//!
//! One directory holds everything: blobs (`<64 hex>`), manifests
//! (`<session>@<entry>.manifest`), temporary files (`.tmp-*`) and `lock`. Writers
//! hold `lock` shared, removal holds it exclusive, so a sweep never removes a blob a
//! manifest being written is about to name.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use rustix::fs::FlockOperation;
use serde::{Deserialize, Serialize};

use xcsh_machine::{CallId, EntryId};

/// The manifest format this code writes and reads.
pub const MANIFEST_VERSION: u32 = 1;

/// A blob's name: the blake3 hash of its content, 64 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BlobId(pub String);

impl BlobId {
    /// The id of `bytes`.
    pub fn of(bytes: &[u8]) -> BlobId {
        BlobId(blake3::hash(bytes).to_hex().to_string())
    }

    fn is_valid(&self) -> bool {
        self.0.len() == 64
            && self
                .0
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    }
}

impl std::fmt::Display for BlobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The durable dispatch entry that started a call: what names its manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispatch {
    /// The session's id (a fork's own id, §25.6).
    pub session_id: String,
    /// The session file (a manifest whose session file is gone is swept).
    pub session_path: PathBuf,
    /// The `tool_dispatched` entry.
    pub entry: EntryId,
}

/// One file a call is about to change: its content now (`None`: it does not exist)
/// and the content the call will give it.
#[derive(Debug, Clone, Copy)]
pub struct BeforeImage<'a> {
    pub path: &'a Path,
    pub before: Option<&'a [u8]>,
    pub after: &'a [u8],
}

/// One file of a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// Absolute, resolved path (inside the workspace root).
    pub path: PathBuf,
    /// The blob of its content before the call; `None`: it did not exist.
    pub before: Option<BlobId>,
    /// blake3 (hex) of the content the call gives it.
    pub after: String,
}

/// What a mutating call was about to change, written (and fsynced) before it
/// changed anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub version: u32,
    pub session_id: String,
    pub session_path: PathBuf,
    /// The call's `tool_dispatched` entry.
    pub entry: EntryId,
    pub call_id: CallId,
    pub tool: String,
    pub files: Vec<ManifestFile>,
}

/// Errors of the store; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a before-image manifest: {message}")]
    Malformed { path: PathBuf, message: String },
    #[error(
        "{path}: the blob's content does not match its name (the before-image is damaged); nothing was restored"
    )]
    Damaged { path: PathBuf },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BlobError + '_ {
    move |source| BlobError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What a sweep removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Swept {
    /// Manifests whose session file no longer exists.
    pub manifests: usize,
    /// Blobs no manifest names.
    pub blobs: usize,
    /// Temporary files a writer that died left.
    pub temps: usize,
}

static TEMP_COUNTER: AtomicUsize = AtomicUsize::new(0);

/// The before-image store at one directory (`$XCSH_HOME/blobs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobStore {
    dir: PathBuf,
}

/// A held `lock` (shared or exclusive); released when dropped.
struct Lock(#[allow(dead_code)] File);

impl BlobStore {
    /// The store at `dir` (made when first written).
    pub fn new(dir: impl Into<PathBuf>) -> BlobStore {
        BlobStore { dir: dir.into() }
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where blob `id` is.
    pub fn blob_path(&self, id: &BlobId) -> PathBuf {
        self.dir.join(&id.0)
    }

    /// Where the manifest of `session_id`'s entry `entry` is. A session id's
    /// characters other than ASCII letters, digits, `-`, `_` and `.` are written `_`.
    pub fn manifest_path(&self, session_id: &str, entry: EntryId) -> PathBuf {
        self.dir
            .join(format!("{}{entry}.manifest", manifest_prefix(session_id)))
    }

    fn lock(&self, op: FlockOperation) -> Result<Lock, BlobError> {
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let path = self.dir.join("lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io(&path))?;
        rustix::fs::flock(&file, op).map_err(|e| BlobError::Io {
            path: path.clone(),
            source: e.into(),
        })?;
        Ok(Lock(file))
    }

    fn temp_path(&self) -> PathBuf {
        self.dir.join(format!(
            ".tmp-{}-{}",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ))
    }

    /// Writes `bytes` to a temporary file of the store, fsynced, and renames it to
    /// `name` (the directory is not synced: the caller does it once).
    fn write_named(&self, name: &Path, bytes: &[u8]) -> Result<(), BlobError> {
        let temp = self.temp_path();
        let result = (|| {
            let mut file = File::create(&temp).map_err(io(&temp))?;
            file.write_all(bytes).map_err(io(&temp))?;
            file.sync_all().map_err(io(&temp))?;
            std::fs::rename(&temp, name).map_err(io(name))
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        result
    }

    fn sync_dir(&self) -> Result<(), BlobError> {
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(io(&self.dir))
    }

    /// Stores `bytes` without syncing the directory: an existing blob of the same
    /// content is kept as it is (nothing is written).
    fn put_unsynced(&self, bytes: &[u8]) -> Result<BlobId, BlobError> {
        let id = BlobId::of(bytes);
        let path = self.blob_path(&id);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_file() && meta.len() == bytes.len() as u64 => {}
            _ => self.write_named(&path, bytes)?,
        }
        Ok(id)
    }

    /// Stores `bytes` as a blob (durably) and returns its id; the same content is
    /// stored once.
    pub fn put(&self, bytes: &[u8]) -> Result<BlobId, BlobError> {
        let _lock = self.lock(FlockOperation::LockShared)?;
        let id = self.put_unsynced(bytes)?;
        self.sync_dir()?;
        Ok(id)
    }

    /// Saves the before-images of call `call_id` (tool `tool`) dispatched at
    /// `dispatch`: a blob per existing file, then the manifest, all durable when it
    /// returns (each file fsynced, then the directory once).
    pub fn save(
        &self,
        dispatch: &Dispatch,
        call_id: &CallId,
        tool: &str,
        images: &[BeforeImage<'_>],
    ) -> Result<Manifest, BlobError> {
        let _lock = self.lock(FlockOperation::LockShared)?;
        let mut files = Vec::with_capacity(images.len());
        for image in images {
            let before = match image.before {
                Some(bytes) => Some(self.put_unsynced(bytes)?),
                None => None,
            };
            files.push(ManifestFile {
                path: image.path.to_path_buf(),
                before,
                after: blake3::hash(image.after).to_hex().to_string(),
            });
        }
        let manifest = Manifest {
            version: MANIFEST_VERSION,
            session_id: dispatch.session_id.clone(),
            session_path: dispatch.session_path.clone(),
            entry: dispatch.entry,
            call_id: call_id.clone(),
            tool: tool.to_owned(),
            files,
        };
        let path = self.manifest_path(&dispatch.session_id, dispatch.entry);
        let mut text = serde_json::to_vec_pretty(&manifest).map_err(|e| BlobError::Malformed {
            path: path.clone(),
            message: e.to_string(),
        })?;
        text.push(b'\n');
        self.write_named(&path, &text)?;
        self.sync_dir()?;
        Ok(manifest)
    }

    /// The manifest of `session_id`'s entry `entry`, if there is one.
    pub fn manifest(
        &self,
        session_id: &str,
        entry: EntryId,
    ) -> Result<Option<Manifest>, BlobError> {
        read_manifest(&self.manifest_path(session_id, entry))
    }

    /// Opens blob `id` for reading.
    pub fn open(&self, id: &BlobId) -> Result<File, BlobError> {
        let path = self.blob_path(id);
        File::open(&path).map_err(io(&path))
    }

    /// Puts `file` back as it was before its call: its blob's content, streamed to
    /// a temporary file beside it (checked against the blob's name, fsynced,
    /// renamed over it, the directory fsynced; the mode of the file there now is
    /// kept), or, when it did not exist, removes it (nothing there is fine).
    pub fn restore(&self, file: &ManifestFile) -> Result<(), BlobError> {
        let target = &file.path;
        let Some(id) = &file.before else {
            return match std::fs::remove_file(target) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(io(target)(e)),
            };
        };
        let blob = self.blob_path(id);
        let mut source = File::open(&blob).map_err(io(&blob))?;
        let parent = target.parent().unwrap_or(Path::new("."));
        let name = target
            .file_name()
            .map_or_else(|| "file".to_owned(), |n| n.to_string_lossy().into_owned());
        let temp = parent.join(format!(
            ".{name}.xcsh-undo-{}-{}.tmp",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let mode = std::fs::symlink_metadata(target)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.permissions());
        let result = (|| {
            let mut out = File::create(&temp).map_err(io(&temp))?;
            let mut hasher = blake3::Hasher::new();
            let mut buf = vec![0u8; 1 << 16];
            loop {
                let n = source.read(&mut buf).map_err(io(&blob))?;
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
                out.write_all(&buf[..n]).map_err(io(&temp))?;
            }
            if hasher.finalize().to_hex().as_str() != id.0 {
                return Err(BlobError::Damaged { path: blob.clone() });
            }
            if let Some(mode) = mode {
                out.set_permissions(mode).map_err(io(&temp))?;
            }
            out.sync_all().map_err(io(&temp))?;
            std::fs::rename(&temp, target).map_err(io(target))
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&temp);
            return result;
        }
        File::open(parent)
            .and_then(|d| d.sync_all())
            .map_err(io(parent))
    }

    /// Removes the manifests of `dispatches` (their calls' results are durable in
    /// their logs, or their files were restored), then sweeps.
    pub fn release(&self, dispatches: &[(String, EntryId)]) -> Result<Swept, BlobError> {
        if !self.dir.is_dir() {
            return Ok(Swept::default());
        }
        let _lock = self.lock(FlockOperation::LockExclusive)?;
        for (session, entry) in dispatches {
            let path = self.manifest_path(session, *entry);
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io(&path)(e)),
            }
        }
        self.sweep_locked()
    }

    /// Removes manifests whose session file no longer exists, blobs no manifest
    /// names, and temporary files (no writer is at work: the lock is exclusive).
    pub fn sweep(&self) -> Result<Swept, BlobError> {
        if !self.dir.is_dir() {
            return Ok(Swept::default());
        }
        let _lock = self.lock(FlockOperation::LockExclusive)?;
        self.sweep_locked()
    }

    fn sweep_locked(&self) -> Result<Swept, BlobError> {
        let mut swept = Swept::default();
        let mut named = std::collections::BTreeSet::new();
        let mut blobs = Vec::new();
        for entry in std::fs::read_dir(&self.dir).map_err(io(&self.dir))? {
            let entry = entry.map_err(io(&self.dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if name.starts_with(".tmp-") {
                if std::fs::remove_file(&path).is_ok() {
                    swept.temps += 1;
                }
            } else if name.ends_with(".manifest") {
                // A manifest that cannot be read is kept (and keeps nothing alive):
                // it is never removed without being understood.
                let Ok(Some(manifest)) = read_manifest(&path) else {
                    continue;
                };
                if manifest.session_path.exists() {
                    named.extend(manifest.files.into_iter().filter_map(|f| f.before));
                } else if std::fs::remove_file(&path).is_ok() {
                    swept.manifests += 1;
                }
            } else if BlobId(name.clone()).is_valid() {
                blobs.push((BlobId(name), path));
            }
        }
        for (id, path) in blobs {
            if !named.contains(&id) && std::fs::remove_file(&path).is_ok() {
                swept.blobs += 1;
            }
        }
        if swept != Swept::default() {
            self.sync_dir()?;
        }
        Ok(swept)
    }

    /// Every manifest of session `session_id`, by entry.
    pub fn manifests_of(&self, session_id: &str) -> Result<Vec<Manifest>, BlobError> {
        let mut out = Vec::new();
        let prefix = manifest_prefix(session_id);
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(io(&self.dir)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(io(&self.dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(&prefix)
                && name.ends_with(".manifest")
                && let Some(manifest) = read_manifest(&entry.path())?
                && manifest.session_id == session_id
            {
                out.push(manifest);
            }
        }
        out.sort_by_key(|m| m.entry);
        Ok(out)
    }
}

/// The start of the names of a session's manifests: its id, with characters other
/// than ASCII letters, digits, `-`, `_` and `.` written `_`, then `@`.
fn manifest_prefix(session_id: &str) -> String {
    let mut safe: String = session_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    safe.push('@');
    safe
}

fn read_manifest(path: &Path) -> Result<Option<Manifest>, BlobError> {
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path)(e)),
    };
    let manifest: Manifest = serde_json::from_slice(&text).map_err(|e| BlobError::Malformed {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    if manifest.version != MANIFEST_VERSION {
        return Err(BlobError::Malformed {
            path: path.to_path_buf(),
            message: format!(
                "version {} (this xcsh reads version {MANIFEST_VERSION})",
                manifest.version
            ),
        });
    }
    if let Some(bad) = manifest
        .files
        .iter()
        .filter_map(|f| f.before.as_ref())
        .find(|b| !b.is_valid())
    {
        return Err(BlobError::Malformed {
            path: path.to_path_buf(),
            message: format!("`{bad}` is not a blob id"),
        });
    }
    Ok(Some(manifest))
}

#[cfg(test)]
mod tests;
