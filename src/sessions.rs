//! Where sessions live (`$XCSH_HOME/sessions/<slug>-<hash>/<time>_<id>.jsonl`), what
//! a session's workspace is, how `--continue` / `--resume` find one and where their
//! tools then run, moving a session to another workspace, and `xcsh sessions`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use chrono::Utc;
use clap::Args;
use xcsh_log::index::{index_path, open_index};
use xcsh_machine::EntryId;
use xcsh_runtime::instructions;
use xcsh_runtime::{branch_at, move_workspace};

#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// List the sessions of every workspace, not only this one.
    #[arg(long)]
    all: bool,
    /// One JSON object per line instead of a table.
    #[arg(long)]
    json: bool,
}

/// `$XCSH_HOME`, or `~/.xcsh`.
pub fn home() -> Result<PathBuf> {
    if let Some(h) = std::env::var_os("XCSH_HOME") {
        return Ok(PathBuf::from(h));
    }
    let home = std::env::var_os("HOME").context("neither XCSH_HOME nor HOME is set")?;
    Ok(PathBuf::from(home).join(".xcsh"))
}

pub fn sessions_root() -> Result<PathBuf> {
    Ok(home()?.join("sessions"))
}

/// Characters of a workspace's path kept in its folder name (the end of it).
const SLUG_CHARS: usize = 48;
/// Hex digits of blake3(the workspace's canonical path) in its folder name.
const HASH_HEX: usize = 16;

/// The workspace root of a directory (§12.1): its git root (the nearest ancestor,
/// itself included, holding `.git`), else the directory; canonical.
pub fn workspace_root(dir: &Path) -> Result<PathBuf> {
    let dir = dir
        .canonicalize()
        .with_context(|| format!("{}: cannot resolve the directory", dir.display()))?;
    Ok(instructions::git_root(&dir).map_or_else(|| dir.clone(), Path::to_path_buf))
}

/// The workspace `--workspace DIR` names: DIR itself (no git root is looked for),
/// canonical.
pub fn explicit_workspace(dir: &Path) -> Result<PathBuf> {
    let canonical = dir
        .canonicalize()
        .with_context(|| format!("--workspace {}: no such directory", dir.display()))?;
    if !canonical.is_dir() {
        bail!("--workspace {}: not a directory", dir.display());
    }
    Ok(canonical)
}

/// A path with every character that is not an ASCII letter or digit, `.` or `_`
/// made `-`, and `-` trimmed from both ends: the folder name of the first layout.
fn slug(path: &Path) -> String {
    let slug = xcsh_log::sanitized(&path.display().to_string(), &['.', '_'], '-');
    slug.trim_matches('-').to_string()
}

/// The folder name of a workspace: the last [`SLUG_CHARS`] characters of its slug,
/// `-`, and the first [`HASH_HEX`] hex digits of blake3 of its path's bytes, so that
/// two workspaces whose slugs agree (`/x/a-b`, `/x/a/b`) never share a folder.
pub fn folder_name(workspace: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let slug = slug(workspace);
    // All ASCII: any byte is a character boundary.
    let tail = slug[slug.len().saturating_sub(SLUG_CHARS)..].trim_start_matches('-');
    let hash = blake3::hash(workspace.as_os_str().as_bytes()).to_hex();
    let hash = &hash[..HASH_HEX];
    if tail.is_empty() {
        hash.to_string()
    } else {
        format!("{tail}-{hash}")
    }
}

/// The folder of a workspace's sessions.
pub fn workspace_dir(workspace: &Path) -> Result<PathBuf> {
    Ok(sessions_root()?.join(folder_name(workspace)))
}

/// The folder the first layout kept a workspace's sessions in (shared by every
/// workspace of the same slug); `None` for `/`.
fn old_workspace_dir(workspace: &Path) -> Result<Option<PathBuf>> {
    let slug = slug(workspace);
    if slug.is_empty() {
        return Ok(None);
    }
    Ok(Some(sessions_root()?.join(slug)))
}

/// A new session's id and path in `workspace`'s folder. The id only needs to be
/// unique, not secret: blake3 of the time and the process id.
pub fn new_session(workspace: &Path) -> Result<(String, PathBuf)> {
    let (id, name) = xcsh_log::new_session_name(Utc::now());
    Ok((id, workspace_dir(workspace)?.join(name)))
}

