//! Writing a changed copy of a session through a fresh `SessionWriter`: new ids and
//! hashes, parents re-linked, and the entry ids that bodies hold (`delivered.queued`,
//! `first_kept`, `run_finished.undelivered`, `branch.from_leaf`, `label.target`)
//! pointed at the same entries under their new ids. Used by `--minimize` and by tests
//! that alter or drop entries and need the result to read clean.

use std::collections::HashMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use xcsh_log::{
    Body, Entry, Record, SessionHeader, SessionLog, SessionWriter, memory_record, read_session,
    setting_record,
};
use xcsh_machine::{Decision, EntryId, RunEnd};

use crate::ReplayError;

/// Old entry ids to new ones; ids not in the map are left as they are.
#[derive(Debug, Clone, Default)]
pub struct IdMap(HashMap<EntryId, EntryId>);

impl IdMap {
    pub fn insert(&mut self, old: EntryId, new: EntryId) {
        self.0.insert(old, new);
    }

    pub fn get(&self, old: EntryId) -> Option<EntryId> {
        self.0.get(&old).copied()
    }

    fn map(&self, id: &mut EntryId) {
        if let Some(new) = self.get(*id) {
            *id = new;
        }
    }

    /// The body with the entry ids it holds mapped.
    pub fn body(&self, body: Body) -> Body {
        match body {
            Body::Record(r) => Body::Record(self.record(r)),
            Body::Decision(d) => Body::Decision(self.decision(d)),
            unknown @ Body::Unknown { .. } => unknown,
        }
    }

    pub fn record(&self, mut record: Record) -> Record {
        match &mut record {
            Record::Branch { from_leaf } => self.map(from_leaf),
            Record::Label { target, .. } => self.map(target),
            Record::Undo { run, .. } => self.map(run),
            // Structure and memory records name no other entry.
            Record::Session(_) | setting_record!() => {}
            Record::Foreign(_) => {}
            memory_record!() => {}
            // Nor do the user's inputs (a steer's or a follow-up's id is its own)...
            Record::UserMessage { .. } | Record::Steer { .. } | Record::FollowUp { .. } => {}
            Record::Interrupt {} | Record::Compact { .. } => {}
            // ... nor the facts: they name calls and steps, not entries.
            Record::Step(_) | Record::ToolResult(_) | Record::LateEvent { .. } => {}
            Record::CompactionSummary { .. } | Record::Recovered { .. } => {}
            Record::ApprovalAnswer { .. } | Record::CheckFailed { .. } => {}
        }
        record
    }

    pub fn decision(&self, mut decision: Decision) -> Decision {
        match &mut decision {
            Decision::Delivered { queued, .. } => self.map(queued),
            Decision::CompactionStarted { first_kept, .. }
            | Decision::Compacted { first_kept, .. } => self.map(first_kept),
            Decision::RunFinished(RunEnd { undelivered, .. }) => {
                undelivered.iter_mut().for_each(|id| {
                    self.map(id);
                })
            }
            Decision::StepStarted { .. }
            | Decision::ToolDispatched { .. }
            | Decision::Approval { .. }
            | Decision::SyntheticResult { .. }
            | Decision::Ignored { .. } => {}
        }
        decision
    }
}

/// Writes a new session at `out` with `header` and then, in order, each entry of
/// `entries` (not the header) whose `edit` returns a body: the body returned, with its
/// ids mapped, under the new id of its parent (or of its nearest kept ancestor).
/// Timestamps are kept. Returns the log as read back.
pub fn rewrite(
    log: &SessionLog,
    out: &Path,
    mut edit: impl FnMut(&Entry) -> Option<Body>,
) -> Result<SessionLog, ReplayError> {
    let first_ts = log.entries.first().map(|e| e.ts).unwrap_or_else(Utc::now);
    let mut writer = SessionWriter::create(out, log.header().clone(), first_ts)?;
    let mut ids = IdMap::default();
    ids.insert(EntryId(0), EntryId(0));
    // The new id standing for each old entry: its own, or its nearest kept ancestor's.
    let mut stand_in: HashMap<EntryId, EntryId> = HashMap::new();
    stand_in.insert(EntryId(0), EntryId(0));
    for entry in log.entries.iter().skip(1) {
        let parent = entry
            .parent
            .and_then(|p| stand_in.get(&p).copied())
            .unwrap_or(EntryId(0));
        match edit(entry) {
            Some(body) => {
                let body = ids.body(body);
                let (id, _) = writer.append(parent, entry.ts, &body)?;
                ids.insert(entry.id, id);
                stand_in.insert(entry.id, id);
            }
            None => {
                stand_in.insert(entry.id, parent);
            }
        }
    }
    drop(writer);
    Ok(read_session(out)?)
}

/// Writes `header` and then `entries` as one chain (each the parent of the next),
/// keeping their bodies and timestamps. The ids the writer assigns (1, 2, …) must be
/// the ids the entries already carry, since their bodies refer to them.
pub fn write_chain(
    out: &Path,
    header: SessionHeader,
    header_ts: DateTime<Utc>,
    entries: &[Entry],
) -> Result<SessionLog, ReplayError> {
    let mut writer = SessionWriter::create(out, header, header_ts)?;
    let mut parent = EntryId(0);
    for entry in entries {
        let (id, _) = writer.append(parent, entry.ts, &entry.body)?;
        if id != entry.id {
            return Err(ReplayError::Minimize {
                path: out.to_path_buf(),
                why: format!("the writer gave entry {} the id {id}", entry.id),
            });
        }
        parent = id;
    }
    drop(writer);
    Ok(read_session(out)?)
}
