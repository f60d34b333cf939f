//! What the runtime gives a terminal UI beyond the log: bash's output as transient
//! `tool_output` events while the call runs, provider retries as `retrying` events,
//! a denial that carries the user's message to the model, the file changes of an
//! `edit` on its `tool_result` event, and how many questions wait behind each one.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use expect_test::expect;
use tokio_util::sync::CancellationToken;
use xcsh_log::{Body, Record, read_session};
use xcsh_machine::{
    ApprovalScope, CallId, FinishReason, Message, Permissions, StepNo, StopReason, StreamEvent,
    ToolCall, ToolStatus, Verdict,
};
use xcsh_ports::BoxFuture;
use xcsh_runtime::{ApprovalAnswer, ApprovalRequest, Approver, RunEvent};
use xcsh_tools::{OutputStream, StandardTools, ToolExecutor};

mod harness;
use harness::{DONE_AT_STEP_3, OK_AT_STEP_2, PROMPTED, Pair, scrub, tool_results};

const BASH_RESULT: &str = "exit code: 0\nduration: _ ms\nstdout:\na\nb\nc\nstderr:\ne";

/// A run of the standard tools, on the real clock (bash runs real processes), whose
/// first step runs `command` with bash, and the FIFO `gate` in its workspace: a
/// command that reads it waits until the test opens it (`open_gate`).
fn bash_run(command: &str) -> (Pair, PathBuf) {
    let script = format!(
        "{}\n{}",
        serde_json::json!({"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}),
        r#"{"text":"done"}"#
    );
    let mut gate = PathBuf::new();
    let pair = Pair::start(&script, "go", |s| {
        s.standard_tools();
        s.timed = false;
        gate = s.work.join("gate");
        let made = std::process::Command::new("mkfifo")
            .arg(&gate)
            .status()
            .unwrap();
        assert!(made.success());
    });
    (pair, gate)
}

/// Opening the FIFO for writing (and closing it) lets the `cat` reading it end.
fn open_gate(gate: &Path) {
    let gate = gate.to_path_buf();
    tokio::task::spawn_blocking(move || {
        drop(std::fs::OpenOptions::new().write(true).open(gate).unwrap())
    });
}

/// The command waits on a FIFO that the test opens only once it has seen the first
/// lines as `tool_output` events: so they came while the call was running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_output_arrives_as_tool_output_events_while_it_runs_and_before_its_result() {
    let (mut pair, gate) =
        bash_run("printf 'a\\nb\\n'; cat gate; printf 'c\\n'; printf 'e\\n' >&2");
    let mut opened = false;
    let mut stdout = String::new();
    let mut stderr = String::new();
    let mut order = Vec::new();
    let mut result = None;
    while let Some(event) = pair.handle.events.recv().await {
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
                    open_gate(&gate);
                }
            }
            RunEvent::ToolResult { content, .. } => {
                order.push("tool_result");
                result = Some(content.clone());
            }
            _ => {}
        }
    }
    let end = pair.finish().await;
    assert_eq!(end.result.stop_reason, StopReason::Completed);
    assert!(opened);
    assert_eq!(stdout, "a\nb\nc\n");
    assert_eq!(stderr, "e\n");
    // Every piece of output comes between the call and its result.
    order.dedup();
    assert_eq!(order, ["tool_call", "tool_output", "tool_result"]);
    let result = result.unwrap();
    assert_eq!(scrub(&result), BASH_RESULT);
    // The recorded result is the event's content: progress is not recorded.
    assert_eq!(tool_results(&end.path), [result]);
    let log_text = std::fs::read_to_string(&end.path).unwrap();
    assert!(!log_text.contains("tool_output"));
}

/// The same command without a progress sink gives the same result.
#[tokio::test]
async fn bash_without_a_progress_sink_gives_the_same_result() {
    let work = tempfile::tempdir().unwrap();
    let tools = StandardTools::new(work.path()).unwrap();
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
    assert_eq!(scrub(&outcome.content), BASH_RESULT);
}