fn session_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(files),
        Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
    };
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "jsonl") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn all_session_files() -> Result<Vec<PathBuf>> {
    let root = sessions_root()?;
    let mut files = Vec::new();
    let dirs = match std::fs::read_dir(&root) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(files),
        Err(e) => return Err(e).with_context(|| format!("cannot list {}", root.display())),
    };
    for dir in dirs {
        files.extend(session_files(&dir?.path())?);
    }
    files.sort();
    Ok(files)
}

/// The files that may hold sessions of `workspace`: those of its folder and of its
/// first-layout folder, oldest first (by file name: `<time>_<id>`).
fn candidate_files(workspace: &Path) -> Result<Vec<PathBuf>> {
    let mut files = session_files(&workspace_dir(workspace)?)?;
    if let Some(old) = old_workspace_dir(workspace)? {
        files.extend(session_files(&old)?);
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()).then_with(|| a.cmp(b)));
    Ok(files)
}

/// Whether a recorded workspace (a header's `cwd`, a `workspace` entry's `to`) is
/// `workspace` (canonical).
pub fn is_workspace(recorded: &str, workspace: &Path) -> bool {
    Path::new(recorded) == workspace
        || Path::new(recorded)
            .canonicalize()
            .is_ok_and(|c| c == workspace)
}

/// The recorded workspace of the session at `path`, at `at` (the leaf when `None`).
pub fn recorded_workspace(path: &Path, at: Option<EntryId>) -> Result<String> {
    xcsh_log::recorded_workspace(path, at)
        .with_context(|| format!("cannot read {}", path.display()))
}

/// The newest session of this workspace (`--continue`): of the candidate files
/// whose recorded workspace at their leaf is `workspace`, the one last active (the
/// order of `xcsh sessions`); with that recorded workspace. When the one created
/// last cannot be read, that is an error, not skipped: it may be the one last
/// active, and continuing another in its place would surprise.
pub fn newest(workspace: &Path) -> Result<(PathBuf, String)> {
    if let Some(found) = newest_of(candidate_files(workspace)?, workspace)? {
        return Ok(found);
    }
    bail!(
        "no session to continue in this workspace ({} has none in {}); start one with `xcsh run`",
        workspace.display(),
        workspace_dir(workspace)?.display()
    )
}

/// The newest session of the workspace of the current directory, for a view given
/// no SESSION; when it has none, an error that says where to find one.
pub fn newest_here() -> Result<PathBuf> {
    let here = workspace_root(&std::env::current_dir()?)?;
    match newest_of(candidate_files(&here)?, &here)? {
        Some((path, _)) => Ok(path),
        None => bail!(
            "no SESSION given, and this workspace ({}) has none: name one (`xcsh sessions --all` lists every workspace's)",
            here.display()
        ),
    }
}

/// [`newest`] among `files` (oldest first); `None` when none is of `workspace`.
fn newest_of(files: Vec<PathBuf>, workspace: &Path) -> Result<Option<(PathBuf, String)>> {
    let Some(created_last) = created_last(files.clone(), workspace)? else {
        return Ok(None);
    };
    // The listing's order (SPEC.md §16.3); a sub-agent's session is continued
    // through its parent (§29.4).
    let listing = summaries_of(files, workspace, false);
    let active_last = listing
        .sessions
        .into_iter()
        .map(|(s, _)| (PathBuf::from(s.path), s.workspace))
        .find(|(path, _)| !xcsh_log::is_child_session(path));
    Ok(Some(active_last.unwrap_or(created_last)))
}

/// The session of `workspace` created last among `files` (oldest first), with its
/// recorded workspace. A file that cannot be read before it is found is an error:
/// it may be the one last active.
fn created_last(files: Vec<PathBuf>, workspace: &Path) -> Result<Option<(PathBuf, String)>> {
    let mut files = files
        .into_iter()
        .rev()
        .filter(|p| !xcsh_log::is_child_session(p));
    while let Some(path) = files.next() {
        let recorded = match xcsh_log::recorded_workspace(&path, None) {
            Ok(recorded) => recorded,
            Err(e) => {
                let older = files.find(|p| {
                    xcsh_log::recorded_workspace(p, None).is_ok_and(|r| is_workspace(&r, workspace))
                });
                let hint = match older {
                    Some(older) => format!(
                        "to continue the newest session that can be read: --resume {} (`xcsh sessions` lists them)",
                        display_name(&older)
                    ),
                    None => "no other session of this workspace can be read: start a new one without --continue".to_string(),
                };
                bail!(
                    "--continue: the newest session of this workspace cannot be read: {}\n  {hint}",
                    naming(&path, e.to_string())
                );
            }
        };
        if is_workspace(&recorded, workspace) {
            return Ok(Some((path, recorded)));
        }
    }
    Ok(None)
}

