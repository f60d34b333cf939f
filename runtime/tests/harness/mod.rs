//! The runtime test harness, in the style of quinn-proto's `Pair`: the real owner
//! task (`run_agent`) with a scripted provider (the faux provider) and a scripted
//! executor, on tokio's paused clock (`#[tokio::test(start_paused = true)]`), so that
//! a tool that "takes 30 ms" ends after one that takes 10 ms without any test
//! waiting. The whole transcript, the run's events as they came and then the entries
//! of its log, is rendered as compact lines and compared with `expect![[…]]`, as
//! `machine/src/tests.rs` does for the machine (`UPDATE_EXPECT=1` accepts a
//! change).
//!
//! The scripted executor has one tool, `wait {"ms": N, "out": TEXT}`: it sleeps N
//! virtual milliseconds and returns TEXT (`cancelled` when its token fires first).

#![allow(dead_code)]

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use xcsh_log::{Body, Record, read_session};
use xcsh_machine::{Decision, Limits, Permissions, ToolCall, ToolOutcome, ToolStatus};
use xcsh_providers::BoxFuture;
use xcsh_providers::faux::FauxProvider;
use xcsh_runtime::{RunEvent, RunHandle, RunOptions, SessionTarget, Task, run_agent};
use xcsh_tools::{ToolExecutor, ToolSpec};

/// The scripted executor (see the module documentation).
pub struct Scripted;

impl ToolExecutor for Scripted {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "wait".into(),
            description: "Waits `ms` milliseconds, then returns `out`.".into(),
            parameters: serde_json::json!({"type": "object"}),
        }]
    }

    fn execute(&self, call: ToolCall, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        Box::pin(async move {
            let args: serde_json::Value = serde_json::from_str(&call.arguments).unwrap_or_default();
            let ms = args["ms"].as_u64().unwrap_or(0);
            let out = args["out"].as_str().unwrap_or("").to_string();
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms)) => ToolOutcome {
                    status: ToolStatus::Ok,
                    content: out,
                },
                () = cancel.cancelled() => ToolOutcome {
                    status: ToolStatus::Cancelled,
                    content: "cancelled".into(),
                },
            }
        })
    }
}

