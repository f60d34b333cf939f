//! `read {path, offset?, limit?}`: a text file with 1-based line numbers, like
//! `cat -n`; binary files are refused. Records the content hash for read-before-write.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{Value, json};

use super::caps::{CappedLines, Caps};
use super::workspace::Workspace;

pub(crate) const NAME: &str = "read";

pub(crate) const DESCRIPTION: &str = "Read a text file in the workspace. Output lines are \
prefixed with their 1-based line number and a tab, like `cat -n` (the prefix is not part of \
the file). `offset` is the first line to show (1-based, default 1) and `limit` the number of \
lines (default and cap 2000); long output is truncated and the result says how to continue. \
Binary files are refused. A file must be read before `edit` or `write` may change it.";

pub(crate) fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "File path, relative to the workspace root (or absolute inside it)."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to show, 1-based (default 1)."},
            "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to show (default: up to the output cap)."}
        },
        "required": ["path"],
        "additionalProperties": false
    })
}

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    path: String,
    offset: Option<usize>,
    limit: Option<usize>,
}

/// How many leading bytes are scanned for a NUL byte.
const BINARY_SNIFF_BYTES: usize = 8192;

/// A successful read: the text for the model, and the file and content hash for the
/// ledger (recorded by the caller only once the result is delivered, so a read
/// cancelled mid-way never counts as read).
#[derive(Debug)]
pub(crate) struct Read {
    pub(crate) text: String,
    pub(crate) path: PathBuf,
    pub(crate) hash: blake3::Hash,
}

pub(crate) fn run(ws: &Workspace, caps: Caps, args: Args) -> Result<Read, String> {
    let given = &args.path;
    let path = ws.resolve(given).map_err(|e| e.to_string())?;
    let meta = match std::fs::metadata(&path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "`{given}` does not exist; use `list` or `glob` to find files"
            ));
        }
        Err(e) => return Err(format!("cannot read `{given}`: {e}")),
    };
    if meta.is_dir() {
        return Err(format!(
            "`{given}` is a directory; use the `list` tool to see its entries"
        ));
    }
    let bytes = std::fs::read(&path).map_err(|e| format!("cannot read `{given}`: {e}"))?;
    if let Some(at) = bytes.iter().take(BINARY_SNIFF_BYTES).position(|b| *b == 0) {
        return Err(format!(
            "`{given}` is a binary file (NUL byte at offset {at}); read only shows text files"
        ));
    }
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        format!(
            "`{given}` is a binary file (not valid UTF-8 at byte {}); read only shows text files",
            e.valid_up_to()
        )
    })?;
    let hash = blake3::hash(&bytes);
    let done = |text: String| Read { text, path, hash };

    let total = text.lines().count();
    if total == 0 {
        return Ok(done(format!("`{given}` is empty (0 lines)")));
    }
    let offset = args.offset.unwrap_or(1).max(1);
    if offset > total {
        return Err(format!(
            "`offset` {offset} is past the end of `{given}`, which has {total} lines"
        ));
    }
    let limit = args.limit.unwrap_or(usize::MAX);
    let mut out = CappedLines::new(caps);
    for (i, line) in text.lines().enumerate().skip(offset - 1).take(limit) {
        out.push(&format!("{:>6}\t{line}", i + 1));
    }
    let last_shown = offset - 1 + out.shown_lines();
    let hint = format!("continue with offset {}", last_shown + 1);
    let truncated = out.truncated();
    let offered_end = offset - 1 + out.total_lines();
    let mut result = out.finish(Some(&hint));
    if !truncated && offered_end < total {
        result.push_str(&format!(
            "\n[lines {offset}-{offered_end} of {total} shown; {hint}]"
        ));
    }
    Ok(done(result))
}
