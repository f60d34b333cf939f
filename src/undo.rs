//! `/undo`: puts back the files the last run on the current branch changed, when
//! they are still as that run left them, and records an `undo` entry: an input whose
//! note the machine adds to the context of this branch, so that the next request on
//! it tells the model (SPEC.md §17.3).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use chrono::Utc;
use xcsh_core::log::{Body, Dag, FileChange, Record, SessionWriter};
use xcsh_core::machine::{Effect, Input};
use xcsh_core::runtime::rebuild_machine;

/// What an undo reverted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undone {
    pub run: xcsh_core::machine::EntryId,
    pub files: Vec<PathBuf>,
    /// What the model is told, with the next request on this branch.
    pub note: String,
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

/// Reverts the file changes of the last run on the branch of the session at `path`.
/// Refuses, changing nothing, when a file differs from what the run left.
pub fn undo_last_run(path: &Path) -> Result<Undone> {
    let (mut writer, log) = SessionWriter::open(path)?;
    let leaf = log.leaf();
    let branch = Dag::from_log(&log).path_to_root(leaf)?;
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
    // The undo is an input of the machine of this branch, which takes it between runs.
    let (mut machine, _) = rebuild_machine(&log, leaf)?;
    if machine.is_running() {
        bail!(
            "the last run on this branch did not finish (the previous process ended during it); it is settled when the next run starts"
        );
    }
    // Per file: the state before the run's first change and after its last one.
    let mut files: BTreeMap<PathBuf, (FileChange, FileChange)> = BTreeMap::new();
    for e in &entries[start..] {
        if let Body::Record(Record::ToolResult(r)) = &e.body {
            for c in &r.changes {
                files
                    .entry(c.path.clone())
                    .and_modify(|(_, last)| *last = c.clone())
                    .or_insert_with(|| (c.clone(), c.clone()));
            }
        }
    }
    if files.is_empty() {
        bail!("the last run (entry {run}) changed no file");
    }
    for (file, (_, last)) in &files {
        let now = std::fs::read(file).ok();
        let now_hash = now.as_ref().map(|b| blake3::hash(b).to_hex().to_string());
        if now_hash.as_deref() != Some(last.after_hash.as_str()) {
            bail!(
                "{} changed since the run left it: not undoing anything",
                file.display()
            );
        }
    }
    for (file, (first, _)) in &files {
        match &first.before {
            Some(before) => std::fs::write(file, before)?,
            None => std::fs::remove_file(file)?,
        }
    }
    let reverted: Vec<PathBuf> = files.into_keys().collect();
    let note = note(Path::new(&log.header().cwd), &reverted);
    // Recorded, then applied; the machine makes no decision between runs, but what it
    // makes is recorded after it, as the runtime does.
    let (mut at, _) = writer.append(
        leaf,
        Utc::now(),
        &Body::Record(Record::Undo {
            run,
            files: reverted.clone(),
            note: Some(note.clone()),
        }),
    )?;
    for effect in machine.handle(Input::Undo { note: note.clone() }) {
        if let Effect::Record(d) = effect {
            (at, _) = writer.append(at, Utc::now(), &Body::Decision(d))?;
        }
    }
    writer.sync()?;
    Ok(Undone {
        run,
        files: reverted,
        note,
    })
}
