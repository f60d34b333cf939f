//! Built-in test tools for the faux provider and the tests: `echo` returns its
//! arguments, `sleep` waits `ms` milliseconds (or until cancelled); and what tests of
//! the tools check with: whether the sandbox can run here, which processes are left.

use std::time::Duration;

use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::{CANCELLED_NOTE, ToolExecutor, ToolSpec};
use xcsh_machine::{ToolCall, ToolOutcome, ToolStatus};
use xcsh_ports::BoxFuture;

/// The processes (but this one) whose command line holds `needle`, as (pid, command
/// line with its arguments joined by spaces): what a test checks to see that a
/// tool's processes are gone.
pub fn processes_holding(needle: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    // A test that cannot see the processes must not pass as if there were none.
    let entries = std::fs::read_dir("/proc").expect("/proc can be listed");
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(bytes) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let line = String::from_utf8_lossy(&bytes).replace('\0', " ");
        if line.contains(needle) && pid != std::process::id() {
            out.push((pid, line));
        }
    }
    out
}

/// Whether this kernel can sandbox (`sandbox::probe`); a test that needs the sandbox
/// is skipped without it, loudly, except under `CI=true`, where it fails.
pub fn sandbox_supported() -> bool {
    match super::sandbox::probe() {
        Ok(_) => true,
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("the sandbox is required under CI=true: {e}")
        }
        Err(e) => {
            eprintln!("SKIPPED: this kernel cannot run the sandbox: {e}");
            false
        }
    }
}

/// `echo` and `sleep`: tools with no side effects, for scripted runs (and `plan`,
/// which every tool set offers).
#[derive(Debug, Clone, Copy, Default)]
pub struct TestTools;

#[derive(Deserialize)]
struct SleepArgs {
    ms: u64,
}

impl ToolExecutor for TestTools {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![
            ToolSpec {
                name: "echo".into(),
                description: "Returns its arguments unchanged (a test tool).".into(),
                parameters: serde_json::json!({"type": "object"}),
            },
            ToolSpec {
                name: "sleep".into(),
                description: "Waits `ms` milliseconds, or until cancelled (a test tool).".into(),
                parameters: serde_json::json!({
                    "type": "object",
                    "properties": {"ms": {"type": "integer", "minimum": 0}},
                    "required": ["ms"]
                }),
            },
            super::plan::spec(),
        ]
    }

    fn execute(&self, call: ToolCall, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        Box::pin(async move {
            match call.name.as_str() {
                "echo" => ToolOutcome {
                    status: ToolStatus::Ok,
                    content: call.arguments,
                },
                "sleep" => {
                    let args: SleepArgs = match serde_json::from_str(&call.arguments) {
                        Ok(a) => a,
                        Err(e) => {
                            return ToolOutcome {
                                status: ToolStatus::Error,
                                content: format!("error: sleep needs {{\"ms\": N}}: {e}"),
                            };
                        }
                    };
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(args.ms)) => ToolOutcome {
                            status: ToolStatus::Ok,
                            content: format!("slept {} ms", args.ms),
                        },
                        () = cancel.cancelled() => ToolOutcome {
                            status: ToolStatus::Cancelled,
                            content: format!("sleep {CANCELLED_NOTE}"),
                        },
                    }
                }
                super::plan::NAME => super::plan::run(&call.arguments),
                other => ToolOutcome {
                    status: ToolStatus::Error,
                    content: format!("error: no test tool named `{other}`"),
                },
            }
        })
    }
}
