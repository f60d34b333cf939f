//! Benchmark: stream deltas through the renderer into a TestBackend (filled by helper "markdown").
fn main() {}
