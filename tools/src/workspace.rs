//! The workspace: its canonical root and the root's directory descriptor, the
//! resolution of every path argument (symlinks included) with the boundary enforced,
//! the race-free opening of the resolved path beneath the descriptor, and the
//! read-before-write ledger.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// Why a standard-tool executor could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("workspace root `{}` cannot be opened: {source}", path.display())]
    Root {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("workspace root `{}` is not a directory", .0.display())]
    RootNotDirectory(PathBuf),
    #[error("the JSON schema of tool `{tool}` does not compile: {message}")]
    Schema { tool: String, message: String },
    #[error("the sandbox cannot be set up: {0}")]
    Sandbox(#[from] super::sandbox::SandboxError),
}

/// Why a path argument was refused, or a write was refused by the ledger. The
/// messages are addressed to the model and always name the path as it was given.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("path is empty; give a path relative to the workspace root, or `.` for the root")]
    Empty,
    #[error(
        "path `{given}` resolves to `{}`, outside the workspace root `{}`; only paths inside the workspace are allowed",
        resolved.display(),
        root.display()
    )]
    Outside {
        given: String,
        resolved: PathBuf,
        root: PathBuf,
    },
    #[error(
        "path `{given}` goes through the symlink `{}`, which points to `{}`, outside the workspace root `{}`; symlinks leaving the workspace are not followed",
        link.display(),
        target.display(),
        root.display()
    )]
    SymlinkOutside {
        given: String,
        link: PathBuf,
        target: PathBuf,
        root: PathBuf,
    },
    #[error("path `{given}` goes through the symlink `{}`, whose target does not exist", link.display())]
    DanglingSymlink { given: String, link: PathBuf },
    #[error("path `{given}` cannot be resolved: {source}")]
    Io {
        given: String,
        #[source]
        source: io::Error,
    },
    #[error(
        "`{given}` already exists and has not been read in this run; read it first with the `read` tool, then retry"
    )]
    NotRead { given: String },
    #[error(
        "`{given}` changed since it was read (its content is not what `read` returned); read it again, then retry"
    )]
    ChangedSinceRead { given: String },
}

pub use xcsh_log::FileChange;

use super::beneath::{self, Node, OpenError};
use super::caps::Caps;
use tokio_util::sync::CancellationToken;

/// What a read-only scan of the workspace (`list`, `grep`, `glob`) runs with: the
/// workspace, the output caps and the call's cancellation (checked between entries).
#[derive(Clone, Copy)]
pub(crate) struct Scan<'a> {
    pub ws: &'a Workspace,
    pub caps: Caps,
    pub cancel: &'a CancellationToken,
}

/// The workspace root (canonical) and the run's read-before-write ledger: for each
/// file, the blake3 hash of the content `read` last returned (or an edit/write last
/// wrote).
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    /// The root, opened once: every file operation starts from it.
    dir: OwnedFd,
    ledger: Mutex<HashMap<PathBuf, blake3::Hash>>,
}

