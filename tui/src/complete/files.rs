//! The workspace's files for `@path` completion: a walk that respects `.gitignore`
//! (and `.ignore`, git's global and `info/exclude` rules) and skips hidden files,
//! capped; made at start, and again ([`FileIndex::refreshed`]) when a turn ends, so
//! files created during the session show. The only IO of the completion code.

use std::path::{Path, PathBuf};

/// How many files [`FileIndex::scan`] lists unless told otherwise.
pub const DEFAULT_FILE_LIMIT: usize = 50_000;

/// Workspace-relative file paths (with `/` separators), sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileIndex {
    paths: Vec<String>,
    truncated: bool,
    /// The walk's root and limit, for walking again (`None`: paths given).
    walk: Option<(PathBuf, usize)>,
}

impl FileIndex {
    /// The files under `root` (at most `limit`), walking as git would see them:
    /// ignored and hidden files left out, also outside a git repository. Entries
    /// that cannot be read and paths that are not UTF-8 are skipped.
    pub fn scan(root: &Path, limit: usize) -> FileIndex {
        let mut paths = Vec::new();
        let mut truncated = false;
        let walk = ignore::WalkBuilder::new(root)
            .hidden(true)
            .require_git(false)
            .follow_links(false)
            .build();
        for entry in walk.flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(relative) = entry.path().strip_prefix(root) else {
                continue;
            };
            let Some(relative) = relative.to_str() else {
                continue;
            };
            if paths.len() == limit {
                truncated = true;
                break;
            }
            paths.push(relative.replace(std::path::MAIN_SEPARATOR, "/"));
        }
        paths.sort();
        FileIndex {
            paths,
            truncated,
            walk: Some((root.to_path_buf(), limit)),
        }
    }

    /// The same walk made again (same root, same limit): the files as they are now,
    /// those created, renamed or deleted since included. An index of given paths
    /// ([`FileIndex::from_paths`]) is returned as it is. Made off the UI loop when a
    /// turn ends (a turn is what creates files), for the editor's popup.
    pub fn refreshed(&self) -> FileIndex {
        match &self.walk {
            Some((root, limit)) => FileIndex::scan(root, *limit),
            None => self.clone(),
        }
    }

    /// [`FileIndex::refreshed`], in place.
    pub fn refresh(&mut self) {
        *self = self.refreshed();
    }

    /// An index of the given paths (sorted here), for tests and benchmarks.
    pub fn from_paths(mut paths: Vec<String>) -> FileIndex {
        paths.sort();
        paths.dedup();
        FileIndex {
            paths,
            truncated: false,
            walk: None,
        }
    }

    /// The paths, sorted.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// Whether the walk stopped at its limit.
    pub fn truncated(&self) -> bool {
        self.truncated
    }
}

#[cfg(test)]
mod tests;
