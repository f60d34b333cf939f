//! The session log on a generated session (`XCSH_BENCH_ENTRIES` entries, default
//! 50,000; or the file `XCSH_BENCH_SESSION`): open and parse (every line decoded and
//! verified), the DAG, the model context rebuilt at the deepest leaf, and appending
//! `APPENDS` decision-sized entries with an fsync after each against one group commit.

use std::path::PathBuf;

use chrono::Utc;
use xcsh_journal::synth::BenchSession;
use xcsh_log::{Body, Dag, SessionHeader, SessionWriter, read_session, rebuild_context};
use xcsh_machine::{Decision, EntryId, StepNo};

/// Entries appended per iteration of the append benches.
const APPENDS: usize = 100;

fn main() {
    divan::main();
}

/// The session the benches read: generated once per process unless given.
static SESSION: BenchSession = BenchSession::new("log");

#[divan::bench(sample_count = 10, sample_size = 1)]
fn open_parse() -> usize {
    read_session(SESSION.path()).expect("reads").entries.len()
}

#[divan::bench(sample_count = 20)]
fn dag_build() -> usize {
    Dag::from_log(SESSION.log()).len()
}

#[divan::bench(sample_count = 20)]
fn context_rebuild_deep_leaf() -> usize {
    let log = SESSION.log();
    rebuild_context(log, log.leaf()).expect("rebuilds").len()
}

fn appender(fsync_each: bool) -> usize {
    let dir = std::env::var_os("XCSH_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("xcsh-bench"));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("append-{}-{fsync_each}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let header = SessionHeader::new("bench", "/bench");
    let mut w = SessionWriter::create(&path, header, Utc::now()).expect("creates");
    let mut leaf = EntryId(0);
    for i in 0..APPENDS {
        let body = Body::Decision(Decision::StepStarted {
            step: StepNo(u32::try_from(i).unwrap_or(0)),
            messages: 3,
            context_hash: "0".repeat(64),
        });
        leaf = w.append(leaf, Utc::now(), &body).expect("appends").0;
        if fsync_each {
            w.sync().expect("syncs");
        }
    }
    w.sync().expect("syncs");
    drop(w);
    let _ = std::fs::remove_file(&path);
    APPENDS
}

#[divan::bench(sample_count = 20, sample_size = 1)]
fn append_100_fsync_each() -> usize {
    appender(true)
}

#[divan::bench(sample_count = 20, sample_size = 1)]
fn append_100_group_commit() -> usize {
    appender(false)
}
