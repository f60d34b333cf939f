//! `/undo` and `xcsh undo`: puts back the files the last run on the current branch
//! changed, when they are still as that run (or a call of it a crash interrupted)
//! left them, and records an `undo` entry: an input whose note the machine adds to
//! the context of this branch, so that the next request on it tells the model
//! (SPEC.md §17.3). An interrupted call's files come back from its before-images
//! (§21.6).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use chrono::Utc;
use xcsh_log::blobs::{BlobStore, ManifestFile};
use xcsh_log::{Body, Dag, FileChange, Record, SessionWriter};
use xcsh_machine::{Decision, Effect, EntryId, Input, SyntheticReason};
use xcsh_runtime::interrupted::{self, FileNow};
use xcsh_runtime::{Reopened, rebuild_machine, reopen_at_leaf};

/// What an undo reverted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undone {
    pub run: xcsh_machine::EntryId,
    /// The interrupted call's `tool_dispatched` entry, when one call was undone
    /// (`xcsh undo SESSION@ENTRY`).
    pub call: Option<EntryId>,
    pub files: Vec<PathBuf>,
    /// What the model is told, with the next request on this branch.
    pub note: String,
    /// How many `bash` commands the run ran: what they changed is not recorded, so
    /// it is not put back (only `edit` and `write` record their changes).
    pub commands: usize,
}

impl Undone {
    /// What `/undo` and `xcsh undo` print after `[undo] `.
    pub fn said(&self) -> String {
        let files: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
        let what = match self.call {
            Some(entry) => format!("the interrupted call at entry {entry}"),
            None => format!("the run at entry {}", self.run),
        };
        format!(
            "reverted the changes of {what}: {}; the model is told with the next prompt on this branch{}",
            files.join(", "),
            not_put_back(self.commands)
        )
    }
}

/// What an undo says of the `bash` commands of the run (`commands` of them): what
/// they changed is not recorded, so it is not put back.
fn not_put_back(commands: usize) -> String {
    match commands {
        0 => String::new(),
        n => format!(
            ". Not put back: whatever its {n} bash command(s) changed (undo reverts what edit and write record)"
        ),
    }
}

/// The note an undo of `files` tells the model (paths relative to `cwd` inside it).
fn note(cwd: &Path, files: &[PathBuf]) -> String {
    let names: Vec<String> = files
        .iter()
        .map(|f| f.strip_prefix(cwd).unwrap_or(f).display().to_string())
        .collect();
    format!(
        "[Note: the user reverted (/undo) the file changes of the previous turn; these files are back as they were before it: {}]",
        names.join(", ")
    )
}

/// The before-image store of this `$XCSH_HOME`.
pub fn store() -> Result<BlobStore> {
    Ok(BlobStore::new(crate::sessions::home()?.join("blobs")))
}

/// How one file is put back: from the run's first recorded change of it, or from
/// the before-image of an interrupted call.
enum Restore {
    Change(FileChange),
    Image(ManifestFile),
}

/// How one file must be now for undo to touch it: as the run's last recorded change
/// of it left it, or as an interrupted call may have left it.
enum Expect {
    After(String),
    Interrupted(ManifestFile),
}

/// A session opened for an undo: its whole log, and its leaf, where the undo goes.
struct Opened {
    log: xcsh_log::SessionLog,
    tip: Tip,
}

/// The writer of a session and its machine rebuilt at the leaf `leaf`.
struct Tip {
    writer: SessionWriter,
    machine: xcsh_machine::Machine,
    leaf: EntryId,
}

/// Opens the session at `path` as a run opens it: a run the previous process left
/// open is settled first, its unwritten decisions recorded (§12.8); then the whole
/// log is read.
fn open_settled(path: &Path) -> Result<Opened> {
    let Reopened {
        mut writer,
        machine,
        leaf,
        ..
    } = reopen_at_leaf(path)?;
    writer.sync()?;
    let log = xcsh_log::read_session(path)?;
    Ok(Opened {
        log,
        tip: Tip {
            writer,
            machine,
            leaf,
        },
    })
}

