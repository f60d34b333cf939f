//! Race-free file access beneath the workspace directory descriptor: every path is
//! opened relative to the root's fd, never by name from `/`, and no symlink is followed
//! on the way (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//! RESOLVE_NO_MAGICLINKS`, or a component-by-component `openat(O_NOFOLLOW)` walk where
//! the kernel has no `openat2`). Only regular files and directories are opened; a file
//! is replaced by a new one renamed over it through its parent's fd.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, Stat};
use rustix::io::Errno;

/// Set once `openat2` answered ENOSYS (or EPERM): the walk is used from then on.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Numbers the temporary files of [`replace_file`] within this process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A node opened beneath the root: a regular file (with its `fstat`) or a directory.
#[derive(Debug)]
pub(crate) enum Node {
    File(File, Stat),
    Dir(OwnedFd),
}

/// Why a node could not be opened (or replaced) beneath the root.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// Nothing by that name.
    NotFound,
    /// Neither a regular file nor a directory (`what` names the kind).
    Special(&'static str),
    /// A component is (now) a symlink, or the node changed between its `fstatat` and
    /// its `open`: the path changed while it was being opened.
    Moved,
    Io(io::Error),
}

impl From<Errno> for OpenError {
    fn from(e: Errno) -> Self {
        match e {
            Errno::NOENT => OpenError::NotFound,
            // O_NOFOLLOW | O_DIRECTORY on a symlink is ENOTDIR; the workspace
            // resolved the path first, so a non-directory component is new too.
            Errno::LOOP | Errno::XDEV | Errno::NOTDIR => OpenError::Moved,
            other => OpenError::Io(other.into()),
        }
    }
}

impl OpenError {
    /// The message for the model; `given` is the path as the call gave it, `verb`
    /// what the tool was doing (`read`, `write`, …).
    pub(crate) fn message(&self, given: &str, verb: &str) -> String {
        match self {
            OpenError::NotFound => format!("cannot {verb} `{given}`: it does not exist"),
            OpenError::Special(what) => format!(
                "`{given}` is a {what}, not a regular file or a directory; the file tools only open regular files and directories"
            ),
            OpenError::Moved => format!(
                "`{given}` changed while it was being opened (a component became a symlink or was moved); nothing outside the workspace was touched; retry"
            ),
            OpenError::Io(e) => format!("cannot {verb} `{given}`: {e}"),
        }
    }
}

/// The name of a kind of node that is neither a regular file nor a directory.
fn special(file_type: FileType) -> Option<&'static str> {
    match file_type {
        FileType::RegularFile | FileType::Directory => None,
        FileType::Symlink => Some("symlink"),
        FileType::Fifo => Some("FIFO (named pipe)"),
        FileType::Socket => Some("socket"),
        FileType::CharacterDevice => Some("character device"),
        FileType::BlockDevice => Some("block device"),
        FileType::Unknown => Some("file of unknown type"),
    }
}

/// Opens the workspace root (by name, once, when the workspace is made).
pub(crate) fn open_root(path: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// The components of `rel`, which must all be plain names (the workspace gives
/// canonical paths relative to the root; anything else is refused).
fn names(rel: &Path) -> Result<Vec<&OsStr>, OpenError> {
    rel.components()
        .map(|c| match c {
            Component::Normal(name) => Ok(name),
            _ => Err(OpenError::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("`{}` is not a plain relative path", rel.display()),
            ))),
        })
        .collect()
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Opens the directory `rel` beneath `root` (the root itself for an empty path),
/// following no symlink; with `create`, missing directories are made on the way.
pub(crate) fn open_dir(
    root: BorrowedFd<'_>,
    rel: &Path,
    create: bool,
) -> Result<OwnedFd, OpenError> {
    let names = names(rel)?;
    if !create && !NO_OPENAT2.load(Ordering::Relaxed) {
        let path = if names.is_empty() {
            Path::new(".")
        } else {
            rel
        };
        match openat2_beneath(root, path, DIR_FLAGS) {
            // ENOSYS: a kernel before 5.6; EPERM: a seccomp filter (older container
            // runtimes) that refuses system calls it does not know.
            Err(Errno::NOSYS | Errno::PERM) => NO_OPENAT2.store(true, Ordering::Relaxed),
            other => return Ok(other?),
        }
    }
    walk_dirs(root, &names, create)
}