/// A `wait` call of the faux script: `{"name":"wait","arguments":{"ms":MS,"out":OUT}}`.
pub fn wait(ms: u64, out: &str) -> String {
    format!(r#"{{"name":"wait","arguments":{{"ms":{ms},"out":"{out}"}}}}"#)
}

/// One run of the real owner: its handle, its log, the time it started.
pub struct Pair {
    _dir: tempfile::TempDir,
    pub path: std::path::PathBuf,
    pub handle: RunHandle,
    start: tokio::time::Instant,
    out: String,
}

impl Pair {
    /// Starts a run of `prompt` against the faux `script` with the scripted tools
    /// (`yolo`, default limits); `edit` changes the options before the start.
    pub fn start(script: &str, prompt: &str, edit: impl FnOnce(&mut RunOptions)) -> Pair {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut opts = RunOptions {
            session: SessionTarget::New {
                path: path.clone(),
                session_id: "test".into(),
                cwd: "/w".into(),
            },
            task: Task::Prompt(prompt.into()),
            limits: Limits::default(),
            system_prompt: "sys".into(),
            provider: Arc::new(FauxProvider::from_script("test", script).unwrap()),
            tools: Arc::new(Scripted),
            permissions: Permissions::Yolo,
            approver: None,
            max_parallel_tools: xcsh_runtime::DEFAULT_MAX_PARALLEL_TOOLS,
            secrets: Default::default(),
        };
        edit(&mut opts);
        let handle = run_agent(opts).unwrap();
        Pair {
            _dir: dir,
            path,
            handle,
            start: tokio::time::Instant::now(),
            out: String::new(),
        }
    }

    /// Takes events (each stamped with the virtual time it was read at) until
    /// `until` says the last one is the point to stop at; returns whether it was
    /// met before the stream ended.
    pub async fn events_until(&mut self, mut until: impl FnMut(&RunEvent) -> bool) -> bool {
        while let Some(event) = self.handle.events.recv().await {
            let ms = self.start.elapsed().as_millis();
            let _ = writeln!(self.out, "{ms:>5}ms {}", event_line(&event));
            if until(&event) {
                return true;
            }
        }
        false
    }

    /// Takes every event to the end of the run, waits for its result, and returns
    /// the transcript: the events, the result's stop reason, then the log.
    pub async fn finish(mut self) -> String {
        self.events_until(|_| false).await;
        let result = self.handle.result().await.unwrap();
        let _ = writeln!(self.out, "result {:?}", result.stop_reason);
        for line in entry_lines(&self.path) {
            let _ = writeln!(self.out, "{line}");
        }
        self.out
    }
}

/// An event as one compact line: its type and what tells it apart.
pub fn event_line(event: &RunEvent) -> String {
    match event {
        RunEvent::RunStarted { .. } => "run_started".into(),
        RunEvent::Notice { message } => format!("notice {message}"),
        RunEvent::Retrying { step, attempt, .. } => format!("retrying {step} #{attempt}"),
        RunEvent::StepStarted { step } => format!("step_started {step}"),
        RunEvent::TextDelta { step, text } => format!("text {step} {text:?}"),
        RunEvent::ReasoningDelta { step, text } => format!("reasoning {step} {text:?}"),
        RunEvent::StepFinished { step, outcome, .. } => format!("step_finished {step} {outcome}"),
        RunEvent::ToolCall { call_id, name, .. } => format!("tool_call {call_id} {name}"),
        RunEvent::ToolOutput { call_id, text, .. } => format!("tool_output {call_id} {text:?}"),
        RunEvent::ToolResult {
            call_id,
            status,
            content,
            ..
        } => format!("tool_result {call_id} {status:?} {content:?}"),
        RunEvent::ApprovalRequested { call_id, .. } => format!("approval_requested {call_id}"),
        RunEvent::Approval {
            call_id, verdict, ..
        } => format!("approval {call_id} {verdict:?}"),
        RunEvent::Queued { origin, text } => format!("queued {origin:?} {text:?}"),
        RunEvent::Delivered { origin, text } => format!("delivered {origin:?} {text:?}"),
        RunEvent::CompactionStarted { .. } => "compaction_started".into(),
        RunEvent::Compacted { .. } => "compacted".into(),
        RunEvent::Ignored { reason } => format!("ignored {reason:?}"),
        RunEvent::RunFinished { reason, steps, .. } => format!("run_finished {reason:?} {steps}"),
    }
}

/// The log's entries as compact lines: `#id type`, and what tells it apart.
pub fn entry_lines(path: &std::path::Path) -> Vec<String> {
    let log = read_session(path).unwrap();
    log.entries
        .iter()
        .map(|e| {
            let detail = match &e.body {
                Body::Record(Record::Step(s)) => format!(" {} {:?}", s.step, s.outcome),
                Body::Record(Record::ToolResult(r)) => {
                    format!(
                        " {} {:?} {:?}",
                        r.call_id, r.outcome.status, r.outcome.content
                    )
                }
                Body::Record(Record::Steer { text } | Record::FollowUp { text }) => {
                    format!(" {text:?}")
                }
                Body::Decision(Decision::ToolDispatched { call, .. }) => format!(" {}", call.id),
                Body::Decision(Decision::Delivered { text, .. }) => format!(" {text:?}"),
                Body::Decision(Decision::RunFinished { reason, .. }) => format!(" {reason:?}"),
                Body::Decision(Decision::Ignored { reason }) => format!(" {reason:?}"),
                _ => String::new(),
            };
            format!("#{} {}{detail}", e.id, e.body.type_name())
        })
        .collect()
}
