//! Opening a session for a run: creating it, or reopening it (repairing a torn
//! tail, rebuilding the machine by replaying the branch, recovering a run a crash
//! left open, branching at an earlier entry).

use std::path::Path;

use chrono::Utc;

use super::{RuntimeError, SessionTarget};
use xcsh_log::machine_at::{Rebuild, describe_phase, rebuild_machine, settled_boundary};
use xcsh_log::resume::{SNAPSHOT_AFTER_ENTRIES, save_snapshot};
use xcsh_log::{
    Body, BranchEntry, LogError, ProviderRecord, Record, RecordedInput, SessionHeader,
    SessionWriter, TornTail, recorded_provider, recorded_workspace,
};
use xcsh_machine::{Decision, EntryId, Machine, SyntheticReason, ToolCall};

/// The open writer, the rebuilt machine, the leaf, notices, session id, the
/// recorded workspace at the leaf (§12.1) and the calls recovery answered `lost`.
pub(crate) type Opened = (
    SessionWriter,
    Machine,
    EntryId,
    Vec<String>,
    String,
    String,
    Vec<ToolCall>,
);

/// A new session's header records `provider` (what its first run's provider is made
/// of, SPEC.md §22.2).
pub(crate) fn open_session(
    target: &SessionTarget,
    provider: Option<&ProviderRecord>,
) -> Result<Opened, RuntimeError> {
    match target {
        SessionTarget::New {
            path,
            session_id,
            cwd,
        } => {
            let header = SessionHeader {
                provider: provider.cloned(),
                ..SessionHeader::new(session_id.clone(), cwd.clone())
            };
            let writer = SessionWriter::create(path, header, Utc::now())?;
            Ok((
                writer,
                Machine::new(),
                EntryId(0),
                Vec::new(),
                session_id.clone(),
                cwd.clone(),
                Vec::new(),
            ))
        }
        SessionTarget::Existing { path, at } => open_existing(path, *at),
    }
}

