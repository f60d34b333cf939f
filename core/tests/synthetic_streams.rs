//! The provider regression suite over the project's own synthetic streams
//! (`fixtures/provider-streams/<folder>/synthetic/`, written from the providers' API
//! documentation for cases no recording has: a restarted message, several thinking
//! blocks, wrong types): each is rebuilt into raw SSE, parsed whole, in 32 seeded
//! random chunkings and byte by byte, and compared with the golden file beside it.
//! Unlike the recordings these are in the repository, so the suite always runs.

use std::path::{Path, PathBuf};

use xcsh_core::provider::regress::{self, Verdict};

fn golden_root() -> PathBuf {
    // core/ is a member of the workspace at its parent.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
        .join("fixtures/provider-streams")
}

#[test]
fn every_synthetic_stream_matches_its_golden_file_in_any_chunking() {
    let root = golden_root();
    let streams = regress::discover_synthetic(&root).expect("list the synthetic streams");
    for protocol in regress::Protocol::ALL {
        assert!(
            streams.iter().any(|s| s.protocol == protocol),
            "no synthetic stream for {}",
            protocol.folder()
        );
    }
    let mut failures = Vec::new();
    for stream in &streams {
        let payloads = std::fs::read_to_string(&stream.path).expect("read a stream");
        let golden = std::fs::read_to_string(stream.golden_path(&root)).ok();
        match regress::check(stream.protocol, &stream.name, &payloads, golden.as_deref()) {
            Ok(report) => match report.verdict {
                Verdict::Pass => {}
                Verdict::NoGolden => failures.push(format!(
                    "{}: no golden file at {}",
                    stream.label(),
                    stream.golden_path(&root).display()
                )),
                Verdict::Mismatch { what, diff } => {
                    failures.push(format!("{}: {what}\n{diff}", stream.label()))
                }
            },
            Err(e) => failures.push(format!(
                "{}: cannot rebuild the stream: {e}",
                stream.label()
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} synthetic streams failed:\n\n{}",
        failures.len(),
        streams.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_synthetic_golden_file_has_its_stream() {
    let root = golden_root();
    let streams = regress::discover_synthetic(&root).expect("list the synthetic streams");
    let mut orphans = Vec::new();
    for protocol in regress::Protocol::ALL {
        let dir = root.join(protocol.folder()).join(regress::SYNTHETIC);
        let Ok(entries) = std::fs::read_dir(&dir) else {
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
                orphans.push(format!(
                    "{}/{}/{file}",
                    protocol.folder(),
                    regress::SYNTHETIC
                ));
            }
        }
    }
    assert!(
        orphans.is_empty(),
        "golden files without a synthetic stream: {orphans:?}"
    );
}
