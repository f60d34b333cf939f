//! What the runtime gives a terminal UI beyond the log: bash's output as transient
//! `tool_output` events while the call runs, provider retries as `retrying` events,
//! a denial that carries the user's message to the model, and the file changes of an
//! `edit` on its `tool_result` event.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;
use xcsh_log::{Body, Record, read_session};
use xcsh_machine::{
    ApprovalScope, CallId, FinishReason, Limits, Message, Permissions, ProviderError, StepNo,
    StopReason, StreamEvent, ToolCall, ToolStatus, Verdict,
};
use xcsh_providers::faux::FauxProvider;
use xcsh_providers::{BoxFuture, ModelRequest, Provider, StreamSink};
use xcsh_runtime::{
    ApprovalAnswer, ApprovalRequest, Approver, RunEvent, RunHandle, RunOptions, SessionTarget,
    Task, run_agent,
};
use xcsh_tools::{OutputStream, StandardTools, ToolExecutor};

/// A workspace directory and a session file beside it.
struct Dir {
    _tmp: tempfile::TempDir,
    work: PathBuf,
    session: PathBuf,
}

fn dir() -> Dir {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let work = work.canonicalize().unwrap();
    let session = tmp.path().join("s.jsonl");
    Dir {
        _tmp: tmp,
        work,
        session,
    }
}

fn start(
    dir: &Dir,
    provider: Arc<dyn Provider>,
    permissions: Permissions,
    approver: Option<Arc<dyn Approver>>,
) -> RunHandle {
    run_agent(RunOptions {
        session: SessionTarget::New {
            path: dir.session.clone(),
            session_id: "t".into(),
            cwd: dir.work.display().to_string(),
        },
        task: Task::Prompt("go".into()),
        limits: Limits::default(),
        system_prompt: "sys".into(),
        provider,
        tools: Arc::new(StandardTools::new(&dir.work).unwrap()),
        permissions,
        approver,
        max_parallel_tools: xcsh_runtime::DEFAULT_MAX_PARALLEL_TOOLS,
        secrets: Default::default(),
    })
    .unwrap()
}

fn faux(script: &str) -> Arc<dyn Provider> {
    Arc::new(FauxProvider::from_script("test", script).unwrap())
}

