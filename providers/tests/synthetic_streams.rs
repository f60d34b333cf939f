//! The provider regression suite over the project's own synthetic streams
//! (`fixtures/provider-streams/<folder>/synthetic/`, written from the providers' API
//! documentation for cases no recording has: a restarted message, several thinking
//! blocks, wrong types): each is rebuilt into raw SSE, parsed whole, in 32 seeded
//! random chunkings and byte by byte, and compared with the golden file beside it.
//! Unlike the recordings these are in the repository, so the suite always runs.

#[path = "support/golden.rs"]
mod golden;

use xcsh_providers::regress::{self, Origin};

#[test]
fn every_synthetic_stream_matches_its_golden_file_in_any_chunking() {
    let root = golden::golden_root();
    let streams = regress::discover_synthetic(&root).expect("list the synthetic streams");
    for protocol in regress::Protocol::ALL {
        assert!(
            streams.iter().any(|s| s.protocol == protocol),
            "no synthetic stream for {}",
            protocol.folder()
        );
    }
    golden::assert_every_stream_matches(&streams, &root, "synthetic streams");
}

#[test]
fn every_synthetic_golden_file_has_its_stream() {
    let root = golden::golden_root();
    let streams = regress::discover_synthetic(&root).expect("list the synthetic streams");
    let orphans = golden::orphans(&streams, &root, Origin::Synthetic);
    assert!(
        orphans.is_empty(),
        "golden files without a synthetic stream: {orphans:?}"
    );
}