/// Where a run on an existing session goes: the session file and the workspace its
/// tools run in.
pub struct Placed {
    pub path: PathBuf,
    pub workspace: PathBuf,
    /// `--at`, unless the move below already made the branch.
    pub at: Option<EntryId>,
}

/// Places a run on the session `name` (as the user gave it) at `path`, from `at`
/// (§22.2); `leaf_workspace` is its recorded workspace at the leaf, when known. Without `moving`, the run goes to the session's recorded workspace there,
/// said on stderr when that is not `here` (the workspace xcsh was started in). With
/// `moving` (`--workspace DIR`) naming another workspace, the session moves there: a
/// `workspace` entry, and its file goes to DIR's folder when it lives in a folder of
/// `$XCSH_HOME/sessions`. `dry` (`--show-context`) changes nothing.
pub fn place(
    name: &str,
    path: PathBuf,
    leaf_workspace: Option<String>,
    at: Option<EntryId>,
    here: &Path,
    moving: Option<&Path>,
    dry: bool,
) -> Result<Placed> {
    let recorded = match (leaf_workspace, at) {
        (Some(recorded), None) => recorded,
        (Some(_) | None, _) => recorded_workspace(&path, at)?,
    };
    let Some(to) = moving else {
        if !is_workspace(&recorded, here) {
            let workspace = Path::new(&recorded);
            if !workspace.is_dir() {
                bail!(
                    "session {name} belongs to the workspace {recorded}, which is not a directory (any more); add --workspace DIR to move it"
                );
            }
            eprintln!(
                "xcsh: session {name} belongs to the workspace {recorded}, not {}: continuing it there (its tools run there); add --workspace DIR to move it",
                here.display()
            );
        }
        return Ok(Placed {
            path,
            workspace: PathBuf::from(recorded),
            at,
        });
    };
    if is_workspace(&recorded, to) || dry {
        return Ok(Placed {
            path,
            workspace: to.to_path_buf(),
            at,
        });
    }
    if let Some(at) = at {
        let id = branch_at(&path, at)?;
        eprintln!("xcsh: continuing from entry {at} on a new branch (branch record {id})");
    }
    let (id, from) = move_workspace(&path, &to.display().to_string())?;
    let moved = move_file(&path, to);
    let file = match &moved {
        Ok(Some(new)) => format!("; its file is now {}", new.display()),
        Ok(None) => String::new(),
        Err(e) => format!(
            "; its file stays at {} (it could not be moved: {e:#})",
            path.display()
        ),
    };
    eprintln!(
        "xcsh: moved session {name} from the workspace {from} to {} (entry {id}){file}",
        to.display()
    );
    Ok(Placed {
        path: moved.ok().flatten().unwrap_or(path),
        workspace: to.to_path_buf(),
        at: None,
    })
}

/// Moves a session file that lives in a folder of `$XCSH_HOME/sessions` (and its
/// derived index) to the folder of `workspace`; `None` for a file kept elsewhere.
fn move_file(path: &Path, workspace: &Path) -> Result<Option<PathBuf>> {
    let root = sessions_root()?;
    let in_root = path
        .parent()
        .and_then(Path::parent)
        .and_then(|p| p.canonicalize().ok())
        .is_some_and(|p| root.canonicalize().is_ok_and(|r| r == p));
    let Some(file_name) = path.file_name().filter(|_| in_root) else {
        return Ok(None);
    };
    let dir = workspace_dir(workspace)?;
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let to = dir.join(file_name);
    if to.exists() {
        bail!("{} exists", to.display());
    }
    std::fs::rename(path, &to).with_context(|| format!("cannot rename it to {}", to.display()))?;
    // The index is derived: one that cannot follow is rebuilt where the log is.
    let _ = std::fs::rename(index_path(path), index_path(&to));
    Ok(Some(to))
}