fn openat2_beneath(root: BorrowedFd<'_>, path: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
    rustix::fs::openat2(
        root,
        path,
        flags,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    )
}

/// The fallback of [`open_dir`]: one `openat(O_NOFOLLOW | O_DIRECTORY)` per component.
fn walk_dirs(root: BorrowedFd<'_>, names: &[&OsStr], create: bool) -> Result<OwnedFd, OpenError> {
    let mut dir = rustix::fs::openat(root, ".", DIR_FLAGS, Mode::empty())?;
    for name in names {
        let next = match rustix::fs::openat(&dir, *name, DIR_FLAGS, Mode::empty()) {
            Err(Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&dir, *name, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                rustix::fs::openat(&dir, *name, DIR_FLAGS, Mode::empty())?
            }
            other => other?,
        };
        dir = next;
    }
    Ok(dir)
}

/// The parent directory of `rel` (opened beneath `root`) and `rel`'s last name.
fn parent_of<'a>(
    root: BorrowedFd<'_>,
    rel: &'a Path,
    create: bool,
) -> Result<(OwnedFd, &'a OsStr), OpenError> {
    let name = rel.file_name().ok_or(OpenError::Moved)?;
    let parent = rel.parent().unwrap_or(Path::new(""));
    Ok((open_dir(root, parent, create)?, name))
}

fn same_node(a: &Stat, b: &Stat) -> bool {
    a.st_dev == b.st_dev && a.st_ino == b.st_ino
}

/// Opens `rel` beneath `root` for reading: `fstatat(AT_SYMLINK_NOFOLLOW)` first, so a
/// FIFO, socket or device is refused before it is opened; then `openat(O_NONBLOCK |
/// O_NOFOLLOW)` and `fstat`, which must show the same node.
pub(crate) fn open_node(root: BorrowedFd<'_>, rel: &Path) -> Result<Node, OpenError> {
    if rel.as_os_str().is_empty() {
        return Ok(Node::Dir(open_dir(root, rel, false)?));
    }
    let (parent, name) = parent_of(root, rel, false)?;
    let before = rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW)?;
    let file_type = FileType::from_raw_mode(before.st_mode);
    if file_type == FileType::Symlink {
        // The workspace resolved every symlink by name: one here is new.
        return Err(OpenError::Moved);
    }
    if let Some(what) = special(file_type) {
        return Err(OpenError::Special(what));
    }
    let flags =
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::NOCTTY | OFlags::CLOEXEC;
    let flags = if file_type == FileType::Directory {
        flags | OFlags::DIRECTORY
    } else {
        flags
    };
    let fd = rustix::fs::openat(&parent, name, flags, Mode::empty())?;
    let after = rustix::fs::fstat(&fd)?;
    if !same_node(&before, &after) {
        return Err(OpenError::Moved);
    }
    Ok(match FileType::from_raw_mode(after.st_mode) {
        FileType::Directory => Node::Dir(fd),
        _ => Node::File(File::from(fd), after),
    })
}

/// The `fstatat(AT_SYMLINK_NOFOLLOW)` of `rel` beneath `root`, its parent opened
/// without following symlinks.
pub(crate) fn stat_node(root: BorrowedFd<'_>, rel: &Path) -> Result<Stat, OpenError> {
    let (parent, name) = parent_of(root, rel, false)?;
    Ok(rustix::fs::statat(
        &parent,
        name,
        AtFlags::SYMLINK_NOFOLLOW,
    )?)
}

