//! The views built from a session's derived index (`tree`, `stats`, `sessions`) are
//! the views built from its entries, on generated sessions with branches, labels,
//! compactions, steers, interrupts and errors.

use xcsh_core::journal::synth::{SynthOptions, generate};
use xcsh_core::log::index::open_index;
use xcsh_core::log::read_session;

use crate::{stats, summarize, summarize_path, tree};

#[test]
fn views_from_the_index_equal_views_from_the_entries() {
    let dir = tempfile::tempdir().unwrap();
    for (seed, entries) in [(1, 3_000), (2, 9_000)] {
        let path = dir.path().join(format!("s{seed}.jsonl"));
        generate(&path, SynthOptions { entries, seed }).unwrap();
        let log = read_session(&path).unwrap();

        let from_index = stats::compute_path(&path).unwrap();
        let from_entries = stats::compute_entries(&log);
        assert_eq!(from_index, from_entries);
        assert_eq!(stats::render(&from_index), stats::render(&from_entries));

        let t1 = serde_json::to_string(&tree::build_path(&path, false).unwrap()).unwrap();
        let t2 = serde_json::to_string(&tree::build_full_or_turns(&log, false)).unwrap();
        assert_eq!(t1, t2);

        assert_eq!(summarize_path(&path).unwrap(), summarize(&log));
        // The index was written beside the big one and is used as it is.
        if std::fs::metadata(&path).unwrap().len() >= xcsh_core::log::index::INDEX_MIN_BYTES {
            assert_eq!(
                open_index(&path).unwrap().source,
                xcsh_core::log::index::IndexSource::Valid
            );
        }
    }
}

#[test]
fn events_of_entry_types_from_the_index_equal_the_full_timeline() {
    use crate::events::{Filter, stream_file, timeline};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    generate(
        &path,
        SynthOptions {
            entries: 6_000,
            seed: 4,
        },
    )
    .unwrap();
    let log = read_session(&path).unwrap();
    let all = timeline(&log);
    open_index(&path).unwrap();
    for types in [
        vec!["tool_result"],
        vec!["steer", "delivered", "approval", "tool_dispatched"],
        vec!["label", "branch", "run_finished", "step", "compacted"],
    ] {
        let filter = Filter {
            types: types.iter().map(|t| t.to_string()).collect(),
            ..Filter::default()
        };
        let want: Vec<_> = all.iter().filter(|r| filter.keeps(r)).cloned().collect();
        let mut got = Vec::new();
        stream_file(&path, &filter, |r| got.push(r.clone())).unwrap();
        assert!(!want.is_empty());
        assert_eq!(got, want, "{types:?}");
    }
}