/// A session named by path, id, or unambiguous id prefix (`--resume`).
pub fn resolve(name: &str) -> Result<PathBuf> {
    let as_path = Path::new(name);
    if as_path.is_file() {
        return Ok(as_path.to_path_buf());
    }
    if as_path.is_dir() {
        bail!("{name}: a directory, not a session file");
    }
    let matches: Vec<PathBuf> = all_session_files()?
        .into_iter()
        .filter(|p| xcsh_log::file_session_id(p).is_some_and(|id| id.starts_with(name)))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!("session {name}: no session file or session id matches"),
        many => bail!(
            "session {name}: the prefix matches {} sessions; give more of the id:\n  {}",
            many.len(),
            many.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join("\n  ")
        ),
    }
}

/// How a session is named to the user: the id in its file name, else its path.
pub fn display_name(path: &Path) -> String {
    xcsh_log::file_session_id(path)
        .map(str::to_owned)
        .unwrap_or_else(|| path.display().to_string())
}

/// `xcsh sessions`: the table (or JSON lines) of the sessions read, then each file
/// that could not be read on stderr; exit 0 unless every file found was unreadable.
pub fn main(args: SessionsArgs) -> Result<ExitCode> {
    let here = workspace_root(&std::env::current_dir()?)?;
    let listing = summaries(&here, args.all)?;
    if !args.json && listing.sessions.is_empty() && listing.unreadable.is_empty() {
        // Said on stderr: stdout, the list, stays empty.
        eprintln!("{}", no_sessions(&here, args.all));
    } else {
        print_listing(&listing, args.json)?;
    }
    Ok(crate::exit::Exit::passed(listing.listed_any()).into())
}

/// Prints a listing as `xcsh sessions` does: the table (or JSON lines) on stdout,
/// then each file that could not be read on stderr (stdout stays the list, also
/// with `json`).
pub fn print_listing(listing: &Listing, json: bool) -> Result<()> {
    let summaries: Vec<xcsh_inspect::SessionSummary> =
        listing.sessions.iter().map(|(s, _)| s.clone()).collect();
    if json {
        for s in &summaries {
            println!("{}", serde_json::to_string(s)?);
        }
    } else {
        println!("{}", xcsh_inspect::sessions_table(&summaries));
    }
    print_unreadable(listing);
    Ok(())
}

/// Names each file a listing could not read on stderr, as `xcsh sessions` does
/// after its list: `! PATH:LINE: REASON`.
pub fn print_unreadable(listing: &Listing) {
    for error in &listing.unreadable {
        eprintln!(
            "{}",
            xcsh_inspect::terminal::neutralize(&unreadable_line(error))
        );
    }
}

/// What `xcsh sessions` says when it lists nothing, and where to look instead.
fn no_sessions(here: &Path, all: bool) -> String {
    if all {
        "no sessions yet: `xcsh` starts one".to_string()
    } else {
        format!(
            "no sessions in this workspace ({}) yet: `xcsh` starts one; `xcsh sessions --all` lists every workspace's",
            here.display()
        )
    }
}

/// What a listing of sessions found: the sessions it read, most recently active
/// first (a sub-agent's under its parent), each with what the listing knows of its
/// file's size in bytes, and the files it could not read.
pub struct Listing {
    pub sessions: Vec<(xcsh_inspect::SessionSummary, u64)>,
    /// Each unreadable file as its error, which names it (`PATH:LINE: REASON`).
    pub unreadable: Vec<String>,
}

impl Listing {
    /// Whether the listing is a success: it listed a session, or there was nothing
    /// to list (no file, or none of this workspace); not when every file it found
    /// was unreadable.
    pub fn listed_any(&self) -> bool {
        !self.sessions.is_empty() || self.unreadable.is_empty()
    }
}

/// How `xcsh sessions` names an unreadable file after the list: `! ERROR`.
pub fn unreadable_line(error: &str) -> String {
    format!("! {error}")
}

/// The sessions of the workspace `here` (every workspace's with `all`), most
/// recently active first (the time of each one's last entry; on a tie the newer
/// file name, so the one started later), each with its file's size,
/// and the files that could not be read: what `xcsh sessions` and the UI's session
/// picker show. One unreadable file hides no other session.
pub fn summaries(here: &Path, all: bool) -> Result<Listing> {
    let files = if all {
        all_session_files()?
    } else {
        candidate_files(here)?
    };
    Ok(summaries_of(files, here, all))
}

