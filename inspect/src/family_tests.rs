//! Snapshots of every family view (SPEC.md §29.6) over the test family of
//! `testkit::family` (a parent with two concurrent children, one failed, a
//! grandchild, a missing child file). Each view has a helper that takes the parent's
//! path, so the same snapshots can be taken of a family the binary recorded.

use std::path::Path;

use crate::style::Style;
use crate::testkit::family::family;
use crate::tree;

/// `text` with the family's folder written `<dir>`.
fn scrub(text: &str, dir: &Path) -> String {
    text.replace(&dir.display().to_string(), "<dir>")
}

/// `xcsh tree PATH [--deep]`, as text.
pub fn tree_view(path: &Path, full: bool, deep: bool) -> String {
    let t = tree::build_family_path(path, full, deep).unwrap();
    scrub(&tree::render(&t, Style::plain()), path.parent().unwrap())
}

#[test]
fn tree_marks_each_task_call_with_its_child() {
    let (_dir, path) = family();
    expect_test::expect![[r##"
        #0 session parent01 /workspace
        #1..14 user "split the work" · 3 steps · 3 tool calls · 730 tok · completed ◀ leaf
          ⤷ task call_1_1 #6 → childa01 · 2 steps · 370 tok · completed
          ⤷ task call_1_2 #7 → childb01 · 1 step · 0 tok · provider_error http: 503 service unavailable
          ⤷ task call_2_1 #11 → childc01 · missing
            ! child childc01 (2026-01-01T00-00-00-000Z_childc01.jsonl): missing (no file <dir>/2026-01-01T00-00-00-000Z_childc01.jsonl)
    "##]].assert_eq(&tree_view(&path, false, false));
}

#[test]
fn tree_deep_draws_each_child_under_its_call() {
    let (_dir, path) = family();
    expect_test::expect![[r##"
        #0 session parent01 /workspace
        #1..14 user "split the work" · 3 steps · 3 tool calls · 730 tok · completed ◀ leaf
          ⤷ task call_1_1 #6 → childa01 · 2 steps · 370 tok · completed
            #0 session childa01 /workspace
            #1..8 user "look at a" · 2 steps · 1 tool call · 370 tok · completed ◀ leaf
              ⤷ task call_1_1 #5 → grand001 · 1 step · 110 tok · completed
                #0 session grand001 /workspace
                #1..4 user "deeper" · 1 step · 0 tool calls · 110 tok · completed ◀ leaf
          ⤷ task call_1_2 #7 → childb01 · 1 step · 0 tok · provider_error http: 503 service unavailable
            #0 session childb01 /workspace
            #1..4 user "look at b" · 1 step · 0 tool calls · 0 tok · provider_error http: 503 service unavailable ◀ leaf
          ⤷ task call_2_1 #11 → childc01 · missing
            ! child childc01 (2026-01-01T00-00-00-000Z_childc01.jsonl): missing (no file <dir>/2026-01-01T00-00-00-000Z_childc01.jsonl)
    "##]].assert_eq(&tree_view(&path, false, true));
}

#[test]
fn tree_full_deep_marks_the_result_entries() {
    let (_dir, path) = family();
    expect_test::expect![[r##"
        #0 session parent01 /workspace
        #1 user_message "split the work"
        #2 step_started step 1 with 1 message(s)
        #3 step step 1 "delegating" calls task,task completed
        #4 tool_dispatched step 1 call_1_1 task {"prompt":"look at a"}
        #5 tool_dispatched step 1 call_1_2 task {"prompt":"look at b"}
        #6 tool_result call_1_1 task ok 7ms "a is fine"
          ⤷ task call_1_1 #6 → childa01 · 2 steps · 370 tok · completed
            #0 session childa01 /workspace
            #1 user_message "look at a"
            #2 step_started step 1 with 1 message(s)
            #3 step step 1 "asking deeper" calls task completed
            #4 tool_dispatched step 1 call_1_1 task {"prompt":"deeper"}
            #5 tool_result call_1_1 task ok 7ms "found it deep down"
              ⤷ task call_1_1 #5 → grand001 · 1 step · 110 tok · completed
                #0 session grand001 /workspace
                #1 user_message "deeper"
                #2 step_started step 1 with 1 message(s)
                #3 step step 1 "found it deep down" completed
                #4 run_finished completed after 1 step(s), 110 tokens ◀ leaf
            #6 step_started step 2 with 3 message(s)
            #7 step step 2 "a is fine" completed
            #8 run_finished completed after 2 step(s), 370 tokens ◀ leaf
        #7 tool_result call_1_2 task error 7ms "sub-agent childb01 failed: 503 service …"
          ⤷ task call_1_2 #7 → childb01 · 1 step · 0 tok · provider_error http: 503 service unavailable
            #0 session childb01 /workspace
            #1 user_message "look at b"
            #2 step_started step 1 with 1 message(s)
            #3 step step 1 failed http: 503 service unavailable
            #4 run_finished provider_error http: 503 service unavailable after 1 step(s), 0 tokens ◀ leaf
        #8 step_started step 2 with 4 message(s)
        #9 step step 2 "one more look" calls task completed
        #10 tool_dispatched step 2 call_2_1 task {"prompt":"look at c"}
        #11 tool_result call_2_1 task ok 7ms "c is fine"
          ⤷ task call_2_1 #11 → childc01 · missing
            ! child childc01 (2026-01-01T00-00-00-000Z_childc01.jsonl): missing (no file <dir>/2026-01-01T00-00-00-000Z_childc01.jsonl)
        #12 step_started step 3 with 6 message(s)
        #13 step step 3 "all done" completed
        #14 run_finished completed after 3 step(s), 730 tokens ◀ leaf
    "##]].assert_eq(&tree_view(&path, true, true));
}

#[test]
fn tree_json_carries_the_marks_and_the_child_trees() {
    let (_dir, path) = family();
    let t = tree::build_family_path(&path, false, true).unwrap();
    let v = serde_json::to_value(&t).unwrap();
    let turn = &v["root"][1];
    let marks: Vec<_> = turn["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["session_id"].as_str().unwrap().to_string(),
                m["state"].as_str().unwrap().to_string(),
                m["tree"]["session_id"].as_str().map(str::to_string),
            )
        })
        .collect();
    assert_eq!(
        marks,
        [
            ("childa01".into(), "loaded".into(), Some("childa01".into())),
            ("childb01".into(), "loaded".into(), Some("childb01".into())),
            ("childc01".into(), "missing".into(), None),
        ]
    );
}