/// A result's content with its `duration: N ms` line made constant.
fn without_duration(content: &str) -> String {
    content
        .lines()
        .map(|l| {
            if l.starts_with("duration: ") {
                "duration: _ ms"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const BASH_RESULT: &str = "exit code: 0\nduration: _ ms\nstdout:\na\nb\nc\nstderr:\ne";

/// The command waits on a FIFO that the test opens only once it has seen the first
/// lines as `tool_output` events: so they came while the call was running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_output_arrives_as_tool_output_events_while_it_runs_and_before_its_result() {
    let dir = dir();
    let gate = dir.work.join("gate");
    let made = std::process::Command::new("mkfifo")
        .arg(&gate)
        .status()
        .unwrap();
    assert!(made.success());
    let command = "printf 'a\\nb\\n'; cat gate; printf 'c\\n'; printf 'e\\n' >&2";
    let script = format!(
        "{}\n{}",
        serde_json::json!({"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}),
        r#"{"text":"done"}"#
    );
    let mut handle = start(&dir, faux(&script), Permissions::Yolo, None);
    let mut opened = false;
    let mut stdout = String::new();
    let mut stderr = String::new();
    let mut order = Vec::new();
    let mut result = None;
    while let Some(event) = handle.events.recv().await {
        match &event {
            RunEvent::ToolCall { .. } => order.push("tool_call"),
            RunEvent::ToolOutput { stream, text, .. } => {
                order.push("tool_output");
                match stream {
                    OutputStream::Stdout => stdout.push_str(text),
                    OutputStream::Stderr => stderr.push_str(text),
                }
                if !opened && stdout.starts_with("a\nb\n") {
                    opened = true;
                    let gate = gate.clone();
                    // Opening the FIFO for writing (and closing it) lets `cat` end.
                    tokio::task::spawn_blocking(move || {
                        drop(std::fs::OpenOptions::new().write(true).open(gate).unwrap())
                    });
                }
            }
            RunEvent::ToolResult { content, .. } => {
                order.push("tool_result");
                result = Some(content.clone());
            }
            _ => {}
        }
    }
    assert_eq!(
        handle.result().await.unwrap().stop_reason,
        StopReason::Completed
    );
    assert!(opened);
    assert_eq!(stdout, "a\nb\nc\n");
    assert_eq!(stderr, "e\n");
    // Every piece of output comes between the call and its result.
    order.dedup();
    assert_eq!(order, ["tool_call", "tool_output", "tool_result"]);
    let result = result.unwrap();
    assert_eq!(without_duration(&result), BASH_RESULT);
    // The recorded result is the event's content: progress is not recorded.
    let log = read_session(&dir.session).unwrap();
    let recorded = log
        .entries
        .iter()
        .find_map(|e| match &e.body {
            Body::Record(Record::ToolResult(r)) => Some(r.outcome.content.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(recorded, result);
    let log_text = std::fs::read_to_string(&dir.session).unwrap();
    assert!(!log_text.contains("tool_output"));
}

/// The same command without a progress sink gives the same result.
#[tokio::test]
async fn bash_without_a_progress_sink_gives_the_same_result() {
    let dir = dir();
    let tools = StandardTools::new(&dir.work).unwrap();
    let command = "printf 'a\\nb\\n'; printf 'c\\n'; printf 'e\\n' >&2";
    let outcome = tools
        .execute(
            ToolCall {
                id: CallId("c1".into()),
                name: "bash".into(),
                arguments: serde_json::json!({ "command": command }).to_string(),
            },
            CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Ok);
    assert_eq!(without_duration(&outcome.content), BASH_RESULT);
}

/// Sends one retry notice, then a short answer.
struct RetryingProvider;

impl Provider for RetryingProvider {
    fn name(&self) -> &str {
        "retrying"
    }
    fn model(&self) -> &str {
        "retrying"
    }
    fn stream(
        &self,
        _request: ModelRequest,
        sink: StreamSink,
        _cancel: CancellationToken,
    ) -> BoxFuture<Result<(), ProviderError>> {
        Box::pin(async move {
            sink.send(StreamEvent::Retrying {
                attempt: 2,
                reason: "http 429 Too Many Requests".into(),
                delay_ms: 1500,
            });
            sink.send(StreamEvent::TextDelta { text: "hi".into() });
            sink.send(StreamEvent::Finish {
                reason: FinishReason::Stop,
            });
            Ok(())
        })
    }
}

#[tokio::test]
async fn a_provider_retry_reaches_the_interface_as_a_retrying_event() {
    let dir = dir();
    let mut handle = start(&dir, Arc::new(RetryingProvider), Permissions::Yolo, None);
    let mut seen = Vec::new();
    while let Some(event) = handle.events.recv().await {
        match event {
            RunEvent::Retrying { .. } | RunEvent::TextDelta { .. } => seen.push(event),
            _ => {}
        }
    }
    handle.result().await.unwrap();
    let retrying = RunEvent::Retrying {
        step: StepNo(1),
        attempt: 2,
        delay_ms: 1500,
        reason: "http 429 Too Many Requests".into(),
    };
    assert_eq!(
        seen,
        [
            retrying.clone(),
            RunEvent::TextDelta {
                step: StepNo(1),
                text: "hi".into()
            }
        ]
    );
    assert_eq!(
        serde_json::to_string(&retrying).unwrap(),
        r#"{"type":"retrying","step":1,"attempt":2,"delay_ms":1500,"reason":"http 429 Too Many Requests"}"#
    );
}

/// Denies every question with a message.
struct DenyWith(&'static str);

impl Approver for DenyWith {
    fn decide(&self, _request: ApprovalRequest) -> BoxFuture<ApprovalAnswer> {
        let answer = ApprovalAnswer::deny_with(self.0);
        Box::pin(async move { answer })
    }
}

/// The faux provider, keeping every request it was sent.
struct Recording {
    inner: FauxProvider,
    requests: Arc<Mutex<Vec<ModelRequest>>>,
}

impl Provider for Recording {
    fn name(&self) -> &str {
        "recording"
    }
    fn model(&self) -> &str {
        "faux-script"
    }
    fn stream(
        &self,
        request: ModelRequest,
        sink: StreamSink,
        cancel: CancellationToken,
    ) -> BoxFuture<Result<(), ProviderError>> {
        self.requests.lock().unwrap().push(request.clone());
        self.inner.stream(request, sink, cancel)
    }
}

#[tokio::test]
async fn a_denial_with_a_message_reaches_the_model_and_is_recorded() {
    let dir = dir();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let script = [
        r#"{"tool_calls":[{"name":"write","arguments":{"path":"a.txt","content":"x"}}]}"#,
        r#"{"text":"ok"}"#,
    ]
    .join("\n");
    let provider = Recording {
        inner: FauxProvider::from_script("test", &script).unwrap(),
        requests: Arc::clone(&requests),
    };
    let handle = start(
        &dir,
        Arc::new(provider),
        Permissions::Ask,
        Some(Arc::new(DenyWith("use b.txt instead"))),
    );
    assert_eq!(
        handle.result().await.unwrap().stop_reason,
        StopReason::Completed
    );
    let expected = "denied: the user did not allow `write`; the call was not run. The user says: use b.txt instead";
    let requests = requests.lock().unwrap();
    let seen = requests[1].messages.iter().find_map(|m| match m {
        Message::ToolResult { content, .. } => Some(content.clone()),
        _ => None,
    });
    assert_eq!(seen.as_deref(), Some(expected));
    assert!(!dir.work.join("a.txt").exists());
    let log = read_session(&dir.session).unwrap();
    let answers: Vec<Record> = log
        .entries
        .iter()
        .filter_map(|e| match &e.body {
            Body::Record(r @ Record::ApprovalAnswer { .. }) => Some(r.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        answers,
        [Record::ApprovalAnswer {
            call_id: CallId("call_1_1".into()),
            verdict: Verdict::Deny,
            scope: ApprovalScope::Once,
            message: Some("use b.txt instead".into()),
        }]
    );
}

#[tokio::test]
async fn an_edit_result_event_carries_the_file_change_with_the_old_content() {
    let dir = dir();
    std::fs::write(dir.work.join("a.txt"), "one\ntwo\n").unwrap();
    let script = [
        r#"{"tool_calls":[{"name":"read","arguments":{"path":"a.txt"}}]}"#,
        r#"{"tool_calls":[{"name":"edit","arguments":{"path":"a.txt","old_string":"two","new_string":"three"}}]}"#,
        r#"{"text":"done"}"#,
    ]
    .join("\n");
    let mut handle = start(&dir, faux(&script), Permissions::Yolo, None);
    let mut edit = None;
    let mut read_changes = None;
    while let Some(event) = handle.events.recv().await {
        if let RunEvent::ToolResult { name, changes, .. } = &event {
            match name.as_str() {
                "edit" => edit = Some(event.clone()),
                _ => read_changes = Some(changes.clone()),
            }
        }
    }
    handle.result().await.unwrap();
    assert_eq!(read_changes, Some(Vec::new()));
    let edit = edit.unwrap();
    let RunEvent::ToolResult {
        status, changes, ..
    } = &edit
    else {
        unreachable!()
    };
    assert_eq!(*status, ToolStatus::Ok);
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].before.as_deref(), Some("one\ntwo\n"));
    assert_eq!(changes[0].path, dir.work.join("a.txt"));
    // The same values as the recorded entry's.
    let log = read_session(&dir.session).unwrap();
    let recorded = log
        .entries
        .iter()
        .find_map(|e| match &e.body {
            Body::Record(Record::ToolResult(r)) if r.name == "edit" => Some(r.changes.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(&recorded, changes);
    // `--json` lines do not carry them.
    let json = serde_json::to_value(&edit).unwrap();
    assert!(json.get("changes").is_none(), "{json}");
}

/// A partial line (a prompt, a progress bar) is sent once the pipe goes quiet: the
/// command waits on a FIFO after `abc` without a newline, and the test opens it only
/// once `abc` arrived.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partial_line_is_sent_when_the_pipe_goes_quiet() {
    let dir = dir();
    let gate = dir.work.join("gate");
    let made = std::process::Command::new("mkfifo")
        .arg(&gate)
        .status()
        .unwrap();
    assert!(made.success());
    let command = "printf 'abc'; cat gate; printf 'def\\n'";
    let script = format!(
        "{}\n{}",
        serde_json::json!({"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}),
        r#"{"text":"done"}"#
    );
    let mut handle = start(&dir, faux(&script), Permissions::Yolo, None);
    let mut pieces = Vec::new();
    while let Some(event) = handle.events.recv().await {
        if let RunEvent::ToolOutput { text, .. } = event {
            if pieces.is_empty() {
                let gate = gate.clone();
                tokio::task::spawn_blocking(move || {
                    drop(std::fs::OpenOptions::new().write(true).open(gate).unwrap())
                });
            }
            pieces.push(text);
        }
    }
    handle.result().await.unwrap();
    assert_eq!(pieces, ["abc", "def\n"]);
}
