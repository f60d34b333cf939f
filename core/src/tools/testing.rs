//! Built-in test tools for the faux provider and the tests: `echo` returns its
//! arguments, `sleep` waits `ms` milliseconds (or until cancelled).

use std::time::Duration;

use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::{CANCELLED_NOTE, ToolExecutor, ToolSpec};
use crate::machine::{ToolCall, ToolOutcome, ToolStatus};
use crate::ports::BoxFuture;

/// `echo` and `sleep`: tools with no side effects, for scripted runs.
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
                other => ToolOutcome {
                    status: ToolStatus::Error,
                    content: format!("error: no test tool named `{other}`"),
                },
            }
        })
    }
}
