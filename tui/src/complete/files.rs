//! The workspace's files for `@path` completion: a one-time walk that respects
//! `.gitignore` (and `.ignore`, git's global and `info/exclude` rules) and skips
//! hidden files, capped. The only IO of the completion code.

use std::path::Path;

/// How many files [`FileIndex::scan`] lists unless told otherwise.
pub const DEFAULT_FILE_LIMIT: usize = 50_000;

/// Workspace-relative file paths (with `/` separators), sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileIndex {
    paths: Vec<String>,
    truncated: bool,
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
        FileIndex { paths, truncated }
    }

    /// An index of the given paths (sorted here), for tests and benchmarks.
    pub fn from_paths(mut paths: Vec<String>) -> FileIndex {
        paths.sort();
        paths.dedup();
        FileIndex {
            paths,
            truncated: false,
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
