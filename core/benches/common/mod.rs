//! What the benchmarks share (`mod common;`; a folder, so cargo does not take it
//! for a benchmark of its own).

/// The runtime the benchmarked runs and calls use: two workers, as `xcsh run`.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}
