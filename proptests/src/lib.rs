//! xcsh-proptests: generated input scripts played through the real machine and the
//! real log writer (via `Recorder`), the invariants every run must keep, and the
//! helpers of the crash and fault-injection tests.
//!
//! An [`Action`] is what the world does next (a user command, a provider step
//! settling, a tool settling); [`play`] turns each action into the input record the
//! runtime would write, aimed at whatever the machine currently has in flight, so
//! that a shrunk failure reads as a short [`Script`], printed (its `Debug`) in the
//! syntax of the given/when/then tests of `core/src/machine/tests.rs`.

mod actions;
mod harness;
mod invariants;
mod play;

pub use actions::{
    Action, Answer, Args, End, Script, action, branching_action, branching_script, limits,
    permissions, script,
};
pub use harness::run_script;
pub use invariants::{check_invariants, check_path};
pub use play::{Played, TOOLS, call_id, count_inputs, disconnect, play, summary_error};

/// Cases per property: `PROPTEST_CASES` if set, else 256.
pub fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(256)
}

/// The proptest configuration of every property: [`cases`] cases, no persistence
/// files (a failure prints its script instead).
pub fn config() -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases: cases(),
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}
