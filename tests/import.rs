//! `xcsh import` (SPEC.md §33) on the samples of fixtures/import/, made by the real
//! agents: each imports, `check`s clean and holds as many user messages, tool calls,
//! tool results and branches as fixtures/import/counts.json says the source does;
//! invented records are kept as foreign and said so; malformed lines are errors
//! naming file:line (or, with --lenient, counted); importing twice gives the same
//! bytes; `tree`, `log`, `stats` (its totals equal the source's counts), `events`,
//! `export` and `diff` (two agents on one task; an import against an xcsh session)
//! work on the result.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde::Deserialize;
use xcsh_log::{Body, Record};
use xcsh_machine::Decision;

mod support;

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/import")
}

/// The counts of one sample file (fixtures/import/counts.json).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
struct Counts {
    user_messages: u64,
    tool_calls: u64,
    tool_results: u64,
    branches: u64,
}

#[derive(Deserialize)]
struct Sample {
    #[serde(flatten)]
    counts: Counts,
    unknown_records: u64,
    records: u64,
}

fn expected(name: &str) -> Sample {
    let text = std::fs::read_to_string(samples().join("counts.json")).unwrap();
    let mut all: BTreeMap<String, Sample> = serde_json::from_str(&text).unwrap();
    all.remove(name).unwrap()
}

