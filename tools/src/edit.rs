//! `edit {path, old_string, new_string, replace_all?}`: exact-string replacement in a
//! file read earlier in the run; the result shows a unified diff made with `similar`.

use std::path::PathBuf;

use serde::Deserialize;
use similar::TextDiff;

use super::beneath::{Node, OpenError};
use super::blobs::BeforeImage;
use super::caps::{CappedLines, Caps};
use super::params::Param;
use super::read::read_whole;
use super::workspace::{FileChange, Workspace};

pub(crate) const NAME: &str = "edit";

pub(crate) const DESCRIPTION: &str = "Replace exact text in an existing file. `old_string` \
must occur exactly once in the file (include enough surrounding lines to make it unique), \
unless `replace_all` is true, which replaces every occurrence. Matching is exact, whitespace \
and indentation included; do not include the line-number prefix that `read` shows. The file \
must have been read with `read` in this run and not changed since. The result is a unified \
diff of the change. To create a file, use `write`.";

pub(crate) const PARAMS: &[Param] = &[
    Param::text("path", "File to edit, relative to the workspace root.").required(),
    Param::text("old_string", "Exact text to replace.").required(),
    Param::string("new_string", "Replacement text (may be empty to delete).").required(),
    Param::boolean(
        "replace_all",
        "Replace every occurrence instead of exactly one (default false).",
    ),
];

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

/// An edit as it will be made, worked out without changing anything: the file, its
/// text now and after, and how many occurrences are replaced.
pub(crate) struct Planned {
    path: PathBuf,
    before: String,
    after: String,
    count: usize,
}

/// Works out the edit `args` asks for, or the error the call returns: what the call
/// does before it changes the file, and the whole of the check made before the user
/// is asked about it (`ToolExecutor::check`).
pub(crate) fn plan(ws: &Workspace, args: &Args) -> Result<Planned, String> {
    let given = &args.path;
    if args.old_string == args.new_string {
        return Err(format!(
            "`old_string` and `new_string` are identical; nothing to change in `{given}`"
        ));
    }
    let path = ws.resolve(given).map_err(|e| e.to_string())?;
    let bytes = match ws.open(&path) {
        Ok(Node::File(file, stat)) => read_whole(file, &stat, given)?,
        Ok(Node::Dir(_)) => return Err(format!("`{given}` is a directory, not a file")),
        Err(OpenError::NotFound) => {
            return Err(format!(
                "`{given}` does not exist; use the `write` tool to create a file"
            ));
        }
        Err(e) => return Err(e.message(given, "edit")),
    };
    ws.check_fresh(&path, &bytes, given)
        .map_err(|e| e.to_string())?;
    let before = String::from_utf8(bytes)
        .map_err(|_| format!("`{given}` is not a UTF-8 text file; edit only changes text files"))?;
    let count = before.matches(args.old_string.as_str()).count();
    if count == 0 {
        return Err(format!(
            "`old_string` was not found in `{given}`; it must match the file exactly, whitespace and indentation included, without `read`'s line-number prefixes"
        ));
    }
    if count > 1 && !args.replace_all {
        return Err(format!(
            "`old_string` occurs {count} times in `{given}`; include more surrounding text to make it unique, or set `replace_all` to true"
        ));
    }
    let after = if args.replace_all {
        before.replace(&args.old_string, &args.new_string)
    } else {
        before.replacen(&args.old_string, &args.new_string, 1)
    };
    Ok(Planned {
        path,
        before,
        after,
        count,
    })
}

/// `keep` saves the before-image just before the file is replaced (§21.6); its
/// error stops the call with the file unchanged.
pub(crate) fn run(
    ws: &Workspace,
    caps: Caps,
    args: Args,
    keep: &dyn Fn(BeforeImage<'_>) -> Result<(), String>,
) -> Result<(String, FileChange), String> {
    let given = &args.path;
    let Planned {
        path,
        before,
        after,
        count,
    } = plan(ws, &args)?;
    keep(BeforeImage {
        path: &path,
        before: Some(before.as_bytes()),
        after: after.as_bytes(),
    })?;
    ws.replace(&path, after.as_bytes(), false)
        .map_err(|e| e.message(given, "edit"))?;
    ws.record(&path, after.as_bytes());

    let shown = ws.display_path(&path);
    let diff = TextDiff::from_lines(&before, &after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{shown}"), &format!("b/{shown}"))
        .to_string();
    let mut out = CappedLines::new(caps);
    for line in diff.lines() {
        out.push(line);
    }
    let plural = if count == 1 { "" } else { "s" };
    let text = format!(
        "edited `{given}`: replaced {count} occurrence{plural}\n{}",
        out.finish(Some("read the file to see the rest"))
    );
    Ok((text, FileChange::new(&path, Some(&before), &after)))
}
