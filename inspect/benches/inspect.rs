//! The inspect commands on a generated session (`XCSH_BENCH_ENTRIES` entries, default
//! 50,000; or the file `XCSH_BENCH_SESSION`) with its derived index built: `check`,
//! `tree`, `stats`, `sessions`' summary and `events --type tool_result`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use xcsh_inspect::{check, events, stats, summarize_path, tree};
use xcsh_journal::synth::bench_session;
use xcsh_log::index::open_index;

fn main() {
    divan::main();
}

fn session() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let path = bench_session("inspect");
        open_index(&path).expect("indexes");
        path
    })
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn check_whole_file() -> usize {
    let r = check::check_file(session()).expect("checks");
    assert_eq!(r.errors(), 0);
    r.entries
}

#[divan::bench(sample_count = 20)]
fn tree_with_index() -> usize {
    tree::render(
        &tree::build_path(session(), false).expect("builds"),
        xcsh_inspect::Style::plain(),
    )
    .len()
}

#[divan::bench(sample_count = 20)]
fn stats_with_index() -> usize {
    stats::render(&stats::compute_path(session()).expect("computes")).len()
}

#[divan::bench(sample_count = 20)]
fn sessions_summary_with_index() -> usize {
    summarize_path(session()).expect("summarizes").entries
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn events_tool_results_with_index() -> usize {
    let filter = events::Filter {
        types: vec!["tool_result".into()],
        ..events::Filter::default()
    };
    let mut n = 0;
    events::stream_file(session(), &filter, |row| {
        n += serde_json::to_string(row).map_or(0, |s| s.len());
    })
    .expect("streams");
    n
}
