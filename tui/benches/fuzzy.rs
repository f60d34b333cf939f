//! Benchmark: one keystroke of `@path` completion, ranking 50,000 synthetic
//! workspace paths (the FileIndex cap) for queries of growing length.

use xcsh_tui::complete::rank;

fn main() {
    divan::main();
}

fn paths() -> Vec<String> {
    (0..50_000)
        .map(|i| {
            format!(
                "crate{}/src/module_{}/sub_{}/file_{i}.rs",
                i % 97,
                i % 13,
                i % 7
            )
        })
        .collect()
}

#[divan::bench(args = ["m", "mod", "mod3fi", "crate5/src/module_3/file_49"])]
fn rank_50k(bencher: divan::Bencher, query: &str) {
    let candidates = paths();
    bencher.bench(|| rank(divan::black_box(query), &candidates, 50));
}
