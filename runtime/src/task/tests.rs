//! A parent run delegating through the real owner task: the faux provider serves the
//! family from one script, the test tools run the children's calls.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use expect_test::{Expect, expect};

use super::*;
use xcsh_log::{Body, Record, read_session};
use xcsh_providers::faux::FauxProvider;
use xcsh_tools::testing::TestTools;

/// Runs `prompt` over `script` with `task` offered, in a fresh folder; returns the
/// folder (kept while the test looks), and the parent's file.
async fn family(script: &str, limits: Limits) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join("2026-01-01T00-00-00-000Z_parent0000001.jsonl");
    let provider = FauxProvider::from_script("family.jsonl", script).unwrap();
    let opts = delegating(RunOptions {
        session: SessionTarget::New {
            path: path.clone(),
            session_id: "parent0000001".into(),
            cwd: dir.path().display().to_string(),
        },
        task: Task::Prompt("go".into()),
        limits,
        system_prompt: "sys".into(),
        provider: Arc::new(provider),
        tools: Arc::new(TestTools),
        permissions: Permissions::Yolo,
        approver: None,
        max_parallel_tools: crate::DEFAULT_MAX_PARALLEL_TOOLS,
        secrets: Secrets::default(),
        memory: None,
        provider_record: None,
    });
    run_agent(opts).unwrap().result().await.unwrap();
    (dir, path)
}

/// The parent's tool results and each child's header link and end, as lines; the
/// children's ids (random) are replaced by their order of creation.
fn render(dir: &Path, parent: &Path) -> String {
    let mut out = String::new();
    let log = read_session(parent).unwrap();
    let mut children = Vec::new();
    for e in &log.entries {
        match &e.body {
            Body::Record(Record::ToolResult(r)) => {
                let child = r.child.as_ref().unwrap();
                children.push(child.session_id.clone());
                writeln!(
                    out,
                    "{} {} {:?} child={} usage={:?}\n  {}",
                    e.id,
                    r.call_id,
                    r.outcome.status,
                    children.len(),
                    child.usage.map(|u| (u.input_tokens, u.output_tokens)),
                    indent(&r.outcome.content.replace(&child.session_id, "CHILD"))
                )
                .unwrap();
                let file = dir.join(&child.file);
                let child_log = read_session(&file).unwrap();
                let link = child_log.header().parent.clone().unwrap();
                writeln!(
                    out,
                    "  header parent: {} entry {} call {}",
                    link.session_id, link.entry, link.call_id
                )
                .unwrap();
                let end = child_log.entries.iter().rev().find_map(|e| match &e.body {
                    Body::Decision(xcsh_machine::Decision::RunFinished(xcsh_machine::RunEnd {
                        reason,
                        ..
                    })) => Some(serde_json::to_string(reason).unwrap()),
                    _ => None,
                });
                writeln!(out, "  child run_finished: {}", end.unwrap()).unwrap();
            }
            Body::Decision(xcsh_machine::Decision::RunFinished(xcsh_machine::RunEnd {
                reason,
                usage,
                ..
            })) => {
                writeln!(
                    out,
                    "{} run_finished {} usage={:?}",
                    e.id,
                    serde_json::to_string(reason).unwrap(),
                    (usage.input_tokens, usage.output_tokens)
                )
                .unwrap();
            }
            _ => {}
        }
    }
    out
}

/// Text indented by two spaces after its first line (blank lines left blank).
fn indent(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("  {l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        .trim_start()
        .to_string()
}

const TWO_ONE_FAILS: &str = r#"{"tool_calls":[{"name":"task","arguments":{"description":"a","prompt":"say a"}},{"name":"task","arguments":{"description":"b","prompt":"say b","tools":["echo"]}}],"usage":{"input":100,"output":10}}
{"agent":"b","error":"the provider is down","text":"partial"}
{"agent":"a","tool_calls":[{"name":"echo","arguments":{"x":1}}],"usage":{"input":20,"output":5}}
{"agent":"a","text":"found a","usage":{"input":30,"output":5}}
{"text":"done","usage":{"input":200,"output":10}}
"#;

fn check(actual: &str, expect: Expect) {
    expect.assert_eq(actual);
}

#[tokio::test]
async fn two_sub_agents_run_and_the_failing_one_is_the_parents_tool_error() {
    let (dir, parent) = family(TWO_ONE_FAILS, Limits::default()).await;
    check(
        &render(dir.path(), &parent),
        expect![[r#"
            6 call_1_1 Ok child=1 usage=Some((50, 10))
              the sub-agent `a` (session CHILD) completed, after 2 step(s) spending 60 tokens. Its final message:

              found a
              header parent: parent0000001 entry 4 call call_1_1
              child run_finished: {"kind":"completed"}
            7 call_1_2 Error child=2 usage=Some((0, 0))
              error: the sub-agent `b` (session CHILD) failed: the provider failed: the provider is down, after 1 step(s) spending 0 tokens. Its last message:

              partial
              header parent: parent0000001 entry 5 call call_1_2
              child run_finished: {"kind":"provider_error","error":{"kind":"api","message":"the provider is down"}}
            10 run_finished {"kind":"completed"} usage=(300, 20)
        "#]],
    );
}

#[tokio::test]
async fn what_the_sub_agents_spent_stops_the_parent_at_its_budget() {
    let limits = Limits {
        max_tokens: 120,
        ..Limits::default()
    };
    let (dir, parent) = family(TWO_ONE_FAILS, limits).await;
    check(
        &render(dir.path(), &parent),
        expect![[r#"
            6 call_1_1 Error child=1 usage=Some((20, 5))
              error: the sub-agent `a` (session CHILD) stopped: it spent 25 tokens of its budget of 5, after 1 step(s) spending 25 tokens. Its last message:

              (it wrote no final message)
              header parent: parent0000001 entry 4 call call_1_1
              child run_finished: {"kind":"max_tokens","limit":5,"spent":25}
            7 call_1_2 Error child=2 usage=Some((0, 0))
              error: the sub-agent `b` (session CHILD) failed: the provider failed: the provider is down, after 1 step(s) spending 0 tokens. Its last message:

              partial
              header parent: parent0000001 entry 5 call call_1_2
              child run_finished: {"kind":"provider_error","error":{"kind":"api","message":"the provider is down"}}
            8 run_finished {"kind":"max_tokens","limit":120,"spent":135} usage=(100, 10)
        "#]],
    );
}

#[test]
fn a_sub_agent_gets_half_of_what_its_parent_has_left() {
    let run = |max_steps, steps_in_window, max_tokens, spent| RunHeadroom {
        limits: Limits {
            max_steps,
            max_tokens,
            ..Limits::default()
        },
        steps_in_window,
        spent,
        cwd: "/w".into(),
    };
    let limits = |l: Limits| (l.max_steps, l.max_tokens);
    assert_eq!(
        limits(child_limits(&run(32, 2, 1000, 400), None)),
        (15, 300)
    );
    assert_eq!(
        limits(child_limits(&run(32, 2, 1000, 400), Some(4))),
        (4, 300)
    );
    assert_eq!(
        limits(child_limits(&run(32, 2, 1000, 400), Some(40))),
        (15, 300)
    );
    assert_eq!(limits(child_limits(&run(3, 3, 0, 9_999), None)), (1, 0));
    assert_eq!(limits(child_limits(&run(3, 3, 10, 10), None)), (1, 1));
}
