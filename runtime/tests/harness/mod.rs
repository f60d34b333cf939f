//! The runtime test harness, in the style of quinn-proto's `Pair`: the real owner
//! task (`run_agent`) with a scripted provider (the faux provider, wrapped so that
//! it records every request and can hold a step) and a scripted executor, on
//! tokio's paused clock (`#[tokio::test(start_paused = true)]`), so that a tool that
//! "takes 30 ms" ends after one that takes 10 ms without any test waiting. The whole
//! transcript, the run's events as they came, its result and then the entries of its
//! log, is rendered as compact lines and compared with `expect![[…]]`, as the
//! machine's transcript tests under `machine/test_data/` are (`UPDATE_EXPECT=1`
//! accepts a change). As there, the start that runs share is a named given ([`PROMPTED`], …)
//! and an ending they share a named then ([`DONE_AT_STEP_3`]), each checked once by
//! [`Finished::after`] or [`Finished::between`], so that a test's own transcript
//! shows what it is about.
//!
//! The scripted executor has the test tools (`echo`, `sleep`) and two of its own:
//! `wait {"ms": N, "out": TEXT}` sleeps N virtual milliseconds and returns TEXT
//! (`cancelled` when its token fires first); `block {"i": N}` reports its start, then
//! waits until the test hands it a permit (`Scripted::permit`), counting the calls
//! running at once. Approvals are scripted answers, given in order.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use expect_test::{Expect, expect};
use tokio::sync::{Notify, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use xcsh_log::{Body, Record, read_session};
use xcsh_machine::{
    CallId, Decision, Delta, ProviderError, RunEnd, StreamEvent, ToolCall, ToolOutcome, ToolStatus,
};
use xcsh_providers::faux::FauxProvider;
use xcsh_providers::{BoxFuture, ModelRequest, Provider, StreamCall};
use xcsh_runtime::{
    ApprovalAnswer, ApprovalRequest, Approver, RunEvent, RunHandle, RunOptions, RunResult,
    SessionTarget, Task, run_agent,
};
use xcsh_tools::testing::TestTools;
use xcsh_tools::{CANCELLED_NOTE, CallContext, StandardTools, ToolExecutor, ToolSpec};

/// What a run is started with; `Pair::start` hands it to the test to change.
pub struct Setup {
    /// The run's options: the faux script, the scripted tools, `yolo`, default limits.
    pub run: RunOptions,
    /// An empty workspace directory (canonical) beside the session file.
    pub work: PathBuf,
    /// Hold this model call (1-based) before it streams, until `Pair::release`.
    pub hold: Option<usize>,
    /// Instead of the provider's, every model call streams these events.
    pub events: Option<Vec<StreamEvent>>,
    /// Note the log's last entry as each model call and scripted tool starts, and
    /// show the notes as the transcript's `starts` section.
    pub witness: bool,
    /// The scripted tools that go through the permission policy.
    pub mutating: Vec<String>,
    /// Approval questions are answered with these, in order (a question beyond them
    /// is denied, with a message saying so).
    pub answers: Vec<ApprovalAnswer>,
    /// Stamp each event with the virtual time it was read at (off on the real clock).
    pub timed: bool,
}

impl Setup {
    /// The standard tools in `work`, which becomes the session's working directory.
    pub fn standard_tools(&mut self) {
        self.run.tools = Arc::new(StandardTools::new(&self.work).unwrap());
        if let SessionTarget::New { cwd, .. } = &mut self.run.session {
            *cwd = self.work.display().to_string();
        }
    }
}

/// One run of the real owner: its handle, its log, the time it started.
pub struct Pair {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
    pub work: PathBuf,
    pub handle: RunHandle,
    /// The scripted executor (whether or not the run uses it).
    pub tools: Scripted,
    /// Each `block` call's `i`, sent as the call starts.
    pub started: mpsc::UnboundedReceiver<usize>,
    provider: Arc<Recording>,
    witness: Arc<Witness>,
    timed: bool,
    start: tokio::time::Instant,
    /// The events read so far, one line each.
    events: Vec<String>,
}

impl Pair {
    /// Starts a run of `prompt` against the faux `script` with the scripted tools
    /// (`yolo`, default limits); `edit` changes the setup before the start.
    pub fn start(script: &str, prompt: &str, edit: impl FnOnce(&mut Setup)) -> Pair {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let work = work.canonicalize().unwrap();
        let witness = Arc::new(Witness {
            on: AtomicBool::new(false),
            path: path.clone(),
            notes: Mutex::new(Vec::new()),
        });
        let (started_tx, started) = mpsc::unbounded_channel();
        let tools = Scripted(Arc::new(ScriptedState {
            mutating: Mutex::new(Vec::new()),
            witness: Arc::clone(&witness),
            running: AtomicUsize::new(0),
            max_running: AtomicUsize::new(0),
            seen: Mutex::new(Vec::new()),
            permits: Semaphore::new(0),
            started: started_tx,
        }));
        let mut setup = Setup {
            run: RunOptions {
                system_prompt: "sys".into(),
                ..RunOptions::new(
                    SessionTarget::New {
                        path: path.clone(),
                        session_id: "test".into(),
                        cwd: "/w".into(),
                    },
                    Task::Prompt(prompt.into()),
                    Arc::new(FauxProvider::from_script("test", script).unwrap()),
                    Arc::new(tools.clone()),
                )
            },
            work: work.clone(),
            hold: None,
            events: None,
            witness: false,
            mutating: Vec::new(),
            answers: Vec::new(),
            timed: true,
        };
        edit(&mut setup);
        let Setup {
            mut run,
            hold,
            events,
            witness: witnessed,
            mutating,
            answers,
            timed,
            ..
        } = setup;
        witness.on.store(witnessed, Ordering::SeqCst);
        *tools.0.mutating.lock().unwrap() = mutating;
        if !answers.is_empty() {
            run.approver = Some(Arc::new(Answers(Mutex::new(answers.into()))));
        }
        let provider = Arc::new(Recording {
            inner: Arc::clone(&run.provider),
            events,
            requests: Mutex::new(Vec::new()),
            hold,
            reached: Notify::new(),
            open: Notify::new(),
            witness: Arc::clone(&witness),
        });
        run.provider = Arc::new(Shared(Arc::clone(&provider)));
        let handle = run_agent(run).unwrap();
        Pair {
            _dir: dir,
            path,
            work,
            handle,
            tools,
            started,
            provider,
            witness,
            timed,
            start: tokio::time::Instant::now(),
            events: Vec::new(),
        }
    }

    /// Waits until the held model call (`Setup::hold`) is made.
    pub async fn held(&self) {
        self.provider.reached.notified().await;
    }

    /// Lets the held model call stream.
    pub fn release(&self) {
        self.provider.open.notify_one();
    }

    /// Takes events (each stamped with the virtual time it was read at) until
    /// `until` says the last one is the point to stop at; returns whether it was
    /// met before the stream ended.
    pub async fn events_until(&mut self, mut until: impl FnMut(&RunEvent) -> bool) -> bool {
        while let Some(event) = self.handle.events.recv().await {
            let mut line = String::new();
            if self.timed {
                let ms = self.start.elapsed().as_millis();
                let _ = write!(line, "{ms:>5}ms ");
            }
            line.push_str(&scrub(&event_line(&event)));
            self.events.push(line);
            if until(&event) {
                return true;
            }
        }
        false
    }

    /// Takes every event to the end of the run and waits for its result; the
    /// transcript: the events, the result, the log, and the witness's notes when it
    /// was on.
    pub async fn finish(mut self) -> Finished {
        self.events_until(|_| false).await;
        let result = self.handle.result().await.unwrap();
        let mut ending = vec![format!(
            "result {:?} steps {} final {:?}",
            result.stop_reason, result.steps, result.final_text
        )];
        if !result.undelivered.is_empty() {
            ending.push(format!("undelivered {:?}", result.undelivered));
        }
        let log: Vec<String> = entry_lines(&self.path).iter().map(|l| scrub(l)).collect();
        let starts: Vec<String> = if self.witness.on.load(Ordering::SeqCst) {
            let notes = self.witness.notes.lock().unwrap();
            std::iter::once("starts".to_string())
                .chain(notes.iter().cloned())
                .collect()
        } else {
            Vec::new()
        };
        Finished {
            requests: self.provider.requests.lock().unwrap().clone(),
            transcript: transcript(&self.events, &ending, &log, &starts),
            _dir: self._dir,
            path: self.path,
            work: self.work,
            tools: self.tools,
            result,
            events: self.events,
            ending,
            log,
            starts,
        }
    }
}

/// A run that ended: its transcript, its result, and what else a test checks.
pub struct Finished {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
    pub work: PathBuf,
    pub tools: Scripted,
    pub result: RunResult,
    /// Every request the provider was sent, in order.
    pub requests: Vec<ModelRequest>,
    pub transcript: String,
    /// The transcript's sections: the events, the result, the log's entries, the
    /// witness's notes.
    events: Vec<String>,
    ending: Vec<String>,
    log: Vec<String>,
    starts: Vec<String>,
}

impl Finished {
    /// The transcript after the start that `givens` name, one after the other (in
    /// the style of the machine tests' named givens), each checked first: a given
    /// holds the events that follow the ones before it, then the entries of the log
    /// that follow (the lines that start with `#`).
    pub fn after(&self, givens: &[&Expect]) -> String {
        let (events, log) = self.given(givens);
        transcript(events, &self.ending, log, &self.starts)
    }

    /// The transcript between the start that `givens` name (see [`Finished::after`])
    /// and the ending that `then` names, which is checked too: `then` holds the run's
    /// last events, then its result; the transcript goes on from the events before
    /// them to the log.
    pub fn between(&self, givens: &[&Expect], then: &Expect) -> String {
        let (events, log) = self.given(givens);
        let last = count(then) - self.ending.len();
        let (events, then_events) = events.split_at(events.len() - last.min(events.len()));
        then.assert_eq(&transcript(then_events, &self.ending, &[], &[]));
        transcript(events, &[], log, &self.starts)
    }

    /// Checks `givens` in order; the events and the entries after them.
    fn given(&self, givens: &[&Expect]) -> (&[String], &[String]) {
        let (mut events, mut log) = (&self.events[..], &self.log[..]);
        for given in givens {
            let entries = given
                .data()
                .lines()
                .filter(|l| l.trim_start().starts_with('#'))
                .count();
            let (given_events, rest_events) =
                events.split_at((count(given) - entries).min(events.len()));
            let (given_log, rest_log) = log.split_at(entries.min(log.len()));
            given.assert_eq(&transcript(given_events, &[], given_log, &[]));
            (events, log) = (rest_events, rest_log);
        }
        (events, log)
    }
}

/// How many lines a named part of a transcript has.
fn count(part: &Expect) -> usize {
    part.data().lines().filter(|l| !l.trim().is_empty()).count()
}

/// Given: the start of every run of [`Pair::start`] (on the paused clock): the run
/// started and the prompt started step 1, as events and as the first entries of the
/// new session's log.
pub static PROMPTED: Expect = expect![[r#"
        0ms run_started
        0ms step_started 1
    #0 session
    #1 user_message
    #2 step_started 1
"#]];

/// Then: step 2 answers `ok`, and the run completes.
pub static OK_AT_STEP_2: Expect = expect![[r#"
        0ms step_started 2
        0ms text 2 "ok"
        0ms step_finished 2 completed
        0ms run_finished Completed 2
    result Completed steps 2 final "ok"
"#]];

/// Then: step 3 answers `done`, and the run completes.
pub static DONE_AT_STEP_3: Expect = expect![[r#"
        0ms step_started 3
        0ms text 3 "done"
        0ms step_finished 3 completed
        0ms run_finished Completed 3
    result Completed steps 3 final "done"
"#]];

/// A transcript from its sections, a line each.
fn transcript(events: &[String], ending: &[String], log: &[String], starts: &[String]) -> String {
    let mut out = String::new();
    for line in events.iter().chain(ending).chain(log).chain(starts) {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A text with the numbers that change from run to run (a bash call's `duration: N
/// ms` and `process group N`) made constant.
pub fn scrub(text: &str) -> String {
    let mut out = text.to_string();
    for label in ["duration: ", "process group "] {
        let mut done = String::new();
        let mut rest = out.as_str();
        while let Some(at) = rest.find(label) {
            let (head, tail) = rest.split_at(at + label.len());
            let digits = tail.chars().take_while(char::is_ascii_digit).count();
            done.push_str(head);
            done.push_str(if digits > 0 { "_" } else { "" });
            rest = &tail[digits..];
        }
        done.push_str(rest);
        out = done;
    }
    out
}

/// The notes of the witness: the log's last entry as each call starts.
struct Witness {
    on: AtomicBool,
    path: PathBuf,
    notes: Mutex<Vec<String>>,
}

impl Witness {
    fn note(&self, what: &str) {
        if self.on.load(Ordering::SeqCst) {
            let log = read_session(&self.path).expect("the session reads");
            let last = log.entries.last().map_or("", |e| e.type_name());
            self.notes
                .lock()
                .unwrap()
                .push(format!("{what} after {last}"));
        }
    }
}

/// The provider of a run, recording every request, holding one step if asked,
/// telling the witness when a call starts (its future is first polled), and
/// streaming `Setup::events` instead of the provider's when they are set.
struct Recording {
    inner: Arc<dyn Provider>,
    events: Option<Vec<StreamEvent>>,
    requests: Mutex<Vec<ModelRequest>>,
    hold: Option<usize>,
    reached: Notify,
    open: Notify,
    witness: Arc<Witness>,
}

/// The recording provider as the run's `Arc<dyn Provider>`, the pair keeping it too.
struct Shared(Arc<Recording>);

impl Provider for Shared {
    fn name(&self) -> &str {
        self.0.inner.name()
    }

    fn model(&self) -> &str {
        self.0.inner.model()
    }

    fn stream(&self, call: StreamCall) -> BoxFuture<Result<(), ProviderError>> {
        let recording = Arc::clone(&self.0);
        let n = {
            let mut requests = recording.requests.lock().unwrap();
            requests.push(call.request.clone());
            requests.len()
        };
        let inner = match &recording.events {
            None => recording.inner.stream(call),
            Some(events) => {
                let (events, sink) = (events.clone(), call.sink);
                Box::pin(async move {
                    for event in events {
                        sink.send(event);
                    }
                    Ok(())
                })
            }
        };
        Box::pin(async move {
            recording.witness.note("model");
            if recording.hold == Some(n) {
                recording.reached.notify_one();
                recording.open.notified().await;
            }
            inner.await
        })
    }
}

/// Answers approval questions in order (see `Setup::answers`).
struct Answers(Mutex<VecDeque<ApprovalAnswer>>);

impl Approver for Answers {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<ApprovalAnswer> {
        let answer = self.0.lock().unwrap().pop_front().unwrap_or_else(|| {
            ApprovalAnswer::deny_with(format!("no answer scripted for {}", request.call.id))
        });
        Box::pin(async move { answer })
    }
}

/// The scripted executor (see the module documentation); clones share one state.
#[derive(Clone)]
pub struct Scripted(Arc<ScriptedState>);

pub struct ScriptedState {
    mutating: Mutex<Vec<String>>,
    witness: Arc<Witness>,
    running: AtomicUsize,
    max_running: AtomicUsize,
    /// `start N` and `end N` of the `block` calls, in order.
    seen: Mutex<Vec<String>>,
    permits: Semaphore,
    started: mpsc::UnboundedSender<usize>,
}

impl Scripted {
    /// Lets `n` more `block` calls end.
    pub fn permit(&self, n: usize) {
        self.0.permits.add_permits(n);
    }

    /// The most `block` calls that ran at once.
    pub fn max_running(&self) -> usize {
        self.0.max_running.load(Ordering::SeqCst)
    }

    /// The starts and ends of the `block` calls, in order.
    pub fn seen(&self) -> Vec<String> {
        self.0.seen.lock().unwrap().clone()
    }
}

impl ToolExecutor for Scripted {
    fn specs(&self) -> Vec<ToolSpec> {
        let mut specs = TestTools.specs();
        for (name, description) in [
            ("wait", "Waits `ms` milliseconds, then returns `out`."),
            ("block", "Waits until the test lets it end."),
            (
                "gated",
                "Started gated: says whether its dispatch was durable when it started and when it ran.",
            ),
        ] {
            specs.push(ToolSpec {
                name: name.into(),
                description: description.into(),
                parameters: serde_json::json!({"type": "object"}),
            });
        }
        specs
    }

    fn mutating(&self) -> Vec<String> {
        self.0.mutating.lock().unwrap().clone()
    }

    fn starts_gated(&self, call: &ToolCall) -> bool {
        call.name == "gated"
    }

    /// `gated` reads its dispatch's durability as it is started and as it runs.
    fn execute_with(&self, call: ToolCall, context: CallContext) -> BoxFuture<ToolOutcome> {
        if call.name != "gated" {
            return self.execute(call, context.cancel);
        }
        let started = context.durable.is_now();
        Box::pin(async move {
            let ran = context.durable.wait().await;
            outcome(
                ToolStatus::Ok,
                format!("durable when started: {started}, when run: {ran}"),
            )
        })
    }

    fn execute(&self, call: ToolCall, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        let state = Arc::clone(&self.0);
        Box::pin(async move {
            state.witness.note("tool");
            let args: serde_json::Value = serde_json::from_str(&call.arguments).unwrap_or_default();
            match call.name.as_str() {
                "wait" => {
                    let ms = args["ms"].as_u64().unwrap_or(0);
                    let out = args["out"].as_str().unwrap_or("").to_string();
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(ms)) => outcome(ToolStatus::Ok, out),
                        () = cancel.cancelled() => outcome(ToolStatus::Cancelled, "cancelled".into()),
                    }
                }
                "block" => state.block(index(&call), cancel).await,
                _ => TestTools.execute(call, cancel).await,
            }
        })
    }
}

impl ScriptedState {
    async fn block(&self, i: usize, cancel: CancellationToken) -> ToolOutcome {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_running.fetch_max(now, Ordering::SeqCst);
        self.seen.lock().unwrap().push(format!("start {i}"));
        self.started.send(i).unwrap();
        let outcome = tokio::select! {
            permit = self.permits.acquire() => {
                permit.unwrap().forget();
                outcome(ToolStatus::Ok, format!("done {i}"))
            }
            () = cancel.cancelled() => outcome(ToolStatus::Cancelled, format!("block {CANCELLED_NOTE}")),
        };
        self.seen.lock().unwrap().push(format!("end {i}"));
        self.running.fetch_sub(1, Ordering::SeqCst);
        outcome
    }
}

fn outcome(status: ToolStatus, content: String) -> ToolOutcome {
    ToolOutcome { status, content }
}

/// The `i` argument of a scripted call.
/// The content of each `tool_result` entry of the log at `path`, in log order.
pub fn tool_results(path: &Path) -> Vec<String> {
    let log = read_session(path).unwrap();
    log.entries
        .iter()
        .filter_map(|e| match &e.body {
            Body::Record(Record::ToolResult(r)) => Some(r.outcome.content.clone()),
            _ => None,
        })
        .collect()
}

pub fn index(call: &ToolCall) -> usize {
    let args: serde_json::Value = serde_json::from_str(&call.arguments).unwrap();
    usize::try_from(args["i"].as_u64().unwrap()).unwrap()
}

/// A `wait` call of the faux script: `{"name":"wait","arguments":{"ms":MS,"out":OUT}}`.
pub fn wait(ms: u64, out: &str) -> String {
    format!(r#"{{"name":"wait","arguments":{{"ms":{ms},"out":"{out}"}}}}"#)
}

/// `n` calls of `tool` (`echo` or `block`) with the arguments `{"i": 0}` to
/// `{"i": n-1}`, for a script's `tool_calls`.
pub fn calls(tool: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!(r#"{{"name":"{tool}","arguments":{{"i":{i}}}}}"#))
        .collect::<Vec<_>>()
        .join(",")
}

/// An event as one compact line: its type and what tells it apart.
pub fn event_line(event: &RunEvent) -> String {
    match event {
        RunEvent::RunStarted { .. } => "run_started".into(),
        RunEvent::Notice { message } => format!("notice {message}"),
        RunEvent::Retrying {
            step,
            attempt,
            delay_ms,
            reason,
        } => format!("retrying {step} #{attempt} in {delay_ms}ms: {reason}"),
        RunEvent::StepStarted { step } => format!("step_started {step}"),
        RunEvent::TextDelta(Delta { step, text }) => format!("text {step} {text:?}"),
        RunEvent::ReasoningDelta(Delta { step, text }) => format!("reasoning {step} {text:?}"),
        RunEvent::StepFinished { step, outcome, .. } => format!("step_finished {step} {outcome}"),
        RunEvent::ToolCall {
            call_id,
            name,
            arguments,
            ..
        } => format!("tool_call {call_id} {name} {arguments}"),
        RunEvent::ToolOutput { call_id, text, .. } => format!("tool_output {call_id} {text:?}"),
        RunEvent::ToolResult {
            call_id,
            status,
            content,
            ..
        } => format!("tool_result {}", settled(call_id, *status, content)),
        RunEvent::Plan { call_id, plan } => format!(
            "plan {call_id} {}",
            plan.checklist().trim_end().replace('\n', " | ")
        ),
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
        RunEvent::MemoryIndex { notes, .. } => format!("memory_index {notes} notes"),
        RunEvent::MemoryExtracted { outcome, notes, .. } => {
            format!("memory_extracted {outcome} {notes:?}")
        }
        RunEvent::MemoryWritten { written, .. } => format!("memory_written {written:?}"),
    }
}

/// A settled call as its `tool_result` event and entry show it: its id, status and
/// content.
fn settled(call_id: &CallId, status: ToolStatus, content: &str) -> String {
    format!("{call_id} {status:?} {content:?}")
}

/// The log's entries as compact lines: `#id type`, and what tells it apart.
pub fn entry_lines(path: &Path) -> Vec<String> {
    let log = read_session(path).unwrap();
    log.entries
        .iter()
        .map(|e| {
            let detail = match &e.body {
                Body::Record(Record::Step(s)) => format!(" {} {:?}", s.step, s.outcome),
                Body::Record(Record::ToolResult(r)) => {
                    format!(
                        " {}",
                        settled(&r.call_id, r.outcome.status, &r.outcome.content)
                    )
                }
                Body::Record(Record::Steer { text } | Record::FollowUp { text }) => {
                    format!(" {text:?}")
                }
                Body::Record(Record::ApprovalAnswer {
                    call_id,
                    verdict,
                    scope,
                    message,
                }) => format!(" {call_id} {verdict:?} {scope:?} {message:?}"),
                Body::Decision(Decision::StepStarted { step, .. }) => format!(" {step}"),
                Body::Decision(Decision::ToolDispatched { call, .. }) => format!(" {}", call.id),
                Body::Decision(Decision::SyntheticResult {
                    call,
                    reason,
                    content,
                }) => format!(" {} {reason:?} {content:?}", call.id),
                Body::Decision(Decision::Delivered { origin, text, .. }) => {
                    format!(" {origin:?} {text:?}")
                }
                Body::Decision(Decision::RunFinished(RunEnd { reason, .. })) => {
                    format!(" {reason:?}")
                }
                Body::Decision(Decision::Ignored { reason }) => format!(" {reason:?}"),
                _ => String::new(),
            };
            format!("#{} {}{detail}", e.id, e.body.type_name())
        })
        .collect()
}
