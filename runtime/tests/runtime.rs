//! The runtime end to end with the faux provider: steers and follow-ups land where
//! SPEC.md says, interrupts settle tools as cancelled, and the log and the requests
//! the provider saw agree.

use std::sync::{Arc, Mutex};

use expect_test::expect;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use xcsh_log::{Body, Record, read_session, rebuild_context};
use xcsh_machine::{
    Decision, Limits, Message, Permissions, ProviderError, StopReason, ToolStatus, UserOrigin,
};
use xcsh_providers::faux::FauxProvider;
use xcsh_providers::{BoxFuture, ModelRequest, Provider, StreamSink};
use xcsh_runtime::{RunEvent, RunHandle, RunOptions, SessionTarget, Task, run_agent};
use xcsh_tools::testing::TestTools;

mod harness;
use harness::Pair;

/// Wraps the faux provider: records every request, and holds step `gate_step`
/// (1-based) before it streams until the test opens the gate.
struct Recording {
    inner: FauxProvider,
    requests: Arc<Mutex<Vec<ModelRequest>>>,
    gate_step: usize,
    gate: Arc<Notify>,
    started: Arc<Notify>,
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
        let n = {
            let mut r = self.requests.lock().unwrap();
            r.push(request.clone());
            r.len()
        };
        let inner = self.inner.stream(request, sink, cancel);
        let gated = n == self.gate_step;
        let gate = Arc::clone(&self.gate);
        let started = Arc::clone(&self.started);
        Box::pin(async move {
            if gated {
                started.notify_one();
                gate.notified().await;
            }
            inner.await
        })
    }
}