/// Reverts the file changes of the last run on the branch of the session at `path`.
/// Refuses, changing nothing, when a file differs from what the run left. A run the
/// previous process left unfinished is settled first, as the next run would
/// (§12.8); the calls it interrupted are put back from their before-images.
pub fn undo_last_run(path: &Path) -> Result<Undone> {
    let Opened { log, tip } = open_settled(path)?;
    let branch = Dag::from_log(&log).path_to_root(tip.leaf)?;
    let entries: Vec<_> = branch.iter().filter_map(|id| log.get(*id)).collect();
    let Some(start) = entries
        .iter()
        .rposition(|e| matches!(e.body, Body::Record(Record::UserMessage { .. })))
    else {
        bail!("there is no run to undo on this branch");
    };
    let run = entries[start].id;
    if entries[start..]
        .iter()
        .any(|e| matches!(&e.body, Body::Record(Record::Undo { run: r, .. }) if *r == run))
    {
        bail!("the run at entry {run} was already undone");
    }
    let lost: Vec<_> = entries[start..]
        .iter()
        .filter_map(|e| match &e.body {
            Body::Decision(Decision::SyntheticResult {
                call,
                reason: SyntheticReason::Lost,
                ..
            }) => Some(call.id.clone()),
            _ => None,
        })
        .collect();
    // Per file, in the order of the run: how to put it back (its first touch) and
    // how it must be now (its last). A recorded change counts where its result is;
    // an interrupted call where it was dispatched.
    let session_id = xcsh_log::session_id(path, &log.header().session_id).to_string();
    let store = store()?;
    let mut files: BTreeMap<PathBuf, (Restore, Expect)> = BTreeMap::new();
    let mut images: Vec<(String, EntryId)> = Vec::new();
    for (i, e) in entries.iter().enumerate().skip(start) {
        match &e.body {
            Body::Record(Record::ToolResult(r)) => {
                for c in &r.changes {
                    let expect = Expect::After(c.after_hash.clone());
                    files
                        .entry(c.path.clone())
                        .and_modify(|(_, last)| *last = Expect::After(c.after_hash.clone()))
                        .or_insert_with(|| (Restore::Change(c.clone()), expect));
                }
            }
            // The last dispatch of a lost call id in the run is the lost call.
            Body::Decision(Decision::ToolDispatched { call, .. })
                if lost.contains(&call.id)
                    && !entries[i + 1..].iter().any(|later| {
                        matches!(&later.body, Body::Decision(Decision::ToolDispatched { call: c, .. }) if c.id == call.id)
                    }) =>
            {
                let Some(manifest) = store
                    .manifest(&session_id, e.id)
                    .with_context(|| format!("the before-image of entry {}", e.id))?
                else {
                    continue;
                };
                images.push((session_id.clone(), e.id));
                for f in manifest.files {
                    files
                        .entry(f.path.clone())
                        .and_modify(|(_, last)| *last = Expect::Interrupted(f.clone()))
                        .or_insert_with(|| (Restore::Image(f.clone()), Expect::Interrupted(f)));
                }
            }
            _ => {}
        }
    }
    // A command line can change anything; none of it is recorded.
    let commands = entries[start..]
        .iter()
        .filter(|e| {
            matches!(&e.body, Body::Decision(Decision::ToolDispatched { call, .. }) if call.name == "bash")
        })
        .count();
    if files.is_empty() {
        bail!(
            "the last run (entry {run}) changed no file with edit or write{}",
            not_put_back(commands)
        );
    }
    for (file, (_, last)) in &files {
        let unchanged = match last {
            Expect::After(hash) => {
                let now = std::fs::read(file).ok();
                let now_hash = now.as_ref().map(|b| blake3::hash(b).to_hex().to_string());
                now_hash.as_deref() == Some(hash.as_str())
            }
            Expect::Interrupted(image) => matches!(
                interrupted::file_now(image),
                Ok(FileNow::Original | FileNow::CallsContent)
            ),
        };
        if !unchanged {
            bail!(
                "{} changed since the run left it: not undoing anything",
                file.display()
            );
        }
    }
    for (file, (first, _)) in &files {
        match first {
            Restore::Change(c) => match &c.before {
                Some(before) => std::fs::write(file, before)?,
                None => match std::fs::remove_file(file) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
                    _ => {}
                },
            },
            Restore::Image(image) => store.restore(image)?,
        }
    }
    let reverted: Vec<PathBuf> = files.into_keys().collect();
    let note = note(Path::new(&log.header().cwd), &reverted);
    tip.record_undo(run, &reverted, &note)?;
    // The files are back and the undo is durable: the before-images are done with.
    if !images.is_empty() {
        let _ = store.release(&images);
    }
    Ok(Undone {
        run,
        call: None,
        files: reverted,
        note,
        commands,
    })
}

