//! Golden snapshots of `tree`, `log`, `events`, `stats`, `check` and `diff` over the
//! recorded sessions in `fixtures/sessions/` (made by the real binary,
//! `scripts/make-fixture-sessions.sh`). A regeneration of the fixtures changes only
//! timestamps, hashes, timings, session ids and the workspace path, so each fixture
//! is first rewritten by `testkit::retime` (deterministic times, session id
//! `fixture`, cwd `/workspace`; hashes recomputed) and the views render that; `check`
//! reads the fixture itself, as recorded. One golden file per fixture, in
//! `inspect/tests/golden/` (`UPDATE_EXPECT=1` rewrites them).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use xcsh_log::{Body, Entry, EntryHash, Record};
use xcsh_machine::EntryId;

use crate::style::Style;
use crate::testkit::retime;
use crate::{check, diff, events, log, stats, tree};

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/sessions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn name(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

/// Every view of one fixture, as one text.
fn views(fixture: &Path, tmp: &Path) -> String {
    let s = Style::plain();
    let log = retime(fixture, &tmp.join(format!("{}.jsonl", name(fixture))));
    let mut out = String::new();
    let mut section = |title: &str, body: String| {
        out.push_str(&format!("==== {title}\n{body}"));
        if !body.ends_with('\n') {
            out.push('\n');
        }
    };
    section("tree", tree::render(&tree::build(&log, false), s));
    // As `xcsh tree --full` builds it: streamed from the file.
    let full = tree::build_full(&log.path).unwrap().data;
    section("tree --full", tree::render(&full, s));
    // As `xcsh log` draws it: streamed from the file, item by item.
    let mut conversation = String::new();
    log::conversation_with(&crate::Streamed::new(&log.path), None, &mut |it| {
        log::render_item(&it, s, log::Reasoning::Folded, &mut conversation);
        true
    })
    .unwrap();
    section("log", conversation);
    section("events", events::render(&events::timeline(&log), s));
    section("stats", stats::render(&stats::compute(&log)));
    let report = check::check_file(fixture).unwrap();
    let shown = format!("fixtures/sessions/{}.jsonl", name(fixture));
    section(
        "check",
        check::render(&report, s).replace(&fixture.display().to_string(), &shown),
    );
    // Every pair of branches: the first leaf against each other one.
    let leaves: Vec<EntryId> = tree_leaves(&log);
    for other in leaves.iter().skip(1) {
        let a = diff::Side::new(format!("@{}", leaves[0]), &log, leaves[0]);
        let b = diff::Side::new(format!("@{other}"), &log, *other);
        section(
            &format!("diff @{} @{other}", leaves[0]),
            diff::render(&diff::compare(&a, &b).unwrap(), s),
        );
        section(
            &format!("diff --context @{} @{other}", leaves[0]),
            diff::context::render(&diff::context::compare(&a, &b).unwrap(), s),
        );
    }
    out
}

/// Ends of branches (not labels), in file order.
fn tree_leaves(log: &xcsh_log::SessionLog) -> Vec<EntryId> {
    use crate::source::Source;
    log.shapes().unwrap().branch_leaves()
}

#[test]
fn every_fixture_matches_its_golden_views() {
    let fixtures = fixtures();
    if fixtures.is_empty() {
        eprintln!("no fixtures in fixtures/sessions/: nothing to compare");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for f in &fixtures {
        let text = views(f, tmp.path());
        expect_test::expect_file![format!("../tests/golden/{}.txt", name(f))].assert_eq(&text);
    }
}

#[test]
fn every_fixture_checks_clean() {
    for f in fixtures() {
        let r = check::check_file(&f).unwrap();
        assert!(
            r.findings.is_empty(),
            "{}",
            check::render(&r, Style::plain())
        );
    }
}

#[test]
fn two_runs_of_a_task_that_differ_in_one_tool_result() {
    // The same recorded fixture, with the content of one tool result changed (and
    // the hashes made valid again): the diff names that result first.
    let Some(f) = fixtures().into_iter().find(|p| name(p) == "parallel-tools") else {
        eprintln!("fixtures/sessions/parallel-tools.jsonl is missing");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let a = retime(&f, &tmp.path().join("a.jsonl"));
    let result = a
        .entries
        .iter()
        .rev()
        .find(|e| e.type_name() == "tool_result")
        .unwrap();
    let b = rewrite(&a.path, &tmp.path().join("b.jsonl"), |e| {
        if e.id == result.id
            && let Body::Record(Record::ToolResult(r)) = &mut e.body
        {
            r.outcome.content.push_str(" (but different)");
        }
    });
    let report = diff::compare(
        &diff::Side::new("A", &a, a.leaf()),
        &diff::Side::new("B", &b, b.leaf()),
    )
    .unwrap();
    let first = &report.changes[0];
    assert!(first.key.ends_with("result"), "{}", first.key);
    assert_eq!(first.a, Some(result.id));
    expect_test::expect_file!["../tests/golden/diff-one-tool-result.txt"]
        .assert_eq(&diff::render(&report, Style::plain()));
}

/// Re-encodes every line of `input` after `edit` (hashes recomputed).
fn rewrite(input: &Path, output: &Path, edit: impl Fn(&mut Entry)) -> xcsh_log::SessionLog {
    let mut hashes: HashMap<EntryId, EntryHash> = HashMap::new();
    let mut bytes = Vec::new();
    for line in std::fs::read_to_string(input).unwrap().lines() {
        let mut e = Entry::decode(line).unwrap();
        edit(&mut e);
        let ph = e.parent.and_then(|p| hashes.get(&p).copied());
        let (l, h) = Entry::encode(e.id, e.parent, ph.as_ref(), e.ts, &e.body);
        hashes.insert(e.id, h);
        bytes.extend_from_slice(&l);
    }
    std::fs::write(output, bytes).unwrap();
    xcsh_log::read_session(output).unwrap()
}