fn open_existing(path: &Path, at: Option<EntryId>) -> Result<Opened, RuntimeError> {
    let Some(at) = at else {
        return open_at_leaf(path);
    };
    let (mut writer, log) = SessionWriter::open(path)?;
    let mut notices = Vec::new();
    if let Some(torn) = &log.torn_tail {
        notices.push(torn_notice(path, torn));
    }
    // A fork's own id is in its file name (its header is its source's).
    let session_id = xcsh_log::session_id(path, &log.header().session_id).to_string();
    let last = log.leaf();
    let target = at;
    if log.get(target).is_none() {
        return Err(log.no_entry(target).into());
    }
    let (mut machine, boundary) = rebuild_machine(&log, target)?;
    let mut leaf = target;
    if target != last {
        settled_boundary(&log, &machine, boundary, target).map_err(LogError::NotABoundary)?;
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
    let lost = recover(&mut writer, &mut machine, &mut leaf, &mut notices)?;
    let cwd = recorded_workspace(path, Some(leaf))?;
    Ok((writer, machine, leaf, notices, session_id, cwd, lost))
}

/// Opens the session at `path` at its leaf for a change made outside a run (undo),
/// exactly as a run opens it (§12.4, §12.8): a torn tail repaired, decisions the
/// previous process made but did not write recorded, an unfinished run recovered.
/// What it appended is not yet synced.
pub fn reopen_at_leaf(path: &Path) -> Result<Reopened, RuntimeError> {
    let (writer, machine, leaf, notices, _, _, lost) = open_at_leaf(path)?;
    Ok(Reopened {
        writer,
        machine,
        leaf,
        notices,
        lost,
    })
}

/// A session reopened at its leaf ([`reopen_at_leaf`]).
pub struct Reopened {
    pub writer: SessionWriter,
    /// The machine at `leaf`.
    pub machine: Machine,
    /// The leaf, after what the reopening appended.
    pub leaf: EntryId,
    pub notices: Vec<String>,
    /// The calls recovery answered `lost`, in dispatch order.
    pub lost: Vec<ToolCall>,
}

/// Continues at the leaf: only the branch that ends there is read (through the
/// session's derived index) and replayed as it is read.
fn open_at_leaf(path: &Path) -> Result<Opened, RuntimeError> {
    let mut rebuild = Rebuild::default();
    let (mut writer, info) = SessionWriter::open_branch(path, &mut |item| match item {
        BranchEntry::Decoded(entry) => {
            rebuild.feed(entry.id, RecordedInput::of_entry(entry), false)
        }
        BranchEntry::Decision(id) => rebuild.feed(id, None, true),
        BranchEntry::Other(id) => rebuild.feed(id, None, false),
        BranchEntry::Snapshot { at, machine } => rebuild.restore(at, *machine),
    })?;
    // A long replay: save the machine at the leaf in the index, so that the next
    // resume starts from there.
    if rebuild.replayed() >= SNAPSHOT_AFTER_ENTRIES && rebuild.at_rest() {
        save_snapshot(path, info.leaf, rebuild.machine());
    }
    let mut notices = Vec::new();
    if let Some(torn) = &info.torn_tail {
        notices.push(torn_notice(path, torn));
    }
    let (mut machine, _, owed) = rebuild.into_parts();
    let mut leaf = info.leaf;
    // A crash between an input's entry and its decisions' entries: the machine
    // re-makes the same decisions (it is deterministic); record them now so that the
    // log replays, then settle the run.
    if !owed.is_empty() {
        notices.push(format!(
            "{} decision(s) the previous process made but did not write are recorded now",
            owed.len()
        ));
    }
    for decision in owed {
        let (id, _) = writer.append(leaf, Utc::now(), &Body::Decision(decision))?;
        leaf = id;
    }
    let lost = recover(&mut writer, &mut machine, &mut leaf, &mut notices)?;
    // (The entries recovery appends move no workspace.)
    Ok((
        writer,
        machine,
        leaf,
        notices,
        xcsh_log::session_id(path, &info.header.session_id).to_string(),
        info.workspace,
        lost,
    ))
}

/// Appends `provider` after `leaf` (which moves) unless the branch records it
/// already (its last `provider` entry, else the header's; SPEC.md §22.2). Not
/// synced.
pub(crate) fn record_provider(
    writer: &mut SessionWriter,
    leaf: &mut EntryId,
    provider: &ProviderRecord,
) -> Result<(), RuntimeError> {
    let recorded = recorded_provider(writer.path(), Some(*leaf))?;
    if recorded.as_ref() != Some(provider) {
        let body = Body::Record(Record::Provider(provider.clone()));
        (*leaf, _) = writer.append(*leaf, Utc::now(), &body)?;
    }
    Ok(())
}

fn torn_notice(path: &Path, torn: &TornTail) -> String {
    format!(
        "{}: repaired a torn last line: {} byte(s) at offset {} were cut off{}",
        path.display(),
        torn.len,
        torn.offset,
        torn.sidecar
            .as_ref()
            .map(|p| format!(" and kept in {}", p.display()))
            .unwrap_or_default()
    )
}

/// The previous process died mid-run (the machine rebuilt at `leaf` is inside a
/// run): settle what it left unsettled (§12.8), appending after `leaf` (which moves),
/// and say so in `notices`. Returns the calls answered `lost` (dispatched, never
/// settled), in dispatch order.
pub fn recover(
    writer: &mut SessionWriter,
    machine: &mut Machine,
    leaf: &mut EntryId,
    notices: &mut Vec<String>,
) -> Result<Vec<ToolCall>, RuntimeError> {
    let mut lost = Vec::new();
    if machine.is_running() {
        let mut note = format!(
            "the previous run ended without finishing ({}); unsettled work is settled now",
            describe_phase(machine.phase())
        );
        // The sub-agents a crash cut off with their parent (SPEC.md §29.4).
        for told in recover_children(writer.path(), machine, notices) {
            note.push_str("; ");
            note.push_str(&told);
        }
        let (id, _) = writer.append(
            *leaf,
            Utc::now(),
            &Body::Record(Record::Recovered { note: note.clone() }),
        )?;
        *leaf = id;
        for effect in machine.handle(xcsh_machine::Input::Recover) {
            if let xcsh_machine::Effect::Record(d) = effect {
                if let Decision::SyntheticResult {
                    call,
                    reason: SyntheticReason::Lost,
                    ..
                } = &d
                {
                    lost.push(call.clone());
                }
                let (id, _) = writer.append(*leaf, Utc::now(), &Body::Decision(d))?;
                *leaf = id;
            }
        }
        notices.push(note);
    }
    Ok(lost)
}

/// Recovers the runs of the sub-agents that the unsettled `task` calls of the
/// parent whose machine is `machine` (its file at `path`) started, each as any
/// session is recovered; says of each lost call which child it was. Their own
/// notices go to `notices`.
fn recover_children(path: &Path, machine: &Machine, notices: &mut Vec<String>) -> Vec<String> {
    let calls: Vec<&ToolCall> = match machine.phase() {
        xcsh_machine::Phase::RunningTools(t) => t
            .pending
            .iter()
            .filter(|c| c.name == xcsh_machine::TASK_TOOL)
            .collect(),
        xcsh_machine::Phase::Idle
        | xcsh_machine::Phase::Streaming(_)
        | xcsh_machine::Phase::Compacting(_)
        | xcsh_machine::Phase::Finished(_) => Vec::new(),
    };
    if calls.is_empty() {
        return Vec::new();
    }
    let parent_id = match xcsh_log::read_header(path) {
        Ok(h) => xcsh_log::session_id(path, &h.session_id).to_string(),
        Err(e) => {
            notices.push(format!(
                "cannot look for the sub-agents of the lost `task` calls: {e}"
            ));
            return Vec::new();
        }
    };
    let mut told = Vec::new();
    for call in calls {
        let Some((child_path, child)) =
            crate::task::children::find_child(path, &parent_id, &call.id)
        else {
            told.push(format!(
                "the lost `task` call {} had not started its sub-agent",
                call.id
            ));
            continue;
        };
        let recovered = reopen_at_leaf(&child_path).and_then(|mut r| {
            r.writer.sync()?;
            Ok(r.notices)
        });
        match recovered {
            Ok(theirs) => {
                let how = if theirs.is_empty() {
                    "which had finished"
                } else {
                    "recovered too"
                };
                notices.extend(
                    theirs
                        .into_iter()
                        .map(|n| format!("sub-agent session {}: {n}", child.session_id)),
                );
                told.push(format!(
                    "the lost `task` call {} ran the sub-agent session {} ({}), {how}",
                    call.id, child.session_id, child.file
                ));
            }
            Err(e) => told.push(format!(
                "the lost `task` call {} ran the sub-agent session {} ({}), which cannot be recovered: {e}",
                call.id, child.session_id, child.file
            )),
        }
    }
    told
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use xcsh_journal::synth::{SynthOptions, generate};
    use xcsh_log::machine_at::move_workspace;
    use xcsh_log::{Dag, entry_decision};

    /// Continuing at the leaf through the index rebuilds the machine that replaying
    /// the whole log rebuilds, and repairs a torn tail the same way.
    #[test]
    fn opening_at_the_leaf_through_the_index_rebuilds_the_same_machine() {
        let (dir, a) = synthesized(5_000, 8);
        let mut bytes = std::fs::read(&a).unwrap();
        bytes.extend_from_slice(b"{\"v\":1,\"id\":77");
        std::fs::write(&a, &bytes).unwrap();
        let b = dir.path().join("b.jsonl");
        std::fs::write(&b, &bytes).unwrap();

        let (wa, ma, la, na, ia, ca, _) = open_at_leaf(&a).unwrap();
        let (wb, log) = SessionWriter::open(&b).unwrap();
        let (mb, _) = rebuild_machine(&log, log.leaf()).unwrap();
        assert_eq!(la, log.leaf());
        assert_eq!(ma.phase(), mb.phase());
        assert_eq!(ma.context(), mb.context());
        assert_eq!(ma.run(), mb.run());
        assert_eq!(ma.pending(), mb.pending());
        assert_eq!((wa.next_id(), wa.last_id()), (wb.next_id(), wb.last_id()));
        assert_eq!(
            (ia, ca),
            (log.header().session_id.clone(), log.header().cwd.clone())
        );
        assert_eq!(na.len(), 1, "{na:?}");
        assert!(
            na[0].contains("repaired a torn last line: 14 byte(s)"),
            "{na:?}"
        );
        drop((wa, wb));
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    }

    /// A new directory, and the path of a session file `s.jsonl` in it (not created).
    fn scratch() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        (dir, path)
    }

    /// A new directory with a generated session of `entries` entries in it: the
    /// directory and the session's path.
    fn synthesized(entries: u64, seed: u64) -> (tempfile::TempDir, PathBuf) {
        let (dir, path) = scratch();
        generate(&path, SynthOptions { entries, seed }).unwrap();
        (dir, path)
    }

    /// The machine a resume at the leaf rebuilds (its writer closed again).
    fn resumed(path: &Path) -> Machine {
        let (w, machine, ..) = open_at_leaf(path).unwrap();
        drop(w);
        machine
    }

    fn same_machine(a: &Machine, b: &Machine) -> bool {
        a.phase() == b.phase()
            && a.context() == b.context()
            && a.run() == b.run()
            && a.pending() == b.pending()
            && a.snapshot() == b.snapshot()
    }

    /// A new directory with a 5,000-entry session in it (over 1 MB, so its index is
    /// written beside it): the directory, the session's path, the last settled
    /// boundary on its leaf's branch with the machine replayed up to there, and the
    /// machine replayed to the leaf.
    fn indexed_session() -> (tempfile::TempDir, PathBuf, EntryId, Machine, Machine) {
        let (dir, path) = synthesized(5_000, 4);
        xcsh_log::index::open_index(&path).unwrap();
        let log = xcsh_log::read_session(&path).unwrap();
        let (full, _) = rebuild_machine(&log, log.leaf()).unwrap();
        // The last `run_finished` before the leaf: a settled boundary.
        let on_branch = Dag::from_log(&log).path_to_root(log.leaf()).unwrap();
        let boundary = on_branch[..on_branch.len() - 1]
            .iter()
            .rev()
            .copied()
            .find(|id| {
                matches!(
                    log.get(*id).and_then(entry_decision),
                    Some(xcsh_machine::Decision::RunFinished { .. })
                )
            })
            .unwrap();
        let (at_boundary, b) = rebuild_machine(&log, boundary).unwrap();
        assert_eq!(b, Some(boundary));
        (dir, path, boundary, at_boundary, full)
    }

    /// Resuming restores the machine from the index's snapshot and replays only the
    /// entries after it: a wrong snapshot (a fresh machine) shows through, the right
    /// one gives the machine a whole replay gives.
    #[test]
    fn a_snapshot_in_the_index_replaces_the_replay_up_to_its_entry() {
        let (_dir, path, boundary, at_boundary, full) = indexed_session();

        assert!(save_snapshot(&path, boundary, &Machine::new()));
        let wrong = resumed(&path);
        assert!(!same_machine(&wrong, &full));

        assert!(save_snapshot(&path, boundary, &at_boundary));
        let right = resumed(&path);
        assert!(same_machine(&right, &full));
    }

    /// A snapshot that another build's machine took is not used: the branch is
    /// replayed whole.
    #[test]
    fn a_snapshot_of_another_machine_build_is_ignored() {
        let (_dir, path, boundary, _, full) = indexed_session();
        assert!(save_snapshot(&path, boundary, &Machine::new()));
        let index = xcsh_log::index::open_index(&path).unwrap();
        let mut data: xcsh_log::index::IndexData =
            rkyv::deserialize::<_, rkyv::rancor::Error>(index.data()).unwrap();
        drop(index);
        data.snapshot.as_mut().unwrap().machine[0] ^= 1;
        assert!(xcsh_log::index::write_index(&path, &data));
        let resumed = resumed(&path);
        assert!(same_machine(&resumed, &full));
    }

    /// A resume that replays more than `SNAPSHOT_AFTER_ENTRIES` entries saves the
    /// machine at its leaf in the index; the next resume starts from it and rebuilds
    /// the same machine.
    #[test]
    fn a_long_resume_saves_a_snapshot_that_the_next_resume_starts_from() {
        let (_dir, path) = synthesized(SNAPSHOT_AFTER_ENTRIES as u64 + 2_000, 6);
        let log = xcsh_log::read_session(&path).unwrap();
        let (full, _) = rebuild_machine(&log, log.leaf()).unwrap();
        assert!(!full.is_running(), "the generated session ends settled");
        let first = resumed(&path);
        let index = xcsh_log::index::open_index(&path).unwrap();
        let d = index.data();
        let row = d.snapshot.as_ref().expect("a snapshot was saved");
        assert_eq!(d.id(row.pos.to_native() as usize), log.leaf());
        drop(index);
        let second = resumed(&path);
        assert!(same_machine(&first, &full));
        assert!(same_machine(&second, &full));
    }

    #[test]
    fn a_run_works_in_the_workspace_recorded_on_its_branch() {
        let (_dir, path) = scratch();
        let header = SessionHeader::new("s", "/a");
        drop(SessionWriter::create(&path, header, Utc::now()).unwrap());
        let (id, from) = move_workspace(&path, "/b").unwrap();
        assert_eq!((id, from.as_str()), (EntryId(1), "/a"));
        // At the leaf (through the index) the run is in `/b`; from entry 0, on a new
        // branch that does not pass the move, in `/a` again.
        let (w, _, leaf, _, _, cwd, _) = open_session(
            &SessionTarget::Existing {
                path: path.clone(),
                at: None,
            },
            None,
        )
        .unwrap();
        assert_eq!((leaf, cwd.as_str()), (EntryId(1), "/b"));
        drop(w);
        let (w, _, leaf, _, _, cwd, _) = open_session(
            &SessionTarget::Existing {
                path: path.clone(),
                at: Some(EntryId(0)),
            },
            None,
        )
        .unwrap();
        assert_eq!((leaf, cwd.as_str()), (EntryId(2), "/a"));
        drop(w);
    }
}
