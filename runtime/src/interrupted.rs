//! Mutating calls a crash interrupted (dispatched, never settled; recovery answers
//! them `lost`): which files each may have changed, from its before-image manifest
//! (SPEC.md §21.6), and whether each now differs from its saved original. What
//! `--continue` says and what undo restores.

use std::io::Read;
use std::path::Path;

use xcsh_log::blobs::{BlobError, BlobStore, Manifest, ManifestFile};
use xcsh_machine::{EntryId, ToolCall};

/// What a file of an interrupted call holds now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileNow {
    /// Its saved original (for a file that did not exist: still absent).
    Original,
    /// The content the call was giving it (for a file that did not exist: it is
    /// there now, with that content).
    CallsContent,
    /// Neither: changed since by something else.
    Other,
}

/// One file of an interrupted call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterruptedFile {
    pub file: ManifestFile,
    pub now: FileNow,
}

/// What is known of an interrupted call's changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Saved {
    /// Its manifest (the `tool_dispatched` entry) and its files.
    Files {
        dispatch: EntryId,
        files: Vec<InterruptedFile>,
    },
    /// `edit`/`write` without a manifest: it changed nothing (the manifest is
    /// durable before any change).
    Nothing,
    /// `bash`: its changes are not known in advance.
    Unknown,
}

/// A mutating call a crash interrupted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interrupted {
    pub call: ToolCall,
    pub saved: Saved,
}

/// What `file` holds now, compared with its manifest (streamed through blake3).
pub fn file_now(file: &ManifestFile) -> std::io::Result<FileNow> {
    let hash = match std::fs::File::open(&file.path) {
        Ok(mut f) => {
            let mut hasher = blake3::Hasher::new();
            let mut buf = vec![0u8; 1 << 16];
            loop {
                let n = f.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
            }
            Some(hasher.finalize().to_hex().to_string())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    Ok(
        if hash.as_deref() == file.before.as_ref().map(|b| b.0.as_str()) {
            FileNow::Original
        } else if hash.as_deref() == Some(file.after.as_str()) {
            FileNow::CallsContent
        } else {
            FileNow::Other
        },
    )
}

/// The files of `manifest`, each with what it holds now.
pub fn files_of(manifest: &Manifest) -> Result<Vec<InterruptedFile>, BlobError> {
    manifest
        .files
        .iter()
        .map(|f| {
            file_now(f)
                .map(|now| InterruptedFile {
                    file: f.clone(),
                    now,
                })
                .map_err(|source| BlobError::Io {
                    path: f.path.clone(),
                    source,
                })
        })
        .collect()
}

/// The mutating calls of `lost` (calls recovery answered `lost` in session
/// `session_id`), each with its manifest when `store` has one: the newest manifest
/// of the session for that call id, dispatched before entry `before`. Read-only
/// calls are left out.
pub fn interrupted(
    store: &BlobStore,
    session_id: &str,
    lost: &[ToolCall],
    before: EntryId,
) -> Result<Vec<Interrupted>, BlobError> {
    let manifests = store.manifests_of(session_id)?;
    let mut out = Vec::new();
    for call in lost.iter().filter(|c| xcsh_tools::is_mutating(&c.name)) {
        let saved = if call.name == "bash" {
            Saved::Unknown
        } else {
            match manifests
                .iter()
                .rev()
                .find(|m| m.call_id == call.id && m.entry < before)
            {
                Some(m) => Saved::Files {
                    dispatch: m.entry,
                    files: files_of(m)?,
                },
                None => Saved::Nothing,
            }
        };
        out.push(Interrupted {
            call: call.clone(),
            saved,
        });
    }
    Ok(out)
}

/// What is said of `it` (on stderr and as a notice): paths relative to `cwd`,
/// `session` as `xcsh undo` takes it.
pub fn describe(it: &Interrupted, cwd: &Path, session: &str) -> String {
    let name = &it.call.name;
    let id = &it.call.id;
    match &it.saved {
        Saved::Unknown => format!(
            "the interrupted call `{name}` ({id}) may have changed files: bash's changes are not known in advance, so they are neither listed nor undone"
        ),
        Saved::Nothing => format!(
            "the interrupted call `{name}` ({id}) changed no file: it ended before saving its before-image, which comes before any change"
        ),
        Saved::Files { dispatch, files } => {
            let listed: Vec<String> = files
                .iter()
                .map(|f| {
                    let shown = f.file.path.strip_prefix(cwd).unwrap_or(&f.file.path);
                    let existed = f.file.before.is_some();
                    let state = match (f.now, existed) {
                        (FileNow::Original, true) => "the same as its saved original",
                        (FileNow::Original, false) => "still absent, as before the call",
                        (FileNow::CallsContent, true) => {
                            "differs from its saved original: it has the call's new content"
                        }
                        (FileNow::CallsContent, false) => {
                            "created by the call (it did not exist before)"
                        }
                        (FileNow::Other, _) => {
                            "differs from its saved original and from the call's content: changed since, so undo leaves it"
                        }
                    };
                    format!("`{}` ({state})", shown.display())
                })
                .collect();
            format!(
                "the interrupted call `{name}` ({id}, entry {dispatch}) may have changed {}; `/undo` puts them back as they were before it (or `xcsh undo {session}@{dispatch}`)",
                listed.join(", ")
            )
        }
    }
}
