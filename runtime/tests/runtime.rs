//! The runtime end to end with the faux provider: steers and follow-ups land where
//! SPEC.md says, interrupts settle tools as cancelled, and the log and the requests
//! the provider saw agree.

use std::sync::Arc;

use expect_test::{expect, expect_file};
use xcsh_log::{Body, Record, read_session, rebuild_context};
use xcsh_machine::{ApprovalScope, Message, Permissions, UserOrigin, Verdict};
use xcsh_providers::ModelRequest;
use xcsh_runtime::{ApprovalAnswer, RunEvent};
use xcsh_tools::testing::TestTools;

mod harness;
use harness::{DONE_AT_STEP_3, OK_AT_STEP_2, PROMPTED, Pair, calls};

fn last_user(request: &ModelRequest) -> Option<(UserOrigin, String)> {
    request.messages.iter().rev().find_map(|m| match m {
        Message::User { origin, text } => Some((*origin, text.clone())),
        _ => None,
    })
}

/// The transcript shows the whole log (each delivery with its origin, each step
/// started with its number) and every event, where the old asserts checked the
/// entry types and the result.
#[tokio::test(start_paused = true)]
async fn steer_lands_after_step_one_tools_and_follow_up_after_the_final_answer() {
    let script = [
        format!(r#"{{"text":"one","tool_calls":[{}]}}"#, calls("echo", 2)),
        format!(r#"{{"text":"two","tool_calls":[{}]}}"#, calls("echo", 2)),
        format!(r#"{{"text":"three","tool_calls":[{}]}}"#, calls("echo", 2)),
        r#"{"text":"final answer"}"#.to_string(),
        r#"{"text":"follow-up answer"}"#.to_string(),
    ]
    .join("\n");
    let pair = Pair::start(&script, "start", |s| s.hold = Some(1));
    pair.held().await;
    // Step 1 is in flight (its request was made, its stream is held).
    pair.handle.steer("steer: also look at b");
    pair.handle.follow_up("follow-up: then summarize");
    let pending = pair.handle.pending().await;
    assert_eq!(pending.steers, vec!["steer: also look at b".to_string()]);
    assert_eq!(
        pending.follow_ups,
        vec!["follow-up: then summarize".to_string()]
    );
    pair.release();
    let end = pair.finish().await;
    expect_file![
        "golden/steer-lands-after-step-one-tools-and-follow-up-after-the-final-answer.txt"
    ]
    .assert_eq(&end.after(&[&PROMPTED]));

    // The model saw each message in the request right after its delivery.
    let requests = &end.requests;
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
    let log = read_session(&end.path).unwrap();
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
    let mut pair = Pair::start(script, "wait", |s| s.run.tools = Arc::new(TestTools));
    pair.events_until(|e| matches!(e, RunEvent::ToolCall { .. }))
        .await;
    pair.handle.interrupt();
    expect![[r#"
            0ms step_finished 1 completed
            0ms tool_call call_1_1 sleep {"ms":600000}
            0ms tool_result call_1_1 Cancelled "sleep cancelled by the user; side effects it already had were not undone"
            0ms run_finished Interrupted 1
        result Interrupted steps 1 final ""
        #3 step 1 Completed
        #4 tool_dispatched call_1_1
        #5 interrupt
        #6 tool_result call_1_1 Cancelled "sleep cancelled by the user; side effects it already had were not undone"
        #7 run_finished Interrupted
    "#]]
    .assert_eq(&pair.finish().await.after(&[&PROMPTED]));
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
            0ms step_finished 1 completed
            0ms tool_call call_1_1 wait {"ms":30,"out":"slow"}
            0ms tool_call call_1_2 wait {"ms":10,"out":"fast"}
           10ms tool_result call_1_2 Ok "fast"
           30ms tool_result call_1_1 Ok "slow"
           30ms step_started 2
           30ms text 2 "done"
           30ms step_finished 2 completed
           30ms run_finished Completed 2
        result Completed steps 2 final "done"
        #3 step 1 Completed
        #4 tool_dispatched call_1_1
        #5 tool_dispatched call_1_2
        #6 tool_result call_1_1 Ok "slow"
        #7 tool_result call_1_2 Ok "fast"
        #8 step_started 2
        #9 step 2 Completed
        #10 run_finished Completed
    "#]]
    .assert_eq(&pair.finish().await.after(&[&PROMPTED]));
}

/// The transcript's result line holds the provider error and its message.
#[tokio::test(start_paused = true)]
async fn a_script_that_runs_out_ends_with_a_clear_provider_error() {
    let script = format!(r#"{{"tool_calls":[{}]}}"#, calls("echo", 1));
    let pair = Pair::start(&script, "go", |_| {});
    expect![[r#"
            0ms step_finished 1 completed
            0ms tool_call call_1_1 echo {"i":0}
            0ms tool_result call_1_1 Ok "{\"i\":0}"
            0ms step_started 2
            0ms step_finished 2 failed
            0ms run_finished ProviderError { error: ProviderError { kind: ScriptExhausted, message: "the faux script test has 1 step(s) and step 2 was requested" } } 2
        result ProviderError { error: ProviderError { kind: ScriptExhausted, message: "the faux script test has 1 step(s) and step 2 was requested" } } steps 2 final ""
        #3 step 1 Completed
        #4 tool_dispatched call_1_1
        #5 tool_result call_1_1 Ok "{\"i\":0}"
        #6 step_started 2
        #7 step 2 Failed { error: ProviderError { kind: ScriptExhausted, message: "the faux script test has 1 step(s) and step 2 was requested" } }
        #8 run_finished ProviderError { error: ProviderError { kind: ScriptExhausted, message: "the faux script test has 1 step(s) and step 2 was requested" } }
    "#]]
    .assert_eq(&pair.finish().await.after(&[&PROMPTED]));
}

/// Step 1 asks for two `echo` calls, step 2 for one, step 3 answers; `echo` is
/// mutating.
fn policy_script() -> String {
    [
        format!(r#"{{"tool_calls":[{}]}}"#, calls("echo", 2)),
        format!(r#"{{"tool_calls":[{}]}}"#, calls("echo", 1)),
        r#"{"text":"done"}"#.to_string(),
    ]
    .join("\n")
}

/// One answer is scripted: a second question would be denied, and the transcript
/// would show it.
#[tokio::test(start_paused = true)]
async fn ask_records_the_users_answer_and_a_tool_grant_answers_the_rest() {
    let pair = Pair::start(&policy_script(), "go", |s| {
        s.mutating = vec!["echo".into()];
        s.run.permissions = Permissions::Ask;
        s.answers = vec![ApprovalAnswer::new(Verdict::Allow, ApprovalScope::Tool)];
    });
    // One question at a time: the `a` answer to the first covered the second.
    expect![[r#"
            0ms step_finished 1 completed
            0ms approval_requested call_1_1
            0ms tool_call call_1_1 echo {"i":0}
            0ms approval call_1_2 Allow
            0ms tool_call call_1_2 echo {"i":1}
            0ms tool_result call_1_1 Ok "{\"i\":0}"
            0ms tool_result call_1_2 Ok "{\"i\":1}"
            0ms step_started 2
            0ms step_finished 2 completed
            0ms approval call_2_1 Allow
            0ms tool_call call_2_1 echo {"i":0}
            0ms tool_result call_2_1 Ok "{\"i\":0}"
        #3 step 1 Completed
        #4 approval_answer call_1_1 Allow Tool None
        #5 tool_dispatched call_1_1
        #6 approval
        #7 tool_dispatched call_1_2
        #8 tool_result call_1_1 Ok "{\"i\":0}"
        #9 tool_result call_1_2 Ok "{\"i\":1}"
        #10 step_started 2
        #11 step 2 Completed
        #12 approval
        #13 tool_dispatched call_2_1
        #14 tool_result call_2_1 Ok "{\"i\":0}"
        #15 step_started 3
        #16 step 3 Completed
        #17 run_finished Completed
    "#]]
    .assert_eq(&pair.finish().await.between(&[&PROMPTED], &DONE_AT_STEP_3));
}

/// Before the user is asked about a call, the executor checks it: an edit of a file
/// not read in this run cannot succeed, so it settles with that error (recorded as
/// `check_failed`) and no one is asked; the write after it is checked, passes, and
/// is asked about.
#[tokio::test(start_paused = true)]
async fn a_call_that_would_fail_is_not_asked_about_and_settles_with_its_error() {
    let edit = serde_json::json!({"name": "edit", "arguments":
        {"path": "notes.txt", "old_string": "hello", "new_string": "bye"}});
    let write =
        serde_json::json!({"name": "write", "arguments": {"path": "new.txt", "content": "x"}});
    let script = format!(
        "{}\n{}",
        serde_json::json!({ "tool_calls": [edit, write] }),
        r#"{"text":"ok"}"#
    );
    let pair = Pair::start(&script, "go", |s| {
        s.standard_tools();
        std::fs::write(s.work.join("notes.txt"), "hello").unwrap();
        s.run.permissions = Permissions::Ask;
        s.answers = vec![ApprovalAnswer::new(Verdict::Allow, ApprovalScope::Once)];
    });
    expect![[r#"
            0ms step_finished 1 completed
            0ms tool_result call_1_1 Error "`notes.txt` already exists and has not been read in this run; read it first with the `read` tool, then retry"
            0ms approval_requested call_1_2
            0ms tool_call call_1_2 write {"content":"x","path":"new.txt"}
            0ms tool_result call_1_2 Ok "created `new.txt` (1 line, 1 bytes)"
        #3 step 1 Completed
        #4 check_failed
        #5 synthetic_result call_1_1 WouldFail "`notes.txt` already exists and has not been read in this run; read it first with the `read` tool, then retry"
        #6 approval_answer call_1_2 Allow Once None
        #7 tool_dispatched call_1_2
        #8 tool_result call_1_2 Ok "created `new.txt` (1 line, 1 bytes)"
        #9 step_started 2
        #10 step 2 Completed
        #11 run_finished Completed
    "#]]
    .assert_eq(&pair.finish().await.between(&[&PROMPTED], &OK_AT_STEP_2));
}

/// The transcript shows the three denials as results and as entries, and no
/// `tool_dispatched`.
#[tokio::test(start_paused = true)]
async fn readonly_denies_every_mutation_and_the_model_sees_the_denial() {
    let pair = Pair::start(&policy_script(), "go", |s| {
        s.mutating = vec!["echo".into()];
        s.run.permissions = Permissions::Readonly;
    });
    expect![[r#"
            0ms step_finished 1 completed
            0ms approval call_1_1 Deny
            0ms tool_result call_1_1 Error "denied: this session is read-only (--permissions readonly), so `echo` was not run"
            0ms approval call_1_2 Deny
            0ms tool_result call_1_2 Error "denied: this session is read-only (--permissions readonly), so `echo` was not run"
            0ms step_started 2
            0ms step_finished 2 completed
            0ms approval call_2_1 Deny
            0ms tool_result call_2_1 Error "denied: this session is read-only (--permissions readonly), so `echo` was not run"
        #3 step 1 Completed
        #4 approval
        #5 synthetic_result call_1_1 Denied "denied: this session is read-only (--permissions readonly), so `echo` was not run"
        #6 approval
        #7 synthetic_result call_1_2 Denied "denied: this session is read-only (--permissions readonly), so `echo` was not run"
        #8 step_started 2
        #9 step 2 Completed
        #10 approval
        #11 synthetic_result call_2_1 Denied "denied: this session is read-only (--permissions readonly), so `echo` was not run"
        #12 step_started 3
        #13 step 3 Completed
        #14 run_finished Completed
    "#]]
    .assert_eq(&pair.finish().await.between(&[&PROMPTED], &DONE_AT_STEP_3));
}

#[tokio::test(start_paused = true)]
async fn a_steer_after_the_run_finished_is_recorded_ignored_and_reported() {
    let mut pair = Pair::start(r#"{"text":"done"}"#, "go", |_| {});
    // Wait for the finish, then steer: the owner may still be draining commands.
    pair.events_until(|e| matches!(e, RunEvent::RunFinished { .. }))
        .await;
    let accepted = pair.handle.steer("too late");
    let end = pair.finish().await;
    let log = read_session(&end.path).unwrap();
    let last: Vec<&str> = log
        .entries
        .iter()
        .rev()
        .take(2)
        .map(|e| e.type_name())
        .collect();
    if accepted && last == ["ignored", "steer"] {
        assert_eq!(end.result.undelivered, vec!["too late".to_string()]);
    } else {
        // The owner was already gone: the handle said so and nothing was written.
        assert!(!accepted || last[0] == "run_finished", "{last:?}");
    }
}

/// On the real clock: the bash call really runs `sleep 30`.
#[tokio::test]
async fn interrupting_a_long_bash_call_settles_it_cancelled_and_kills_it() {
    let script = r#"{"tool_calls":[{"name":"bash","arguments":{"command":"sleep 30"}}]}"#;
    let mut pair = Pair::start(script, "wait", |s| {
        s.standard_tools();
        s.timed = false;
    });
    pair.events_until(|e| matches!(e, RunEvent::ToolCall { .. }))
        .await;
    pair.handle.interrupt();
    let end = pair.finish().await;
    expect![[r#"
        run_started
        step_started 1
        step_finished 1 completed
        approval call_1_1 Allow
        tool_call call_1_1 bash {"command":"sleep 30"}
        tool_result call_1_1 Cancelled "bash cancelled by the user; side effects it already had were not undone; process group _ was killed\nexit code: none (killed by signal 9)\nduration: _ ms\nstdout: (empty)\nstderr: (empty)"
        run_finished Interrupted 1
        result Interrupted steps 1 final ""
        #0 session
        #1 user_message
        #2 step_started 1
        #3 step 1 Completed
        #4 approval
        #5 tool_dispatched call_1_1
        #6 interrupt
        #7 tool_result call_1_1 Cancelled "bash cancelled by the user; side effects it already had were not undone; process group _ was killed\nexit code: none (killed by signal 9)\nduration: _ ms\nstdout: (empty)\nstderr: (empty)"
        #8 run_finished Interrupted
    "#]]
    .assert_eq(&end.transcript);
    let log = read_session(&end.path).unwrap();
    let tool = log
        .entries
        .iter()
        .find_map(|e| match &e.body {
            Body::Record(Record::ToolResult(r)) => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    // The runtime's own measure of the call, from dispatch to settlement.
    assert!(
        tool.duration_ms < 1000,
        "settled after {} ms",
        tool.duration_ms
    );
}

/// Write-ahead: the transcript's `starts` show that a model call starts after its
/// `step_started`, a tool after its `tool_dispatched` (the two calls of step 2 after
/// both were dispatched); the events and the log are in order.
#[tokio::test(start_paused = true)]
async fn each_effect_starts_after_its_decision_is_written_and_events_arrive_in_order() {
    let script = [
        format!(r#"{{"tool_calls":[{}]}}"#, calls("echo", 1)),
        format!(r#"{{"tool_calls":[{}]}}"#, calls("echo", 2)),
        r#"{"text":"done"}"#.to_string(),
    ]
    .join("\n");
    let pair = Pair::start(&script, "go", |s| s.witness = true);
    expect![[r#"
            0ms step_finished 1 completed
            0ms tool_call call_1_1 echo {"i":0}
            0ms tool_result call_1_1 Ok "{\"i\":0}"
            0ms step_started 2
            0ms step_finished 2 completed
            0ms tool_call call_2_1 echo {"i":0}
            0ms tool_call call_2_2 echo {"i":1}
            0ms tool_result call_2_1 Ok "{\"i\":0}"
            0ms tool_result call_2_2 Ok "{\"i\":1}"
        #3 step 1 Completed
        #4 tool_dispatched call_1_1
        #5 tool_result call_1_1 Ok "{\"i\":0}"
        #6 step_started 2
        #7 step 2 Completed
        #8 tool_dispatched call_2_1
        #9 tool_dispatched call_2_2
        #10 tool_result call_2_1 Ok "{\"i\":0}"
        #11 tool_result call_2_2 Ok "{\"i\":1}"
        #12 step_started 3
        #13 step 3 Completed
        #14 run_finished Completed
        starts
        model after step_started
        tool after tool_dispatched
        model after step_started
        tool after tool_dispatched
        tool after tool_dispatched
        model after step_started
    "#]]
    .assert_eq(&pair.finish().await.between(&[&PROMPTED], &DONE_AT_STEP_3));
}

/// A new session's header records what its first run's provider is made of; a
/// later run records its own before its prompt when the branch's last record (a
/// `provider` entry, else the header) differs: not while it stays the same, again
/// when it changes, and again on a new branch that does not pass the change
/// (SPEC.md §22.2).
#[tokio::test(start_paused = true)]
async fn a_run_records_its_provider_when_the_branch_holds_another() {
    use xcsh_log::ProviderRecord;
    use xcsh_machine::{Decision, EntryId};
    use xcsh_runtime::SessionTarget;
    let record = |model: &str| ProviderRecord {
        provider: "openai".into(),
        model: Some(model.into()),
        base_url: None,
        script: None,
    };
    let script = r#"{"text":"ok"}"#;
    let first = Pair::start(script, "run on a", |s| {
        s.run.provider_record = Some(record("a"));
    })
    .finish()
    .await;
    let path = first.path.clone();
    let first_end = read_session(&path)
        .unwrap()
        .entries
        .iter()
        .find(|e| matches!(e.body, Body::Decision(Decision::RunFinished(_))))
        .map(|e| e.id);
    // The runs after the first write the first's session (their transcripts would
    // read their own files); the last continues from the end of the first, on a new
    // branch.
    for (model, at) in [("a", None), ("b", None), ("b", first_end)] {
        Pair::start(script, &format!("run on {model}"), |s| {
            s.run.session = SessionTarget::Existing {
                path: path.clone(),
                at,
            };
            s.run.provider_record = Some(record(model));
        })
        .handle
        .result()
        .await
        .unwrap();
    }
    let log = read_session(&path).unwrap();
    let lines: Vec<String> = log
        .entries
        .iter()
        .filter_map(|e| match &e.body {
            // The first run's is in the header.
            Body::Record(Record::Session(h)) => {
                h.provider.as_ref().map(|p| format!("#0 header {p}"))
            }
            Body::Record(Record::Provider(p)) => Some(format!("#{} provider {p}", e.id)),
            Body::Record(Record::UserMessage { text, .. }) => Some(format!(
                "#{} {text:?} after #{}",
                e.id,
                e.parent.unwrap_or(EntryId(0))
            )),
            Body::Record(Record::Branch { .. }) => Some(format!("#{} branch", e.id)),
            _ => None,
        })
        .collect();
    expect![[r##"
        [
            "#0 header openai · a",
            "#1 \"run on a\" after #0",
            "#5 \"run on a\" after #4",
            "#9 provider openai · b",
            "#10 \"run on b\" after #9",
            "#14 branch",
            "#15 provider openai · b",
            "#16 \"run on b\" after #15",
        ]
    "##]]
    .assert_debug_eq(&lines);
    assert_eq!(
        xcsh_log::recorded_provider(&path, None).unwrap(),
        Some(record("b"))
    );
}
