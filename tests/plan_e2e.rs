//! The task plan end to end (SPEC.md §27) with the real binary: `xcsh plan` at the
//! leaf and at an entry of the other branch of the `plan` fixture, `--json`, the
//! `plan` event of `xcsh run --json`, the plan in `export` and `diff`, replay
//! re-making the plan calls, and (in tmux) the terminal UI's checklist following a
//! run as it works through its plan.

mod support;

use support::env::{Env, fixture, stderr, stdout};
use support::mock_server::Reply;
use support::sse::Wire;
use xcsh_log::{Body, read_session};
use xcsh_machine::{Decision, EntryId};

fn plan_fixture() -> String {
    fixture("plan").display().to_string()
}

fn scripts() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scripts/sessions")
}

#[test]
fn xcsh_plan_prints_the_plan_at_the_leaf_from_the_branch_that_changed_it() {
    let env = Env::new();
    let out = env.ok(&["plan", &plan_fixture()]);
    expect_test::expect![[r#"
        plan at entry 37 (from entry 34, call call_1_1): 1 of 4 completed
        A regression test first, as asked.
        [x] Read the failing test
        [>] Write a regression test
        [ ] Fix the parser
        [ ] Run the tests
    "#]]
    .assert_eq(&out);
}

#[test]
fn xcsh_plan_at_an_entry_of_the_other_branch_is_that_branchs_plan_there() {
    let env = Env::new();
    // 28 ends the second run, on the branch the `--at 14` run left: its third update.
    let at_end = env.ok(&["plan", &format!("{}@28", plan_fixture())]);
    // 20 is after the broken update (19, an error result): still the second one.
    let after_broken = env.ok(&["plan", &format!("{}@20", plan_fixture())]);
    let before_any = env.ok(&["plan", &format!("{}@3", plan_fixture())]);
    expect_test::expect![[r#"
        plan at entry 28 (from entry 25, call call_2_2): 2 of 3 completed
        [x] Read the failing test
        [x] Fix the parser
        [>] Run the tests
        ---
        plan at entry 20 (from entry 11, call call_2_2): 1 of 3 completed
        [x] Read the failing test
        [>] Fix the parser
        [ ] Run the tests
        ---
        no plan at entry 3: the model has not written one on this branch
    "#]]
    .assert_eq(&[at_end, after_broken, before_any].join("---\n"));
}

#[test]
fn xcsh_plan_json_is_the_plan_as_data() {
    let env = Env::new();
    let out = env.ok(&["plan", &format!("{}@11", plan_fixture()), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        serde_json::json!({
            "at": 11,
            "plan": {
                "entry": 11,
                "dispatched": 9,
                "call_id": "call_2_2",
                "plan": {"items": [
                    {"text": "Read the failing test", "status": "completed"},
                    {"text": "Fix the parser", "status": "in_progress"},
                    {"text": "Run the tests", "status": "pending"}
                ]}
            }
        })
    );
    let none = env.ok(&["plan", &format!("{}@3", plan_fixture()), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&none).unwrap();
    assert_eq!(v, serde_json::json!({"at": 3, "plan": null}));
}

/// The `plan` events of `xcsh run --json` over a fixture's script.
fn plan_events(script: &str, prompt: &str) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let env = Env::new();
    let out = env.ok_script(scripts().join(script), &["--json", prompt]);
    let events: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let plans = events
        .iter()
        .filter(|e| e["type"] == "plan")
        .cloned()
        .collect();
    let results = events
        .iter()
        .filter(|e| e["type"] == "tool_result" && e["name"] == "plan")
        .map(|e| serde_json::json!({"status": e["status"], "content": e["content"]}))
        .collect();
    (plans, results)
}

#[test]
fn run_json_prints_a_plan_event_for_each_plan_the_model_sets() {
    let (plans, _) = plan_events("plan.jsonl", "Fix the parser bug.");
    assert_eq!(
        plans,
        [
            serde_json::json!({"type": "plan", "call_id": "call_1_1", "plan": {
            "explanation": "Three steps: read, fix, test.",
            "items": [
                {"text": "Read the failing test", "status": "in_progress"},
                {"text": "Fix the parser", "status": "pending"},
                {"text": "Run the tests", "status": "pending"}
            ]}}),
            serde_json::json!({"type": "plan", "call_id": "call_2_2", "plan": {
            "items": [
                {"text": "Read the failing test", "status": "completed"},
                {"text": "Fix the parser", "status": "in_progress"},
                {"text": "Run the tests", "status": "pending"}
            ]}}),
        ]
    );
}

#[test]
fn a_broken_plan_is_an_error_result_for_the_model_and_no_plan_event() {
    let (plans, results) = plan_events("plan.second.jsonl", "Go on.");
    assert_eq!(
        results,
        [
            serde_json::json!({"status": "error", "content": "invalid plan (the plan was not changed): items 2 and 3 are both in_progress; at most one item may be in_progress"}),
            serde_json::json!({"status": "ok", "content": "Plan updated (2 of 3 completed):\n[x] Read the failing test\n[x] Fix the parser\n[>] Run the tests\n"}),
        ]
    );
    let calls: Vec<&serde_json::Value> = plans.iter().map(|p| &p["call_id"]).collect();
    assert_eq!(calls, ["call_2_2"]);
}

#[test]
fn export_markdown_shows_the_plan_at_the_leaf_and_each_update_where_it_happened() {
    let env = Env::new();
    let md = env.ok(&["export", &plan_fixture(), "--format", "md"]);
    let start = md.find("## Plan").unwrap();
    let end = md.find("## Turn 1").unwrap();
    expect_test::expect![[r#"
        ## Plan

        At the leaf, from entry 34 (1 of 4 completed):

        A regression test first, as asked.

        - [x] Read the failing test
        - [ ] **Write a regression test** (in progress)
        - [ ] Fix the parser
        - [ ] Run the tests

    "#]]
    .assert_eq(&md[start..end]);
    let updates: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("**Plan updated**"))
        .collect();
    assert_eq!(
        updates,
        [
            "**Plan updated** (`plan` call_1_1, entry 5; 0 of 3 completed):",
            "**Plan updated** (`plan` call_2_2, entry 11; 1 of 3 completed):",
            "**Plan updated** (`plan` call_1_1, entry 34; 1 of 4 completed):",
        ]
    );
}

#[test]
fn export_html_carries_every_valid_plan_update_of_every_branch() {
    let env = Env::new();
    let html = env.ok(&["export", &plan_fixture(), "--format", "html"]);
    let start = html.find(r#"id="xcsh-data">"#).unwrap() + r#"id="xcsh-data">"#.len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
    let mut entries: Vec<u64> = data["plans"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.parse().unwrap())
        .collect();
    entries.sort();
    // 19 is the broken update (an error result): not a plan.
    assert_eq!(entries, [5, 11, 25, 34]);
    assert_eq!(
        data["plans"]["25"]["items"][2],
        serde_json::json!({"text": "Run the tests", "status": "in_progress"})
    );
}

#[test]
fn diff_of_the_two_branches_shows_how_their_plans_differ() {
    let env = Env::new();
    let a = format!("{}@28", plan_fixture());
    let out = env.run(&["diff", &a, &plan_fixture()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let section = &text[text.find("plans differ").unwrap()..];
    expect_test::expect![[r#"
        plans differ (a: entry 25, b: entry 34):
        explanation:
          a: (none)
          b: A regression test first, as asked.
        item 2:
          a: [x] Fix the parser
          b: [>] Write a regression test
        item 3:
          a: [>] Run the tests
          b: [ ] Fix the parser
        item 4:
          a: (none)
          b: [ ] Run the tests
    "#]]
    .assert_eq(section);
    let json = env.run(&["diff", &a, &plan_fixture(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["plans"]["a"]["plan"]["entry"], 25);
    assert_eq!(v["plans"]["b"]["plan"]["entry"], 34);
    // Two points of one branch with the same plan: no section.
    let same = env.run(&[
        "diff",
        &format!("{}@26", plan_fixture()),
        &format!("{}@28", plan_fixture()),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&same.stdout).unwrap();
    assert_eq!(v.get("plans"), None);
}

#[test]
fn replay_remakes_the_plan_calls_of_both_branches() {
    let env = Env::new();
    let leaf = env.ok(&["replay", &plan_fixture(), "--json"]);
    let other = env.ok(&["replay", &plan_fixture(), "--leaf", "28", "--json"]);
    let seen: Vec<serde_json::Value> = [leaf, other]
        .iter()
        .map(|out| {
            let v: serde_json::Value = serde_json::from_str(out).unwrap();
            serde_json::json!({"result": v["result"], "leaf": v["leaf"], "replayed": v["replayed"]})
        })
        .collect();
    assert_eq!(
        seen,
        [
            serde_json::json!({"result": "ok", "leaf": 37, "replayed": {"decisions": 11, "entries": 24, "inputs": 11}}),
            serde_json::json!({"result": "ok", "leaf": 28, "replayed": {"decisions": 14, "entries": 29, "inputs": 14}}),
        ]
    );
    // The plan calls are decisions like any other: a changed plan diverges there.
    let dir = tempfile::tempdir().unwrap();
    let altered = dir.path().join("altered.jsonl");
    let log = read_session(&fixture("plan")).unwrap();
    xcsh_replay::rewrite::rewrite(&log, &altered, |e| match &e.body {
        Body::Decision(Decision::ToolDispatched { step, call }) if e.id == EntryId(33) => {
            let mut call = call.clone();
            call.arguments = r#"{"items":[]}"#.into();
            Some(Body::Decision(Decision::ToolDispatched {
                step: *step,
                call,
            }))
        }
        other => Some(other.clone()),
    })
    .unwrap();
    let out = env.run(&["replay", altered.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"], "diverged", "{v}");
    assert_eq!(v["divergence"]["entry"], 33, "{v}");
    assert_eq!(v["divergence"]["entry_type"], "tool_dispatched", "{v}");
}

/// A model step calling `plan` with two items at these statuses.
fn plan_reply(id: &str, first: &str, second: &str, tokens: u64) -> Reply {
    let args = serde_json::json!({"items": [
        {"text": "Read the code", "status": first},
        {"text": "Fix the bug", "status": second}
    ]});
    Reply::openai_call(id, "plan", &args.to_string(), tokens)
}

#[test]
fn the_tui_checklist_follows_the_plan_while_the_run_works_through_it() {
    // Each plan update is followed by a bash call that waits for approval, so the
    // screen can be read while the run holds.
    let Some((env, server)) = Env::new().in_tmux_with(vec![
        plan_reply("call_1", "in_progress", "pending", 100),
        Reply::openai_call("call_2", "bash", r#"{"command":"true"}"#, 120),
        plan_reply("call_3", "completed", "in_progress", 140),
        Reply::openai_call("call_4", "bash", r#"{"command":"true"}"#, 160),
        Reply::openai_text("Both steps are done.", 180),
    ]) else {
        return;
    };
    let tmux = env.tui(Wire::OpenAi, &server.url(), "--permissions ask", "");
    tmux.line("read then fix");
    let first = tmux.wait_until("the live checklist with item 1 in progress", |s| {
        s.contains("Plan · 0 of 2 completed")
            && s.contains("[>] Read the code")
            && s.contains("allow bash")
    });
    assert!(first.contains("[ ] Fix the bug"), "{first}");
    tmux.keys(&["y"]);
    let second = tmux.wait_until("the live checklist with item 2 in progress", |s| {
        s.contains("Plan · 1 of 2 completed") && s.contains("allow bash")
    });
    let live = &second[second.rfind("Plan · 1 of 2 completed").unwrap()..];
    assert!(live.contains("[x] Read the code"), "{second}");
    assert!(live.contains("[>] Fix the bug"), "{second}");
    assert!(!live.contains("Plan · 0 of 2"), "{second}");
    tmux.keys(&["y"]);
    let done = tmux.wait_for("─ done", 1);
    // Both changes stay in the history; the live checklist left with the turn.
    assert!(done.contains("Plan updated · 0 of 2 completed"), "{done}");
    assert!(done.contains("Plan updated · 1 of 2 completed"), "{done}");
    assert!(!done.contains("Plan · 1 of 2 completed"), "{done}");
}

#[test]
fn slash_plan_in_the_plain_mode_prints_the_plan_at_the_leaf() {
    let Some((env, server)) = Env::new().in_tmux_with(vec![
        plan_reply("call_1", "completed", "in_progress", 100),
        Reply::openai_text("Reading done; fixing next.", 120),
    ]) else {
        return;
    };
    let tmux = env.interactive(Wire::OpenAi, &server.url(), "--permissions ask");
    tmux.line("read then fix");
    tmux.wait_for("Reading done; fixing next.", 1);
    tmux.line("/plan");
    // The run printed the plan as it changed; `/plan` prints it again, with its entry.
    let shown_of = |s: &str| s.find("[plan] plan at entry").map(|i| s[i..].to_owned());
    let screen = tmux.wait_until("/plan's checklist", |s| {
        shown_of(s).is_some_and(|t| t.contains("Fix the bug"))
    });
    let shown = shown_of(&screen).unwrap();
    assert!(shown.contains("1 of 2 completed"), "{screen}");
    assert!(shown.contains("[plan] [x] Read the code"), "{screen}");
    assert!(shown.contains("[plan] [>] Fix the bug"), "{screen}");
}
