//! `grep {pattern, path?, glob?}`: a regex search over the workspace honoring
//! .gitignore, with ripgrep's crates (`ignore`, `grep-regex`, `grep-searcher`);
//! output `path:line:text`. Every file is re-opened beneath the workspace's
//! descriptor before it is searched (the walk goes by name).

use std::fs::File;
use std::path::Path;

use grep_regex::RegexMatcher;
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use serde::Deserialize;

use super::beneath::Node;
use super::caps::CappedLines;
use super::glob::{PathGlob, files};
use super::params::Param;
use super::workspace::Scan;

pub(crate) const NAME: &str = "grep";

/// The most memory the searcher may use for one line (64 MiB): a longer line makes
/// the file count as unreadable rather than be loaded whole.
const HEAP_LIMIT: usize = 64 << 20;

pub(crate) const DESCRIPTION: &str = "Search file contents with a regular expression (Rust \
`regex` syntax, like ripgrep; a match never spans lines). Searches `path` (a file or a \
directory, default: the workspace root), skipping files ignored by .gitignore, the .git \
directory and binary files. `glob` restricts the files searched (e.g. `*.rs`, or \
`src/**/*.ts` relative to `path`). Prints one `path:line:text` per matching line, paths \
relative to the workspace root, sorted by path; capped at 2000 lines.";

pub(crate) const PARAMS: &[Param] = &[
    Param::text(
        "pattern",
        "Regular expression, e.g. `fn\\s+main` or `(?i)todo`.",
    )
    .required(),
    Param::text(
        "path",
        "File or directory to search, relative to the workspace root (default `.`).",
    ),
    Param::text(
        "glob",
        "Only search files matching this glob (a glob without `/` matches file names).",
    ),
];

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
}

pub(crate) fn run(scan: Scan<'_>, args: Args) -> Result<String, String> {
    let Scan { ws, caps, cancel } = scan;
    // Parsed first for an error message that shows the pattern as given (the
    // matcher's own errors show it wrapped in a group).
    regex_syntax::Parser::new()
        .parse(&args.pattern)
        .map_err(|e| format!("invalid regex in `pattern`: {e}"))?;
    let matcher = RegexMatcher::new_line_matcher(&args.pattern)
        .map_err(|e| format!("invalid regex in `pattern`: {e}"))?;
    let glob = args
        .glob
        .as_deref()
        .map(|g| PathGlob::new(g, "glob"))
        .transpose()?;
    let given = args.path.as_deref().unwrap_or(".");
    let target = ws.resolve(given).map_err(|e| e.to_string())?;
    let node = ws.open(&target).map_err(|e| e.message(given, "search"))?;
    let mut searcher = SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .heap_limit(Some(HEAP_LIMIT))
        .build();
    let mut out = CappedLines::new(caps);
    let mut unreadable = 0usize;
    let mut search = |path: &Path, file: Option<File>, out: &mut CappedLines| {
        let Some(file) = file else {
            unreadable += 1;
            return;
        };
        let shown = ws.display_path(path);
        let result = searcher.search_file(
            &matcher,
            &file,
            Lossy(|line_number, line| {
                out.push(&format!(
                    "{shown}:{line_number}:{}",
                    line.trim_end_matches(['\n', '\r'])
                ));
                Ok(!cancel.is_cancelled())
            }),
        );
        if result.is_err() {
            unreadable += 1;
        }
    };
    match node {
        Node::Dir(_) => {
            for entry in files(&target, glob.as_ref(), cancel) {
                // Re-opened beneath the workspace: the walk goes by name.
                let file = ws.open_walked(entry.path());
                search(entry.path(), file, &mut out);
            }
        }
        Node::File(file, _) => search(&target, Some(file), &mut out),
    }
    let mut result = if out.is_empty() {
        format!(
            "no matches for `{}` in `{given}` (files ignored by .gitignore and binary files are skipped)",
            args.pattern
        )
    } else {
        out.finish(Some("narrow the pattern, the path or the glob"))
    };
    if unreadable > 0 {
        result.push_str(&format!("\n[{unreadable} files could not be read]"));
    }
    Ok(result)
}
