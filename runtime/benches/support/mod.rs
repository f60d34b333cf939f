//! What the runtime's benchmarks share: one run of a scripted provider from a new
//! session to its end, and the files it leaves removed.

use std::path::Path;
use std::sync::Arc;

use xcsh_machine::Limits;
use xcsh_providers::Provider;
use xcsh_runtime::{RunEvent, RunOptions, SessionTarget, Task, run_agent};
use xcsh_tools::testing::TestTools;

/// Runs the prompt "go" in a new session at `path` with `provider`, the test tools
/// (`echo`), yolo permissions and no step or token cap; `on_event` sees every event.
/// Returns the run's steps; the session file and its lock are removed after.
pub fn run(
    rt: &tokio::runtime::Runtime,
    path: &Path,
    provider: Arc<dyn Provider>,
    mut on_event: impl FnMut(&RunEvent),
) -> u32 {
    let steps = rt.block_on(async {
        let session = SessionTarget::New {
            path: path.to_path_buf(),
            session_id: "bench".into(),
            cwd: "/bench".into(),
        };
        let task = Task::Prompt("go".into());
        let mut handle = run_agent(RunOptions {
            limits: Limits {
                max_steps: 10_000,
                max_tokens: 0,
                ..Limits::default()
            },
            ..RunOptions::new(session, task, provider, Arc::new(TestTools))
        })
        .expect("the run starts");
        while let Some(event) = handle.events.recv().await {
            on_event(&event);
        }
        handle.result().await.expect("the run ends").steps
    });
    let _ = std::fs::remove_file(path);
    let mut lock = path.as_os_str().to_owned();
    lock.push(".lock");
    let _ = std::fs::remove_file(lock);
    steps
}
