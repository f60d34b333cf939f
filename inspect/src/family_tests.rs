//! Snapshots of every family view (SPEC.md §29.6) over the test family of
//! `testkit::family` (a parent with two concurrent children, one failed, a
//! grandchild, a missing child file). Each view has a helper that takes the parent's
//! path, so the same snapshots can be taken of a family the binary recorded. The
//! Markdown export, a document of its own, is a golden file
//! (`inspect/tests/golden/family-export.md`, `UPDATE_EXPECT=1` rewrites it), and so
//! are the larger views (the deep and the full deep tree, the deep events), each
//! named after its test.

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
    expect_test::expect_file!["../tests/golden/tree-deep-draws-each-child-under-its-call.txt"]
        .assert_eq(&tree_view(&path, false, true));
}

#[test]
fn tree_full_deep_marks_the_result_entries() {
    let (_dir, path) = family();
    expect_test::expect_file!["../tests/golden/tree-full-deep-marks-the-result-entries.txt"]
        .assert_eq(&tree_view(&path, true, true));
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

/// `xcsh events PATH --deep`, as text (problems after the rows, as on stderr).
pub fn events_view(path: &Path) -> String {
    let (rows, problems) =
        crate::events::deep_timeline(path, &crate::events::Filter::default()).unwrap();
    let mut out = crate::events::deep_header(Style::plain());
    out.push('\n');
    for r in &rows {
        out.push_str(&crate::events::render_deep_row(r, Style::plain()));
        out.push('\n');
    }
    for p in problems {
        out.push_str(&format!("xcsh: {p}\n"));
    }
    scrub(&out, path.parent().unwrap())
}

#[test]
fn events_deep_interleaves_each_child_in_its_own_lane() {
    let (_dir, path) = family();
    expect_test::expect_file![
        "../tests/golden/events-deep-interleaves-each-child-in-its-own-lane.txt"
    ]
    .assert_eq(&events_view(&path));
}

#[test]
fn events_deep_json_names_the_session_of_each_row() {
    let (_dir, path) = family();
    let filter = crate::events::Filter {
        types: vec!["run_finished".into()],
        ..Default::default()
    };
    let (rows, _) = crate::events::deep_timeline(&path, &filter).unwrap();
    let got: Vec<String> = rows
        .iter()
        .map(|r| {
            let v = serde_json::to_value(r).unwrap();
            format!("{} {} {}", v["session"], v["kind"], v["t_ms"])
        })
        .collect();
    expect_test::expect![[r#"
        "childb01" "run_finished" 9
        "grand001" "run_finished" 13
        "childa01" "run_finished" 17
        "parent01" "run_finished" 26"#]]
    .assert_eq(&got.join("\n"));
}

/// `xcsh stats PATH`, as text.
pub fn stats_view(path: &Path) -> String {
    let s = crate::stats::compute_family_path(path).unwrap();
    scrub(
        &crate::stats::render_family(&s, None),
        path.parent().unwrap(),
    )
}

#[test]
fn stats_totals_usage_across_the_family_and_per_member() {
    let (_dir, path) = family();
    let whole = stats_view(&path);
    // The session's own tables come first, as for any session.
    let own = crate::stats::render(&crate::stats::compute_path(&path).unwrap());
    let family = whole.strip_prefix(own.as_str()).unwrap();
    expect_test::expect![[r#"

        family (4 session(s))
        ┌──────────────┬──────┬───────┬───────┬────────┬─────────┬─────────┬───────┬──────────────────────────────────────────────┐
        │ session      ┆ runs ┆ steps ┆ input ┆ output ┆ cache r ┆ cache w ┆ spend ┆ stop                                         │
        ╞══════════════╪══════╪═══════╪═══════╪════════╪═════════╪═════════╪═══════╪══════════════════════════════════════════════╡
        │ parent01     ┆    1 ┆     3 ┆   600 ┆     30 ┆     100 ┆       0 ┆   730 ┆ completed                                    │
        │   childa01   ┆    1 ┆     2 ┆   300 ┆     20 ┆      50 ┆       0 ┆   370 ┆ completed                                    │
        │     grand001 ┆    1 ┆     1 ┆   100 ┆     10 ┆       0 ┆       0 ┆   110 ┆ completed                                    │
        │   childb01   ┆    1 ┆     1 ┆     0 ┆      0 ┆       0 ┆       0 ┆     0 ┆ provider_error http: 503 service unavailable │
        │ total        ┆    4 ┆     7 ┆  1000 ┆     60 ┆     150 ┆       0 ┆  1210 ┆                                              │
        └──────────────┴──────┴───────┴───────┴────────┴─────────┴─────────┴───────┴──────────────────────────────────────────────┘
        ! child childc01 (2026-01-01T00-00-00-000Z_childc01.jsonl): missing (no file <dir>/2026-01-01T00-00-00-000Z_childc01.jsonl)
    "#]].assert_eq(family);
}

/// `xcsh sessions` of the files in `dir` (in file-name order), as text.
pub fn sessions_view(dir: &Path) -> String {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let list: Vec<_> = files
        .iter()
        .map(|p| (crate::summarize_path(p).unwrap(), ()))
        .collect();
    let ordered: Vec<_> = crate::family_order(list)
        .into_iter()
        .map(|(s, ())| s)
        .collect();
    let mut out = crate::sessions_table(&ordered);
    out.push('\n');
    for s in &ordered {
        out.push_str(&serde_json::to_string(&(&s.id, &s.parent)).unwrap());
        out.push('\n');
    }
    scrub(&out, dir)
}

#[test]
fn sessions_lists_children_under_their_parent() {
    let (dir, _path) = family();
    expect_test::expect![[r#"
        ┌──────────────┬──────────────────┬──────────────────┬─────────┬──────────┬────────┬────────────────┐
        │ id           ┆ started          ┆ last active      ┆ entries ┆ branches ┆ tokens ┆ last message   │
        ╞══════════════╪══════════════════╪══════════════════╪═════════╪══════════╪════════╪════════════════╡
        │ parent01     ┆ 2026-01-01 00:00 ┆ 2026-01-01 00:00 ┆ 15      ┆ 1        ┆ 730    ┆ split the work │
        │ ↳ childa01   ┆ 2026-01-01 00:00 ┆ 2026-01-01 00:00 ┆ 9       ┆ 1        ┆ 370    ┆ look at a      │
        │   ↳ grand001 ┆ 2026-01-01 00:00 ┆ 2026-01-01 00:00 ┆ 5       ┆ 1        ┆ 110    ┆ deeper         │
        │ ↳ childb01   ┆ 2026-01-01 00:00 ┆ 2026-01-01 00:00 ┆ 5       ┆ 1        ┆ 0      ┆ look at b      │
        └──────────────┴──────────────────┴──────────────────┴─────────┴──────────┴────────┴────────────────┘
        ["parent01",null]
        ["childa01","parent01"]
        ["grand001","childa01"]
        ["childb01","parent01"]
    "#]].assert_eq(&sessions_view(dir.path()));
}

/// `xcsh export PATH --format md`.
pub fn export_md_view(path: &Path) -> String {
    scrub(
        &crate::export::markdown_family(path, None).unwrap(),
        path.parent().unwrap(),
    )
}

#[test]
fn export_md_includes_each_child_transcript_after_the_parent() {
    let (_dir, path) = family();
    expect_test::expect_file!["../tests/golden/family-export.md"].assert_eq(&export_md_view(&path));
}

/// `xcsh export PATH --format json`'s `family` member: per child, its link, state
/// and the session id and family of its own export.
pub fn export_json_family(path: &Path) -> String {
    let mut buf = Vec::new();
    crate::export::write_json(path, &mut buf, Path::new("out")).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    fn outline(family: &serde_json::Value, depth: usize, out: &mut String) {
        for c in family.as_array().into_iter().flatten() {
            out.push_str(&format!(
                "{}{} {} {} entries={}\n",
                "  ".repeat(depth),
                c["call_id"].as_str().unwrap_or(""),
                c["session_id"].as_str().unwrap_or(""),
                c["state"].as_str().unwrap_or(""),
                c["export"]["entries"].as_array().map_or(0, Vec::len)
            ));
            outline(&c["export"]["family"], depth + 1, out);
        }
    }
    let mut out = String::new();
    outline(&v["family"], 0, &mut out);
    out
}

#[test]
fn export_json_nests_each_child_export_under_family() {
    let (_dir, path) = family();
    expect_test::expect![[r#"
        call_1_1 childa01 loaded entries=9
          call_1_1 grand001 loaded entries=5
        call_1_2 childb01 loaded entries=5
        call_2_1 childc01 missing entries=0
    "#]]
    .assert_eq(&export_json_family(&path));
}

#[test]
fn export_html_has_a_sub_agents_section_with_their_transcripts() {
    let (_dir, path) = family();
    let log = xcsh_log::read_session(&path).unwrap();
    let page = crate::export::html(&log).unwrap();
    let section = page
        .split("<section class=\"family\">")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .unwrap();
    for want in [
        "Sub-agent childa01 of parent01",
        "## xcsh session childa01",
        "Sub-agent grand001 of childa01",
        "### xcsh session grand001",
        "Sub-agent childb01 of parent01",
        "provider_error",
        "child childc01 (2026-01-01T00-00-00-000Z_childc01.jsonl): missing",
    ] {
        assert!(section.contains(want), "{want}: {section}");
    }
}

/// A child no result links to (its parent stopped before recording the result)
/// still goes under the parent its header names.
#[test]
fn sessions_puts_an_unlinked_child_under_the_parent_its_header_names() {
    let (dir, _path) = family();
    let file = |id| dir.path().join(xcsh_journal::synth::family::file_of(id));
    std::fs::copy(file("childb01"), file("orphan01")).unwrap();
    let ids: Vec<String> = sessions_view(dir.path())
        .lines()
        .filter(|l| l.starts_with('['))
        .map(str::to_string)
        .collect();
    expect_test::expect![[r#"
        ["parent01",null]
        ["childa01","parent01"]
        ["grand001","childa01"]
        ["childb01","parent01"]
        ["orphan01","parent01"]"#]]
    .assert_eq(&ids.join("\n"));
}

/// The family the real binary recorded (`fixtures/sessions/delegation/`, made by
/// `scripts/make-fixture-sessions.sh delegation`): `tree --deep` and the family part
/// of `stats` as a golden, each session id replaced by one of the same length naming
/// its place (a regeneration changes only ids, times and the temporary workspace);
/// `events --deep` has a lane and `export` a section for every member.
#[test]
fn the_recorded_delegation_family_renders_in_tree_stats_events_and_export() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/sessions/delegation");
    let parent = dir.join("parent.jsonl");
    if !parent.exists() {
        eprintln!("fixtures/sessions/delegation/parent.jsonl is missing");
        return;
    }
    let family = xcsh_log::family::load_family(&parent, xcsh_log::family::Depth::All).unwrap();
    let mut ids = vec![family.session_id.clone()];
    ids.extend(
        family
            .children
            .iter()
            .map(|c| c.link.child.session_id.clone()),
    );
    let mut text = tree_view(&parent, false, true);
    let own = crate::stats::render(&crate::stats::compute_path(&parent).unwrap());
    let stats = stats_view(&parent);
    text.push_str(stats.strip_prefix(own.as_str()).unwrap());
    for (k, id) in ids.iter().enumerate() {
        let label = if k == 0 {
            "parent".to_string()
        } else {
            format!("child{k}")
        };
        text = text.replace(id.as_str(), &format!("{label:0<width$}", width = id.len()));
    }
    // events --deep and export render every member (their times and ids change
    // with a regeneration, so each member's part is checked, not a snapshot).
    let events = events_view(&parent);
    let export = export_md_view(&parent);
    for id in &ids {
        assert!(
            events.lines().any(|l| l.starts_with(id.as_str())),
            "no lane for {id} in events --deep:\n{events}"
        );
        assert!(
            export.contains(&format!("xcsh session {id}")),
            "no section for {id} in the export:\n{export}"
        );
    }
    let cwd = xcsh_log::read_header(&parent).unwrap().cwd;
    let text = text.replace(&cwd, "<workspace>");
    expect_test::expect_file!["../tests/golden/delegation.txt"].assert_eq(&text);
}
