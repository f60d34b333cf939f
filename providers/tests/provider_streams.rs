//! The provider regression suite over the recorded streams of `../shared/provider-streams`
//! (or `$XCSH_PROVIDER_STREAMS`): every stream is rebuilt into raw SSE, parsed whole,
//! in 32 seeded random chunkings and byte by byte, and compared with its golden file
//! under `fixtures/provider-streams/`. Every stream must have a golden file. Without
//! the streams directory the suite says so loudly, and fails under `CI=true`.

#[path = "support/golden.rs"]
mod golden;

use xcsh_providers::regress::{self, Origin};

#[test]
fn every_recorded_stream_matches_its_golden_file_in_any_chunking() {
    let dir = regress::streams_dir(&golden::workspace_root());
    if !dir.is_dir() {
        let message = format!(
            "PROVIDER STREAM REGRESSION NOT RUN: the streams directory {} does not exist (set {} or place the recordings at ../shared/provider-streams)",
            dir.display(),
            regress::STREAMS_ENV
        );
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{message}");
        }
        eprintln!("\n*** {message} ***\n");
        return;
    }
    let streams = regress::discover(&dir).expect("list the streams");
    assert!(
        !streams.is_empty(),
        "no recorded streams under {}",
        dir.display()
    );
    golden::assert_every_stream_matches(&streams, &golden::golden_root(), "streams");
    eprintln!("{} recorded streams pass", streams.len());
}

#[test]
fn every_golden_file_has_its_stream() {
    let dir = regress::streams_dir(&golden::workspace_root());
    if !dir.is_dir() {
        // Reported (and failed under CI) by the test above.
        return;
    }
    let streams = regress::discover(&dir).expect("list the streams");
    let orphans = golden::orphans(&streams, &golden::golden_root(), Origin::Recorded);
    assert!(
        orphans.is_empty(),
        "golden files without a recorded stream: {orphans:?}"
    );
}
