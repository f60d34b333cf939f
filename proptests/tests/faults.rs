//! Fault injection across the runtime (`run_agent`, the owner task, the real log
//! writer): a provider stream that breaks off at every event index of a recorded
//! stream (in process, and over HTTP against a local server at every SSE frame),
//! a stream that stalls past the idle timeout, a provider task that panics, a late
//! stream event after its step settled, and tool executions that panic, hang until
//! an interrupt cancels them, or return after the run was interrupted. Each must
//! settle exactly once, leave a log that reads, replays and keeps the invariants,
//! and report the right reason. No test sleeps: gates are `Notify`s; the only timer
//! is the HTTP provider's own idle timeout (100 ms) in the stall test.
#![cfg(not(feature = "broken-steer"))]

#[path = "../../tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use support::mock_server::{Fault, MockServer, Reply};
use support::sse::Wire;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use xcsh_log::{Body, Record, SessionLog, StepRecord, read_session};
use xcsh_machine::{
    Assembler, Decision, FinishReason, IgnoreReason, ProviderError, ProviderErrorKind, StepNo,
    StepOutcome, StopReason, StreamEvent, ToolCall, ToolOutcome, ToolStatus, Usage,
};
use xcsh_proptests::{check_invariants, scratch_dir};
use xcsh_providers::anthropic::AnthropicProvider;
use xcsh_providers::http::HttpConfig;
use xcsh_providers::openai::OpenAiProvider;
use xcsh_providers::regress::{self, Protocol};
use xcsh_providers::responses::ResponsesProvider;
use xcsh_providers::{BoxFuture, Provider, StreamCall, StreamSink};
use xcsh_runtime::{RunHandle, RunOptions, RunResult, SessionTarget, Task, run_agent};
use xcsh_tools::{CANCELLED_NOTE, ToolExecutor, ToolSpec};

