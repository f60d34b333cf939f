//! Transcripts of delegation (SPEC.md §29): how a `task` call is routed, and what its
//! sub-agent spent counting against the parent's budget.

use expect_test::{Expect, expect};

use super::Harness;

/// A run that offers `task` beside a read-only `read` and a mutating `write`, and asks.
const DELEGATING: &str = "config tools=read,write,task mutating=write permissions=ask";

/// Step 1 of `prompt go` (its request 100/10 tokens) asked for one `task` (`c11`).
static TASK_RUNNING: [(&str, Expect); 1] = [(
    "step 1 calls=task finish=tool_calls usage=100/10",
    expect![[r#"
        > step 1 calls=task finish=tool_calls usage=100/10
          record tool_dispatched {"call":{"arguments":"{}","id":"c11","name":"task"},"step":1}
          execute c11 task
    "#]],
)];

/// Given (`max_tokens=1000`): step 1 asked for one `task`, running as `c11`.
fn task_running() -> Harness {
    Harness::with("config tools=task max_tokens=1000")
        .prompted()
        .given(&TASK_RUNNING)
}

#[test]
fn a_task_whose_sub_agent_keeps_to_read_only_tools_runs_without_asking() {
    Harness::with(DELEGATING).prompted().check(
        r#"step 1 calls=task:{"tools":["read"]},task:{}"#,
        expect![[r#"
            > step 1 calls=task:{"tools":["read"]},task:{}
              record tool_dispatched {"call":{"arguments":"{\"tools\":[\"read\"]}","id":"c11","name":"task"},"step":1}
              execute c11 task
              record tool_dispatched {"call":{"arguments":"{}","id":"c12","name":"task"},"step":1}
              execute c12 task
        "#]],
    );
}

#[test]
fn a_task_whose_sub_agent_may_write_is_asked_like_a_mutating_tool() {
    Harness::with(DELEGATING).prompted().check(
        r#"step 1 calls=task:{"tools":["write"]},task:{"tools":["task"]},task:{"tools":"read"},task:{"tools":["nope"]}"#,
        expect![[r#"
            > step 1 calls=task:{"tools":["write"]},task:{"tools":["task"]},task:{"tools":"read"},task:{"tools":["nope"]}
              ask_approval c11 task
              ask_approval c12 task
              ask_approval c13 task
              ask_approval c14 task
        "#]],
    );
}

#[test]
fn a_task_whose_sub_agent_may_write_is_denied_under_readonly() {
    Harness::with("config tools=read,write,task mutating=write permissions=readonly")
        .prompted()
        .check(
            r#"step 1 calls=task:{"tools":["write"]}"#,
            expect![[r#"
                > step 1 calls=task:{"tools":["write"]}
                  record approval {"by":"policy_readonly","call_id":"c11","tool":"task","verdict":"deny"}
                  record synthetic_result {"call":{"arguments":"{\"tools\":[\"write\"]}","id":"c11","name":"task"},"content":"denied: this session is read-only (--permissions readonly), so `task` was not run","reason":"denied"}
                  record step_started {"context_hash":"34c55339","messages":3,"step":2}
                  call_model step=2
            "#]],
        );
}

/// One test a row, each from [`task_running`]: `name: script => transcript;`.
macro_rules! task_running_tests {
    ($($name:ident: $script:literal => $expect:expr;)*) => {
        $(
            #[test]
            fn $name() {
                task_running().check($script, $expect);
            }
        )*
    };
}

task_running_tests! {
    what_a_sub_agent_spent_counts_against_the_parents_budget:
        "tool c11 ok spent=800/100 the sub-agent's answer"
        => expect![[r#"
            > tool c11 ok spent=800/100 the sub-agent's answer
              record run_finished {"reason":{"kind":"max_tokens","limit":1000,"spent":1010},"steps":1,"usage":{"input_tokens":100,"output_tokens":10}}
        "#]];
    a_result_without_spent_tokens_leaves_the_budget_to_the_parents_steps:
        "tool c11 ok the sub-agent's answer"
        => expect![[r#"
            > tool c11 ok the sub-agent's answer
              record step_started {"context_hash":"86d10f9f","messages":3,"step":2}
              call_model step=2
        "#]];
    a_late_result_does_not_count_what_it_spent:
        "tool c11 ok spent=10/10 first
         tool c11 ok spent=900/100 again
         step 2 text=done finish=stop usage=100/10"
        => expect![[r#"
            > tool c11 ok spent=10/10 first
              record step_started {"context_hash":"28057fc0","messages":3,"step":2}
              call_model step=2
            > tool c11 ok spent=900/100 again
              record ignored {"reason":"late_tool_result"}
            > step 2 text=done finish=stop usage=100/10
              record run_finished {"reason":{"kind":"completed"},"steps":2,"usage":{"input_tokens":200,"output_tokens":20}}
        "#]];
}