impl Workspace {
    /// Opens the workspace at `root`, which must be an existing directory.
    pub fn new(root: &Path) -> Result<Workspace, ToolError> {
        let canonical = root.canonicalize().map_err(|source| ToolError::Root {
            path: root.to_path_buf(),
            source,
        })?;
        if !canonical.is_dir() {
            return Err(ToolError::RootNotDirectory(root.to_path_buf()));
        }
        let dir = beneath::open_root(&canonical).map_err(|source| ToolError::Root {
            path: root.to_path_buf(),
            source,
        })?;
        Ok(Workspace {
            root: canonical,
            dir,
            ledger: Mutex::new(HashMap::new()),
        })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path argument (relative to the root, or absolute) to an absolute
    /// path inside the workspace: the longest existing prefix is canonicalized one
    /// component at a time (so every symlink is followed and checked), the rest is
    /// appended, `..` is applied to the resolved path, and the result must lie inside
    /// the root. A symlink inside the workspace pointing outside is refused even if a
    /// later `..` would come back in; a dangling symlink is refused too (writing
    /// through it could create a file anywhere).
    pub fn resolve(&self, given: &str) -> Result<PathBuf, WorkspaceError> {
        if given.is_empty() {
            return Err(WorkspaceError::Empty);
        }
        let path = Path::new(given);
        let mut resolved = if path.is_absolute() {
            PathBuf::from("/")
        } else {
            self.root.clone()
        };
        // Components appended past the last existing one.
        let mut missing = 0usize;
        for component in path.components() {
            match component {
                Component::Prefix(_) | Component::RootDir | Component::CurDir => {}
                Component::ParentDir => {
                    resolved.pop();
                    missing = missing.saturating_sub(1);
                }
                Component::Normal(name) => {
                    let candidate = resolved.join(name);
                    if missing > 0 {
                        resolved = candidate;
                        missing += 1;
                        continue;
                    }
                    match candidate.symlink_metadata() {
                        Ok(meta) if meta.file_type().is_symlink() => {
                            let target = match candidate.canonicalize() {
                                Ok(target) => target,
                                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                                    return Err(WorkspaceError::DanglingSymlink {
                                        given: given.to_owned(),
                                        link: self.display_path(&candidate).into(),
                                    });
                                }
                                Err(source) => {
                                    return Err(WorkspaceError::Io {
                                        given: given.to_owned(),
                                        source,
                                    });
                                }
                            };
                            if candidate.starts_with(&self.root) && !target.starts_with(&self.root)
                            {
                                return Err(WorkspaceError::SymlinkOutside {
                                    given: given.to_owned(),
                                    link: self.display_path(&candidate).into(),
                                    target,
                                    root: self.root.clone(),
                                });
                            }
                            resolved = target;
                        }
                        Ok(_) => resolved = candidate,
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {
                            resolved = candidate;
                            missing = 1;
                        }
                        Err(source) => {
                            return Err(WorkspaceError::Io {
                                given: given.to_owned(),
                                source,
                            });
                        }
                    }
                }
            }
        }
        if !resolved.starts_with(&self.root) {
            return Err(WorkspaceError::Outside {
                given: given.to_owned(),
                resolved,
                root: self.root.clone(),
            });
        }
        Ok(resolved)
    }