/// A run of its own: a fresh session file in a scratch directory.
struct Run {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

fn start(provider: Arc<dyn Provider>, tools: Arc<dyn ToolExecutor>) -> (Run, RunHandle) {
    let dir = scratch_dir();
    let path = dir.path().join("s.jsonl");
    let session = SessionTarget::New {
        path: path.clone(),
        session_id: "faults".into(),
        cwd: "/w".into(),
    };
    let handle = run_agent(RunOptions {
        system_prompt: "sys".into(),
        ..RunOptions::new(session, Task::Prompt("go".into()), provider, tools)
    })
    .expect("start the run");
    (Run { _dir: dir, path }, handle)
}

/// Waits for the run's end: its result, and its log, checked by [`valid_log`].
async fn finish(run: Run, handle: RunHandle) -> (RunResult, SessionLog) {
    let result = handle.result().await.expect("the run ends");
    (result, valid_log(&run.path))
}

/// [`start`], then [`finish`].
async fn run_to_end(
    provider: Arc<dyn Provider>,
    tools: Arc<dyn ToolExecutor>,
) -> (RunResult, SessionLog) {
    let (run, handle) = start(provider, tools);
    finish(run, handle).await
}

/// The run stopped for a provider error of `kind` after one step, which failed with
/// that error. Returns the error and the step.
#[track_caller]
fn one_failed_step(
    result: &RunResult,
    log: &SessionLog,
    kind: ProviderErrorKind,
    what: &str,
) -> (ProviderError, StepRecord) {
    let StopReason::ProviderError { error } = &result.stop_reason else {
        panic!("{what}: {:?}", result.stop_reason);
    };
    assert_eq!(error.kind, kind, "{what}");
    let steps = steps(log);
    assert_eq!(
        (result.steps, steps.len(), &steps[0].outcome),
        (
            1,
            1,
            &StepOutcome::Failed {
                error: error.clone()
            }
        ),
        "{what}"
    );
    (error.clone(), steps[0].clone())
}

/// The run completed in two steps, answering `done`.
#[track_caller]
fn completed_in_two_steps(result: RunResult) {
    assert_eq!(
        (result.stop_reason, result.final_text.as_str(), result.steps),
        (StopReason::Completed, "done", 2)
    );
}

/// The run was interrupted in its first step.
#[track_caller]
fn interrupted_in_step_one(result: RunResult) {
    assert_eq!(
        (result.stop_reason, result.steps),
        (StopReason::Interrupted, 1)
    );
}

/// A tool result as [`tool_results`] lists it.
fn tool_result(
    name: &str,
    status: ToolStatus,
    content: impl Into<String>,
) -> (String, ToolOutcome) {
    (
        name.to_string(),
        ToolOutcome {
            status,
            content: content.into(),
        },
    )
}

/// The log reads clean (no torn tail, nothing unknown), replays clean, keeps the
/// run invariants (settle-once included) and holds exactly one `run_finished`.
fn valid_log(path: &Path) -> SessionLog {
    let log = read_session(path).expect("the log reads");
    assert_eq!((&log.torn_tail, &log.unknown), (&None, &Vec::new()));
    if let Err(e) = xcsh_replay::replay_branch(&log, log.leaf()) {
        panic!("replay: {e}: {e:?}");
    }
    check_invariants(&log).expect("the run invariants hold");
    let finished = log
        .entries
        .iter()
        .filter(|e| matches!(e.body, Body::Decision(Decision::RunFinished { .. })))
        .count();
    assert_eq!(finished, 1, "the run settles once");
    log
}

fn steps(log: &SessionLog) -> Vec<StepRecord> {
    log.entries
        .iter()
        .filter_map(|e| match &e.body {
            Body::Record(Record::Step(s)) => Some(StepRecord::clone(s)),
            _ => None,
        })
        .collect()
}

fn tool_results(log: &SessionLog) -> Vec<(String, ToolOutcome)> {
    log.entries
        .iter()
        .filter_map(|e| match &e.body {
            Body::Record(Record::ToolResult(r)) => Some((r.name.clone(), r.outcome.clone())),
            _ => None,
        })
        .collect()
}

fn events(step: &StepRecord) -> Vec<StreamEvent> {
    step.events.iter().map(|e| e.event.clone()).collect()
}

fn assembled(events: &[StreamEvent]) -> xcsh_machine::Assembled {
    let mut a = Assembler::default();
    events.iter().for_each(|e| a.push(e));
    a.finish()
}

fn final_answer() -> Vec<StreamEvent> {
    vec![
        StreamEvent::TextDelta {
            text: "done".into(),
        },
        StreamEvent::Usage {
            usage: Usage {
                input_tokens: 10,
                output_tokens: 1,
                ..Usage::default()
            },
        },
        StreamEvent::Finish {
            reason: FinishReason::Stop,
        },
    ]
}

/// A provider whose `stream` is `f(n, sink)`, `n` counting its requests from 1.
struct Scripted<F> {
    name: &'static str,
    requests: AtomicUsize,
    f: F,
}

type Streamed = BoxFuture<Result<(), ProviderError>>;

fn scripted(
    name: &'static str,
    f: impl Fn(usize, StreamSink) -> Streamed + Send + Sync + 'static,
) -> Arc<dyn Provider> {
    Arc::new(Scripted {
        name,
        requests: AtomicUsize::new(0),
        f,
    })
}

impl<F: Fn(usize, StreamSink) -> Streamed + Send + Sync + 'static> Provider for Scripted<F> {
    fn name(&self) -> &str {
        self.name
    }
    fn model(&self) -> &str {
        self.name
    }
    fn stream(&self, call: StreamCall) -> Streamed {
        (self.f)(self.requests.fetch_add(1, Ordering::SeqCst) + 1, call.sink)
    }
}

/// Sends `events`, then ends with `result`.
fn sends(
    sink: StreamSink,
    events: Vec<StreamEvent>,
    result: Result<(), ProviderError>,
) -> Streamed {
    Box::pin(async move {
        for e in events {
            sink.send(e);
        }
        result
    })
}

/// `echo`, plus test tools that misbehave: `panics` (its future panics), `hangs`
/// (until cancelled), `stubborn` (ignores cancellation and returns once the test
/// opens `gate`). `started` is notified when `hangs` or `stubborn` starts, and
/// `cancel_seen` when `stubborn` sees its cancellation.
#[derive(Default)]
struct FaultyTools {
    started: Arc<Notify>,
    cancel_seen: Arc<Notify>,
    gate: Arc<Notify>,
}

