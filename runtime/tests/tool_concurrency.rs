//! Bounded tool concurrency (SPEC.md §14.1, `max_parallel_tools`): at most N calls
//! of a step run at once, the others wait and start in dispatch order, settlements
//! stay in dispatch order, and an interrupt settles the waiting ones as cancelled
//! without starting them. The test executor blocks each call until the test hands
//! it a permit, and counts how many run at once (no sleeps, no clock).

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use xcsh_log::{Body, Record, ToolResultRecord, read_session};
use xcsh_machine::{Decision, Limits, Permissions, StopReason, ToolCall, ToolOutcome, ToolStatus};
use xcsh_providers::BoxFuture;
use xcsh_providers::faux::FauxProvider;
use xcsh_runtime::{RunHandle, RunOptions, SessionTarget, Task, run_agent};
use xcsh_tools::{CANCELLED_NOTE, ToolExecutor, ToolSpec};

/// What the executor saw, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Start(usize),
    End(usize),
}

/// A tool `block {"i": N}` that reports its start, then waits for a permit (or its
/// cancellation), counting the calls running at once.
#[derive(Clone)]
struct Probe {
    running: Arc<AtomicUsize>,
    max_running: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
    permits: Arc<Semaphore>,
    started: mpsc::UnboundedSender<usize>,
}

impl ToolExecutor for Probe {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "block".into(),
            description: "Waits until the test lets it end.".into(),
            parameters: serde_json::json!({"type": "object"}),
        }]
    }

    fn execute(&self, call: ToolCall, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        let probe = self.clone();
        Box::pin(async move {
            let args: serde_json::Value = serde_json::from_str(&call.arguments).unwrap();
            let i = usize::try_from(args["i"].as_u64().unwrap()).unwrap();
            let now = probe.running.fetch_add(1, Ordering::SeqCst) + 1;
            probe.max_running.fetch_max(now, Ordering::SeqCst);
            probe.seen.lock().unwrap().push(Seen::Start(i));
            probe.started.send(i).unwrap();
            let outcome = tokio::select! {
                permit = probe.permits.acquire() => {
                    permit.unwrap().forget();
                    ToolOutcome { status: ToolStatus::Ok, content: format!("done {i}") }
                }
                () = cancel.cancelled() => ToolOutcome {
                    status: ToolStatus::Cancelled,
                    content: format!("block {CANCELLED_NOTE}"),
                },
            };
            probe.seen.lock().unwrap().push(Seen::End(i));
            probe.running.fetch_sub(1, Ordering::SeqCst);
            outcome
        })
    }
}

struct Run {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    probe: Probe,
    started: mpsc::UnboundedReceiver<usize>,
    handle: RunHandle,
}

