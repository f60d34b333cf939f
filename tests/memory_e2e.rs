//! Memory end to end (SPEC.md §28): the real binary over the faux provider, two
//! turns whose second index holds what the first extraction wrote, the index in
//! `--show-context` only when memory is on, `xcsh memory`, and the extraction's
//! failures, interruption and secrets.

mod support;

use std::path::Path;

use support::assert_contains;
use support::env::{
    Env, SECRET, from_file, lines, session_of, stderr, stdout, tool_names, types, write_files,
};

/// A faux step whose text is `text` (JSON-escaped here).
fn step(text: &str) -> String {
    serde_json::json!({ "text": text, "usage": {"input": 100, "output": 10} }).to_string()
}

const BUILD_NOTE: &str = r#"{"notes":[{"scope":"project","name":"build","description":"How this project builds","body":"Build with `cargo build --release`."}]}"#;

/// The data of the session's entries of type `kind`.
fn data_of(session: &Path, kind: &str) -> Vec<serde_json::Value> {
    lines(session)
        .into_iter()
        .filter(|v| v["type"] == kind)
        .map(|v| v["data"].clone())
        .collect()
}

fn note_file(env: &Env, name: &str) -> String {
    std::fs::read_to_string(env.workspace().join(format!(".xcsh/memory/{name}.md"))).unwrap()
}

/// The header of every index text, before its note lines.
const INDEX_HEAD: &str = "# Memory\n\nNotes kept from earlier sessions (scope/name: description). Read one in full with the `memory_read` tool before relying on it.\n\n";

