//! Replay of a whole generated session (`XCSH_BENCH_ENTRIES` entries, default 50,000;
//! or the file `XCSH_BENCH_SESSION`): streamed from the file as `xcsh replay` does,
//! and over a log read already.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use xcsh_journal::synth::bench_session;
use xcsh_log::{SessionLog, read_session};
use xcsh_replay::{Outcome, ReplayOptions, replay, replay_file};

fn main() {
    divan::main();
}

fn session() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| bench_session("replay"))
}

fn log() -> &'static SessionLog {
    static LOG: OnceLock<SessionLog> = OnceLock::new();
    LOG.get_or_init(|| read_session(session()).expect("the session reads"))
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn replay_whole_file() -> usize {
    let r = replay_file(session(), None, &ReplayOptions::default())
        .expect("streams")
        .expect("reads");
    assert_eq!(r.replay.outcome, Outcome::Clean);
    r.replay.report.entries
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn replay_log_in_memory() -> usize {
    let log = log();
    let r = replay(log, log.leaf(), &ReplayOptions::default()).expect("replays");
    assert_eq!(r.outcome, Outcome::Clean);
    r.report.entries
}
