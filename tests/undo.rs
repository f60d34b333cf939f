//! `/undo` in a real terminal (tmux) against a local provider server (issue 13): the
//! undo is told to the model on the branch where it happened, as a message of its
//! own (the prompt after it is the user's words only), and not on a branch started
//! at an entry before it; the screen, `/diff`, `xcsh log`, `xcsh tree` and
//! `xcsh diff --workspace` show it.
//!
//! Needs tmux (`scripts/setup-test-deps.sh` installs it; CI runs that first).

mod support;

use support::assert_contains;
use support::env::{Env, first_entry};
use support::mock_server::{MockServer, Reply};
use support::sse::Wire;
use support::tmux::{session_on, tmux_available};
use xcsh_log::{Body, Record, read_session};
use xcsh_machine::Decision;

/// The `content` of each user message of a Chat Completions request body.
fn user_messages(body: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn an_undo_is_told_on_its_own_branch_only_and_shown_everywhere() {
    if !tmux_available() {
        return;
    }
    let env = Env::new()
        .with_file("f.txt", "old\n")
        .with_var("NO_COLOR", "1");
    let work = env.workspace();
    let server = MockServer::start(
        [
            // Turn 1: an answer without tools.
            vec![Reply::openai_text("Hello.", 50)],
            // Turn 2: read f.txt, write it, answer.
            Reply::openai_rewrite_of_f_txt(60).into(),
            // Turn 3, on a branch from the end of turn 1.
            vec![Reply::openai_text("On the branch.", 90)],
            // Turn 4, on the branch where the undo happened.
            vec![Reply::openai_text("Noted.", 100)],
        ]
        .concat(),
    );
    let tmux = env.interactive(Wire::OpenAi, &server.url(), "--permissions yolo");

    tmux.line("say hello");
    let session = session_on(&tmux.wait_for("[done]", 1));
    tmux.turn("rewrite f.txt", "Rewrote f.txt.", "[done]", 2);
    assert_eq!(
        std::fs::read_to_string(work.join("f.txt")).unwrap(),
        "new\n"
    );

    tmux.line("/undo");
    let screen = tmux.wait_for("[undo] reverted", 1);
    assert_contains(
        &screen,
        "the model is told with the next prompt on this branch",
    );
    assert_eq!(
        std::fs::read_to_string(work.join("f.txt")).unwrap(),
        "old\n"
    );
    tmux.line("/diff");
    let screen = tmux.wait_for("reverted by /undo", 1);
    assert!(!screen.contains("no textual difference"), "{screen}");

    // Back to the end of turn 1, before the undone edit: the model is not told.
    let turn1_end = first_entry(&session, |b| {
        matches!(b, Body::Decision(Decision::RunFinished { .. }))
    });
    let undo = first_entry(&session, |b| matches!(b, Body::Record(Record::Undo { .. })));
    tmux.line(&format!("/at {turn1_end}"));
    tmux.wait_for("[branch] continuing from entry", 1);
    tmux.turn("a new direction", "On the branch.", "[done]", 3);
    // Back to the undo: the model is told, in a message of its own.
    tmux.line(&format!("/at {undo}"));
    tmux.wait_for("[branch] continuing from entry", 2);
    tmux.turn("what now?", "Noted.", "[done]", 4);
    tmux.ctrl_d();

    let received = server.received();
    assert_eq!(received.len(), 6);
    assert_eq!(
        user_messages(&received[4].body),
        ["say hello", "a new direction"],
        "the branch from before the edit never had it"
    );
    let on_undo_branch = user_messages(&received[5].body);
    assert_eq!(on_undo_branch.len(), 4, "{on_undo_branch:?}");
    assert_eq!(on_undo_branch[..2], ["say hello", "rewrite f.txt"]);
    assert!(
        on_undo_branch[2].starts_with("[Note: the user reverted (/undo) the file changes"),
        "{on_undo_branch:?}"
    );
    assert!(on_undo_branch[2].contains("f.txt"), "{on_undo_branch:?}");
    assert_eq!(on_undo_branch[3], "what now?");

    // The session: replays clean; the tree shows the user's words; the log and the
    // workspace diff show the undo.
    let log = read_session(&session).unwrap();
    xcsh_replay::replay_branch(&log, log.leaf()).unwrap();
    env.assert_clean(&session);
    let s = session.to_str().unwrap();
    let tree = env.ok(&["tree", s]);
    assert_contains(&tree, "user \"what now?\"");
    assert!(!tree.contains("[Note"), "{tree}");
    let text = env.ok(&["log", s]);
    assert_contains(&text, "↶ undo #");
    assert_contains(&text, "the model is told");
    let diff = env.ok(&["diff", "--workspace", s]);
    assert_contains(&diff, "reverted by /undo");
    assert!(!diff.contains("no textual difference"), "{diff}");
}
