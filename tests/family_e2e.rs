//! The toolkit on a sub-agent family through the real binary (SPEC.md §29.6): the
//! family of `xcsh_journal::synth::family` (a parent with two concurrent children,
//! one failed, a grandchild, a missing child file) in a sessions folder, seen by
//! `tree --deep`, `events --deep`, `stats`, `sessions`, `export` and `replay
//! --deep`.

mod support;

use std::path::PathBuf;

use support::assert_contains;
use support::env::{Env, stderr, stdout};
use xcsh_journal::synth::family::{file_of, write_family};

/// A test's environment with the family in a sessions folder of its home; the
/// parent's path.
fn family() -> (Env, PathBuf) {
    let env = Env::new();
    let dir = env.home().join("sessions").join("family-0000000000000000");
    std::fs::create_dir_all(&dir).unwrap();
    let parent = write_family(&dir).unwrap();
    (env, parent)
}

#[test]
fn tree_deep_draws_every_generation_under_its_task_call() {
    let (env, parent) = family();
    let p = parent.to_str().unwrap();
    let plain = env.ok(&["tree", p]);
    assert_contains(
        &plain,
        "  ⤷ task call_1_2 #7 → childb01 · 1 step · 0 tok · provider_error http: 503 service unavailable",
    );
    assert!(!plain.contains("session grand001"), "{plain}");
    let deep = env.ok(&["tree", p, "--deep"]);
    for want in [
        "      ⤷ task call_1_1 #5 → grand001 · 1 step · 110 tok · completed",
        "        #1..4 user \"deeper\"",
        "  ⤷ task call_2_1 #11 → childc01 · missing",
    ] {
        assert_contains(&deep, want);
    }
    let json: serde_json::Value =
        serde_json::from_str(&env.ok(&["tree", p, "--deep", "--json"])).unwrap();
    let a = &json["root"][1]["children"][0];
    assert_eq!(
        (
            a["session_id"].as_str(),
            a["tree"]["root"][1]["children"][0]["session_id"].as_str()
        ),
        (Some("childa01"), Some("grand001"))
    );
}

#[test]
fn events_deep_puts_each_child_in_a_lane_of_its_own() {
    let (env, parent) = family();
    let p = parent.to_str().unwrap();
    let out = env.run(&["events", p, "--deep", "--type", "run_finished"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sessions: Vec<String> = stdout(&out)
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
        .collect();
    assert_eq!(sessions, ["childb01", "grand001", "childa01", "parent01"]);
    assert_contains(&stderr(&out), "xcsh: child childc01 (");
    let json = env.ok(&["events", p, "--deep", "--json", "--type", "user_message"]);
    let rows: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let named: Vec<(&str, i64)> = rows
        .iter()
        .map(|r| (r["session"].as_str().unwrap(), r["t_ms"].as_i64().unwrap()))
        .collect();
    assert_eq!(
        named,
        [
            ("parent01", 1),
            ("childa01", 6),
            ("childb01", 6),
            ("grand001", 10)
        ]
    );
    let refused = env.run(&["events", p, "--deep", "--follow"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
}

#[test]
fn stats_totals_the_family_in_text_and_json() {
    let (env, parent) = family();
    let p = parent.to_str().unwrap();
    let text = env.ok(&["stats", p]);
    assert_contains(&text, "family (4 session(s))");
    assert_contains(&text, "│     grand001 ┆    1 ┆     1 ┆   100 ┆");
    let json: serde_json::Value = serde_json::from_str(&env.ok(&["stats", p, "--json"])).unwrap();
    let f = &json["family"];
    assert_eq!(
        (
            f["total"]["spend"].as_u64(),
            f["members"].as_array().map(Vec::len)
        ),
        (Some(1210), Some(4))
    );
    assert_eq!(
        json["runs"][0]["spend"].as_u64(),
        Some(730),
        "the session's own runs"
    );
}

#[test]
fn sessions_lists_children_under_their_parent_never_at_the_top() {
    let (env, _) = family();
    let table = env.ok(&["sessions", "--all"]);
    let ids: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with('│') && !l.contains(" id "))
        .map(|l| l.split('┆').next().unwrap().trim_start_matches('│').trim())
        .collect();
    assert_eq!(ids, ["parent01", "↳ childa01", "↳ grand001", "↳ childb01"]);
    let json = env.ok(&["sessions", "--all", "--json"]);
    let parents: Vec<(String, Option<String>)> = json
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["id"].as_str().unwrap().into(),
                v["parent"].as_str().map(Into::into),
            )
        })
        .collect();
    assert_eq!(
        parents,
        [
            ("parent01".into(), None),
            ("childa01".into(), Some("parent01".into())),
            ("grand001".into(), Some("childa01".into())),
            ("childb01".into(), Some("parent01".into())),
        ]
    );
}

#[test]
fn export_includes_the_children_in_every_format() {
    let (env, parent) = family();
    let p = parent.to_str().unwrap();
    let md = env.ok(&["export", p, "--format", "md"]);
    for want in [
        "## xcsh session childa01",
        "### xcsh session grand001",
        "childc01",
    ] {
        assert_contains(&md, want);
    }
    let html = env.ok(&["export", p, "--format", "html"]);
    assert_contains(&html, "<h2>Sub-agents</h2>");
    let json: serde_json::Value =
        serde_json::from_str(&env.ok(&["export", p, "--format", "json"])).unwrap();
    let kids: Vec<&str> = json["family"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["state"].as_str().unwrap())
        .collect();
    assert_eq!(kids, ["loaded", "loaded", "missing"]);
}

#[test]
fn replay_deep_fails_on_a_missing_child_by_name_and_the_parent_alone_replays_clean() {
    let (env, parent) = family();
    let p = parent.to_str().unwrap();
    assert_contains(&env.ok(&["replay", p]), "no divergence");
    let deep = env.run(&["replay", p, "--deep"]);
    assert_eq!(deep.status.code(), Some(1), "{}", stderr(&deep));
    assert_contains(&stdout(&deep), "5 session(s): 4 ok, 0 diverged, 1 failed");
    assert_contains(&stdout(&deep), "↳ childc01");
}

#[test]
fn replay_deep_passes_when_every_child_replays_and_warns_of_a_mislinked_one() {
    let (env, parent) = family();
    let dir = parent.parent().unwrap();
    // childc01's file is a copy of childb01's: it replays, but names call_1_2.
    std::fs::copy(dir.join(file_of("childb01")), dir.join(file_of("childc01"))).unwrap();
    let deep = env.run(&["replay", parent.to_str().unwrap(), "--deep", "--json"]);
    assert!(deep.status.success(), "{}", stderr(&deep));
    let results: Vec<String> = stdout(&deep)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            format!(
                "{} {}",
                v["session"].as_str().unwrap(),
                v["result"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            "parent01 ok",
            "↳ childa01 ok",
            "  ↳ grand001 ok",
            "↳ childb01 ok",
            "↳ childc01 ok"
        ]
    );
    assert_contains(
        &stderr(&deep),
        "its header names call call_1_2, not call_2_1",
    );
    let refused = env.run(&["replay", dir.to_str().unwrap(), "--deep"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
}
