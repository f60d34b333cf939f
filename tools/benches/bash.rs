//! The cost of one `bash` call (`true`) through the standard tools against a bare
//! `bash -c true` spawned the same way (own process group, stdin at EOF, both
//! pipes read to their end): what the tool adds (schema check, the call's marker
//! and registration, the settle-time check for leftovers, the result). With an
//! unknown child of the process alive (an unmarked `sleep`), every settlement
//! scans `/proc` for the call's leftovers: the slow path of `tools::procs`; and
//! those two checks alone.

use std::process::Stdio;

use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;
use xcsh_machine::{CallId, ToolCall};
use xcsh_tools::{StandardTools, ToolExecutor};

fn main() {
    divan::main();
}

fn call() -> ToolCall {
    ToolCall {
        id: CallId("bench".into()),
        name: "bash".into(),
        arguments: r#"{"command":"true"}"#.into(),
    }
}

#[divan::bench(sample_count = 200, sample_size = 1)]
fn bare_bash_c(bencher: divan::Bencher) {
    let rt = runtime();
    bencher.bench_local(|| {
        rt.block_on(async {
            let mut child = tokio::process::Command::new("bash")
                .args(["-c", "true"])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .spawn()
                .expect("bash starts");
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let mut stdout = child.stdout.take().expect("piped");
            let mut stderr = child.stderr.take().expect("piped");
            let (status, _, _) = tokio::join!(
                child.wait(),
                stdout.read_to_end(&mut out),
                stderr.read_to_end(&mut err)
            );
            assert!(status.expect("bash ends").success());
        })
    });
}

fn tool_call(bencher: divan::Bencher) {
    let rt = runtime();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let tools = StandardTools::new(dir.path()).expect("the tools");
    bencher.bench_local(|| {
        let outcome = rt.block_on(tools.execute(call(), CancellationToken::new()));
        assert!(
            outcome.content.starts_with("exit code: 0"),
            "{}",
            outcome.content
        );
    });
}

#[divan::bench(sample_count = 200, sample_size = 1)]
fn bash_tool(bencher: divan::Bencher) {
    tool_call(bencher);
}

#[divan::bench(sample_count = 200, sample_size = 1)]
fn bash_tool_with_an_unknown_child(bencher: divan::Bencher) {
    let mut stranger = std::process::Command::new("sleep")
        .arg("1000")
        .spawn()
        .expect("sleep starts");
    tool_call(bencher);
    let _ = stranger.kill();
    let _ = stranger.wait();
}

/// What `tools::procs` adds to a settlement that left nothing (no unknown child:
/// the `/proc/self/task/*/children` reads only).
#[divan::bench(sample_count = 1000)]
fn leftover_check_without_an_unknown_child() -> usize {
    xcsh_tools::procs::end_orphans()
}

/// The same with an unknown child alive: the `/proc` scan of the descendants.
#[divan::bench(sample_count = 1000)]
fn leftover_scan_with_an_unknown_child(bencher: divan::Bencher) {
    let mut stranger = std::process::Command::new("sleep")
        .arg("1000")
        .spawn()
        .expect("sleep starts");
    bencher.bench_local(xcsh_tools::procs::end_orphans);
    let _ = stranger.kill();
    let _ = stranger.wait();
}

/// The runtime the benchmarked runs and calls use: two workers, as `xcsh run`.
fn runtime() -> tokio::runtime::Runtime {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.worker_threads(2).enable_all();
    builder.build().expect("a tokio runtime")
}
