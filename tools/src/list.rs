//! `list {path?, recursive?}`: directory entries, directories marked with `/` and
//! symlinks with `@`; recursive listings honor .gitignore and stop at the entry cap.
//! The directory is read through a descriptor opened beneath the workspace's, and a
//! recursive walk shows only entries still there beneath it (never a swapped symlink's).

use std::path::Path;

use serde::Deserialize;

use rustix::fs::{AtFlags, FileType};

use super::beneath::Node;
use super::caps::CappedLines;
use super::params::Param;
use super::workspace::Scan;

pub(crate) const NAME: &str = "list";

pub(crate) const DESCRIPTION: &str = "List a directory of the workspace (default: the root). \
One entry per line, sorted by name; directories end with `/`, symlinks with `@`. With \
`recursive: true` every entry below it is listed as a path relative to the directory, \
skipping what .gitignore ignores and the .git directory; the listing stops at the entry cap \
(2000) and says how many entries were left out.";

pub(crate) const PARAMS: &[Param] = &[
    Param::text(
        "path",
        "Directory, relative to the workspace root (default `.`).",
    ),
    Param::boolean(
        "recursive",
        "List every entry below the directory (default false).",
    ),
];

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    path: Option<String>,
    #[serde(default)]
    recursive: bool,
}

/// A walk of `dir` honoring .gitignore (also outside git repositories), .ignore and
/// .git/info/exclude but not the user's global excludes, showing hidden files, never
/// following symlinks, skipping `.git`, sorted by name.
pub(crate) fn walk(dir: &Path) -> ignore::Walk {
    ignore::WalkBuilder::new(dir)
        .hidden(false)
        .require_git(false)
        .git_global(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git")
        .sort_by_file_name(Ord::cmp)
        .build()
}

/// `name` marked `@` for a symlink and `/` for a directory.
fn marked(name: &str, symlink: bool, dir: bool) -> String {
    if symlink {
        format!("{name}@")
    } else if dir {
        format!("{name}/")
    } else {
        name.to_owned()
    }
}

pub(crate) fn run(scan: Scan<'_>, args: Args) -> Result<String, String> {
    let Scan { ws, caps, cancel } = scan;
    let given = args.path.as_deref().unwrap_or(".");
    let dir = ws.resolve(given).map_err(|e| e.to_string())?;
    let fd = match ws.open(&dir) {
        Ok(Node::Dir(fd)) => fd,
        Ok(Node::File(..)) => {
            return Err(format!(
                "`{given}` is not a directory; use the `read` tool for files"
            ));
        }
        Err(e) => return Err(e.message(given, "list")),
    };
    let mut out = CappedLines::new(caps);
    let mut unreadable = 0usize;
    if args.recursive {
        for entry in walk(&dir) {
            if cancel.is_cancelled() {
                break;
            }
            let Ok(entry) = entry else {
                unreadable += 1;
                continue;
            };
            if entry.depth() == 0 {
                continue;
            }
            if !ws.still_there(entry.path(), entry.file_type()) {
                unreadable += 1;
                continue;
            }
            let rel = entry.path().strip_prefix(&dir).unwrap_or(entry.path());
            let file_type = entry.file_type();
            out.push(&marked(
                &rel.display().to_string(),
                file_type.is_some_and(|t| t.is_symlink()),
                file_type.is_some_and(|t| t.is_dir()),
            ));
        }
    } else {
        let read = rustix::fs::Dir::read_from(&fd)
            .map_err(|e| format!("cannot list `{given}`: {}", std::io::Error::from(e)))?;
        let mut entries: Vec<(String, bool, bool)> = Vec::new();
        for entry in read {
            let Ok(entry) = entry else {
                unreadable += 1;
                continue;
            };
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let file_type = match entry.file_type() {
                FileType::Unknown => {
                    rustix::fs::statat(&fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                        .map_or(FileType::Unknown, |s| FileType::from_raw_mode(s.st_mode))
                }
                known => known,
            };
            entries.push((
                String::from_utf8_lossy(name).into_owned(),
                file_type == FileType::Symlink,
                file_type == FileType::Directory,
            ));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, symlink, is_dir) in entries {
            out.push(&marked(&name, symlink, is_dir));
        }
    }
    if out.is_empty() && unreadable == 0 {
        return Ok(if args.recursive {
            format!("no entries under `{given}` (entries ignored by .gitignore are skipped)")
        } else {
            format!("`{given}` has no entries")
        });
    }
    let mut result = out.finish(Some("list a subdirectory, or use `glob` to narrow"));
    if unreadable > 0 {
        result.push_str(&format!("\n[{unreadable} entries could not be read]"));
    }
    Ok(result)
}