/// Replaces (or creates) the regular file `rel` beneath `root` with `content`: a
/// temporary file beside it, written and fsynced, renamed over it, then the directory
/// fsynced. An existing file keeps its permission bits; a hard-linked one gets a new
/// inode (its other names keep the old content). With `create_parents`, missing
/// parent directories are made (beneath the root, following no symlink).
pub(crate) fn replace_file(
    root: BorrowedFd<'_>,
    rel: &Path,
    content: &[u8],
    create_parents: bool,
) -> Result<(), OpenError> {
    let (parent, name) = parent_of(root, rel, create_parents)?;
    let mode = match rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => Some(Mode::from_raw_mode(stat.st_mode & 0o7777)),
            FileType::Symlink => return Err(OpenError::Moved),
            FileType::Directory => return Err(OpenError::Special("directory")),
            other => return Err(OpenError::Special(special(other).unwrap_or("special file"))),
        },
        Err(Errno::NOENT) => None,
        Err(e) => return Err(e.into()),
    };
    let temp = format!(
        ".{}.xcsh-{}-{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    // A new file gets the usual 0666 less the umask; a replacement starts private
    // and gets the old file's bits.
    let create_mode = if mode.is_some() { 0o600 } else { 0o666 };
    let fd = rustix::fs::openat(
        &parent,
        temp.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(create_mode),
    )?;
    let written = (|| -> Result<(), OpenError> {
        let mut file = File::from(fd);
        file.write_all(content).map_err(OpenError::Io)?;
        if let Some(mode) = mode {
            rustix::fs::fchmod(&file, mode)?;
        }
        rustix::fs::fsync(&file)?;
        rustix::fs::renameat(&parent, temp.as_str(), &parent, name)?;
        Ok(())
    })();
    if let Err(e) = written {
        let _ = rustix::fs::unlinkat(&parent, temp.as_str(), AtFlags::empty());
        return Err(e);
    }
    rustix::fs::fsync(parent.as_fd())?;
    Ok(())
}

