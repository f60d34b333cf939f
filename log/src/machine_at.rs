//! The machine at an entry: rebuilt by replaying a branch's recorded inputs, the
//! settled boundaries one may continue or fork from, and the two writes that move a
//! session's leaf or workspace (`/at`, `--resume S --workspace DIR`).

use std::collections::VecDeque;
use std::path::Path;

use chrono::Utc;

use super::{
    Body, Dag, LogError, Record, RecordedInput, SessionLog, SessionWriter, entry_decision,
    recorded_workspace,
};
use xcsh_machine::{Decision, Effect, EntryId, Machine, Phase};

/// An entry inside a run: where it is not allowed to continue or fork from, and
/// what to use instead. Each caller words the refusal for its own verb.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsettled {
    pub entry: EntryId,
    /// `step N streaming`, `K tool call(s) of step N running`, `compacting`, or `the
    /// decisions it led to come after it`.
    pub phase: String,
    /// `entry B (the end of the previous run)` or `entry 0 (the session start)`, then
    /// ` or entry F (where this run finished)` when a branch through it holds one.
    pub suggestion: String,
}

/// A machine rebuilt entry by entry along a branch (see [`rebuild_machine`]).
#[derive(Default)]
pub struct Rebuild {
    machine: Machine,
    boundary: Option<EntryId>,
    /// Decisions the machine made whose entries have not yet appeared on the path: an
    /// entry is a boundary only when none are owed (the run's `run_finished` is in).
    owed: VecDeque<Decision>,
    /// Entries fed (not counting a snapshot's).
    replayed: usize,
}

impl Rebuild {
    /// The machine at rest after entry `at`, from a snapshot: what feeding every
    /// entry up to `at` would have made (a snapshot is only taken at a boundary).
    pub fn restore(&mut self, at: EntryId, machine: Machine) {
        self.machine = machine;
        self.owed.clear();
        self.boundary = Some(at);
    }

    /// The next entry of the branch: its inputs, and whether it records a decision.
    pub fn feed(&mut self, id: EntryId, inputs: Option<RecordedInput>, decision: bool) {
        self.replayed += 1;
        for input in inputs.into_iter().flatten() {
            for effect in self.machine.handle(input) {
                if let Effect::Record(d) = effect {
                    self.owed.push_back(d);
                }
            }
        }
        if decision {
            self.owed.pop_front();
        }
        if !self.machine.is_running() && self.owed.is_empty() {
            self.boundary = Some(id);
        }
    }

    /// Entries fed so far (not counting a snapshot's).
    pub fn replayed(&self) -> usize {
        self.replayed
    }

    /// The machine as rebuilt so far.
    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// Whether the machine is at rest: no run in progress and no decision owed.
    pub fn at_rest(&self) -> bool {
        !self.machine.is_running() && self.owed.is_empty()
    }

    /// The machine, the last settled boundary fed, and the decisions owed (made by
    /// the machine, not yet on the path: a crash came between them), in order.
    pub fn into_parts(self) -> (Machine, Option<EntryId>, VecDeque<Decision>) {
        (self.machine, self.boundary, self.owed)
    }
}

/// Replays the inputs on the path to `leaf` through a fresh machine (effects are
/// discarded: they already happened). Returns the machine and the last entry on
/// the path where no run was in progress and every decision made so far is on the
/// path (a settled boundary).
pub fn rebuild_machine(
    log: &SessionLog,
    leaf: EntryId,
) -> Result<(Machine, Option<EntryId>), LogError> {
    let dag = Dag::from_log(log);
    let path = dag.path_to_root(leaf)?;
    let mut rebuild = Rebuild::default();
    for id in path {
        let entry = log.get(id).ok_or(LogError::UnknownEntry {
            path: log.path.clone(),
            id,
        })?;
        rebuild.feed(
            id,
            RecordedInput::cloned(entry),
            entry_decision(entry).is_some(),
        );
    }
    let (machine, boundary, _) = rebuild.into_parts();
    Ok((machine, boundary))
}

/// Checks that `at` is a settled boundary of its branch (no run in progress there and
/// every decision made so far on the path); otherwise says where to go instead.
/// `machine` and `boundary` are what [`rebuild_machine`] returned for `at`, so a caller
/// that needs the machine anyway replays the branch once.
pub fn settled_boundary(
    log: &SessionLog,
    machine: &Machine,
    boundary: Option<EntryId>,
    at: EntryId,
) -> Result<(), Unsettled> {
    if boundary == Some(at) {
        return Ok(());
    }
    let phase = if machine.is_running() {
        describe_phase(machine.phase())
    } else {
        "the decisions it led to come after it".into()
    };
    let before = match boundary {
        Some(b) if b != EntryId(0) => format!("entry {b} (the end of the previous run)"),
        Some(_) | None => "entry 0 (the session start)".to_string(),
    };
    let suggestion = match run_end_after(log, at) {
        Some(end) => format!("{before} or entry {end} (where this run finished)"),
        None => before,
    };
    Err(Unsettled {
        entry: at,
        phase,
        suggestion,
    })
}

/// The first `run_finished` after `at` on a branch through it: the current leaf's
/// branch if `at` is on it, else the branch that follows each entry's first child.
fn run_end_after(log: &SessionLog, at: EntryId) -> Option<EntryId> {
    let dag = Dag::from_log(log);
    let on_leaf = dag
        .path_to_root(log.leaf())
        .ok()
        .filter(|p| p.contains(&at));
    let after: Vec<EntryId> = match on_leaf {
        Some(p) => p.into_iter().skip_while(|id| *id != at).collect(),
        None => {
            let mut v = vec![at];
            let mut cur = at;
            while let Some(&next) = dag.children(cur).first() {
                v.push(next);
                cur = next;
            }
            v
        }
    };
    after.into_iter().find(|id| {
        log.get(*id)
            .and_then(entry_decision)
            .is_some_and(|d| matches!(d, Decision::RunFinished { .. }))
    })
}

/// Moves the leaf of the session at `path` to `at` (`/at`): checks that `at` is a
/// settled boundary and appends a `branch` record there; the next run continues
/// after it, and so does a later `--continue`. Returns the record's id.
pub fn branch_at(path: &Path, at: EntryId) -> Result<EntryId, LogError> {
    let (mut writer, log) = SessionWriter::open(path)?;
    if log.get(at).is_none() {
        return Err(log.no_entry(at));
    }
    let (machine, boundary) = rebuild_machine(&log, at)?;
    settled_boundary(&log, &machine, boundary, at).map_err(LogError::NotABoundary)?;
    let (id, _) = writer.append(
        at,
        Utc::now(),
        &Body::Record(Record::Branch {
            from_leaf: log.leaf(),
        }),
    )?;
    writer.sync()?;
    Ok(id)
}

/// Moves the session at `path` to the workspace `to` (`--resume S --workspace DIR`):
/// appends `workspace {from, to}` after the leaf, `from` being the recorded
/// workspace there, and syncs. Returns the entry's id and `from`. The next run
/// continues after it (it is the leaf).
pub fn move_workspace(path: &Path, to: &str) -> Result<(EntryId, String), LogError> {
    let (mut writer, log) = SessionWriter::open(path)?;
    let leaf = log.leaf();
    let from = recorded_workspace(path, Some(leaf))?;
    let (id, _) = writer.append(
        leaf,
        Utc::now(),
        &Body::Record(Record::Workspace {
            from: from.clone(),
            to: to.to_string(),
        }),
    )?;
    writer.sync()?;
    Ok((id, from))
}

/// A phase in the words of a refusal or a recovery notice.
pub fn describe_phase(phase: &Phase) -> String {
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
