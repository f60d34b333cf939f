//! The provider regression suite over the recorded streams of `../shared/provider-streams`
//! (or `$XCSH_PROVIDER_STREAMS`): every stream is rebuilt into raw SSE, parsed whole,
//! in 32 seeded random chunkings and byte by byte, and compared with its golden file
//! under `fixtures/provider-streams/`. Every stream must have a golden file. Without
//! the streams directory the suite says so loudly, and fails under `CI=true`.

use std::path::{Path, PathBuf};

use xcsh_core::provider::regress::{self, Verdict};

fn workspace_root() -> PathBuf {
    // core/ is a member of the workspace at its parent.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}

#[test]
fn every_recorded_stream_matches_its_golden_file_in_any_chunking() {
    let root = workspace_root();
    let dir = regress::streams_dir(&root);
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
    let golden_root = root.join("fixtures/provider-streams");
    let streams = regress::discover(&dir).expect("list the streams");
    assert!(
        !streams.is_empty(),
        "no recorded streams under {}",
        dir.display()
    );
    let mut failures = Vec::new();
    for stream in &streams {
        let label = format!("{}/{}", stream.protocol.folder(), stream.name);
        let payloads = std::fs::read_to_string(&stream.path).expect("read a stream");
        let golden = std::fs::read_to_string(stream.golden_path(&golden_root)).ok();
        match regress::check(stream.protocol, &stream.name, &payloads, golden.as_deref()) {
            Ok(report) => match report.verdict {
                Verdict::Pass => {}
                Verdict::NoGolden => failures.push(format!(
                    "{label}: no golden file at {}",
                    stream.golden_path(&golden_root).display()
                )),
                Verdict::Mismatch { what, diff } => {
                    failures.push(format!("{label}: {what}\n{diff}"))
                }
            },
            Err(e) => failures.push(format!("{label}: cannot rebuild the stream: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} streams failed:\n\n{}",
        failures.len(),
        streams.len(),
        failures.join("\n\n")
    );
    eprintln!("{} recorded streams pass", streams.len());
}

#[test]
fn every_golden_file_has_its_stream() {
    let root = workspace_root();
    let dir = regress::streams_dir(&root);
    if !dir.is_dir() {
        // Reported (and failed under CI) by the test above.
        return;
    }
    let golden_root = root.join("fixtures/provider-streams");
    let streams = regress::discover(&dir).expect("list the streams");
    let mut orphans = Vec::new();
    for protocol in regress::Protocol::ALL {
        let Ok(entries) = std::fs::read_dir(golden_root.join(protocol.folder())) else {
            continue;
        };
        for entry in entries.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            let Some(name) = file.strip_suffix(".golden.jsonl") else {
                continue;
            };
            if !streams
                .iter()
                .any(|s| s.protocol == protocol && s.name == name)
            {
                orphans.push(format!("{}/{file}", protocol.folder()));
            }
        }
    }
    assert!(
        orphans.is_empty(),
        "golden files without a recorded stream: {orphans:?}"
    );
}
