//! `glob {pattern, path?}`: the files under a directory whose path matches a glob,
//! honoring .gitignore (crates `globset` and `ignore`); only files still there beneath
//! the workspace's descriptor are shown (never a swapped symlink's).

use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::beneath::Node;
use super::caps::CappedLines;
use super::list::walk;
use super::params::Param;
use super::workspace::Scan;

pub(crate) const NAME: &str = "glob";

pub(crate) const DESCRIPTION: &str = "Find files by path pattern. `pattern` is a glob matched \
against each file's path relative to `path` (default: the workspace root): `*` and `?` stay \
within one path component, `**` crosses directories, `{a,b}` and `[abc]` work; a pattern \
without `/` matches file names at any depth (`*.rs` finds every Rust file). Files ignored by \
.gitignore and the .git directory are skipped. Prints matching file paths relative to the \
workspace root, one per line, sorted; capped at 2000 paths.";

pub(crate) const PARAMS: &[Param] = &[
    Param::text("pattern", "Glob, e.g. `**/*.rs`, `src/*.toml` or `*.md`.").required(),
    Param::text(
        "path",
        "Directory to search, relative to the workspace root (default `.`).",
    ),
];

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    pattern: String,
    path: Option<String>,
}

/// A compiled glob: a pattern with a `/` is matched against the whole relative path,
/// one without against the file name.
#[derive(Debug)]
pub(crate) struct PathGlob {
    matcher: GlobMatcher,
    name_only: bool,
}

impl PathGlob {
    /// Compiles `pattern`; the error names the argument `arg`.
    pub(crate) fn new(pattern: &str, arg: &str) -> Result<PathGlob, String> {
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("invalid glob in `{arg}`: {e}"))?;
        Ok(PathGlob {
            matcher: glob.compile_matcher(),
            name_only: !pattern.contains('/'),
        })
    }

    /// Whether `rel` (relative to the search directory) matches.
    pub(crate) fn is_match(&self, rel: &Path) -> bool {
        if self.name_only {
            rel.file_name().is_some_and(|n| self.matcher.is_match(n))
        } else {
            self.matcher.is_match(rel)
        }
    }
}

/// The files below `dir` as `walk` visits them, those whose path relative to `dir`
/// matches `glob` when there is one; the walk stops when `cancel` fires.
pub(crate) fn files<'a>(
    dir: &'a Path,
    glob: Option<&'a PathGlob>,
    cancel: &'a CancellationToken,
) -> impl Iterator<Item = ignore::DirEntry> + 'a {
    walk(dir)
        .flatten()
        .take_while(|_| !cancel.is_cancelled())
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
        .filter(move |entry| {
            let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
            glob.is_none_or(|g| g.is_match(rel))
        })
}

pub(crate) fn run(scan: Scan<'_>, args: Args) -> Result<String, String> {
    let Scan { ws, caps, cancel } = scan;
    let glob = PathGlob::new(&args.pattern, "pattern")?;
    let given = args.path.as_deref().unwrap_or(".");
    let dir = ws.resolve(given).map_err(|e| e.to_string())?;
    match ws.open(&dir) {
        Ok(Node::Dir(_)) => {}
        Ok(Node::File(..)) => return Err(format!("`{given}` is not a directory")),
        Err(e) => return Err(e.message(given, "search")),
    }
    let mut out = CappedLines::new(caps);
    for entry in files(&dir, Some(&glob), cancel) {
        if ws.still_there(entry.path(), entry.file_type()) {
            out.push(&ws.display_path(entry.path()));
        }
    }
    if out.is_empty() {
        return Ok(format!(
            "no files match `{}` under `{given}` (files ignored by .gitignore are skipped)",
            args.pattern
        ));
    }
    Ok(out.finish(Some("narrow the pattern or the path")))
}
