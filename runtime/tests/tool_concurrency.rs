//! Bounded tool concurrency (SPEC.md §14.1, `max_parallel_tools`): at most N calls
//! of a step run at once, the others wait and start in dispatch order, settlements
//! stay in dispatch order, and an interrupt settles the waiting ones as cancelled
//! without starting them. The harness's `block` tool waits until the test hands it
//! a permit, and counts how many run at once (no sleeps, no clock).

use std::num::NonZeroUsize;

use expect_test::{Expect, expect};
use xcsh_log::{Body, Record, ToolResultRecord, read_session};
use xcsh_machine::{Decision, StopReason, ToolStatus};

mod harness;
use harness::{PROMPTED, Pair, calls, index, tool_results};

/// A run whose first step asks for `n` `block` calls, and whose second answers.
fn start(n: usize, limit: usize) -> Pair {
    let script = format!(
        "{{\"tool_calls\":[{}]}}\n{{\"text\":\"all done\"}}",
        calls("block", n)
    );
    Pair::start(&script, "go", |s| {
        s.run.max_parallel_tools = NonZeroUsize::new(limit).unwrap();
    })
}

/// Given ([`PROMPTED`], then [`start`] with six calls): step 1 asked for six
/// `block` calls, and all were dispatched.
static SIX_DISPATCHED: Expect = expect![[r#"
        0ms step_finished 1 completed
        0ms tool_call call_1_1 block {"i":0}
        0ms tool_call call_1_2 block {"i":1}
        0ms tool_call call_1_3 block {"i":2}
        0ms tool_call call_1_4 block {"i":3}
        0ms tool_call call_1_5 block {"i":4}
        0ms tool_call call_1_6 block {"i":5}
    #3 step 1 Completed
    #4 tool_dispatched call_1_1
    #5 tool_dispatched call_1_2
    #6 tool_dispatched call_1_3
    #7 tool_dispatched call_1_4
    #8 tool_dispatched call_1_5
    #9 tool_dispatched call_1_6
"#]];

/// The `i` argument of each `tool_dispatched` decision, in log order, and the
/// `tool_result` records (which follow dispatch order).
fn log_order(path: &std::path::Path) -> (Vec<usize>, Vec<ToolResultRecord>) {
    let log = read_session(path).unwrap();
    let mut dispatched_calls = Vec::new();
    let mut results = Vec::new();
    for entry in &log.entries {
        match &entry.body {
            Body::Decision(Decision::ToolDispatched { call, .. }) => {
                dispatched_calls.push(call.clone());
            }
            Body::Record(Record::ToolResult(r)) => results.push(ToolResultRecord::clone(r)),
            _ => {}
        }
    }
    let ids: Vec<_> = dispatched_calls.iter().map(|c| c.id.clone()).collect();
    let result_ids: Vec<_> = results.iter().map(|r| r.call_id.clone()).collect();
    assert_eq!(result_ids, ids, "tool_result entries follow dispatch order");
    (dispatched_calls.iter().map(index).collect(), results)
}

#[tokio::test(start_paused = true)]
async fn three_hundred_calls_with_a_limit_of_8_run_at_most_8_at_once_and_settle_in_dispatch_order()
{
    let mut pair = start(300, 8);
    // Nothing is released until 8 calls run: the gauge must reach 8 and no more.
    let mut starts = Vec::new();
    for _ in 0..8 {
        starts.push(pair.started.recv().await.unwrap());
    }
    // Each permit ends one call, which frees one slot for the next waiting call.
    for _ in 8..300 {
        pair.tools.permit(1);
        starts.push(pair.started.recv().await.unwrap());
    }
    pair.tools.permit(8);
    let end = pair.finish().await;

    assert_eq!(end.result.stop_reason, StopReason::Completed);
    assert_eq!(end.result.final_text, "all done");
    assert_eq!(end.tools.max_running(), 8);
    assert_eq!(
        starts,
        (0..300).collect::<Vec<_>>(),
        "calls start in dispatch order"
    );
    let (dispatched, results) = log_order(&end.path);
    assert_eq!(dispatched, (0..300).collect::<Vec<_>>());
    let statuses: Vec<_> = results.iter().map(|r| r.outcome.status).collect();
    assert_eq!(statuses, vec![ToolStatus::Ok; 300]);
    let contents: Vec<_> = results.iter().map(|r| r.outcome.content.clone()).collect();
    assert_eq!(
        contents,
        (0..300).map(|i| format!("done {i}")).collect::<Vec<_>>()
    );
}

/// The transcript adds the events and the whole log to the old checks.
#[tokio::test(start_paused = true)]
async fn with_a_limit_of_1_the_calls_run_strictly_one_after_another() {
    let mut pair = start(6, 1);
    for i in 0..6 {
        assert_eq!(pair.started.recv().await.unwrap(), i);
        pair.tools.permit(1);
    }
    let end = pair.finish().await;
    expect![[r#"
            0ms tool_result call_1_1 Ok "done 0"
            0ms tool_result call_1_2 Ok "done 1"
            0ms tool_result call_1_3 Ok "done 2"
            0ms tool_result call_1_4 Ok "done 3"
            0ms tool_result call_1_5 Ok "done 4"
            0ms tool_result call_1_6 Ok "done 5"
            0ms step_started 2
            0ms text 2 "all done"
            0ms step_finished 2 completed
            0ms run_finished Completed 2
        result Completed steps 2 final "all done"
        #10 tool_result call_1_1 Ok "done 0"
        #11 tool_result call_1_2 Ok "done 1"
        #12 tool_result call_1_3 Ok "done 2"
        #13 tool_result call_1_4 Ok "done 3"
        #14 tool_result call_1_5 Ok "done 4"
        #15 tool_result call_1_6 Ok "done 5"
        #16 step_started 2
        #17 step 2 Completed
        #18 run_finished Completed
    "#]]
    .assert_eq(&end.after(&[&PROMPTED, &SIX_DISPATCHED]));

    assert_eq!(end.tools.max_running(), 1);
    let sequential: Vec<String> = (0..6)
        .flat_map(|i| [format!("start {i}"), format!("end {i}")])
        .collect();
    assert_eq!(end.tools.seen(), sequential);
    let (dispatched, _) = log_order(&end.path);
    assert_eq!(dispatched, (0..6).collect::<Vec<_>>());
}

/// The transcript holds every call's outcome (the two running ones cancelled, the
/// four waiting ones cancelled before they started), in dispatch order.
#[tokio::test(start_paused = true)]
async fn an_interrupt_settles_the_waiting_calls_as_cancelled_without_starting_them() {
    let mut pair = start(6, 2);
    assert_eq!(pair.started.recv().await.unwrap(), 0);
    assert_eq!(pair.started.recv().await.unwrap(), 1);
    // Calls 2..6 wait for a slot; nothing is released.
    pair.handle.interrupt();
    let end = pair.finish().await;
    expect![[r#"
            0ms tool_result call_1_3 Cancelled "`block` was cancelled by the user before it started (it was waiting: at most 2 tool calls run at once); it did nothing"
            0ms tool_result call_1_4 Cancelled "`block` was cancelled by the user before it started (it was waiting: at most 2 tool calls run at once); it did nothing"
            0ms tool_result call_1_5 Cancelled "`block` was cancelled by the user before it started (it was waiting: at most 2 tool calls run at once); it did nothing"
            0ms tool_result call_1_6 Cancelled "`block` was cancelled by the user before it started (it was waiting: at most 2 tool calls run at once); it did nothing"
            0ms tool_result call_1_1 Cancelled "block cancelled by the user; side effects it already had were not undone"
            0ms tool_result call_1_2 Cancelled "block cancelled by the user; side effects it already had were not undone"
            0ms run_finished Interrupted 1
        result Interrupted steps 1 final ""
        #10 interrupt
        #11 tool_result call_1_1 Cancelled "block cancelled by the user; side effects it already had were not undone"
        #12 tool_result call_1_2 Cancelled "block cancelled by the user; side effects it already had were not undone"
        #13 tool_result call_1_3 Cancelled "`block` was cancelled by the user before it started (it was waiting: at most 2 tool calls run at once); it did nothing"
        #14 tool_result call_1_4 Cancelled "`block` was cancelled by the user before it started (it was waiting: at most 2 tool calls run at once); it did nothing"
        #15 tool_result call_1_5 Cancelled "`block` was cancelled by the user before it started (it was waiting: at most 2 tool calls run at once); it did nothing"
        #16 tool_result call_1_6 Cancelled "`block` was cancelled by the user before it started (it was waiting: at most 2 tool calls run at once); it did nothing"
        #17 run_finished Interrupted
    "#]]
    .assert_eq(&end.after(&[&PROMPTED, &SIX_DISPATCHED]));

    let starts: Vec<String> = end
        .tools
        .seen()
        .into_iter()
        .filter(|s| s.starts_with("start"))
        .collect();
    assert_eq!(
        starts,
        ["start 0", "start 1"],
        "the waiting calls never started"
    );
    let (dispatched, results) = log_order(&end.path);
    assert_eq!(dispatched, (0..6).collect::<Vec<_>>());
    let durations: Vec<u64> = results[2..].iter().map(|r| r.duration_ms).collect();
    assert_eq!(
        durations,
        vec![0; 4],
        "a call that never started took no time"
    );
}

/// Write-ahead with a gated start (SPEC.md §21.4): a call its executor starts gated
/// is started while its dispatch is synced, and runs once it is durable; any other
/// call is started only then.
#[tokio::test(start_paused = true)]
async fn a_gated_call_starts_before_its_dispatch_is_durable_and_runs_after() {
    let script = r#"{"tool_calls":[{"name":"gated","arguments":{}},{"name":"echo","arguments":{"i":1}}]}
{"text":"all done"}"#;
    let end = Pair::start(script, "go", |_| {}).finish().await;
    assert_eq!(
        tool_results(&end.path),
        ["durable when started: false, when run: true", r#"{"i":1}"#]
    );
}
