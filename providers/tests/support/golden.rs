//! What the two provider regression suites (`provider_streams.rs` over the
//! recordings, `synthetic_streams.rs` over the synthetic streams) share: where the
//! golden files are, one stream checked against its golden file, and the golden files
//! that have no stream.

use std::path::{Path, PathBuf};

use xcsh_providers::regress::{self, Origin, StreamFile, Verdict};

/// The workspace root (core/ is a member of the workspace at its parent).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}

/// `fixtures/provider-streams/`: the golden files (and the synthetic streams).
pub fn golden_root() -> PathBuf {
    workspace_root().join("fixtures/provider-streams")
}

/// Checks every stream against its golden file under `golden_root` (whole, in
/// chunkings, byte by byte); fails naming each that does not match.
pub fn assert_every_stream_matches(streams: &[StreamFile], golden_root: &Path, what: &str) {
    let mut failures = Vec::new();
    for stream in streams {
        let label = stream.label();
        let payloads = std::fs::read_to_string(&stream.path).expect("read a stream");
        let golden = std::fs::read_to_string(stream.golden_path(golden_root)).ok();
        match regress::check(stream.protocol, &stream.name, &payloads, golden.as_deref()) {
            Ok(report) => match report.verdict {
                Verdict::Pass => {}
                Verdict::NoGolden => failures.push(format!(
                    "{label}: no golden file at {}",
                    stream.golden_path(golden_root).display()
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
        "{} of {} {what} failed:\n\n{}",
        failures.len(),
        streams.len(),
        failures.join("\n\n")
    );
}

/// The golden files of `origin` under `golden_root` that no stream of `streams` has,
/// named `<protocol-folder>[/synthetic]/<file>`.
pub fn orphans(streams: &[StreamFile], golden_root: &Path, origin: Origin) -> Vec<String> {
    let mut orphans = Vec::new();
    for protocol in regress::Protocol::ALL {
        let folder = match origin {
            Origin::Recorded => protocol.folder().to_string(),
            Origin::Synthetic => format!("{}/{}", protocol.folder(), regress::SYNTHETIC),
        };
        let Ok(entries) = std::fs::read_dir(golden_root.join(&folder)) else {
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
                orphans.push(format!("{folder}/{file}"));
            }
        }
    }
    orphans
}