fn xcsh(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xcsh"))
        .args(args)
        .env("HOME", home)
        .env("XCSH_HOME", home.join(".xcsh"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `xcsh ARGS` with `home`, which must succeed.
fn ok(home: &Path, args: &[&str]) -> Output {
    let o = xcsh(home, args);
    assert!(o.status.success(), "{}", text(&o));
    o
}

/// `xcsh import SOURCE -o DIR/out.jsonl EXTRA…`: the output path and the command's output.
fn import_file(dir: &Path, source: &Path, extra: &[&str]) -> (PathBuf, Output) {
    let out = dir.join("out.jsonl");
    let mut args = vec![
        "import",
        source.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = xcsh(dir, &args);
    (out, o)
}

/// Imports the sample `name` into a new temporary folder: the folder, the log and
/// the command's output.
fn import(name: &str, extra: &[&str]) -> (tempfile::TempDir, PathBuf, Output) {
    let dir = tempfile::tempdir().unwrap();
    let (out, o) = import_file(dir.path(), &samples().join(name), extra);
    (dir, out, o)
}

/// [`import`] without options, which must succeed.
fn imported(name: &str) -> (tempfile::TempDir, PathBuf, Output) {
    let (dir, out, o) = import(name, &[]);
    assert!(o.status.success(), "{}", text(&o));
    (dir, out, o)
}

/// Whether the import summary `said` counts one record of the kind `kind`.
fn counts_one(said: &str, kind: &str) -> bool {
    said.lines()
        .any(|l| l.starts_with(kind) && l.ends_with(" 1"))
}

/// What the imported log holds: the counts of counts.json, read from its entries.
fn counted(log: &Path) -> Counts {
    let log = xcsh_log::read_session(log).unwrap();
    let mut c = Counts {
        user_messages: 0,
        tool_calls: 0,
        tool_results: 0,
        branches: 0,
    };
    let mut parents = HashSet::new();
    for e in &log.entries {
        match &e.body {
            Body::Record(Record::UserMessage { .. }) => c.user_messages += 1,
            Body::Record(Record::ToolResult(_)) => c.tool_results += 1,
            Body::Decision(Decision::ToolDispatched { .. }) => c.tool_calls += 1,
            _ => {}
        }
        if !matches!(e.body, Body::Record(Record::Label { .. })) {
            parents.extend(e.parent);
        }
    }
    let leaves = log
        .entries
        .iter()
        .filter(|e| {
            !parents.contains(&e.id) && !matches!(e.body, Body::Record(Record::Label { .. }))
        })
        .count() as u64;
    c.branches = leaves.saturating_sub(1);
    c
}

/// Imports `name`, checks the result clean and compares its counts with
/// counts.json (`extra_users`: user messages xcsh has that the source's count
/// leaves out, a sub-agent's task prompt).
fn imports_clean_with_the_source_counts(name: &str, extra_users: u64) {
    let (dir, out, o) = imported(name);
    ok(dir.path(), &["check", out.to_str().unwrap()]);
    let sample = expected(name);
    let mut want = sample.counts;
    want.user_messages += extra_users;
    assert_eq!(counted(&out), want);
    // Every source record is mapped or kept: the summary's totals add up to them.
    let said = text(&o);
    let total: u64 = said
        .lines()
        .find(|l| l.starts_with("total "))
        .unwrap()
        .split_whitespace()
        .skip(1)
        .map(|n| n.parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, sample.records, "{said}");
}

#[test]
fn codex_resumed_rollout_imports_clean_with_its_counts() {
    imports_clean_with_the_source_counts("codex/resume.jsonl", 0);
}

#[test]
fn codex_fork_imports_clean_with_its_counts() {
    imports_clean_with_the_source_counts("codex/fork.jsonl", 0);
}

#[test]
fn codex_fork_names_its_parent_rollout_in_the_header() {
    let (_dir, out, _) = imported("codex/fork.jsonl");
    let log = xcsh_log::read_session(&out).unwrap();
    let imported = log.header().imported.clone().unwrap();
    assert_eq!(
        imported.forked_from,
        Some(xcsh_log::foreign::ForeignFork {
            session_id: "01a23592-c154-7913-96a5-6942212a9804".into(),
            records: Some(45),
        })
    );
}

/// The invented record of `name` is a foreign entry, and the summary says so.
fn keeps_the_invented_record_as_foreign(name: &str, base: &str) {
    let (_dir, out, o) = imported(name);
    let said = text(&o);
    assert!(counts_one(&said, "xcsh_invented_record"), "{said}");
    assert!(said.contains("kept verbatim as foreign entries"), "{said}");
    let log = xcsh_log::read_session(&out).unwrap();
    let invented: Vec<_> = log
        .entries
        .iter()
        .filter_map(|e| match &e.body {
            Body::Record(Record::Foreign(f))
                if f.source_type.as_deref() == Some("xcsh_invented_record") =>
            {
                Some(f.raw.get().contains("hand-made"))
            }
            _ => None,
        })
        .collect();
    assert_eq!(invented, vec![true]);
    assert_eq!(expected(name).unknown_records, 1);
    assert_eq!(counted(&out), expected(base).counts);
}

#[test]
fn codex_unknown_record_is_kept_as_foreign_and_reported() {
    keeps_the_invented_record_as_foreign("codex/resume-unknown-record.jsonl", "codex/resume.jsonl");
}

/// A copy of the sample `name` in `dir`, with each line put through `edit` (with its
/// 0-based number).
fn edited_sample(dir: &Path, name: &str, edit: impl Fn(usize, &str) -> String) -> PathBuf {
    let text = std::fs::read_to_string(samples().join(name)).unwrap();
    let lines: Vec<String> = text.lines().enumerate().map(|(i, l)| edit(i, l)).collect();
    let path = dir.join("edited.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// A copy of the sample `name` with line `at` (1-based) replaced by broken JSON.
fn with_broken_line(dir: &Path, name: &str, at: usize) -> PathBuf {
    edited_sample(dir, name, |i, l| {
        if i == at - 1 {
            "{\"type\": \"message\", oops".to_owned()
        } else {
            l.to_owned()
        }
    })
}

#[test]
fn a_malformed_line_is_an_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let broken = with_broken_line(dir.path(), "codex/resume.jsonl", 5);
    let (out, o) = import_file(dir.path(), &broken, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(!out.exists(), "a failed import leaves no file");
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains(&format!("{}:5: malformed codex record", broken.display())),
        "{said}"
    );
}

#[test]
fn a_malformed_line_under_lenient_is_kept_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let broken = with_broken_line(dir.path(), "codex/resume.jsonl", 5);
    let (out, o) = import_file(dir.path(), &broken, &["--lenient"]);
    assert!(o.status.success(), "{}", text(&o));
    let said = text(&o);
    assert!(counts_one(&said, "(malformed)"), "{said}");
    let log = xcsh_log::read_session(&out).unwrap();
    let kept: Vec<(u64, Option<String>)> = log
        .entries
        .iter()
        .filter_map(|e| match &e.body {
            Body::Record(Record::Foreign(f)) if f.line == 5 => {
                Some((f.line, f.source_type.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(kept, vec![(5, None)]);
}

#[test]
fn importing_twice_gives_the_same_bytes() {
    let (_a, first, _) = imported("codex/resume.jsonl");
    let (_b, second, _) = imported("codex/resume.jsonl");
    assert_eq!(
        std::fs::read(first).unwrap(),
        std::fs::read(second).unwrap()
    );
}

#[test]
fn an_existing_output_is_not_overwritten() {
    let (dir, _, _) = imported("codex/fork.jsonl");
    let (_, again) = import_file(dir.path(), &samples().join("codex/fork.jsonl"), &[]);
    assert_eq!(again.status.code(), Some(1));
    assert!(text(&again).contains("exists already"), "{}", text(&again));
}

/// `xcsh tree` of the import of `name`, the temporary paths taken out.
fn tree_of(name: &str) -> String {
    let (dir, out, _) = imported(name);
    let t = ok(dir.path(), &["tree", out.to_str().unwrap()]);
    String::from_utf8_lossy(&t.stdout).into_owned()
}

#[test]
fn tree_of_an_imported_codex_rollout() {
    expect_test::expect![[r#"
        #0..7 session 01a23592-c154-7913-96a5-6942212a9804 /tmp/xcsh-import-sample/work
        #8..49 user "Read notes.txt and fix what it says in hello.py." · 5 steps · 5 tool calls · 53016 tok · completed
        #50..69 user "Run it to check." · 2 steps · 1 tool call · 22155 tok · completed
        #70..77 compact /compact · compacted #71 0→0 tok · completed
        #78..85 user "What did we change, in one line?" · 1 step · 0 tool calls · 10376 tok · completed ◀ leaf
    "#]]
    .assert_eq(&tree_of("codex/resume.jsonl"));
}

#[test]
fn log_and_stats_work_on_an_imported_rollout() {
    let (dir, out, _) = imported("codex/resume.jsonl");
    let log = ok(dir.path(), &["log", out.to_str().unwrap()]);
    assert!(
        text(&log).contains("We fixed the typo in hello.py."),
        "{}",
        text(&log)
    );
    let stats = ok(dir.path(), &["stats", out.to_str().unwrap()]);
    assert!(text(&stats).contains("exec_command"), "{}", text(&stats));
}

#[test]
fn pi_session_with_a_branch_and_a_compaction_imports_clean_with_its_counts() {
    imports_clean_with_the_source_counts("pi/branch.jsonl", 0);
}

#[test]
fn pi_forked_session_imports_clean_with_its_counts() {
    imports_clean_with_the_source_counts("pi/fork.jsonl", 0);
}

#[test]
fn pi_version_2_session_imports_clean_with_its_counts() {
    imports_clean_with_the_source_counts("pi/version2.jsonl", 0);
}

#[test]
fn pi_version_1_session_imports_clean_with_its_counts() {
    imports_clean_with_the_source_counts("pi/version1.jsonl", 0);
}

#[test]
fn pi_unknown_record_is_kept_as_foreign_and_reported() {
    keeps_the_invented_record_as_foreign("pi/branch-unknown-record.jsonl", "pi/branch.jsonl");
}

#[test]
fn tree_of_an_imported_pi_session_keeps_its_branch() {
    expect_test::expect![[r##"
        #0..3 session 01a23592-3561-770e-99fb-d6f69f550b26 /tmp/xcsh-import-sample/work
        #4..25 user "Read notes.txt and fix what it says in hello.py." · 5 steps · 5 tool calls · 8156 tok · completed ┬ 2 branches at #25
        ├─ #26..33 user "Run it to check." · 2 steps · 1 tool call · 3780 tok · completed
        #34 ↳ new branch (the leaf was #33)
        #35..42 user "Instead of running it, add a comment at the top o…" · 2 steps · 1 tool call · 3880 tok · completed
        #43..45 compact /compact · compacted #44 1979→0 tok · completed
        #46..49 user "What did we change, in one line?" · 1 step · 0 tool calls · 2104 tok · completed ◀ leaf
    "##]].assert_eq(&tree_of("pi/branch.jsonl"));
}

#[test]
fn claude_session_with_a_branch_imports_clean_with_its_counts() {
    imports_clean_with_the_source_counts("claude/branch.jsonl", 0);
}

#[test]
fn claude_forked_session_imports_clean_with_its_counts() {
    imports_clean_with_the_source_counts("claude/fork.jsonl", 0);
}

#[test]
fn claude_session_with_a_sub_agent_and_a_compaction_imports_clean_with_its_counts() {
    imports_clean_with_the_source_counts("claude/subagent.jsonl", 0);
}

/// The sub-agent's task prompt is its user message in xcsh (as in xcsh's own
/// delegation); counts.json leaves it out, as not typed by the user.
#[test]
fn claude_sub_agent_file_imports_on_its_own_with_its_counts() {
    imports_clean_with_the_source_counts(
        "claude/subagent/subagents/agent-ad4ec5c8f36844ccc.jsonl",
        1,
    );
}

#[test]
fn claude_unknown_record_is_kept_as_foreign_and_reported() {
    keeps_the_invented_record_as_foreign(
        "claude/branch-unknown-record.jsonl",
        "claude/branch.jsonl",
    );
}

#[test]
fn claude_parallel_calls_answered_off_two_records_stay_on_one_branch() {
    let (_dir, out, _) = imported("claude/branch.jsonl");
    let log = xcsh_log::read_session(&out).unwrap();
    // The two reads of one response: dispatched, then both results, in a line.
    let order: Vec<String> = log
        .entries
        .iter()
        .filter_map(|e| match &e.body {
            Body::Decision(Decision::ToolDispatched { call, .. })
                if call.id.0.starts_with("toolu_mock_2_") =>
            {
                Some(format!("{} dispatched {}", e.id, call.id.0))
            }
            Body::Record(Record::ToolResult(t)) if t.call_id.0.starts_with("toolu_mock_2_") => {
                Some(format!(
                    "{} result {} under {}",
                    e.id,
                    t.call_id.0,
                    e.parent.unwrap()
                ))
            }
            _ => None,
        })
        .collect();
    expect_test::expect![[r#"
        [
            "30 dispatched toolu_mock_2_0",
            "31 dispatched toolu_mock_2_1",
            "32 result toolu_mock_2_0 under 31",
            "33 result toolu_mock_2_1 under 32",
        ]
    "#]]
    .assert_debug_eq(&order);
}

#[test]
fn tree_of_an_imported_claude_session_keeps_its_branch() {
    expect_test::expect![[r##"
        #0..2 session 01a2357e-0000-7000-8000-00000000c1a0 /tmp/xcsh-import-sample/work
        #3..50 user "Read notes.txt and fix what it says in hello.py." · 5 steps · 5 tool calls · 62739 tok · completed ┬ 2 branches at #50
        ├─ #51..54 entries foreign claude record "last-prompt" (line 45), kept verbatim
        │  #55..64 user "Run it to check." · 2 steps · 1 tool call · 25726 tok · completed
        #65..70 ↳ new branch (the leaf was #64)
        #71..82 user "Instead of running it, add a comment at the top o…" · 2 steps · 1 tool call · 25839 tok · completed ◀ leaf
    "##]].assert_eq(&tree_of("claude/branch.jsonl"));
}

#[test]
fn replay_on_an_imported_session_says_what_it_checks_and_passes() {
    let (dir, out, _) = imported("pi/branch.jsonl");
    let r = ok(dir.path(), &["replay", out.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&r.stdout)
        .replace(out.to_str().unwrap(), "OUT")
        .replace(samples().to_str().unwrap(), "SAMPLES");
    expect_test::expect![[r#"
        OUT: imported from pi (SAMPLES/pi/branch.jsonl); xcsh did not make its decisions, so replay cannot re-make them.
        checked: the hash chain of 50 entries
        checked: the request context of each of 10 step(s) rebuilds from the entries before it (all as recorded)
        checked: the model context rebuilds at each of 2 leaf entries
        not checked: the other agent's decisions (its steps, tool calls, compactions)
    "#]].assert_eq(&said);
}

/// The files under `dir`, relative, sorted as text.
fn files_under(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = support::env::files_under(dir)
        .iter()
        .map(|p| p.strip_prefix(dir).unwrap().display().to_string())
        .collect();
    names.sort();
    names
}

/// `xcsh import --all` of the samples of `agent` into a new temporary folder's `out/`:
/// the folder, the source directory, `out` and the command's output (checked to
/// have succeeded).
fn import_all(agent: &str) -> (tempfile::TempDir, PathBuf, PathBuf, Output) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let source = samples().join(agent);
    let o = ok(
        dir.path(),
        &[
            "import",
            "--all",
            source.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
    );
    (dir, source, out, o)
}

#[test]
fn import_all_imports_every_session_file_of_a_directory_sub_agents_included() {
    let (_dir, source, out, o) = import_all("claude");
    assert!(
        text(&o).contains(&format!(
            "imported 5 of 5 file(s) under {}",
            source.display()
        )),
        "{}",
        text(&o)
    );
    assert_eq!(
        files_under(&out),
        vec![
            "branch-unknown-record.xcsh.jsonl",
            "branch.xcsh.jsonl",
            "fork.xcsh.jsonl",
            "subagent.xcsh.jsonl",
            "subagent/subagents/agent-ad4ec5c8f36844ccc.xcsh.jsonl",
        ]
    );
}

#[test]
fn from_names_the_format_and_a_wrong_one_is_a_clear_error() {
    let (_dir, _out, o) = import("codex/fork.jsonl", &["--from", "pi"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("holds no pi session header"),
        "{}",
        text(&o)
    );
    let (_dir, out, o) = import("codex/fork.jsonl", &["--from", "codex"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.exists());
}

#[test]
fn without_o_the_log_goes_beside_the_source_as_name_xcsh_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("rollout.jsonl");
    std::fs::copy(samples().join("codex/fork.jsonl"), &source).unwrap();
    ok(dir.path(), &["import", source.to_str().unwrap()]);
    assert_eq!(
        files_under(dir.path()),
        vec!["rollout.jsonl", "rollout.xcsh.jsonl"]
    );
}

#[test]
fn replay_of_a_directory_checks_imported_logs_without_rerunning_them() {
    let (dir, _source, out, _o) = import_all("pi");
    let r = ok(dir.path(), &["replay", out.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&r.stdout);
    assert_eq!(said.matches(" imported ").count(), 5, "{said}");
    assert!(
        said.contains("5 session(s): 5 ok, 0 diverged, 0 failed"),
        "{said}"
    );
}

#[test]
fn claude_text_sent_with_tool_results_is_a_steer_delivered_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let source = edited_sample(dir.path(), "claude/branch.jsonl", |_, l| {
        if l.contains(r#""tool_use_id":"toolu_mock_1_0""#) {
            l.replacen(
                r#""is_error":false}]"#,
                r#""is_error":false},{"type":"text","text":"Also look at notes.txt."}]"#,
                1,
            )
        } else {
            l.to_string()
        }
    });
    let (out, o) = import_file(dir.path(), &source, &[]);
    assert!(o.status.success(), "{}", text(&o));
    ok(dir.path(), &["check", out.to_str().unwrap()]);
    let log = xcsh_log::read_session(&out).unwrap();
    let steered: Vec<(&str, String)> = log
        .entries
        .iter()
        .filter_map(|e| match &e.body {
            Body::Record(Record::Steer { text }) => Some(("steer", text.clone())),
            Body::Decision(Decision::Delivered { text, .. }) => Some(("delivered", text.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        steered,
        vec![
            ("steer", "Also look at notes.txt.".to_string()),
            ("delivered", "Also look at notes.txt.".to_string())
        ]
    );
}

#[test]
fn events_and_every_export_format_work_on_an_imported_session() {
    let (dir, out, _) = imported("pi/branch.jsonl");
    let log = out.to_str().unwrap();
    let events = ok(
        dir.path(),
        &["events", log, "--type", "tool_result", "--json"],
    );
    let kinds: Vec<String> = String::from_utf8_lossy(&events.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"].to_string())
        .collect();
    let results = expected("pi/branch.jsonl").counts.tool_results as usize;
    assert_eq!(kinds, vec!["\"tool_result\"".to_owned(); results]);
    for format in ["md", "html", "json"] {
        let e = xcsh(dir.path(), &["export", log, "--format", format]);
        assert!(e.status.success(), "{format}: {}", text(&e));
        let page = String::from_utf8_lossy(&e.stdout);
        assert!(
            page.contains("Read notes.txt and fix what it says in hello.py."),
            "{format}: the first prompt is exported"
        );
        if format == "json" {
            serde_json::from_str::<serde_json::Value>(&page).unwrap();
        }
    }
}

/// `xcsh diff A B` (exit 1: they differ), from its third line (the first two name the
/// files, which are temporary).
fn diff_head(a: &Path, b: &Path) -> String {
    let home = tempfile::tempdir().unwrap();
    let d = xcsh(
        home.path(),
        &["diff", a.to_str().unwrap(), b.to_str().unwrap()],
    );
    assert_eq!(d.status.code(), Some(1), "{}", text(&d));
    String::from_utf8_lossy(&d.stdout)
        .lines()
        .skip(2)
        .take(3)
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn diff_of_two_agents_on_the_same_task_starts_at_their_first_step() {
    let (_pi_dir, pi, _) = imported("pi/branch.jsonl");
    let (_claude_dir, claude, _) = imported("claude/branch.jsonl");
    expect_test::expect![[r#"
        common history: none (the headers differ); aligned from the start
        first divergence: run 1 step 1 model (A #6 / B #20): usage differs
            usage: in 1412 out 28 cache r 0 w 0 -> in 12272 out 39 cache r 0 w 0
    "#]]
    .assert_eq(&diff_head(&pi, &claude));
}

#[test]
fn diff_of_an_imported_session_and_an_xcsh_session_aligns_their_runs() {
    let (_dir, pi, _) = imported("pi/branch.jsonl");
    let xcsh_session =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sessions/tool-rounds.jsonl");
    expect_test::expect![[r#"
        common history: none (the headers differ); aligned from the start
        first divergence: run 1 prompt (A #4 / B #1): text, tools, limits differs
            text: [-Read notes.txt and fix what it says in hello.py.-]{+How does this project build? Write the answer to answer.txt.+}
    "#]]
    .assert_eq(&diff_head(&pi, &xcsh_session));
}

/// `xcsh stats --json` of the imported `name`: (tool calls, settled tool results) over
/// every branch.
fn stats_counts(name: &str) -> (u64, u64) {
    let (dir, out, _) = imported(name);
    let s = ok(dir.path(), &["stats", out.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&s.stdout).unwrap();
    let calls = v["total"]["tool_calls"].as_u64().unwrap();
    let settled = v["tools"]
        .as_object()
        .unwrap()
        .values()
        .map(|t| {
            ["ok", "error", "cancelled"]
                .map(|k| t[k].as_u64().unwrap())
                .iter()
                .sum::<u64>()
        })
        .sum();
    (calls, settled)
}

#[test]
fn stats_of_an_import_counts_the_sources_tool_calls_and_results_for_each_agent() {
    for name in [
        "codex/resume.jsonl",
        "pi/branch.jsonl",
        "claude/branch.jsonl",
    ] {
        let want = expected(name).counts;
        assert_eq!(
            stats_counts(name),
            (want.tool_calls, want.tool_results),
            "{name}"
        );
    }
}

#[test]
fn a_message_whose_content_is_neither_text_nor_blocks_is_malformed_not_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let sample = std::fs::read_to_string(samples().join("pi/branch.jsonl")).unwrap();
    let at = sample
        .lines()
        .position(|l| l.contains(r#""role":"user","content":["#))
        .unwrap();
    let source = edited_sample(dir.path(), "pi/branch.jsonl", |i, l| {
        if i == at {
            l.replacen(r#""content":["#, r#""content":42,"was":["#, 1)
        } else {
            l.to_owned()
        }
    });
    let (out, o) = import_file(dir.path(), &source, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(!out.exists(), "a failed import leaves no file");
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains(&format!(
            "{}:{}: malformed pi record",
            source.display(),
            at + 1
        )),
        "{said}"
    );
    let (_, o) = import_file(dir.path(), &source, &["--lenient"]);
    assert!(o.status.success(), "{}", text(&o));
}