/// For the tests of escapes: a temporary folder holding `secret` and the workspace
/// `ws` (returned), with the file `file` (its folders made) and two links: `ws/out`
/// to the temporary folder (outside) and `ws/in` to the workspace's folder `inside`.
#[cfg(test)]
pub(crate) fn escapes(file: &str, inside: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    let path = ws.join(file);
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("mkdir");
    std::fs::write(&path, "inside").expect("write");
    std::fs::write(dir.path().join("secret"), "outside").expect("write");
    std::os::unix::fs::symlink(dir.path(), ws.join("out")).expect("symlink");
    std::os::unix::fs::symlink(ws.join(inside), ws.join("in")).expect("symlink");
    (dir, ws)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    use super::*;

    fn setup() -> (tempfile::TempDir, OwnedFd) {
        let (dir, ws) = escapes("a/b/f", "a");
        let root = open_root(&ws).expect("root");
        (dir, root)
    }

    fn kind(r: Result<OwnedFd, OpenError>) -> String {
        match r {
            Ok(_) => "ok".into(),
            Err(e) => format!("{e:?}")
                .split('(')
                .next()
                .unwrap_or_default()
                .to_owned(),
        }
    }

    #[test]
    fn openat2_and_the_walk_refuse_every_symlink_and_agree() {
        let (_dir, root) = setup();
        for path in ["", "a", "a/b", "out", "in", "in/b", "missing", "a/b/f"] {
            let fast = kind(open_dir(root.as_fd(), Path::new(path), false));
            let names = names(Path::new(path)).expect("names");
            let walk = kind(walk_dirs(root.as_fd(), &names, false));
            let want = match path {
                "" | "a" | "a/b" => "ok",
                "missing" => "NotFound",
                _ => "Moved",
            };
            assert_eq!((path, fast.as_str(), walk.as_str()), (path, want, want));
        }
        assert_eq!(
            kind(open_dir(root.as_fd(), Path::new("../ws"), false)),
            "Io"
        );
    }

    #[test]
    fn open_node_refuses_a_fifo_before_opening_it() {
        let (dir, root) = setup();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            dir.path().join("ws/fifo"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .expect("mkfifo");
        let err = open_node(root.as_fd(), Path::new("fifo")).expect_err("fifo");
        assert_eq!(
            err.message("fifo", "read"),
            "`fifo` is a FIFO (named pipe), not a regular file or a directory; the file tools only open regular files and directories"
        );
        assert!(matches!(
            open_node(root.as_fd(), Path::new("out")),
            Err(OpenError::Moved)
        ));
        assert!(matches!(
            open_node(root.as_fd(), Path::new("a/b/f")),
            Ok(Node::File(..))
        ));
    }

    #[test]
    fn replace_file_gives_a_new_inode_keeps_the_mode_and_makes_parents() {
        let (dir, root) = setup();
        let ws = dir.path().join("ws");
        let target = ws.join("a/b/f");
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        std::fs::hard_link(&target, ws.join("other")).expect("link");
        let ino = std::fs::metadata(&target).expect("meta").ino();
        replace_file(root.as_fd(), Path::new("a/b/f"), b"new", false).expect("replace");
        let meta = std::fs::metadata(&target).expect("meta");
        assert_ne!(meta.ino(), ino);
        assert_eq!(meta.permissions().mode() & 0o7777, 0o640);
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "new");
        assert_eq!(
            std::fs::read_to_string(ws.join("other")).expect("read"),
            "inside"
        );
        replace_file(root.as_fd(), Path::new("x/y/z"), b"deep", true).expect("create");
        assert_eq!(
            std::fs::read_to_string(ws.join("x/y/z")).expect("read"),
            "deep"
        );
        assert!(matches!(
            replace_file(root.as_fd(), Path::new("out/new"), b"no", true),
            Err(OpenError::Moved)
        ));
        assert!(!dir.path().join("new").exists());
        let left: Vec<_> = std::fs::read_dir(ws.join("a/b"))
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from("f")],
            "no temporary file left"
        );
    }

    #[test]
    fn the_walk_fallback_never_leaves_the_root_while_a_directory_is_swapped() {
        use std::sync::Arc;
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("d")).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("outside")).expect("mkdir");
        std::fs::write(ws.join("d/f"), "inside").expect("write");
        std::fs::write(dir.path().join("outside/f"), "outside").expect("write");
        std::os::unix::fs::symlink(dir.path().join("outside"), ws.join("s")).expect("symlink");
        let root = open_root(&ws).expect("root");
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let stop = Arc::clone(&stop);
            let (d, s) = (ws.join("d"), ws.join("s"));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    rustix::fs::renameat_with(
                        rustix::fs::CWD,
                        &d,
                        rustix::fs::CWD,
                        &s,
                        rustix::fs::RenameFlags::EXCHANGE,
                    )
                    .expect("exchange");
                }
            })
        };
        let mut opened = 0;
        for _ in 0..2000 {
            let names = names(Path::new("d")).expect("names");
            if let Ok(d) = walk_dirs(root.as_fd(), &names, false) {
                let fd =
                    rustix::fs::openat(&d, "f", OFlags::RDONLY | OFlags::NOFOLLOW, Mode::empty())
                        .expect("f");
                let mut text = String::new();
                io::Read::read_to_string(&mut File::from(fd), &mut text).expect("read");
                assert_eq!(text, "inside");
                opened += 1;
            }
            // Either lands inside or is refused; never outside (checked below).
            let _ = replace_file(root.as_fd(), Path::new("d/new"), b"x", true);
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().expect("swapper");
        assert!(
            !dir.path().join("outside/new").exists(),
            "a file was created outside"
        );
        assert!(opened > 0, "some opens got through between swaps");
    }
}
