//! `events` of entry types, read through the derived index (only the lines of
//! those types are read), are the rows of the full timeline, on a generated session
//! with branches, labels, compactions, steers, interrupts and errors. The step, lane
//! and tool of a row are worked out once (`events::Steps`), from what the entry or
//! the index says (`track`, `track_at`); this compares the two readings. (The tree,
//! stats and summary have one implementation, over the index, for a file and a log
//! read already alike.)

use xcsh_log::index::open_index;
use xcsh_log::read_session;

#[test]
fn events_of_entry_types_from_the_index_equal_the_full_timeline() {
    use crate::events::{Filter, stream_file, timeline};
    let (_dir, path, _) = crate::testkit::synth(6_000, 4, Default::default());
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