    /// `path` (a result of [`Self::resolve`]) relative to the root.
    fn relative<'a>(&self, path: &'a Path) -> &'a Path {
        path.strip_prefix(&self.root).unwrap_or(path)
    }

    /// Opens the resolved `path` beneath the root's descriptor without following
    /// any symlink ([`Self::resolve`] already replaced them by their targets, so one
    /// met now appeared since): a regular file or a directory; anything else is
    /// refused before it is opened.
    pub(crate) fn open(&self, path: &Path) -> Result<Node, OpenError> {
        beneath::open_node(self.dir.as_fd(), self.relative(path))
    }

    /// Opens the regular file `path` found by a walk (which goes by name, so may
    /// have gone through a swapped symlink) beneath the root: what is read is the file
    /// now at that path inside the workspace.
    pub(crate) fn open_walked(&self, path: &Path) -> Option<File> {
        match self.open(path) {
            Ok(Node::File(file, _)) => Some(file),
            _ => None,
        }
    }

    /// Whether the entry `path` a walk found (of type `walked`) exists beneath the
    /// root, found without following symlinks, with the same type: a name the walk
    /// read through a swapped symlink is not shown unless it is also inside. (Types,
    /// not inodes, are compared: on overlayfs a directory entry's inode number need
    /// not be the file's.)
    pub(crate) fn still_there(&self, path: &Path, walked: Option<std::fs::FileType>) -> bool {
        let Ok(stat) = beneath::stat_node(self.dir.as_fd(), self.relative(path)) else {
            return false;
        };
        let now = rustix::fs::FileType::from_raw_mode(stat.st_mode);
        walked.is_none_or(|t| {
            t.is_dir() == (now == rustix::fs::FileType::Directory)
                && t.is_file() == (now == rustix::fs::FileType::RegularFile)
                && t.is_symlink() == (now == rustix::fs::FileType::Symlink)
        })
    }

    /// Replaces (or creates, with its parents if `create_parents`) the file at the
    /// resolved `path` beneath the root (a new file renamed over the old one).
    pub(crate) fn replace(
        &self,
        path: &Path,
        content: &[u8],
        create_parents: bool,
    ) -> Result<(), OpenError> {
        beneath::replace_file(
            self.dir.as_fd(),
            self.relative(path),
            content,
            create_parents,
        )
    }

    /// `path` relative to the root for messages and listings (`.` for the root
    /// itself; a path outside the root is shown whole).
    pub fn display_path(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }

    /// Records that `read` returned (or an edit/write left) `content` for `path`.
    pub fn record(&self, path: &Path, content: &[u8]) {
        self.record_hash(path, blake3::hash(content));
    }

    /// Records the hash of the content `read` returned for `path`.
    pub fn record_hash(&self, path: &Path, hash: blake3::Hash) {
        self.ledger
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(path.to_path_buf(), hash);
    }

    /// Checks that an existing file whose current content is `current` may be
    /// overwritten: it was read in this run and has not changed since.
    pub fn check_fresh(
        &self,
        path: &Path,
        current: &[u8],
        given: &str,
    ) -> Result<(), WorkspaceError> {
        let ledger = self.ledger.lock().unwrap_or_else(PoisonError::into_inner);
        match ledger.get(path) {
            None => Err(WorkspaceError::NotRead {
                given: given.to_owned(),
            }),
            Some(hash) if *hash != blake3::hash(current) => Err(WorkspaceError::ChangedSinceRead {
                given: given.to_owned(),
            }),
            Some(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_table() {
        let (outer, root) = beneath::escapes("src/a.rs", "src");
        std::fs::create_dir_all(root.join("src/deep")).expect("mkdir");
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("dangling")).expect("symlink");
        let ws = Workspace::new(&root).expect("workspace");
        let canon = ws.root().to_path_buf();
        let outside = outer.path().canonicalize().expect("canon");

        let ok: &[(&str, PathBuf)] = &[
            (".", canon.clone()),
            ("src/a.rs", canon.join("src/a.rs")),
            ("./src/../src/a.rs", canon.join("src/a.rs")),
            ("in/a.rs", canon.join("src/a.rs")),
            ("in/../in/deep", canon.join("src/deep")),
            ("new/dir/file.txt", canon.join("new/dir/file.txt")),
            ("new/../src/x", canon.join("src/x")),
            ("../ws/src", canon.join("src")),
        ];
        for (given, want) in ok {
            assert_eq!(ws.resolve(given).expect(given), *want, "{given}");
        }
        let abs = canon.join("src/a.rs");
        assert_eq!(ws.resolve(&abs.display().to_string()).expect("abs"), abs);

        let secret = outside.join("secret").display().to_string();
        let refused: &[(&str, &str)] = &[
            ("", "Empty"),
            ("..", "Outside"),
            ("../secret", "Outside"),
            ("src/../../secret", "Outside"),
            ("new/../../x", "Outside"),
            (&secret, "Outside"),
            ("/etc/passwd", "Outside"),
            ("out/secret", "SymlinkOutside"),
            ("out", "SymlinkOutside"),
            ("out/../ws/src", "SymlinkOutside"),
            ("dangling", "DanglingSymlink"),
            ("src/a.rs/x", "Io"),
        ];
        for (given, want) in refused {
            let err = ws.resolve(given).expect_err(given);
            let got = format!("{err:?}");
            assert!(got.starts_with(want), "{given}: {got}");
        }
    }

    #[test]
    fn ledger_refuses_unread_and_changed_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = Workspace::new(dir.path()).expect("workspace");
        let p = ws.root().join("f");
        let check = |content: &[u8]| match ws.check_fresh(&p, content, "f") {
            Ok(()) => "ok".to_owned(),
            Err(e) => e.to_string(),
        };
        assert_eq!(
            check(b"v1"),
            "`f` already exists and has not been read in this run; read it first with the `read` tool, then retry"
        );
        ws.record(&p, b"v1");
        assert_eq!(check(b"v1"), "ok");
        assert_eq!(
            check(b"v2"),
            "`f` changed since it was read (its content is not what `read` returned); read it again, then retry"
        );
    }

    #[test]
    fn root_must_be_an_existing_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("f");
        std::fs::write(&file, "x").expect("write");
        assert!(matches!(
            Workspace::new(&file),
            Err(ToolError::RootNotDirectory(_))
        ));
        assert!(matches!(
            Workspace::new(&dir.path().join("missing")),
            Err(ToolError::Root { .. })
        ));
    }
}
