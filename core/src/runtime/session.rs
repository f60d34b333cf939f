//! Opening a session for a run: creating it, or reopening it (repairing a torn
//! tail, rebuilding the machine by replaying the branch, recovering a run a crash
//! left open, branching at an earlier entry).

use std::path::Path;

use chrono::Utc;

use super::{RuntimeError, SessionTarget};
use crate::log::{
    Body, Dag, Record, SessionHeader, SessionLog, SessionWriter, entry_decision, entry_inputs,
};
use crate::machine::{EntryId, Machine, Phase};

/// The open writer, the rebuilt machine, the leaf, notices, session id and cwd.
pub(crate) type Opened = (SessionWriter, Machine, EntryId, Vec<String>, String, String);

pub(crate) fn open_session(target: &SessionTarget) -> Result<Opened, RuntimeError> {
    match target {
        SessionTarget::New {
            path,
            session_id,
            cwd,
        } => {
            let header = SessionHeader {
                session_id: session_id.clone(),
                cwd: cwd.clone(),
                forked_from: None,
            };
            let writer = SessionWriter::create(path, header, Utc::now())?;
            Ok((
                writer,
                Machine::new(),
                EntryId(0),
                Vec::new(),
                session_id.clone(),
                cwd.clone(),
            ))
        }
        SessionTarget::Existing { path, at } => open_existing(path, *at),
    }
}

fn open_existing(path: &Path, at: Option<EntryId>) -> Result<Opened, RuntimeError> {
    // Continuing at the leaf needs only the branch that ends there (read through the
    // session's derived index); `--at` may name any entry, so it reads the whole log.
    let (mut writer, log) = match at {
        None => SessionWriter::open_branch(path)?,
        Some(_) => SessionWriter::open(path)?,
    };
    let mut notices = Vec::new();
    if let Some(torn) = &log.torn_tail {
        notices.push(format!(
            "{}: repaired a torn last line: {} byte(s) at offset {} were cut off{}",
            path.display(),
            torn.len,
            torn.offset,
            torn.sidecar
                .as_ref()
                .map(|p| format!(" and kept in {}", p.display()))
                .unwrap_or_default()
        ));
    }
    let session_id = log.header().session_id.clone();
    let cwd = log.header().cwd.clone();
    let last = log.leaf();
    let target = at.unwrap_or(last);
    if log.get(target).is_none() {
        return Err(RuntimeError::NoSuchEntry {
            path: path.to_path_buf(),
            entry: target,
        });
    }
    let (mut machine, boundary) = rebuild_machine(&log, target)?;
    let mut leaf = target;
    if at.is_some() && target != last {
        check_boundary(&log, &machine, boundary, target, last)?;
        let (id, _) = writer.append(
            target,
            Utc::now(),
            &Body::Record(Record::Branch { from_leaf: last }),
        )?;
        leaf = id;
        notices.push(format!(
            "continuing from entry {target} on a new branch (the previous leaf was {last})"
        ));
    }
    if machine.is_running() {
        // The previous process died mid-run: settle what it left unsettled.
        let note = format!(
            "the previous run ended without finishing ({}); unsettled work is settled now",
            describe(machine.phase())
        );
        let (id, _) = writer.append(
            leaf,
            Utc::now(),
            &Body::Record(Record::Recovered { note: note.clone() }),
        )?;
        leaf = id;
        for effect in machine.handle(crate::machine::Input::Recover) {
            if let crate::machine::Effect::Record(d) = effect {
                let (id, _) = writer.append(leaf, Utc::now(), &Body::Decision(d))?;
                leaf = id;
            }
        }
        notices.push(note);
    }
    Ok((writer, machine, leaf, notices, session_id, cwd))
}

