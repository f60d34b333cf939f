//! `write {path, content}`: create a file (and its parent directories) or overwrite
//! one read earlier in the run, through the workspace's directory descriptor (a new
//! file renamed over the old one).

use std::path::PathBuf;

use serde::Deserialize;

use super::beneath::{Node, OpenError};
use super::blobs::BeforeImage;
use super::params::Param;
use super::read::read_whole;
use super::workspace::{FileChange, Workspace};

pub(crate) const NAME: &str = "write";

pub(crate) const DESCRIPTION: &str = "Write `content` to a file, creating it (and any missing \
parent directories) or replacing it entirely. An existing file must have been read with \
`read` in this run and not changed since; prefer `edit` for changing part of a file.";

pub(crate) const PARAMS: &[Param] = &[
    Param::text("path", "File to write, relative to the workspace root.").required(),
    Param::string("content", "The whole new content of the file.").required(),
];

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    path: String,
    content: String,
}

/// The file `args` writes and its text now (`None`: a new file), or the error the
/// call returns: what the call does before it changes the file, and the whole of the
/// check made before the user is asked about it (`ToolExecutor::check`).
pub(crate) fn plan(ws: &Workspace, args: &Args) -> Result<(PathBuf, Option<String>), String> {
    let given = &args.path;
    let path = ws.resolve(given).map_err(|e| e.to_string())?;
    let before = match ws.open(&path) {
        Ok(Node::Dir(_)) => {
            return Err(format!("`{given}` is a directory, not a file"));
        }
        Ok(Node::File(file, stat)) => {
            let bytes = read_whole(file, &stat, given)?;
            ws.check_fresh(&path, &bytes, given)
                .map_err(|e| e.to_string())?;
            // The ledger only holds hashes of text `read` accepted, so this holds.
            Some(String::from_utf8(bytes).map_err(|_| {
                format!("`{given}` is not a UTF-8 text file; write only replaces text files")
            })?)
        }
        Err(OpenError::NotFound) => None,
        Err(e) => return Err(e.message(given, "write")),
    };
    Ok((path, before))
}

/// `keep` saves the before-image just before the file is replaced (§21.6); its
/// error stops the call with the file unchanged.
pub(crate) fn run(
    ws: &Workspace,
    args: Args,
    keep: &dyn Fn(BeforeImage<'_>) -> Result<(), String>,
) -> Result<(String, FileChange), String> {
    let given = &args.path;
    let (path, before) = plan(ws, &args)?;
    keep(BeforeImage {
        path: &path,
        before: before.as_deref().map(str::as_bytes),
        after: args.content.as_bytes(),
    })?;
    ws.replace(&path, args.content.as_bytes(), true)
        .map_err(|e| e.message(given, "write"))?;
    ws.record(&path, args.content.as_bytes());
    let verb = if before.is_some() {
        "overwrote"
    } else {
        "created"
    };
    let lines = args.content.lines().count();
    let bytes = args.content.len();
    let plural = if lines == 1 { "" } else { "s" };
    Ok((
        format!("{verb} `{given}` ({lines} line{plural}, {bytes} bytes)"),
        FileChange::new(&path, before.as_deref(), &args.content),
    ))
}