impl Tip {
    /// Appends `undo {run, files, note}` after the leaf, applies it to the machine,
    /// records what it decides (nothing, between runs) and syncs.
    fn record_undo(self, run: EntryId, files: &[PathBuf], note: &str) -> Result<()> {
        let Tip {
            mut writer,
            mut machine,
            leaf,
        } = self;
        // Recorded, then applied; the machine makes no decision between runs, but
        // what it makes is recorded after it, as the runtime does.
        let (mut at, _) = writer.append(
            leaf,
            Utc::now(),
            &Body::Record(Record::Undo {
                run,
                files: files.to_vec(),
                note: Some(note.to_owned()),
            }),
        )?;
        for effect in machine.handle(Input::Undo {
            note: note.to_owned(),
        }) {
            if let Effect::Record(d) = effect {
                (at, _) = writer.append(at, Utc::now(), &Body::Decision(d))?;
            }
        }
        writer.sync()?;
        Ok(())
    }
}

/// `xcsh undo SESSION@ENTRY`: puts back the files of the interrupted call whose
/// `tool_dispatched` entry is ENTRY (on the leaf's branch) from its before-image,
/// when each is still its saved original or the call's content, and records `undo`
/// (its `run`: the run of the call). A run left open is settled first (§12.8).
pub fn undo_call(path: &Path, entry: EntryId) -> Result<Undone> {
    let Opened { log, tip } = open_settled(path)?;
    let leaf = tip.leaf;
    let Some(dispatched) = log.get(entry) else {
        return Err(log.no_entry(entry).into());
    };
    let Body::Decision(Decision::ToolDispatched { call, .. }) = &dispatched.body else {
        bail!(
            "entry {entry} is not a tool call's dispatch (`tool_dispatched`); `xcsh undo SESSION` undoes the last run"
        );
    };
    let branch = Dag::from_log(&log).path_to_root(leaf)?;
    let Some(at) = branch.iter().position(|id| *id == entry) else {
        bail!("entry {entry} is not on the branch at the leaf (entry {leaf})");
    };
    let Some(run) = branch[..at].iter().rev().copied().find(|id| {
        log.get(*id)
            .is_some_and(|e| matches!(e.body, Body::Record(Record::UserMessage { .. })))
    }) else {
        bail!("entry {entry} is in no run");
    };
    let session_id = xcsh_log::session_id(path, &log.header().session_id).to_string();
    let store = store()?;
    let Some(manifest) = store.manifest(&session_id, entry)? else {
        bail!(
            "no before-image is kept for entry {entry} (`{}` {}): only a call a crash interrupted has one until it is undone; a settled call's changes are undone with its run (`/undo`, `xcsh undo SESSION`)",
            call.name,
            call.id
        );
    };
    for file in &manifest.files {
        let now = interrupted::file_now(file)
            .with_context(|| format!("cannot read {}", file.path.display()))?;
        if now == FileNow::Other {
            bail!(
                "{} changed since the call left it: not undoing anything",
                file.path.display()
            );
        }
    }
    for file in &manifest.files {
        store.restore(file)?;
    }
    let reverted: Vec<PathBuf> = manifest.files.iter().map(|f| f.path.clone()).collect();
    let cwd = PathBuf::from(&log.header().cwd);
    let names: Vec<String> = reverted
        .iter()
        .map(|f| f.strip_prefix(&cwd).unwrap_or(f).display().to_string())
        .collect();
    let note = format!(
        "[Note: the user reverted (undo) the file changes of the interrupted call `{}` ({}); these files are back as they were before it: {}]",
        call.name,
        call.id,
        names.join(", ")
    );
    tip.record_undo(run, &reverted, &note)?;
    let _ = store.release(&[(session_id, entry)]);
    Ok(Undone {
        run,
        call: Some(entry),
        files: reverted,
        note,
        commands: 0,
    })
}