/// [`summaries`] of these files.
fn summaries_of(files: Vec<PathBuf>, here: &Path, all: bool) -> Listing {
    let mut summaries = Vec::new();
    let mut unreadable = Vec::new();
    for path in files {
        let read = open_index(&path).and_then(|index| {
            let workspace = xcsh_log::recorded_workspace_in(&path, index.data(), None)?;
            Ok((index, workspace))
        });
        let (index, workspace) = match read {
            Ok(read) => read,
            Err(e) => {
                unreadable.push(naming(&path, e.to_string()));
                continue;
            }
        };
        if !all && !is_workspace(&workspace, here) {
            continue;
        }
        // A fork keeps its source's header; its own id is in its file name, and that
        // is the id `--resume` takes and the summary shows (`summarize_indexed`).
        let mut summary = xcsh_inspect::summarize_indexed(&path, index.data());
        // A moved session shows where it is now.
        summary.workspace = workspace;
        let size = std::fs::metadata(&path).map_or(0, |m| m.len());
        let family = xcsh_inspect::opened_in(&path, &index).ok();
        summaries.push((summary, family, size));
    }
    // The files came oldest first by name: reversed, a tie goes to the newer file.
    summaries.reverse();
    summaries.sort_by_key(|(summary, _, _)| std::cmp::Reverse(summary.active_ms));
    // A sub-agent's session goes under its parent, never at the top level.
    Listing {
        sessions: xcsh_inspect::family_order_opened(summaries),
        unreadable,
    }
}

