//! The test family of `xcsh_journal::synth::family` in a new directory.

use std::path::PathBuf;

/// The family in a new directory; returns the directory and the parent's file.
pub fn family() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let parent = xcsh_journal::synth::family::write_family(dir.path()).unwrap();
    (dir, parent)
}
