//! Resuming a long session without replaying its whole branch: the derived index
//! (see [`super::index`]) may carry a snapshot of the machine at rest after one
//! entry of the session. Resuming at a leaf whose branch passes through that entry
//! restores the machine from it and replays only the entries after it.
//!
//! A snapshot is derived data, like the rest of the index: it is used only when the
//! index is valid for the log, the entry is on the branch being resumed, and the
//! snapshot was taken by a build whose machine is this one ([`machine_build`]: a
//! hash of the machine's source), so a changed machine never resumes from another
//! machine's state. Anything else falls back to replaying the branch.

use std::path::Path;
use std::sync::OnceLock;

use super::index::{
    ArchivedIndexData, INDEX_MIN_BYTES, SnapshotRow, open_existing_index, write_index,
};
use xcsh_machine::{EntryId, Machine, MachineSnapshot};

/// Entries replayed at a resume past which the resume saves a new snapshot (a few
/// milliseconds of replay; saving rewrites the index).
pub const SNAPSHOT_AFTER_ENTRIES: usize = 20_000;

/// What identifies this build's machine: blake3 over what `machine/build.rs` gathers:
/// the source of `machine/src` (but its tests), the crate's version, the enabled
/// cargo features (a `broken-steer` build is another machine) and the name and version
/// of every package in the workspace's `Cargo.lock` (a dependency update may change
/// how a snapshot deserializes, so it is another machine too).
pub fn machine_build() -> [u8; 32] {
    static BUILD: OnceLock<[u8; 32]> = OnceLock::new();
    *BUILD.get_or_init(|| *blake3::hash(MACHINE_BUILD_INPUTS.as_bytes()).as_bytes())
}

/// The text `machine/build.rs` wrote for [`machine_build`].
const MACHINE_BUILD_INPUTS: &str = xcsh_machine::BUILD_INPUTS;

/// The index's snapshot if it applies to `branch` (index positions, root first):
/// where on the branch it was taken (an index into `branch`) and the machine.
pub fn usable_snapshot(d: &ArchivedIndexData, branch: &[usize]) -> Option<(usize, Machine)> {
    let row = d.snapshot.as_ref()?;
    if row.machine != machine_build() {
        return None;
    }
    let pos = row.pos.to_native() as usize;
    let at = branch.iter().position(|&p| p == pos)?;
    let snapshot: MachineSnapshot = serde_json::from_str(row.json.as_str()).ok()?;
    Some((at, Machine::from_snapshot(snapshot)))
}

/// Stores `machine`, at rest after entry `at`, as the snapshot in the index beside
/// `log` (for logs of at least [`INDEX_MIN_BYTES`]; smaller ones are replayed
/// quickly). Best effort, like every index write: `false` when nothing was saved
/// (a run in progress, no valid index, a read-only directory).
pub fn save_snapshot(log: &Path, at: EntryId, machine: &Machine) -> bool {
    let Some(snapshot) = machine.snapshot() else {
        return false;
    };
    if !std::fs::metadata(log).is_ok_and(|m| m.len() >= INDEX_MIN_BYTES) {
        return false;
    }
    let Ok(Some(index)) = open_existing_index(log) else {
        return false;
    };
    let d = index.data();
    let Some(pos) = (0..d.len()).rev().find(|&p| d.id(p) == at) else {
        return false;
    };
    let Ok(json) = serde_json::to_string(&snapshot) else {
        return false;
    };
    let Ok(mut data) =
        rkyv::deserialize::<super::index::IndexData, rkyv::rancor::Error>(index.data())
    else {
        return false;
    };
    drop(index);
    data.snapshot = Some(SnapshotRow {
        pos: u32::try_from(pos).unwrap_or(u32::MAX),
        machine: machine_build(),
        json,
    });
    write_index(log, &data)
}
