//! Tests of `tree.rs`.

use super::*;
use crate::testkit;
use xcsh_log::read_session;

#[test]
fn a_branched_session_draws_both_branches_and_marks_the_leaf() {
    let (_dir, log) = testkit::branched_session();
    expect_test::expect_file![
        "../../tests/golden/a-branched-session-draws-both-branches-and-marks-the-leaf.txt"
    ]
    .assert_eq(&render(&build(&log, false), Style::plain()));
}

/// The branch toward the leaf goes on at the left margin even when it was
/// written first; the other hangs off the branch point.
#[test]
fn the_leaf_branch_goes_straight_on_and_the_others_hang_off() {
    let mut k = testkit::Kit::new("back");
    k.prompt("first");
    k.step(1, "one", &[]);
    let first = k.leaf();
    k.prompt("second");
    k.step(1, "two", &[]);
    let second = k.leaf();
    k.branch_at(first);
    k.prompt("instead");
    k.step(1, "three", &[]);
    k.branch_at(second);
    k.prompt("back to the second");
    k.step(1, "four", &[]);
    let (_dir, log) = k.finish();
    let text = render(&build(&log, false), Style::plain());
    expect_test::expect![[r##"
        #0 session fixture /workspace
        #1..4 user "first" · 1 step · 0 tool calls · 110 tok · completed ┬ 2 branches at #4
        ├─ #9 ↳ new branch (the leaf was #8)
        │  #10..13 user "instead" · 1 step · 0 tool calls · 110 tok · completed
        #5..8 user "second" · 1 step · 0 tool calls · 110 tok · completed
        #14 ↳ new branch (the leaf was #13)
        #15..18 user "back to the second" · 1 step · 0 tool calls · 110 tok · completed ◀ leaf
    "##]]
    .assert_eq(&text);
}

/// The deepest nesting of branch lists in a tree.
fn depth(lane: &[Node]) -> usize {
    lane.iter()
        .flat_map(|n| n.branches.iter().map(|b| 1 + depth(b)))
        .max()
        .unwrap_or(0)
}

/// A run per branch, each from one of the last few boundaries: hundreds of
/// branches, each nested in the one before it when every branch is indented.
/// Drawn with one branch going straight on at every branch point, the nesting
/// stays below log2 of the entries, so the text grows with the entries only.
#[test]
fn a_session_of_hundreds_of_nested_branches_draws_a_shallow_tree() {
    let (_dir, path, report) = testkit::synth(4_000, 5, testkit::A_RUN_PER_BRANCH);
    assert!(report.branches > 300, "{report:?}");
    let log = read_session(&path).unwrap();
    let bytes = std::fs::metadata(&path).unwrap().len() as usize;
    for full in [false, true] {
        let tree = build(&log, full);
        let text = render(&tree, Style::plain());
        assert!(
            depth(&tree.root) <= 12,
            "full {full}: depth {}",
            depth(&tree.root)
        );
        assert!(text.len() < bytes / 2, "full {full}: {} bytes", text.len());
    }
}

/// A fork keeps its source's header (so that its hashes stay valid); the tree
/// names it by its own id, the one in its file name, as `xcsh sessions` does.
#[test]
fn a_fork_is_shown_under_its_own_id() {
    let (dir, log) = testkit::branched_session();
    let fork = dir
        .path()
        .join("2026-01-01T00-00-00-000Z_f0e1d2c3b4a5.jsonl");
    crate::fork::fork(&log.path, EntryId(12), "origin", &fork, testkit::t0()).unwrap();
    let first_lines = |full: bool| {
        let tree = build_path(&fork, full).unwrap();
        let text = render(&tree, Style::plain());
        let lines: Vec<String> = text.lines().take(2).map(str::to_string).collect();
        (tree.session_id, lines)
    };
    let want = |session: &str| {
        (
            "f0e1d2c3b4a5".to_string(),
            vec![
                "forked from origin @ 12".to_string(),
                format!("#0 session {session}"),
            ],
        )
    };
    assert_eq!(first_lines(false), want("f0e1d2c3b4a5 /workspace"));
    assert_eq!(first_lines(true), want("f0e1d2c3b4a5 /workspace"));
    assert_eq!(
        crate::summary::summarize_path(&fork).unwrap().id,
        "f0e1d2c3b4a5"
    );
}

/// The turn's prompt is quoted with its emoji whole (the snapshot holds the
/// joiners themselves, not `\u{200d}`).
#[test]
fn a_turn_shows_the_emoji_of_its_prompt_whole() {
    let (_dir, log) = testkit::emoji_session();
    expect_test::expect![[r##"
        #0 session fixture /workspace
        #1..4 user "third 日本語 X🎉👩‍👩‍👧 é" · 1 step · 0 tool calls · 110 tok · completed ◀ leaf
    "##]]
    .assert_eq(&render(&build(&log, false), Style::plain()));
}

/// A turn is shown by what was typed, not by the files its `@` mentions attached.
#[test]
fn a_turn_shows_its_prompt_without_the_attached_files() {
    let mut k = testkit::Kit::new("mention");
    let mut prompt = "look at @README.md and go".to_string();
    xcsh_log::mention::attach(&mut prompt, "README.md", "     1\t# Title");
    k.prompt(&prompt);
    k.step(1, "ok", &[]);
    let (_dir, log) = k.finish();
    let tree = render(&build(&log, false), Style::plain());
    assert_eq!(
        tree.lines().nth(1).map(|l| l.split(" · ").next()),
        Some(Some("#1..4 user \"look at @README.md and go\""))
    );
}

/// `--full`, as `xcsh tree --full` builds it (streamed from the file): the
/// `user_message` entry's text keeps its emoji whole.
#[test]
fn full_shows_the_emoji_of_a_prompt_whole() {
    let (_dir, log) = testkit::emoji_session();
    let full = render(&build_full(&log.path).unwrap().data, Style::plain());
    assert_eq!(
        full.lines().find(|l| l.contains("user_message")),
        Some("#1 user_message \"third 日本語 X🎉👩\u{200d}👩\u{200d}👧 é\"")
    );
}

#[test]
fn full_shows_every_entry() {
    let (_dir, log) = testkit::steer_session();
    expect_test::expect![[r##"
        #0 session fixture /workspace
        #1 user_message "list the files and say hello"
        #2 step_started step 1 with 1 message(s)
        #3 steer "also check b"
        #4 step step 1 "looking" calls echo,echo completed
        #5 tool_dispatched step 1 call_1_1 echo {"a":1}
        #6 tool_dispatched step 1 call_1_2 echo {"b":2}
        #7 follow_up "then summarize"
        #8 tool_result call_1_1 echo ok 30ms "{\"a\":1}"
        #9 tool_result call_1_2 echo ok 30ms "{\"b\":2}"
        #10 delivered steer from 3: "also check b"
        #11 step_started step 2 with 5 message(s)
        #12 step step 2 "done with both" completed
        #13 delivered follow_up from 7: "then summarize"
        #14 step_started step 3 with 7 message(s)
        #15 step step 3 "summary: all good" completed
        #16 run_finished completed after 3 step(s), 730 tokens ◀ leaf
    "##]]
    .assert_eq(&render(&build(&log, true), Style::plain()));
}
