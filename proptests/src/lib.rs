//! xcsh-proptests: generated input scripts played through the real machine and the
//! real log writer (by the production journal, `xcsh_journal::Player`), the
//! invariants every run must keep, and the helpers of the crash and fault-injection
//! tests.
//!
//! An [`Action`] is what the world does next (a user command, a provider step
//! settling, a tool settling); [`play`] turns each action into the input record the
//! runtime would write, aimed at whatever the machine currently has in flight, so
//! that a shrunk failure reads as a short [`Script`], printed (its `Debug`) as a
//! transcript of the machine's transcript tests (`machine/test_data/`).

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
pub use play::{Played, TOOLS, call_id, count_inputs, disconnect, play, summary_error, too_long};

/// A fresh temporary directory, on tmpfs (`/dev/shm`) when there is one: the
/// properties write thousands of small logs, and what they check is the logic, not
/// the disk (fsync there costs nothing).
pub fn scratch_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("xcsh-prop")
        .tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("a temporary directory")
}

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

/// Runs `property` over `strategy` ([`config`] cases). On a failure, proptest's
/// shrunk case is cut down further by [`minimize`], and the test panics with the
/// reason and the script, ready to be saved as a transcript test under
/// `machine/test_data/`.
pub fn check_property(
    strategy: impl proptest::strategy::Strategy<Value = Script>,
    property: impl Fn(&Script) -> Result<(), String>,
) {
    if let Some((script, why)) = find_failure(strategy, &property) {
        panic!(
            "{why}\n--- the failing script, {} inputs (save it as machine/test_data/NAME.txt and run UPDATE_EXPECT=1 cargo test -p xcsh-machine) ---\n{}\n---",
            script.inputs(),
            script.to_script()
        );
    }
}

/// The smallest failing script found for `property`, and why it fails; `None` when
/// every case passes.
pub fn find_failure(
    strategy: impl proptest::strategy::Strategy<Value = Script>,
    property: &dyn Fn(&Script) -> Result<(), String>,
) -> Option<(Script, String)> {
    use proptest::test_runner::{TestCaseError, TestError, TestRunner};
    let mut runner = TestRunner::new(config());
    let result = runner.run(&strategy, |s| property(&s).map_err(TestCaseError::fail));
    match result {
        Ok(()) => None,
        Err(TestError::Fail(_, shrunk)) => {
            let script = minimize(&shrunk, &|s| property(s).is_err());
            let why = property(&script).err().unwrap_or_default();
            Some((script, why))
        }
        Err(TestError::Abort(why)) => Some((
            Script {
                limits: xcsh_machine::Limits::default(),
                permissions: xcsh_machine::Permissions::Yolo,
                estimate_bytes_per_token: 0,
                actions: Vec::new(),
            },
            format!("proptest aborted: {why}"),
        )),
    }
}

/// Cuts a failing script down while it still fails: drops actions one at a time
/// (proptest deletes each element only once, before it shrinks elements), then
/// simplifies steps (fewer calls, no usage, no text), until nothing more goes.
pub fn minimize(script: &Script, fails: &dyn Fn(&Script) -> bool) -> Script {
    let mut best = script.clone();
    loop {
        let mut changed = false;
        let mut i = 0;
        while i < best.actions.len() {
            let mut candidate = best.clone();
            candidate.actions.remove(i);
            if fails(&candidate) {
                best = candidate;
                changed = true;
            } else {
                i += 1;
            }
        }
        for i in 0..best.actions.len() {
            while let Some(candidate) = simpler(&best, i).into_iter().find(|c| fails(c)) {
                best = candidate;
                changed = true;
            }
        }
        if !changed {
            return best;
        }
    }
}

/// Simpler variants of action `i` of `script` (steps only).
fn simpler(script: &Script, i: usize) -> Vec<Script> {
    let Some(Action::Step {
        text,
        calls,
        end,
        usage,
    }) = script.actions.get(i)
    else {
        return Vec::new();
    };
    let mut variants = Vec::new();
    let mut with = |step: Action| {
        let mut s = script.clone();
        s.actions[i] = step;
        variants.push(s);
    };
    for k in 0..calls.len() {
        let mut fewer = calls.clone();
        fewer.remove(k);
        with(Action::Step {
            text: *text,
            calls: fewer,
            end: *end,
            usage: *usage,
        });
    }
    if *usage != (0, 0) {
        with(Action::Step {
            text: *text,
            calls: calls.clone(),
            end: *end,
            usage: (0, 0),
        });
    }
    if *text {
        with(Action::Step {
            text: false,
            calls: calls.clone(),
            end: *end,
            usage: *usage,
        });
    }
    variants
}