/// Replays the inputs on the path to `leaf` through a fresh machine (effects are
/// discarded: they already happened). Returns the machine and the last entry on
/// the path where no run was in progress and every decision made so far is on the
/// path (a settled boundary).
pub fn rebuild_machine(
    log: &SessionLog,
    leaf: EntryId,
) -> Result<(Machine, Option<EntryId>), RuntimeError> {
    let dag = Dag::from_log(log);
    let path = dag.path_to_root(leaf)?;
    let mut machine = Machine::new();
    let mut boundary = None;
    // Decisions the machine made whose entries have not yet appeared on the path: an
    // entry is a boundary only when none are owed (the run's `run_finished` is in).
    let mut owed = 0usize;
    for id in path {
        let entry = log.get(id).ok_or(RuntimeError::NoSuchEntry {
            path: log.path.clone(),
            entry: id,
        })?;
        for input in entry_inputs(entry) {
            owed += machine
                .handle(input)
                .iter()
                .filter(|e| matches!(e, crate::machine::Effect::Record(_)))
                .count();
        }
        if entry_decision(entry).is_some() {
            owed = owed.saturating_sub(1);
        }
        if !machine.is_running() && owed == 0 {
            boundary = Some(id);
        }
    }
    Ok((machine, boundary))
}

/// The first `run_finished` after `target` on the branch ending at `leaf`.
fn run_end_after(log: &SessionLog, leaf: EntryId, target: EntryId) -> Option<EntryId> {
    let path = Dag::from_log(log).path_to_root(leaf).ok()?;
    let from = path.iter().position(|id| *id == target)?;
    path[from..].iter().copied().find(|id| {
        log.get(*id)
            .and_then(entry_decision)
            .is_some_and(|d| matches!(d, crate::machine::Decision::RunFinished { .. }))
    })
}

/// Refuses to branch at `target` unless it is a settled boundary (no run in
/// progress and every decision made so far on the path), naming the boundaries to
/// use instead.
fn check_boundary(
    log: &SessionLog,
    machine: &Machine,
    boundary: Option<EntryId>,
    target: EntryId,
    last: EntryId,
) -> Result<(), RuntimeError> {
    if boundary == Some(target) {
        return Ok(());
    }
    let before = match boundary {
        Some(b) if b != EntryId(0) => format!("entry {b} (the end of the previous run)"),
        Some(_) | None => "entry 0 (the session start)".to_string(),
    };
    Err(RuntimeError::NotABoundary {
        entry: target,
        phase: if machine.is_running() {
            describe(machine.phase())
        } else {
            "the decisions it led to come after it".into()
        },
        suggestion: match run_end_after(log, last, target) {
            Some(end) => format!("{before} or entry {end} (where this run finished)"),
            None => before,
        },
    })
}

/// Moves the leaf of the session at `path` to `at` (`/at`): checks that `at` is a
/// settled boundary and appends a `branch` record there; the next run continues
/// after it, and so does a later `--continue`. Returns the record's id.
pub fn branch_at(path: &Path, at: EntryId) -> Result<EntryId, RuntimeError> {
    let (mut writer, log) = SessionWriter::open(path)?;
    if log.get(at).is_none() {
        return Err(RuntimeError::NoSuchEntry {
            path: path.to_path_buf(),
            entry: at,
        });
    }
    let last = log.leaf();
    let (machine, boundary) = rebuild_machine(&log, at)?;
    check_boundary(&log, &machine, boundary, at, last)?;
    let (id, _) = writer.append(
        at,
        Utc::now(),
        &Body::Record(Record::Branch { from_leaf: last }),
    )?;
    writer.sync()?;
    Ok(id)
}

fn describe(phase: &Phase) -> String {
    match phase {
        Phase::Idle => "idle".into(),
        Phase::Streaming(s) => format!("step {} streaming", s.step),
        Phase::RunningTools(t) => format!(
            "{} tool call(s) of step {} running",
            t.pending.len() + t.awaiting.len(),
            t.step
        ),
        Phase::Compacting(_) => "compacting".into(),
        Phase::Finished(r) => format!("finished: {r:?}"),
    }
}
