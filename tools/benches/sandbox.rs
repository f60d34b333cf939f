//! The cost of the sandbox on a bash call: `bash -c true` spawned and waited for as
//! the bash tool spawns it (tokio, its own process group, stdio piped), bare and
//! inside the sandbox (`workspace-write`: the user + PID namespace and its init,
//! Landlock, seccomp). `scripts/bench.sh` divides the two (issue 19 wants bash
//! within 1.2× of a bare `bash -c`), and shows beside them the same bare spawn
//! forced to fork by a `pre_exec` hook that does nothing: the sandbox needs such a
//! hook, so that is the part of its cost the fork alone explains.

use std::process::Stdio;

use xcsh_tools::sandbox::{Sandbox, SandboxMode, SandboxPolicy, probe};

fn main() {
    divan::main();
}

fn command() -> tokio::process::Command {
    let mut command = tokio::process::Command::new("bash");
    command
        .arg("-c")
        .arg("true")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    command
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[divan::bench(sample_count = 200)]
fn bash_bare(bencher: divan::Bencher) {
    let rt = runtime();
    bencher.bench_local(|| {
        rt.block_on(async {
            let status = command().spawn().unwrap().wait().await.unwrap();
            assert!(status.success());
        })
    });
}

#[divan::bench(sample_count = 200)]
fn bash_forked(bencher: divan::Bencher) {
    let rt = runtime();
    bencher.bench_local(|| {
        rt.block_on(async {
            let mut command = command();
            // SAFETY: the hook does nothing (it only makes std fork instead of
            // using posix_spawn).
            unsafe {
                command.pre_exec(|| Ok(()));
            }
            let status = command.spawn().unwrap().wait().await.unwrap();
            assert!(status.success());
        })
    });
}

#[divan::bench(sample_count = 200)]
fn bash_sandboxed(bencher: divan::Bencher) {
    if let Err(e) = probe() {
        eprintln!("SKIPPED: this kernel cannot run the sandbox: {e}");
        return;
    }
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(
        dir.path(),
        SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            network: false,
        },
    )
    .unwrap();
    bencher.bench_local(|| {
        rt.block_on(async {
            let mut command = command();
            sandbox.confine(&mut command);
            let status = command.spawn().unwrap().wait().await.unwrap();
            assert!(status.success());
        })
    });
}