/// What the calls a crash interrupted on the leaf's branch of the session at `path`
/// may have changed (one line each), without changing the session: what the next
/// run's recovery would answer `lost`.
///
/// Only when the store holds a manifest of the session (a directory listing): the
/// log is read only then, so continuing a large session stays as quick as its index
/// makes it. Interrupted calls without a manifest are listed by the recovery the
/// next run makes (§21.6).
pub fn interrupted_at_leaf(path: &Path) -> Result<Vec<String>> {
    let store = store()?;
    let named = xcsh_log::file_session_id(path)
        .map(|id| store.manifests_of(id))
        .transpose()?;
    if named.is_some_and(|m| m.is_empty()) {
        return Ok(Vec::new());
    }
    let log = xcsh_log::read_session(path)?;
    let leaf = log.leaf();
    let (machine, _) = rebuild_machine(&log, leaf)?;
    if !machine.is_running() {
        return Ok(Vec::new());
    }
    let lost: Vec<_> = machine
        .clone()
        .handle(Input::Recover)
        .into_iter()
        .filter_map(|effect| match effect {
            Effect::Record(Decision::SyntheticResult {
                call,
                reason: SyntheticReason::Lost,
                ..
            }) => Some(call),
            _ => None,
        })
        .collect();
    let session_id = xcsh_log::session_id(path, &log.header().session_id).to_string();
    let cwd = xcsh_log::recorded_workspace(path, Some(leaf))?;
    let calls = interrupted::interrupted(&store, &session_id, &lost, EntryId(leaf.0 + 1))?;
    Ok(calls
        .iter()
        .map(|c| interrupted::describe(c, Path::new(&cwd), &session_id))
        .collect())
}

/// `xcsh undo SESSION[@ENTRY]` (SPEC.md §17.3).
#[derive(Debug, clap::Args)]
pub struct UndoArgs {
    /// The session (a path, id or id prefix): undoes the last run on the branch at
    /// its leaf, as `/undo`. `SESSION@ENTRY`: the interrupted call whose
    /// `tool_dispatched` entry is ENTRY (as `--continue` names it): `N`, `#N` or a
    /// label's name.
    session: String,
}

/// The session file and entry `spec` names: `SESSION@ENTRY` when the part after
/// the last `@` is an entry id, else the whole of it when that is a session, else
/// `SESSION@LABEL` when the part before is a session (LABEL a label's name in it); a
/// `@` with neither side a session is a usage error.
pub fn target(spec: &str) -> Result<(PathBuf, Option<EntryId>)> {
    let is_session = |name: &str| crate::sessions::resolve(name).is_ok();
    let (name, entry) = xcsh_inspect::split_entry_spec(spec, is_session)?;
    let path = crate::sessions::resolve(name)?;
    let at = entry
        .map(|text| xcsh_inspect::resolve_entry_at(&path, text))
        .transpose()?;
    Ok((path, at))
}

pub fn main(args: UndoArgs) -> Result<std::process::ExitCode> {
    let (path, entry) = target(&args.session)?;
    let undone = match entry {
        Some(entry) => undo_call(&path, entry)?,
        None => undo_last_run(&path)?,
    };
    println!("[undo] {}", undone.said());
    Ok(std::process::ExitCode::SUCCESS)
}