/// The transcript's `retrying` line holds the step, the attempt, the delay and the
/// reason, as the old comparison of the whole event did.
#[tokio::test(start_paused = true)]
async fn a_provider_retry_reaches_the_interface_as_a_retrying_event() {
    let pair = Pair::start("", "go", |s| {
        s.events = Some(vec![
            StreamEvent::Retrying {
                attempt: 2,
                reason: "http 429 Too Many Requests".into(),
                delay_ms: 1500,
            },
            StreamEvent::TextDelta { text: "hi".into() },
            StreamEvent::Finish {
                reason: FinishReason::Stop,
            },
        ]);
    });
    expect![[r#"
            0ms retrying 1 #2 in 1500ms: http 429 Too Many Requests
            0ms text 1 "hi"
            0ms step_finished 1 completed
            0ms run_finished Completed 1
        result Completed steps 1 final "hi"
        #3 step 1 Completed
        #4 run_finished Completed
    "#]]
    .assert_eq(&pair.finish().await.after(&[&PROMPTED]));
    let retrying = RunEvent::Retrying {
        step: StepNo(1),
        attempt: 2,
        delay_ms: 1500,
        reason: "http 429 Too Many Requests".into(),
    };
    assert_eq!(
        serde_json::to_string(&retrying).unwrap(),
        r#"{"type":"retrying","step":1,"attempt":2,"delay_ms":1500,"reason":"http 429 Too Many Requests"}"#
    );
}

/// The transcript shows the recorded answer (deny, once, with the message) and the
/// denial the model was given.
#[tokio::test(start_paused = true)]
async fn a_denial_with_a_message_reaches_the_model_and_is_recorded() {
    let script = [
        r#"{"tool_calls":[{"name":"write","arguments":{"path":"a.txt","content":"x"}}]}"#,
        r#"{"text":"ok"}"#,
    ]
    .join("\n");
    let pair = Pair::start(&script, "go", |s| {
        s.standard_tools();
        s.run.permissions = Permissions::Ask;
        s.answers = vec![ApprovalAnswer::deny_with("use b.txt instead")];
    });
    let end = pair.finish().await;
    expect![[r#"
            0ms step_finished 1 completed
            0ms approval_requested call_1_1
            0ms tool_result call_1_1 Error "denied: the user did not allow `write`; the call was not run. The user says: use b.txt instead"
        #3 step 1 Completed
        #4 approval_answer call_1_1 Deny Once Some("use b.txt instead")
        #5 synthetic_result call_1_1 Denied "denied: the user did not allow `write`; the call was not run. The user says: use b.txt instead"
        #6 step_started 2
        #7 step 2 Completed
        #8 run_finished Completed
    "#]]
    .assert_eq(&end.between(&[&PROMPTED], &OK_AT_STEP_2));
    let expected = "denied: the user did not allow `write`; the call was not run. The user says: use b.txt instead";
    let seen = end.requests[1].messages.iter().find_map(|m| match m {
        Message::ToolResult { content, .. } => Some(content.clone()),
        _ => None,
    });
    assert_eq!(seen.as_deref(), Some(expected));
    assert!(!end.work.join("a.txt").exists());
}

#[tokio::test(start_paused = true)]
async fn an_edit_result_event_carries_the_file_change_with_the_old_content() {
    let script = [
        r#"{"tool_calls":[{"name":"read","arguments":{"path":"a.txt"}}]}"#,
        r#"{"tool_calls":[{"name":"edit","arguments":{"path":"a.txt","old_string":"two","new_string":"three"}}]}"#,
        r#"{"text":"done"}"#,
    ]
    .join("\n");
    let mut pair = Pair::start(&script, "go", |s| {
        s.standard_tools();
        std::fs::write(s.work.join("a.txt"), "one\ntwo\n").unwrap();
    });
    let mut edit = None;
    let mut read_changes = None;
    pair.events_until(|event| {
        if let RunEvent::ToolResult { name, changes, .. } = event {
            match name.as_str() {
                "edit" => edit = Some(event.clone()),
                _ => read_changes = Some(changes.clone()),
            }
        }
        false
    })
    .await;
    let end = pair.finish().await;
    expect![[r#"
            0ms step_finished 1 completed
            0ms tool_call call_1_1 read {"path":"a.txt"}
            0ms tool_result call_1_1 Ok "     1\tone\n     2\ttwo"
            0ms step_started 2
            0ms step_finished 2 completed
            0ms approval call_2_1 Allow
            0ms tool_call call_2_1 edit {"new_string":"three","old_string":"two","path":"a.txt"}
            0ms tool_result call_2_1 Ok "edited `a.txt`: replaced 1 occurrence\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three"
        #3 step 1 Completed
        #4 tool_dispatched call_1_1
        #5 tool_result call_1_1 Ok "     1\tone\n     2\ttwo"
        #6 step_started 2
        #7 step 2 Completed
        #8 approval
        #9 tool_dispatched call_2_1
        #10 tool_result call_2_1 Ok "edited `a.txt`: replaced 1 occurrence\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three"
        #11 step_started 3
        #12 step 3 Completed
        #13 run_finished Completed
    "#]]
    .assert_eq(&end.between(&[&PROMPTED], &DONE_AT_STEP_3));
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
    assert_eq!(changes[0].path, end.work.join("a.txt"));
    // The same values as the recorded entry's.
    let log = read_session(&end.path).unwrap();
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
    let (mut pair, gate) = bash_run("printf 'abc'; cat gate; printf 'def\\n'");
    let mut pieces = Vec::new();
    while let Some(event) = pair.handle.events.recv().await {
        if let RunEvent::ToolOutput { text, .. } = event {
            if pieces.is_empty() {
                open_gate(&gate);
            }
            pieces.push(text);
        }
    }
    pair.finish().await;
    assert_eq!(pieces, ["abc", "def\n"]);
}

/// Answers every question `y`, noting the call and how many more wait behind it.
struct CountingApprover(Arc<Mutex<Vec<(String, u32)>>>);

impl Approver for CountingApprover {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<ApprovalAnswer> {
        let mut asked = self.0.lock().unwrap();
        asked.push((request.call.id.0, request.waiting));
        Box::pin(async { ApprovalAnswer::new(Verdict::Allow, ApprovalScope::Once) })
    }
}

/// One step asks to write three times: the approver is asked one question at a
/// time, and each says how many more wait behind it.
#[tokio::test(start_paused = true)]
async fn each_approval_request_says_how_many_more_questions_wait() {
    let write = |path: &str| serde_json::json!({"name": "write", "arguments": {"path": path, "content": "x"}});
    let calls = [write("a.txt"), write("b.txt"), write("c.txt")];
    let script = format!(
        "{}\n{}",
        serde_json::json!({ "tool_calls": calls }),
        r#"{"text":"ok"}"#
    );
    let asked = Arc::new(Mutex::new(Vec::new()));
    let pair = Pair::start(&script, "go", |s| {
        s.standard_tools();
        s.run.permissions = Permissions::Ask;
        s.run.approver = Some(Arc::new(CountingApprover(Arc::clone(&asked))));
    });
    pair.finish().await;
    assert_eq!(
        *asked.lock().unwrap(),
        [
            ("call_1_1".to_string(), 2),
            ("call_1_2".to_string(), 1),
            ("call_1_3".to_string(), 0)
        ]
    );
}