/// An error about the file at `path`, naming it once: as it is when it starts with
/// the path (the log's errors do), else after `PATH: `.
fn naming(path: &Path, error: String) -> String {
    let shown = path.display().to_string();
    if error.starts_with(&shown) {
        error
    } else {
        format!("{shown}: {error}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fixtures/sessions/FIXTURE` copied into `dir` as a session file of id `id`
    /// (of `order`: file names sort as ages do); with `cut`, its line 10 cut in half.
    fn session_file(dir: &Path, order: u32, id: &str, fixture: &str, cut: bool) -> PathBuf {
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/sessions")
            .join(fixture);
        let mut lines: Vec<String> = std::fs::read_to_string(from)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        if cut {
            let half = lines[9].len() / 2;
            lines[9].truncate(half);
        }
        let path = dir.join(format!("2026-11-30T0{order}-00-00-000Z_{id}.jsonl"));
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path
    }

    /// A new folder holding these sessions, each `(id, fixture, cut)` as
    /// [`session_file`] makes it, oldest first: the folder and the files.
    fn session_files(sessions: &[(&str, &str, bool)]) -> (tempfile::TempDir, Vec<PathBuf>) {
        let dir = tempfile::tempdir().unwrap();
        let files = (1..)
            .zip(sessions)
            .map(|(order, &(id, fixture, cut))| session_file(dir.path(), order, id, fixture, cut))
            .collect();
        (dir, files)
    }

    /// The recorded workspace of `fixtures/sessions/tool-rounds.jsonl`.
    const TOOL_ROUNDS_WORKSPACE: &str = "/tmp/tmp.GYbSVtgKYP/tool-rounds/work";

    #[test]
    fn a_corrupt_session_file_hides_no_other_session_and_is_named_once_with_its_reason() {
        let (dir, files) = session_files(&[
            ("aaaaaaaaaaaa", "plain.jsonl", false),
            ("badbadbadbad", "tool-rounds.jsonl", true),
            ("cccccccccccc", "tool-rounds.jsonl", false),
        ]);
        let listing = summaries_of(files, Path::new("/"), true);
        let ids: Vec<&str> = listing
            .sessions
            .iter()
            .map(|(s, _)| s.id.as_str())
            .collect();
        let shown = dir.path().display().to_string();
        let unreadable: Vec<String> = listing
            .unreadable
            .iter()
            .map(|e| unreadable_line(e).replace(&shown, "D"))
            .collect();
        assert_eq!(
            (ids, unreadable, listing.listed_any()),
            (
                // Most recently active first.
                vec!["cccccccccccc", "aaaaaaaaaaaa"],
                vec![
                    "! D/2026-11-30T02-00-00-000Z_badbadbadbad.jsonl:10: malformed entry: the line has no trailing \"hash\" field".to_string()
                ],
                true
            )
        );
    }

    /// A session is listed by when it was last active (its last entry), not by when
    /// it started: a label written today on the oldest session puts it first; two
    /// sessions last active at the same time go newer file first.
    #[test]
    fn sessions_are_listed_most_recently_active_first() {
        let labelled = chrono::DateTime::parse_from_rfc3339("2026-12-01T09:30:00.123Z")
            .unwrap()
            .to_utc();
        let (_dir, files) = session_files(&[
            ("aaaaaaaaaaaa", "plain.jsonl", false),
            ("bbbbbbbbbbbb", "tool-rounds.jsonl", false),
            ("cccccccccccc", "tool-rounds.jsonl", false),
        ]);
        xcsh_inspect::fork::label(&files[0], EntryId(4), "back to it", labelled).unwrap();
        let listing = summaries_of(files, Path::new("/"), true);
        let order: Vec<(&str, i64, i64)> = listing
            .sessions
            .iter()
            .map(|(s, _)| (s.id.as_str(), s.started_ms, s.active_ms))
            .collect();
        assert_eq!(
            order,
            [
                (
                    "aaaaaaaaaaaa",
                    1_796_011_520_189,
                    labelled.timestamp_millis()
                ),
                ("cccccccccccc", 1_796_011_520_260, 1_796_011_520_288),
                ("bbbbbbbbbbbb", 1_796_011_520_260, 1_796_011_520_288),
            ]
        );
    }

    #[test]
    fn a_listing_of_only_unreadable_files_fails() {
        let (_dir, files) = session_files(&[("badbadbadbad", "tool-rounds.jsonl", true)]);
        let listing = summaries_of(files, Path::new("/"), true);
        assert_eq!(
            (
                listing.sessions.len(),
                listing.unreadable.len(),
                listing.listed_any()
            ),
            (0, 1, false)
        );
    }

    #[test]
    fn continue_does_not_skip_an_unreadable_newest_session_and_names_the_one_to_resume() {
        let (dir, files) = session_files(&[
            ("aaaaaaaaaaaa", "tool-rounds.jsonl", false),
            ("badbadbadbad", "tool-rounds.jsonl", true),
        ]);
        let error = newest_of(files, Path::new(TOOL_ROUNDS_WORKSPACE)).unwrap_err();
        assert_eq!(
            error
                .to_string()
                .replace(&dir.path().display().to_string(), "D"),
            "--continue: the newest session of this workspace cannot be read: D/2026-11-30T02-00-00-000Z_badbadbadbad.jsonl:10: malformed entry: the line has no trailing \"hash\" field\n  to continue the newest session that can be read: --resume aaaaaaaaaaaa (`xcsh sessions` lists them)"
        );
    }

    /// `--continue` takes the session worked on last, as `xcsh sessions` lists
    /// first, not the one created last.
    #[test]
    fn continue_takes_the_session_last_active() {
        let (_dir, files) = session_files(&[
            ("aaaaaaaaaaaa", "tool-rounds.jsonl", false),
            ("bbbbbbbbbbbb", "tool-rounds.jsonl", false),
        ]);
        let workspace = Path::new(TOOL_ROUNDS_WORKSPACE);
        let created_last = newest_of(files.clone(), workspace).unwrap();
        let today = chrono::DateTime::parse_from_rfc3339("2026-12-01T09:30:00Z").unwrap();
        xcsh_inspect::fork::label(&files[0], EntryId(4), "back", today.to_utc()).unwrap();
        assert_eq!(
            [created_last, newest_of(files.clone(), workspace).unwrap()],
            [
                Some((files[1].clone(), TOOL_ROUNDS_WORKSPACE.to_string())),
                Some((files[0].clone(), TOOL_ROUNDS_WORKSPACE.to_string()))
            ]
        );
    }

    #[test]
    fn two_workspaces_whose_slugs_agree_get_two_folders() {
        let (a, b) = (Path::new("/x/a-b"), Path::new("/x/a/b"));
        assert_eq!(slug(a), slug(b));
        assert_eq!(
            [folder_name(a), folder_name(b)],
            ["x-a-b-41cfb853fa85eb24", "x-a-b-5bc3668bc414be10"]
        );
    }

    #[test]
    fn a_folder_name_keeps_the_end_of_a_long_path_and_the_hash_of_all_of_it() {
        let long = Path::new(
            "/home/someone/projects/clients/a-very-long-client-name/monorepo/services/billing",
        );
        let name = folder_name(long);
        assert_eq!(
            name,
            "very-long-client-name-monorepo-services-billing-1e904970fc9a8b44"
        );
        assert_eq!(folder_name(Path::new("/")), "329f85ac6e6310f8");
        assert_eq!(
            folder_name(Path::new("/tmp/xw/work")),
            "tmp-xw-work-0ad9d49b5cb2752f"
        );
    }
}