fn echo_calls(n: usize) -> String {
    (0..n)
        .map(|i| format!(r#"{{"name":"echo","arguments":{{"i":{i}}}}}"#))
        .collect::<Vec<_>>()
        .join(",")
}

struct Setup {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    requests: Arc<Mutex<Vec<ModelRequest>>>,
    gate: Arc<Notify>,
    started: Arc<Notify>,
}

fn start(script: &str, gate_step: usize, prompt: &str) -> (Setup, RunHandle) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let requests = Arc::new(Mutex::new(Vec::new()));
    let gate = Arc::new(Notify::new());
    let started = Arc::new(Notify::new());
    let provider = Recording {
        inner: FauxProvider::from_script("test", script).unwrap(),
        requests: Arc::clone(&requests),
        gate_step,
        gate: Arc::clone(&gate),
        started: Arc::clone(&started),
    };
    let handle = run_agent(RunOptions {
        session: SessionTarget::New {
            path: path.clone(),
            session_id: "test".into(),
            cwd: "/w".into(),
        },
        task: Task::Prompt(prompt.to_string()),
        limits: Limits::default(),
        system_prompt: "sys".into(),
        provider: Arc::new(provider),
        tools: Arc::new(TestTools),
        permissions: Permissions::Yolo,
        approver: None,
        max_parallel_tools: xcsh_runtime::DEFAULT_MAX_PARALLEL_TOOLS,
        secrets: Default::default(),
    })
    .unwrap();
    let setup = Setup {
        _dir: dir,
        path,
        requests,
        gate,
        started,
    };
    (setup, handle)
}

fn last_user(request: &ModelRequest) -> Option<(UserOrigin, String)> {
    request.messages.iter().rev().find_map(|m| match m {
        Message::User { origin, text } => Some((*origin, text.clone())),
        _ => None,
    })
}

#[tokio::test]
async fn steer_lands_after_step_one_tools_and_follow_up_after_the_final_answer() {
    let script = [
        format!(r#"{{"text":"one","tool_calls":[{}]}}"#, echo_calls(2)),
        format!(r#"{{"text":"two","tool_calls":[{}]}}"#, echo_calls(2)),
        format!(r#"{{"text":"three","tool_calls":[{}]}}"#, echo_calls(2)),
        r#"{"text":"final answer"}"#.to_string(),
        r#"{"text":"follow-up answer"}"#.to_string(),
    ]
    .join("\n");
    let (setup, handle) = start(&script, 1, "start");
    setup.started.notified().await;
    // Step 1 is in flight (its request was made, its stream is held).
    handle.steer("steer: also look at b");
    handle.follow_up("follow-up: then summarize");
    let pending = handle.pending().await;
    assert_eq!(pending.steers, vec!["steer: also look at b".to_string()]);
    assert_eq!(
        pending.follow_ups,
        vec!["follow-up: then summarize".to_string()]
    );
    setup.gate.notify_one();
    let result = handle.result().await.unwrap();
    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(result.steps, 5);
    assert_eq!(result.final_text, "follow-up answer");

    // The log, in order: what each entry is, compactly.
    let log = read_session(&setup.path).unwrap();
    let kinds: Vec<String> = log
        .entries
        .iter()
        .map(|e| match &e.body {
            Body::Record(Record::Step(s)) => format!("step{}", s.step),
            Body::Decision(Decision::Delivered { origin, .. }) => format!("delivered:{origin:?}"),
            Body::Decision(Decision::StepStarted { step, .. }) => format!("start{step}"),
            other => other.type_name().to_string(),
        })
        .collect();
    assert_eq!(
        kinds.join(" "),
        "session user_message start1 steer follow_up step1 \
         tool_dispatched tool_dispatched tool_result tool_result delivered:Steer start2 \
         step2 tool_dispatched tool_dispatched tool_result tool_result start3 \
         step3 tool_dispatched tool_dispatched tool_result tool_result start4 \
         step4 delivered:FollowUp start5 step5 run_finished"
    );

    // The model saw each message in the request right after its delivery.
    let requests = setup.requests.lock().unwrap();
    assert_eq!(requests.len(), 5);
    assert_eq!(
        last_user(&requests[0]),
        Some((UserOrigin::Prompt, "start".into()))
    );
    assert_eq!(
        last_user(&requests[1]),
        Some((UserOrigin::Steer, "steer: also look at b".into()))
    );
    assert!(matches!(
        requests[1].messages.last(),
        Some(Message::User {
            origin: UserOrigin::Steer,
            ..
        })
    ));
    assert_eq!(
        last_user(&requests[4]),
        Some((UserOrigin::FollowUp, "follow-up: then summarize".into()))
    );
    // And the context rebuilt from the log at the leaf equals the last request's
    // context plus the final answer.
    let rebuilt: Vec<Message> = rebuild_context(&log, log.leaf())
        .unwrap()
        .into_iter()
        .map(|i| i.message)
        .collect();
    let mut expected = requests[4].messages.clone();
    expected.push(Message::Assistant {
        text: "follow-up answer".into(),
        reasoning: String::new(),
        reasoning_signature: String::new(),
        reasoning_blocks: vec![],
        tool_calls: vec![],
    });
    assert_eq!(rebuilt, expected);
}

#[tokio::test(start_paused = true)]
async fn interrupt_during_a_tool_settles_it_as_cancelled_and_stops_the_run() {
    let script = r#"{"tool_calls":[{"name":"sleep","arguments":{"ms":600000}}]}"#;
    let mut pair = Pair::start(script, "wait", |o| o.tools = Arc::new(TestTools));
    pair.events_until(|e| matches!(e, RunEvent::ToolCall { .. }))
        .await;
    pair.handle.interrupt();
    expect![[r#"
            0ms run_started
            0ms step_started 1
            0ms step_finished 1 completed
            0ms tool_call call_1_1 sleep
            0ms tool_result call_1_1 Cancelled "sleep cancelled by the user; side effects it already had were not undone"
            0ms run_finished Interrupted 1
        result Interrupted
        #0 session
        #1 user_message
        #2 step_started
        #3 step 1 Completed
        #4 tool_dispatched call_1_1
        #5 interrupt
        #6 tool_result call_1_1 Cancelled "sleep cancelled by the user; side effects it already had were not undone"
        #7 run_finished Interrupted
    "#]]
    .assert_eq(&pair.finish().await);
}

#[tokio::test(start_paused = true)]
async fn a_call_that_ends_first_is_recorded_after_the_call_dispatched_before_it() {
    let script = format!(
        "{{\"tool_calls\":[{},{}]}}\n{{\"text\":\"done\"}}",
        harness::wait(30, "slow"),
        harness::wait(10, "fast")
    );
    let pair = Pair::start(&script, "go", |_| {});
    expect![[r#"
            0ms run_started
            0ms step_started 1
            0ms step_finished 1 completed
            0ms tool_call call_1_1 wait
            0ms tool_call call_1_2 wait
           10ms tool_result call_1_2 Ok "fast"
           30ms tool_result call_1_1 Ok "slow"
           30ms step_started 2
           30ms text 2 "done"
           30ms step_finished 2 completed
           30ms run_finished Completed 2
        result Completed
        #0 session
        #1 user_message
        #2 step_started
        #3 step 1 Completed
        #4 tool_dispatched call_1_1
        #5 tool_dispatched call_1_2
        #6 tool_result call_1_1 Ok "slow"
        #7 tool_result call_1_2 Ok "fast"
        #8 step_started
        #9 step 2 Completed
        #10 run_finished Completed
    "#]]
    .assert_eq(&pair.finish().await);
}

#[tokio::test]
async fn a_script_that_runs_out_ends_with_a_clear_provider_error() {
    let script = format!(r#"{{"tool_calls":[{}]}}"#, echo_calls(1));
    let (_setup, handle) = start(&script, 0, "go");
    let result = handle.result().await.unwrap();
    match result.stop_reason {
        StopReason::ProviderError { error } => {
            assert_eq!(
                error.message,
                "the faux script test has 1 step(s) and step 2 was requested"
            )
        }
        other => panic!("expected a provider error, got {other:?}"),
    }
}

/// `TestTools`, with `echo` declared mutating so that it goes through the policy.
struct MutatingEcho;

impl xcsh_tools::ToolExecutor for MutatingEcho {
    fn specs(&self) -> Vec<xcsh_tools::ToolSpec> {
        TestTools.specs()
    }
    fn execute(
        &self,
        call: xcsh_machine::ToolCall,
        cancel: CancellationToken,
    ) -> BoxFuture<xcsh_machine::ToolOutcome> {
        TestTools.execute(call, cancel)
    }
    fn mutating(&self) -> Vec<String> {
        vec!["echo".into()]
    }
}

/// Answers every question with `a` (this tool for the session) and counts them.
struct AllowTool(Arc<Mutex<Vec<String>>>);

impl xcsh_runtime::Approver for AllowTool {
    fn decide(
        &self,
        request: xcsh_runtime::ApprovalRequest,
    ) -> BoxFuture<xcsh_runtime::ApprovalAnswer> {
        self.0.lock().unwrap().push(request.call.id.0.clone());
        Box::pin(async {
            xcsh_runtime::ApprovalAnswer {
                verdict: xcsh_machine::Verdict::Allow,
                scope: xcsh_machine::ApprovalScope::Tool,
                message: None,
            }
        })
    }
}

fn run_with_policy(
    permissions: Permissions,
    approver: Option<Arc<dyn xcsh_runtime::Approver>>,
) -> (tempfile::TempDir, std::path::PathBuf, RunHandle) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let script = [
        format!(r#"{{"tool_calls":[{}]}}"#, echo_calls(2)),
        format!(r#"{{"tool_calls":[{}]}}"#, echo_calls(1)),
        r#"{"text":"done"}"#.to_string(),
    ]
    .join("\n");
    let handle = run_agent(RunOptions {
        session: SessionTarget::New {
            path: path.clone(),
            session_id: "t".into(),
            cwd: "/w".into(),
        },
        task: Task::Prompt("go".to_string()),
        limits: Limits::default(),
        system_prompt: "sys".into(),
        provider: Arc::new(FauxProvider::from_script("test", &script).unwrap()),
        tools: Arc::new(MutatingEcho),
        permissions,
        approver,
        max_parallel_tools: xcsh_runtime::DEFAULT_MAX_PARALLEL_TOOLS,
        secrets: Default::default(),
    })
    .unwrap();
    (dir, path, handle)
}

fn types(path: &std::path::Path) -> String {
    read_session(path)
        .unwrap()
        .entries
        .iter()
        .map(|e| e.type_name().to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

#[tokio::test]
async fn ask_records_the_users_answer_and_a_tool_grant_answers_the_rest() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let (_dir, path, handle) = run_with_policy(
        Permissions::Ask,
        Some(Arc::new(AllowTool(Arc::clone(&asked)))),
    );
    let result = handle.result().await.unwrap();
    assert_eq!(result.stop_reason, StopReason::Completed);
    // One question at a time: the `a` answer to the first covered the second.
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert_eq!(
        types(&path),
        "session user_message step_started step approval_answer tool_dispatched approval \
         tool_dispatched tool_result tool_result step_started step approval tool_dispatched \
         tool_result step_started step run_finished"
    );
}

#[tokio::test]
async fn readonly_denies_every_mutation_and_the_model_sees_the_denial() {
    let (_dir, path, handle) = run_with_policy(Permissions::Readonly, None);
    let result = handle.result().await.unwrap();
    assert_eq!(result.stop_reason, StopReason::Completed);
    let log = read_session(&path).unwrap();
    let denials: Vec<String> = log
        .entries
        .iter()
        .filter_map(|e| match &e.body {
            Body::Decision(Decision::SyntheticResult { content, .. }) => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(denials.len(), 3);
    assert!(denials[0].starts_with("denied: this session is read-only"));
    assert!(!types(&path).contains("tool_dispatched"));
}

#[tokio::test]
async fn a_steer_after_the_run_finished_is_recorded_ignored_and_reported() {
    let (setup, mut handle) = start(r#"{"text":"done"}"#, 0, "go");
    // Wait for the finish, then steer: the owner may still be draining commands.
    while let Some(event) = handle.events.recv().await {
        if let RunEvent::RunFinished { .. } = event {
            break;
        }
    }
    let accepted = handle.steer("too late");
    let result = handle.result().await.unwrap();
    let log = read_session(&setup.path).unwrap();
    let last: Vec<&str> = log
        .entries
        .iter()
        .rev()
        .take(2)
        .map(|e| e.type_name())
        .collect();
    if accepted && last == ["ignored", "steer"] {
        assert_eq!(result.undelivered, vec!["too late".to_string()]);
    } else {
        // The owner was already gone: the handle said so and nothing was written.
        assert!(!accepted || last[0] == "run_finished", "{last:?}");
    }
}

#[tokio::test]
async fn interrupting_a_long_bash_call_settles_it_cancelled_and_kills_it() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let script = r#"{"tool_calls":[{"name":"bash","arguments":{"command":"sleep 30"}}]}"#;
    let mut handle = run_agent(RunOptions {
        session: SessionTarget::New {
            path: dir.path().join("s.jsonl"),
            session_id: "t".into(),
            cwd: work.display().to_string(),
        },
        task: Task::Prompt("wait".to_string()),
        limits: Limits::default(),
        system_prompt: "sys".into(),
        provider: Arc::new(FauxProvider::from_script("test", script).unwrap()),
        tools: Arc::new(xcsh_tools::StandardTools::new(&work).unwrap()),
        permissions: Permissions::Yolo,
        approver: None,
        max_parallel_tools: xcsh_runtime::DEFAULT_MAX_PARALLEL_TOOLS,
        secrets: Default::default(),
    })
    .unwrap();
    let path = handle.session_path.clone();
    while let Some(event) = handle.events.recv().await {
        if let RunEvent::ToolCall { .. } = event {
            handle.interrupt();
        }
    }
    let result = handle.result().await.unwrap();
    assert_eq!(result.stop_reason, StopReason::Interrupted);
    let log = read_session(&path).unwrap();
    let tool = log
        .entries
        .iter()
        .find_map(|e| match &e.body {
            Body::Record(Record::ToolResult(r)) => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(tool.outcome.status, ToolStatus::Cancelled);
    assert!(
        tool.outcome
            .content
            .contains("side effects it already had were not undone")
    );
    // The runtime's own measure of the call, from dispatch to settlement.
    assert!(
        tool.duration_ms < 1000,
        "settled after {} ms",
        tool.duration_ms
    );
}

/// The type of the session file's last entry, read from the disk.
fn last_type(path: &std::path::Path) -> String {
    read_session(path)
        .expect("the session reads")
        .entries
        .last()
        .map(|e| e.type_name().to_string())
        .unwrap_or_default()
}

/// Wraps the faux provider: notes the file's last entry when a call starts (its
/// future is first polled).
struct WitnessProvider {
    inner: FauxProvider,
    path: std::path::PathBuf,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Provider for WitnessProvider {
    fn name(&self) -> &str {
        "witness"
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
        let inner = self.inner.stream(request, sink, cancel);
        let path = self.path.clone();
        let seen = Arc::clone(&self.seen);
        Box::pin(async move {
            let last = last_type(&path);
            seen.lock()
                .expect("not poisoned")
                .push(format!("model after {last}"));
            inner.await
        })
    }
}

/// The test tools, noting the file's last entry when a call starts.
struct WitnessTools {
    path: std::path::PathBuf,
    seen: Arc<Mutex<Vec<String>>>,
}

impl xcsh_tools::ToolExecutor for WitnessTools {
    fn specs(&self) -> Vec<xcsh_tools::ToolSpec> {
        TestTools.specs()
    }
    fn execute(
        &self,
        call: xcsh_machine::ToolCall,
        cancel: CancellationToken,
    ) -> BoxFuture<xcsh_machine::ToolOutcome> {
        let path = self.path.clone();
        let seen = Arc::clone(&self.seen);
        Box::pin(async move {
            let last = last_type(&path);
            seen.lock()
                .expect("not poisoned")
                .push(format!("tool after {last}"));
            TestTools.execute(call, cancel).await
        })
    }
}

#[tokio::test]
async fn each_effect_starts_after_its_decision_is_written_and_events_arrive_in_order() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("s.jsonl");
    let script = [
        format!(r#"{{"tool_calls":[{}]}}"#, echo_calls(1)),
        format!(r#"{{"tool_calls":[{}]}}"#, echo_calls(2)),
        r#"{"text":"done"}"#.to_string(),
    ]
    .join("\n");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut handle = run_agent(RunOptions {
        session: SessionTarget::New {
            path: path.clone(),
            session_id: "t".into(),
            cwd: "/w".into(),
        },
        task: Task::Prompt("go".to_string()),
        limits: Limits::default(),
        system_prompt: "sys".into(),
        provider: Arc::new(WitnessProvider {
            inner: FauxProvider::from_script("test", &script).expect("a script"),
            path: path.clone(),
            seen: Arc::clone(&seen),
        }),
        tools: Arc::new(WitnessTools {
            path: path.clone(),
            seen: Arc::clone(&seen),
        }),
        permissions: Permissions::Yolo,
        approver: None,
        max_parallel_tools: xcsh_runtime::DEFAULT_MAX_PARALLEL_TOOLS,
        secrets: Default::default(),
    })
    .expect("the run starts");
    let mut events = Vec::new();
    while let Some(event) = handle.events.recv().await {
        events.push(match event {
            RunEvent::RunStarted { .. } => "run_started".to_string(),
            RunEvent::StepStarted { step } => format!("step_started {}", step.0),
            RunEvent::TextDelta { text, .. } => format!("text {text}"),
            RunEvent::StepFinished { step, outcome, .. } => {
                format!("step_finished {} {outcome}", step.0)
            }
            RunEvent::ToolCall { arguments, .. } => format!("tool_call {arguments}"),
            RunEvent::ToolResult { content, .. } => format!("tool_result {content}"),
            RunEvent::RunFinished { steps, .. } => format!("run_finished {steps}"),
            other => format!("{other:?}"),
        });
    }
    let result = handle.result().await.expect("the run ends");
    assert_eq!(result.stop_reason, StopReason::Completed);
    // Write-ahead: a model call starts after its `step_started`, a tool after its
    // `tool_dispatched` (the two calls of step 2 after both were dispatched).
    assert_eq!(
        *seen.lock().expect("not poisoned"),
        [
            "model after step_started",
            "tool after tool_dispatched",
            "model after step_started",
            "tool after tool_dispatched",
            "tool after tool_dispatched",
            "model after step_started",
        ]
    );
    assert_eq!(
        events,
        [
            "run_started",
            "step_started 1",
            "step_finished 1 completed",
            r#"tool_call {"i":0}"#,
            r#"tool_result {"i":0}"#,
            "step_started 2",
            "step_finished 2 completed",
            r#"tool_call {"i":0}"#,
            r#"tool_call {"i":1}"#,
            r#"tool_result {"i":0}"#,
            r#"tool_result {"i":1}"#,
            "step_started 3",
            "text done",
            "step_finished 3 completed",
            "run_finished 3",
        ]
    );
    assert_eq!(
        types(&path),
        "session user_message step_started step tool_dispatched tool_result step_started \
         step tool_dispatched tool_dispatched tool_result tool_result step_started step \
         run_finished"
    );
}