impl ToolExecutor for FaultyTools {
    fn specs(&self) -> Vec<ToolSpec> {
        ["echo", "panics", "hangs", "stubborn"]
            .into_iter()
            .map(|name| ToolSpec {
                name: name.into(),
                description: format!("{name} (a test tool)"),
                parameters: serde_json::json!({"type": "object"}),
            })
            .collect()
    }

    fn execute(&self, call: ToolCall, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        let (started, cancel_seen, gate) = (
            Arc::clone(&self.started),
            Arc::clone(&self.cancel_seen),
            Arc::clone(&self.gate),
        );
        Box::pin(async move {
            match call.name.as_str() {
                "panics" => panic!("the tool broke"),
                "hangs" => {
                    started.notify_one();
                    cancel.cancelled().await;
                    ToolOutcome {
                        status: ToolStatus::Cancelled,
                        content: format!("hangs {CANCELLED_NOTE}"),
                    }
                }
                "stubborn" => {
                    started.notify_one();
                    cancel.cancelled().await;
                    cancel_seen.notify_one();
                    gate.notified().await;
                    ToolOutcome {
                        status: ToolStatus::Ok,
                        content: "finished anyway".into(),
                    }
                }
                _ => ToolOutcome {
                    status: ToolStatus::Ok,
                    content: call.arguments,
                },
            }
        })
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}

/// The normalized events of recorded streams (one tool-calling stream per protocol),
/// or `None` when the streams directory is missing (loud; a failure under CI).
fn recorded_streams() -> Option<Vec<(String, Vec<StreamEvent>)>> {
    let dir = regress::streams_dir(&workspace_root());
    if !dir.is_dir() {
        let message = format!(
            "FAULT INJECTION OVER RECORDED STREAMS NOT RUN: {} does not exist",
            dir.display()
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
        eprintln!("\n*** {message} ***\n");
        return None;
    }
    let picks = [
        (Protocol::OpenAiChat, "deepseek-tool-call"),
        (Protocol::Anthropic, "anthropic-json-tool.1"),
        (
            Protocol::OpenAiResponses,
            "openai-reasoning-encrypted-content.1",
        ),
    ];
    Some(
        picks
            .into_iter()
            .map(|(protocol, name)| {
                let path = dir.join(protocol.folder()).join(format!("{name}.jsonl"));
                let payloads = std::fs::read_to_string(&path).expect("read the stream");
                let sse = protocol.rebuild_sse(&payloads).expect("rebuild the SSE");
                let parsed = regress::parse_whole(protocol, &sse);
                assert_eq!(parsed.error, None, "{name} parses");
                (name.to_string(), parsed.events)
            })
            .collect(),
    )
}

#[tokio::test]
async fn a_stream_cut_at_every_event_index_settles_the_step_once_as_a_provider_error() {
    let Some(streams) = recorded_streams() else {
        return;
    };
    for (name, recorded) in streams {
        for cut in 0..=recorded.len() {
            let error = ProviderError {
                kind: ProviderErrorKind::Disconnected,
                message: format!("cut after {cut} events"),
            };
            // The first request streams `cut` events of the recording, then fails
            // with `error` if that is not all of it; the next answers.
            let first = recorded[..cut].to_vec();
            let failed = (cut < recorded.len()).then(|| error.clone());
            let provider = scripted("cut", move |n, sink| match n {
                1 => sends(sink, first.clone(), failed.clone().map_or(Ok(()), Err)),
                _ => sends(sink, final_answer(), Ok(())),
            });
            let (result, log) = run_to_end(provider, Arc::new(FaultyTools::default())).await;
            let steps = steps(&log);
            let at = format!("{name} cut at {cut} of {}", recorded.len());
            assert_eq!(events(&steps[0]), recorded[..cut], "{at}");
            assert_eq!(steps[0].message, assembled(&recorded[..cut]), "{at}");
            if cut < recorded.len() {
                let (failed, _) =
                    one_failed_step(&result, &log, ProviderErrorKind::Disconnected, &at);
                assert_eq!(failed, error, "{at}");
            } else {
                assert_eq!(steps[0].outcome, StepOutcome::Completed, "{at}");
                assert!(
                    !matches!(result.stop_reason, StopReason::ProviderError { .. }),
                    "{at}: {:?}",
                    result.stop_reason
                );
            }
        }
    }
}

fn http_provider(wire: Wire, config: HttpConfig) -> Arc<dyn Provider> {
    match wire {
        Wire::OpenAi => Arc::new(OpenAiProvider::new(config).unwrap()),
        Wire::Anthropic => Arc::new(AnthropicProvider::new(config).unwrap()),
        Wire::Responses => Arc::new(ResponsesProvider::new(config).unwrap()),
    }
}

fn protocol(wire: Wire) -> Protocol {
    match wire {
        Wire::OpenAi => Protocol::OpenAiChat,
        Wire::Anthropic => Protocol::Anthropic,
        Wire::Responses => Protocol::OpenAiResponses,
    }
}

/// The events a stream delivers before its connection breaks after `bytes`: each
/// complete SSE event through the mapper, up to the first error; no flush.
fn parsed_before_a_break(protocol: Protocol, bytes: &[u8]) -> Vec<StreamEvent> {
    let mut parser = xcsh_providers::sse::SseParser::new();
    let mut mapper = protocol.mapper();
    let mut out = Vec::new();
    for event in parser.push(bytes) {
        match mapper.on_event(event.event.as_deref(), &event.data) {
            Ok(events) => out.extend(events),
            Err(_) => break,
        }
    }
    out
}

/// Runs the wire's tool step served with `fault` (then its text step) against a
/// real HTTP provider with one attempt and a 100 ms idle timeout.
async fn over_http(wire: Wire, fault: Option<Fault>) -> (RunResult, SessionLog) {
    let mut reply = Reply::sse(wire.tool_step());
    reply.fault = fault;
    let server = MockServer::start(vec![reply, Reply::sse(wire.text_step("done"))]);
    let mut config = HttpConfig::new(&wire.base_url(&server.url()), None, "m");
    config.max_attempts = 1;
    config.idle_timeout = Duration::from_millis(100);
    run_to_end(
        http_provider(wire, config),
        Arc::new(FaultyTools::default()),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_stream_cut_at_every_sse_frame_and_inside_each_fails_the_step_as_disconnected() {
    for wire in Wire::ALL {
        let frames = wire.tool_step();
        let mut cuts = Vec::new();
        let mut at = 0;
        for frame in &frames {
            cuts.push(at);
            cuts.push(at + frame.len() / 2);
            at += frame.len();
        }
        let body = frames.concat();
        for cut in cuts {
            let (result, log) = over_http(wire, Some(Fault::DisconnectAfter(cut))).await;
            let what = format!("{wire:?} cut at byte {cut} of {}", body.len());
            let (error, step) =
                one_failed_step(&result, &log, ProviderErrorKind::Disconnected, &what);
            assert!(
                error
                    .message
                    .starts_with(&format!("the stream broke off after {cut} bytes and ")),
                "{what}: {}",
                error.message
            );
            // What arrived before the cut is in the step entry, as the driver parses
            // it: a connection that ended cleanly also flushes the parser and the
            // mapper (as `regress` does); a broken one does not.
            let bytes = &body.as_bytes()[..cut];
            let clean_end = error.message.ends_with("before the response was complete")
                || error.message.ends_with("inside an unfinished event");
            let arrived = if clean_end {
                regress::parse_whole(protocol(wire), bytes).events
            } else {
                parsed_before_a_break(protocol(wire), bytes)
            };
            assert_eq!(events(&step), arrived, "{what}: {}", error.message);
        }
        // Uncut, the same exchange completes (the unknown `read` gets an error
        // result, then the text step answers).
        let (result, _) = over_http(wire, None).await;
        assert_eq!(
            (result.stop_reason, result.final_text.as_str()),
            (StopReason::Completed, "done"),
            "{wire:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_stalls_past_the_idle_timeout_fails_the_step_as_idle_timeout() {
    for wire in Wire::ALL {
        for at in 0..wire.tool_step().len() {
            let (result, log) = over_http(wire, Some(Fault::StallAt(at))).await;
            let what = format!("{wire:?} stalled before frame {at}");
            let (error, _) = one_failed_step(&result, &log, ProviderErrorKind::IdleTimeout, &what);
            assert!(
                error.message.starts_with("no data for 0.1 s (after "),
                "{what}: {}",
                error.message
            );
        }
    }
}

#[tokio::test]
async fn a_provider_task_that_panics_settles_the_step_as_a_provider_error() {
    // Its stream task panics.
    let provider = scripted("panics", |_, sink| {
        Box::pin(async move {
            sink.send(StreamEvent::TextDelta {
                text: "partial".into(),
            });
            panic!("the provider broke");
        })
    });
    let (result, log) = run_to_end(provider, Arc::new(FaultyTools::default())).await;
    let (error, step) = one_failed_step(&result, &log, ProviderErrorKind::Malformed, "panics");
    assert!(
        error.message.starts_with("the provider task failed: task ")
            && error.message.contains("panicked"),
        "{}",
        error.message
    );
    assert_eq!(step.message.text, "partial");
}

#[tokio::test]
async fn a_stream_event_after_its_step_settled_is_recorded_as_late_and_ignored() {
    // Step 1 ends at once but leaves a straggler that sends one more event of step 1
    // when step 2 starts; step 2 answers after the straggler has sent.
    let (go, sent) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let provider = scripted("straggler", move |n, sink| {
        let (go, sent) = (Arc::clone(&go), Arc::clone(&sent));
        Box::pin(async move {
            if n == 1 {
                let late = sink.clone();
                tokio::spawn(async move {
                    go.notified().await;
                    late.send(StreamEvent::TextDelta {
                        text: "too late".into(),
                    });
                    sent.notify_one();
                });
                let call = vec![
                    StreamEvent::ToolCallStart {
                        index: 0,
                        id: xcsh_machine::CallId("call_1".into()),
                        name: "echo".into(),
                    },
                    StreamEvent::ToolCallDelta {
                        index: 0,
                        arguments: "{}".into(),
                    },
                    StreamEvent::ToolCallEnd { index: 0 },
                    StreamEvent::Finish {
                        reason: FinishReason::ToolCalls,
                    },
                ];
                return sends(sink, call, Ok(())).await;
            }
            go.notify_one();
            sent.notified().await;
            sends(sink, final_answer(), Ok(())).await
        })
    });
    let (result, log) = run_to_end(provider, Arc::new(FaultyTools::default())).await;
    completed_in_two_steps(result);
    let late: Vec<(&Body, Option<&Body>)> = log
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e.body, Body::Record(Record::LateEvent { .. })))
        .map(|(i, e)| (&e.body, log.entries.get(i + 1).map(|n| &n.body)))
        .collect();
    assert_eq!(
        late,
        vec![(
            &Body::Record(Record::LateEvent {
                step: StepNo(1),
                event: StreamEvent::TextDelta {
                    text: "too late".into()
                }
            }),
            Some(&Body::Decision(Decision::Ignored {
                reason: IgnoreReason::LateStreamEvent
            }))
        )]
    );
}
/// A faux script: step 1 calls `tools` (names, in order), step 2 answers.
fn calling(tools: &[&str]) -> Arc<dyn Provider> {
    let calls: Vec<String> = tools
        .iter()
        .map(|t| format!(r#"{{"name":"{t}","arguments":{{}}}}"#))
        .collect();
    let script = format!(
        "{{\"tool_calls\":[{}]}}\n{{\"text\":\"done\"}}",
        calls.join(",")
    );
    Arc::new(xcsh_providers::faux::FauxProvider::from_script("faults", &script).unwrap())
}

#[tokio::test]
async fn a_tool_that_panics_settles_once_as_an_error_and_the_run_goes_on() {
    let (result, log) = run_to_end(
        calling(&["panics", "echo"]),
        Arc::new(FaultyTools::default()),
    )
    .await;
    completed_in_two_steps(result);
    let results = tool_results(&log);
    assert_eq!(results.len(), 2, "{results:?}");
    let (name, outcome) = &results[0];
    assert_eq!(
        (name.as_str(), outcome.status),
        ("panics", ToolStatus::Error)
    );
    assert!(
        outcome
            .content
            .starts_with("error: the tool `panics` failed: task ")
            && outcome.content.contains("panicked"),
        "{}",
        outcome.content
    );
    assert_eq!(results[1], tool_result("echo", ToolStatus::Ok, "{}"));
}

#[tokio::test]
async fn a_hung_tool_is_released_by_the_interrupt_and_settles_once_as_cancelled() {
    let tools = Arc::new(FaultyTools::default());
    let (run, handle) = start(calling(&["hangs", "echo"]), tools.clone());
    tools.started.notified().await;
    assert!(handle.interrupt());
    let (result, log) = finish(run, handle).await;
    interrupted_in_step_one(result);
    assert_eq!(
        tool_results(&log),
        vec![
            tool_result(
                "hangs",
                ToolStatus::Cancelled,
                format!("hangs {CANCELLED_NOTE}")
            ),
            tool_result("echo", ToolStatus::Ok, "{}"),
        ]
    );
}

#[tokio::test]
async fn a_tool_that_returns_after_the_interrupt_settles_once_with_what_it_returned() {
    let tools = Arc::new(FaultyTools::default());
    let (run, handle) = start(calling(&["stubborn", "hangs"]), tools.clone());
    // Both started (`stubborn` first: calls start in order).
    tools.started.notified().await;
    tools.started.notified().await;
    assert!(handle.interrupt());
    // The interrupt reached `stubborn` (its cancel fired); it returns only now.
    tools.cancel_seen.notified().await;
    tools.gate.notify_one();
    let (result, log) = finish(run, handle).await;
    interrupted_in_step_one(result);
    assert_eq!(
        tool_results(&log),
        vec![
            tool_result("stubborn", ToolStatus::Ok, "finished anyway"),
            tool_result(
                "hangs",
                ToolStatus::Cancelled,
                format!("hangs {CANCELLED_NOTE}")
            ),
        ]
    );
    // The interrupt was recorded before either result.
    let kinds: Vec<&str> = log.entries.iter().map(|e| e.type_name()).collect();
    let interrupt = kinds.iter().position(|k| *k == "interrupt").unwrap();
    let first_result = kinds.iter().position(|k| *k == "tool_result").unwrap();
    assert!(interrupt < first_result, "{kinds:?}");
}

/// An executor whose `execute` panics before it returns a future (a bug in a tool
/// that the runtime contains as it contains a panicking future; it used to kill the
/// owner task, and the run never settled).
struct PanicsOnCall;

impl ToolExecutor for PanicsOnCall {
    fn specs(&self) -> Vec<ToolSpec> {
        FaultyTools::default().specs()
    }
    fn execute(&self, _call: ToolCall, _cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        panic!("the executor broke before returning its future");
    }
}

#[tokio::test]
async fn an_executor_that_panics_before_returning_its_future_settles_the_call_as_an_error() {
    let (result, log) = run_to_end(calling(&["echo"]), Arc::new(PanicsOnCall)).await;
    completed_in_two_steps(result);
    assert_eq!(
        tool_results(&log),
        vec![tool_result(
            "echo",
            ToolStatus::Error,
            "error: the tool `echo` panicked starting"
        )]
    );
}

#[tokio::test]
async fn a_provider_that_panics_before_returning_its_future_settles_the_step_as_a_provider_error() {
    // Its `stream` panics before it returns its future (it used to kill the owner
    // task, and the run never settled).
    let provider = scripted("panics-on-stream", |_, _| {
        panic!("the provider broke before returning its future")
    });
    let (result, log) = run_to_end(provider, Arc::new(FaultyTools::default())).await;
    let (error, _) = one_failed_step(&result, &log, ProviderErrorKind::Malformed, "panics");
    assert_eq!(
        error,
        ProviderError {
            kind: ProviderErrorKind::Malformed,
            message: "the provider panicked starting the request".into(),
        }
    );
}
