//! Diffs of real logs: the same task twice with one tool result changed; two
//! branches of one session; identical history recognized by hash.

use xcsh_machine::{EntryId, ToolStatus};

use super::*;
use crate::testkit::{self, Kit};

/// The same task; the second call's result is `second`.
fn run_task(second: &str) -> (tempfile::TempDir, SessionLog) {
    let mut k = Kit::new("task");
    k.prompt("read both files");
    k.step(
        1,
        "reading",
        &[("echo", r#"{"path":"a"}"#), ("echo", r#"{"path":"b"}"#)],
    );
    k.settle("call_1_1", "echo", ToolStatus::Ok, "contents of a");
    k.settle("call_1_2", "echo", ToolStatus::Ok, second);
    k.step(2, "both read", &[]);
    k.finish()
}

#[test]
fn one_changed_tool_result_is_the_first_divergence() {
    let (_d1, a) = run_task("contents of b");
    let (_d2, b) = run_task("contents of B, changed");
    let report = compare(&Side::new("A", &a, a.leaf()), &Side::new("B", &b, b.leaf())).unwrap();
    let first = &report.changes[0];
    assert_eq!(first.key, "run 1 step 1 call 2 (echo) result");
    assert_eq!(first.a, Some(EntryId(7)));
    assert_eq!(report.changes.len(), 1, "the scripted steps are the same");
    expect_test::expect![[r#"
        A = A
        B = B
        common history: 7 entries up to #6, identical by hash
        first divergence: run 1 step 1 call 2 (echo) result (A #7 / B #7): content differs
            content: contents of [-b-]{+B, changed+}

        1 difference(s) in 3 aligned unit(s) (2 equal):
        ~ run 1 step 1 call 2 (echo) result (A #7 / B #7)
            content: contents of [-b-]{+B, changed+}
    "#]]
    .assert_eq(&render(&report, Style::plain()));
}

/// The two leaves of [`testkit::branched_session`] as sides: `S@12` and `S@17`.
pub(super) fn the_two_branches(log: &SessionLog) -> [Side<'_>; 2] {
    [
        Side::new("S@12", log, EntryId(12)),
        Side::new("S@17", log, EntryId(17)),
    ]
}

#[test]
fn two_branches_of_one_session_share_history_by_hash() {
    let (_dir, log) = testkit::branched_session();
    let [a, b] = the_two_branches(&log);
    let report = compare(&a, &b).unwrap();
    assert_eq!(report.common_ancestor, Some(EntryId(8)));
    expect_test::expect![[r#"
        A = S@12
        B = S@17
        common history: 9 entries up to #8, identical by hash
        first divergence: run 2 prompt (A #9 / B #14): text differs
            text: [-second-]{+instead, another+} task

        3 difference(s) in 3 aligned unit(s) (0 equal):
        ~ run 2 prompt (A #9 / B #14)
            text: [-second-]{+instead, another+} task
        ~ run 2 step 1 model (A #11 / B #16)
            text: [-second-]{+alternative+} done
            reasoning: {+thinking about
              the alternative+}
            usage: in 100 out 10 cache r 0 w 0 -> in 150 out 10 cache r 0 w 0
        ~ run 2 finished (A #12 / B #17)
            tokens: 110 -> 160
    "#]]
    .assert_eq(&render(&report, Style::plain()));
}

#[test]
fn a_path_equals_itself_and_arguments_compare_as_json() {
    let (_dir, log) = testkit::steer_session();
    let side = || Side::new("S", &log, log.leaf());
    let report = compare(&side(), &side()).unwrap();
    assert!(report.changes.is_empty());
    assert_eq!(report.common_entries, log.entries.len());
    assert!(
        Field::Json(r#"{"a":1,"b":2}"#.into()).same(&Field::Json(r#"{ "b": 2, "a": 1 }"#.into()))
    );
    assert!(!Field::Json(r#"{"a":1}"#.into()).same(&Field::Json(r#"{"a":2}"#.into())));
    assert_eq!(
        word_diff("the cat sat", "the dog sat", Style::plain()),
        "the [-cat-]{+dog+} sat"
    );
}

/// The units made from an entry on are those the whole path makes for the entries
/// from there, keys included, wherever the walk starts: in the first run, at a run's
/// first entry, inside a later run, at the end.
#[test]
fn units_from_an_entry_are_the_whole_paths_units_from_there() {
    let mut runs = 0;
    for (_dir, log) in [
        testkit::steer_session(),
        testkit::compaction_session(),
        testkit::branched_session(),
    ] {
        let path = branch_path(&log, log.leaf()).unwrap();
        let whole = units(&path, 0);
        runs = runs.max(path.iter().filter(|e| starts_run(e)).count());
        let shown = |u: &[Unit<'_>]| -> Vec<String> {
            u.iter()
                .map(|u| format!("{} #{} {:?}", u.key, u.entry.id, u.fields))
                .collect()
        };
        for from in 0..=path.len() {
            let expected: Vec<Unit<'_>> = whole
                .iter()
                .filter(|u| path[from..].iter().any(|e| e.id == u.entry.id))
                .cloned()
                .collect();
            assert_eq!(shown(&units(&path, from)), shown(&expected), "from {from}");
        }
    }
    assert!(runs >= 2, "a path of two runs or more is among them");
}
