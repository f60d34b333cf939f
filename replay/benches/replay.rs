//! Replay of a whole generated session (`XCSH_BENCH_ENTRIES` entries, default 50,000;
//! or the file `XCSH_BENCH_SESSION`): streamed from the file as `xcsh replay` does,
//! and over a log read already.

use xcsh_journal::synth::BenchSession;
use xcsh_replay::{Outcome, ReplayOptions, replay, replay_file};

fn main() {
    divan::main();
}

/// The session the benches read: generated once per process unless given.
static SESSION: BenchSession = BenchSession::new("replay");

#[divan::bench(sample_count = 10, sample_size = 1)]
fn replay_whole_file() -> usize {
    let r = replay_file(SESSION.path(), None, &ReplayOptions::default())
        .expect("streams")
        .expect("reads");
    assert_eq!(r.replay.outcome, Outcome::Clean);
    r.replay.report.entries
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn replay_log_in_memory() -> usize {
    let log = SESSION.log();
    let r = replay(log, log.leaf(), &ReplayOptions::default()).expect("replays");
    assert_eq!(r.outcome, Outcome::Clean);
    r.report.entries
}