/// A run whose first step asks for `calls` `block` calls, and whose second answers.
fn start(calls: usize, limit: usize) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let list: Vec<String> = (0..calls)
        .map(|i| format!(r#"{{"name":"block","arguments":{{"i":{i}}}}}"#))
        .collect();
    let script = format!(
        "{{\"tool_calls\":[{}]}}\n{{\"text\":\"all done\"}}",
        list.join(",")
    );
    let (started_tx, started) = mpsc::unbounded_channel();
    let probe = Probe {
        running: Arc::new(AtomicUsize::new(0)),
        max_running: Arc::new(AtomicUsize::new(0)),
        seen: Arc::new(Mutex::new(Vec::new())),
        permits: Arc::new(Semaphore::new(0)),
        started: started_tx,
    };
    let handle = run_agent(RunOptions {
        session: SessionTarget::New {
            path: path.clone(),
            session_id: "t".into(),
            cwd: "/w".into(),
        },
        task: Task::Prompt("go".into()),
        limits: Limits::default(),
        system_prompt: "sys".into(),
        provider: Arc::new(FauxProvider::from_script("test", &script).unwrap()),
        tools: Arc::new(probe.clone()),
        permissions: Permissions::Yolo,
        approver: None,
        max_parallel_tools: NonZeroUsize::new(limit).unwrap(),
        secrets: Default::default(),
    })
    .unwrap();
    Run {
        _dir: dir,
        path,
        probe,
        started,
        handle,
    }
}

/// The `i` argument of each `tool_dispatched` decision and of each `tool_result`
/// record, in log order, and the results themselves.
fn log_order(path: &std::path::Path) -> (Vec<usize>, Vec<ToolResultRecord>) {
    let log = read_session(path).unwrap();
    let index = |call: &ToolCall| -> usize {
        let v: serde_json::Value = serde_json::from_str(&call.arguments).unwrap();
        usize::try_from(v["i"].as_u64().unwrap()).unwrap()
    };
    let mut dispatched_calls = Vec::new();
    let mut results = Vec::new();
    for entry in &log.entries {
        match &entry.body {
            Body::Decision(Decision::ToolDispatched { call, .. }) => {
                dispatched_calls.push(call.clone());
            }
            Body::Record(Record::ToolResult(r)) => results.push(r.clone()),
            _ => {}
        }
    }
    let ids: Vec<_> = dispatched_calls.iter().map(|c| c.id.clone()).collect();
    let result_ids: Vec<_> = results.iter().map(|r| r.call_id.clone()).collect();
    assert_eq!(result_ids, ids, "tool_result entries follow dispatch order");
    (dispatched_calls.iter().map(index).collect(), results)
}

async fn drain_events(handle: &mut RunHandle) {
    while handle.events.recv().await.is_some() {}
}

#[tokio::test]
async fn three_hundred_calls_with_a_limit_of_8_run_at_most_8_at_once_and_settle_in_dispatch_order()
{
    let mut run = start(300, 8);
    // Nothing is released until 8 calls run: the gauge must reach 8 and no more.
    let mut starts = Vec::new();
    for _ in 0..8 {
        starts.push(run.started.recv().await.unwrap());
    }
    // Each permit ends one call, which frees one slot for the next waiting call.
    for _ in 8..300 {
        run.probe.permits.add_permits(1);
        starts.push(run.started.recv().await.unwrap());
    }
    run.probe.permits.add_permits(8);
    drain_events(&mut run.handle).await;
    let result = run.handle.result().await.unwrap();

    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(result.final_text, "all done");
    assert_eq!(run.probe.max_running.load(Ordering::SeqCst), 8);
    assert_eq!(
        starts,
        (0..300).collect::<Vec<_>>(),
        "calls start in dispatch order"
    );
    let (dispatched, results) = log_order(&run.path);
    assert_eq!(dispatched, (0..300).collect::<Vec<_>>());
    let statuses: Vec<_> = results.iter().map(|r| r.outcome.status).collect();
    assert_eq!(statuses, vec![ToolStatus::Ok; 300]);
    let contents: Vec<_> = results.iter().map(|r| r.outcome.content.clone()).collect();
    assert_eq!(
        contents,
        (0..300).map(|i| format!("done {i}")).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn with_a_limit_of_1_the_calls_run_strictly_one_after_another() {
    let mut run = start(5, 1);
    for i in 0..5 {
        assert_eq!(run.started.recv().await.unwrap(), i);
        run.probe.permits.add_permits(1);
    }
    drain_events(&mut run.handle).await;
    let result = run.handle.result().await.unwrap();

    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(run.probe.max_running.load(Ordering::SeqCst), 1);
    let seen = run.probe.seen.lock().unwrap().clone();
    let sequential: Vec<Seen> = (0..5)
        .flat_map(|i| [Seen::Start(i), Seen::End(i)])
        .collect();
    assert_eq!(seen, sequential);
    let (dispatched, _) = log_order(&run.path);
    assert_eq!(dispatched, (0..5).collect::<Vec<_>>());
}

#[tokio::test]
async fn an_interrupt_settles_the_waiting_calls_as_cancelled_without_starting_them() {
    let mut run = start(6, 2);
    assert_eq!(run.started.recv().await.unwrap(), 0);
    assert_eq!(run.started.recv().await.unwrap(), 1);
    // Calls 2..6 wait for a slot; nothing is released.
    run.handle.interrupt();
    drain_events(&mut run.handle).await;
    let result = run.handle.result().await.unwrap();

    assert_eq!(result.stop_reason, StopReason::Interrupted);
    let seen = run.probe.seen.lock().unwrap().clone();
    let starts: Vec<usize> = seen
        .iter()
        .filter_map(|s| match s {
            Seen::Start(i) => Some(*i),
            Seen::End(_) => None,
        })
        .collect();
    assert_eq!(starts, vec![0, 1], "the waiting calls never started");
    let (dispatched, results) = log_order(&run.path);
    assert_eq!(dispatched, (0..6).collect::<Vec<_>>());
    let outcomes: Vec<_> = results.iter().map(|r| r.outcome.clone()).collect();
    let never = |_| {
        ToolOutcome {
        status: ToolStatus::Cancelled,
        content: "`block` was cancelled by the user before it started (it was waiting: at most 2 tool calls run at once); it did nothing".into(),
    }
    };
    let mut expected = vec![
        ToolOutcome {
            status: ToolStatus::Cancelled,
            content: format!("block {CANCELLED_NOTE}"),
        };
        2
    ];
    expected.extend((2..6).map(never));
    assert_eq!(outcomes, expected);
    let durations: Vec<u64> = results[2..].iter().map(|r| r.duration_ms).collect();
    assert_eq!(
        durations,
        vec![0; 4],
        "a call that never started took no time"
    );
}