#[test]
fn the_second_turns_index_holds_what_the_first_turns_extraction_wrote() {
    let env = Env::new();
    let first = env.script(
        "first.jsonl",
        &[&step("It builds with cargo."), &step(BUILD_NOTE)],
    );
    let second = env.script(
        "second.jsonl",
        &[&step("Still cargo."), &step(r#"{"notes":[]}"#)],
    );
    let out = env.run_script(&first, &["--memory", "-p", "How does it build?"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run_script(&second, &["--memory", "--continue", "-p", "And now?"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let session = session_of(&out);
    // Each turn: its index, the prompt, one step, the end, the extraction after it;
    // only the first extraction wrote a note (its snapshot). The second plays
    // another script: a `provider` entry says so before it.
    let turn = [
        "memory_index",
        "user_message",
        "step_started",
        "step",
        "run_finished",
        "memory_extraction",
    ];
    assert_eq!(
        types(&session),
        [
            &["session"][..],
            &turn,
            &["memory_snapshot", "provider"],
            &turn
        ]
        .concat()
    );
    assert_eq!(
        note_file(&env, "build"),
        "---\ndescription: How this project builds\n---\n\nBuild with `cargo build --release`.\n"
    );
    let hash = blake3::hash(note_file(&env, "build").as_bytes())
        .to_hex()
        .to_string();
    let note = serde_json::json!({"scope": "project", "name": "build", "hash": hash});
    let snapshots = data_of(&session, "memory_snapshot");
    assert_eq!(
        snapshots,
        [serde_json::json!({"notes": [note], "written": [note]})]
    );
    let indexes = data_of(&session, "memory_index");
    let empty = format!("{INDEX_HEAD}(no notes yet)\n");
    let full = format!("{INDEX_HEAD}- project/build: How this project builds\n");
    let index = |text: &str, notes: serde_json::Value| {
        serde_json::json!({
            "text": text,
            "hash": blake3::hash(text.as_bytes()).to_hex().to_string(),
            "notes": notes,
        })
    };
    assert_eq!(
        indexes,
        [
            index(&empty, serde_json::json!([])),
            index(&full, serde_json::json!([note]))
        ]
    );
    // The second extraction proposed nothing: no snapshot, and nothing refused.
    let extractions = data_of(&session, "memory_extraction");
    assert_eq!(extractions[1]["notes"], serde_json::Value::Null);
    assert_eq!(extractions[1]["problems"], serde_json::Value::Null);
    assert_eq!(
        extractions[1]["outcome"],
        serde_json::json!({"status": "completed"})
    );
    env.assert_replays_clean(&session);
    env.assert_clean(&session);
}

#[test]
fn show_context_carries_the_memory_index_after_the_project_instructions_when_memory_is_on() {
    let env = Env::new().with_agents_md("Always run the tests.\n");
    write_files(
        &env.workspace().join(".xcsh/memory"),
        &[(
            "tests.md",
            "---\ndescription: Run the tests with nextest\n---\n\ncargo nextest run\n",
        )],
    );
    let out = env.offline(&["--memory", "--show-context", "fix it"]);
    let body: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let system = body["messages"][0]["content"].as_str().unwrap();
    let instructions = system.find("Always run the tests.").unwrap();
    let index = system.find("# Memory").unwrap();
    assert!(instructions < index, "{system}");
    assert!(
        system.ends_with(&format!(
            "{INDEX_HEAD}- project/tests: Run the tests with nextest"
        )),
        "{system}"
    );
    let tools = tool_names(&body);
    assert_eq!(tools.last(), Some(&"memory_read"));
}

#[test]
fn show_context_without_memory_has_no_index_and_no_memory_read() {
    let env = Env::new();
    write_files(
        &env.workspace().join(".xcsh/memory"),
        &[("tests.md", "---\ndescription: x\n---\n\ny\n")],
    );
    let text = stdout(&env.offline(&["--show-context", "fix it"]));
    assert!(!text.contains("# Memory"), "{text}");
    assert!(!text.contains("memory_read"), "{text}");
}

#[test]
fn memory_true_in_the_config_file_turns_memory_on() {
    let env = Env::new();
    let file = env.config("memory = true\n");
    let out = env.offline(&["--show-context", "fix it"]);
    assert_contains(&stdout(&out), "(no notes yet)");
    assert_eq!(
        env.config_json()["memory"],
        from_file(serde_json::json!(true), &file)
    );
}

#[test]
fn xcsh_memory_lists_both_scopes_and_names_a_broken_note() {
    let env = Env::new();
    let user = env.home().join("memory");
    let project = env.workspace().join(".xcsh/memory");
    let style = "---\ndescription: Prefers short answers\n---\n\nBe brief.\n";
    write_files(&user, &[("style.md", style)]);
    let build = "---\ndescription: How to build\n---\n\ncargo build\n";
    write_files(
        &project,
        &[("build.md", build), ("broken.md", "no front matter\n")],
    );
    let out = env.run(&["memory", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let listed: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let hash = |t: &str| blake3::hash(t.as_bytes()).to_hex().to_string();
    assert_eq!(
        listed,
        [
            serde_json::json!({"scope": "user", "name": "style", "description": "Prefers short answers", "path": user.join("style.md"), "hash": hash(style)}),
            serde_json::json!({"scope": "project", "name": "build", "description": "How to build", "path": project.join("build.md"), "hash": hash(build)}),
        ]
    );
    assert_eq!(
        stderr(&out),
        format!(
            "xcsh: memory note {} is left out: it does not start with a front matter (a `---` line)\n",
            project.join("broken.md").display()
        )
    );
    let table = env.ok(&["memory"]);
    assert_contains(&table, "Prefers short answers");
    assert_contains(&table, "How to build");
}

#[test]
fn a_failed_extraction_is_a_notice_and_the_turn_still_completes() {
    let env = Env::new();
    let script = env.script(
        "s.jsonl",
        &[
            &step("Done."),
            r#"{"text":"","error":"http 500: overloaded"}"#,
        ],
    );
    let out = env.run_script(&script, &["--memory", "-p", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Done.\n");
    assert_contains(
        &stderr(&out),
        "xcsh: memory: the extraction failed (http 500: overloaded); the turn is unaffected",
    );
    let session = session_of(&out);
    assert_eq!(types(&session)[5..], ["run_finished", "memory_extraction"]);
    let x = &data_of(&session, "memory_extraction")[0];
    assert_eq!(x["outcome"]["status"], "failed");
    env.assert_replays_clean(&session);
}

#[test]
fn an_unparsable_answer_writes_nothing_and_says_why() {
    let env = Env::new();
    let script = env.script("s.jsonl", &[&step("Done."), &step("I have no notes.")]);
    let out = env.run_script(&script, &["--memory", "-p", "go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_contains(
        &stderr(&out),
        "xcsh: memory: the answer is not a JSON object {\"notes\": [...]}: expected value at line 1 column 1",
    );
    let session = session_of(&out);
    assert_eq!(
        data_of(&session, "memory_extraction")[0]["problems"],
        serde_json::json!([
            "the answer is not a JSON object {\"notes\": [...]}: expected value at line 1 column 1"
        ])
    );
    assert!(!env.workspace().join(".xcsh/memory").exists());
}

#[test]
fn a_note_that_would_hold_a_secret_is_refused() {
    let env = Env::new().with_var("OPENAI_API_KEY", SECRET);
    let answer = format!(
        r#"{{"notes":[{{"name":"key","description":"The API key","body":"the key is {SECRET}"}},{{"name":"ok","description":"A fine note","body":"fine"}}]}}"#
    );
    let script = env.script("s.jsonl", &[&step("Done."), &step(&answer)]);
    let out = env.run_script(&script, &["--memory", "-p", "go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_contains(
        &stderr(&out),
        "memory: note `key` refused: it holds a secret (a redacted value)",
    );
    assert!(!env.workspace().join(".xcsh/memory/key.md").exists());
    assert_eq!(
        note_file(&env, "ok"),
        "---\ndescription: A fine note\n---\n\nfine\n"
    );
    let log = std::fs::read_to_string(session_of(&out)).unwrap();
    assert!(!log.contains(SECRET));
}

#[test]
fn an_interrupt_during_the_extraction_cancels_it_and_the_turn_stays_completed() {
    let env = Env::new();
    // The extraction streams slowly: the interrupt, sent when the run finishes,
    // lands while it streams.
    let slow = serde_json::json!({
        "text": BUILD_NOTE,
        "chunk_delay_ms": 200,
    })
    .to_string();
    let script = env.script("s.jsonl", &[&step("Done."), &slow]);
    let out = env.run_script_as_user(
        &script,
        &[r#"{"after":"run_finished","interrupt":true}"#],
        &["--memory", "-p", "go"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_contains(
        &stderr(&out),
        "xcsh: memory: the extraction was interrupted; no note was written",
    );
    let session = session_of(&out);
    assert_eq!(
        types(&session)[5..],
        ["run_finished", "interrupt", "ignored", "memory_extraction"]
    );
    assert_eq!(
        data_of(&session, "memory_extraction")[0]["outcome"],
        serde_json::json!({"status": "aborted"})
    );
    assert!(!env.workspace().join(".xcsh/memory").exists());
    env.assert_replays_clean(&session);
    env.assert_clean(&session);
}

#[test]
fn without_memory_a_run_records_no_memory_entry() {
    let env = Env::new();
    let script = env.script("s.jsonl", &[&step("Done.")]);
    let out = env.run_script(&script, &["-p", "go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        types(&session_of(&out)),
        [
            "session",
            "user_message",
            "step_started",
            "step",
            "run_finished"
        ]
    );
}

#[test]
fn the_memory_fixture_replays_and_checks_clean() {
    let env = Env::new();
    let fixture = support::env::fixture("memory");
    env.assert_replays_clean(&fixture);
    env.assert_clean(&fixture);
    let indexes = data_of(&fixture, "memory_index");
    assert_eq!(
        indexes[1]["text"],
        format!(
            "{INDEX_HEAD}- user/answers: The user wants one-line answers\n- project/build: How this project builds\n"
        )
    );
}
