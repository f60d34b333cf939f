//! Interactive xcsh in a real terminal (tmux: send-keys, capture-pane) against a
//! local provider server: a prompt, an approval answered `a`, a steer typed while
//! the model streams, Ctrl-C during a long bash call, `/at` and a prompt on the new
//! branch, `/tree` with two branches, Ctrl-D; then `xcsh run --continue` resumes on
//! the branch the user was on.
//!
//! Needs tmux (`scripts/setup-test-deps.sh` installs it; CI runs that first).
//! Waiting for the screen polls capture-pane until the text appears (bounded).

mod support;

use support::assert_contains;
use support::env::{
    Env, assert_steer_delivered_after_the_tools, first_entry, long_bash_then, session_id, stderr,
    stdout,
};
use support::mock_server::{MockServer, Reply};
use support::sse::Wire;
use support::tmux::{session_on, tmux_available};
use xcsh_log::{Body, Dag, Record, read_session};
use xcsh_machine::Decision;

#[test]
fn a_user_session_in_a_real_terminal() {
    if !tmux_available() {
        return;
    }
    let env = Env::new();
    let work = env.workspace();
    let server = MockServer::start(
        [
            // Turn 1: streams slowly (the user steers meanwhile), then asks for bash.
            Reply::openai_steered_bash(&["Working ", "on it ", "step ", "by ", "step.\n"], 400)
                .to_vec(),
            vec![
                // Turn 2: a long bash call, stopped with Ctrl-C (bash is allowed by the `a`).
                Reply::openai_call("call_2", "bash", r#"{"command":"sleep 30"}"#, 300),
                // Turn 3, on the new branch.
                Reply::openai_text("A fresh answer on the new branch.", 120),
                // After --continue.
                Reply::openai_text("Continued where you were.", 130),
            ],
        ]
        .concat(),
    );
    let tmux = env.interactive(Wire::OpenAi, &server.url(), "");

    tmux.line("start the work");
    let session = session_on(&tmux.wait_for("Working", 1));
    tmux.line("also check b");
    tmux.wait_for("[queued Steer] also check b", 1);
    tmux.wait_for("[approve] bash", 1);
    tmux.line("a");
    tmux.wait_for("[delivered Steer] also check b", 1);
    tmux.wait_for("Checked b too.", 1);
    tmux.wait_for("[done]", 1);
    assert!(work.join("one.txt").exists());

    tmux.line("run the long job");
    tmux.wait_for(r#"[bash] {"command":"sleep 30"}"#, 1);
    tmux.keys(&["C-c"]);
    tmux.wait_for("[stopping the turn]", 1);
    tmux.wait_for("[stopped by you] 1 step(s)", 1);

    // Back to the end of turn 1: its `run_finished`.
    let turn1_end = first_entry(&session, |b| {
        matches!(b, Body::Decision(Decision::RunFinished { .. }))
    });
    tmux.line(&format!("/at {turn1_end}"));
    tmux.wait_for("[branch] continuing from entry", 1);
    tmux.turn(
        "a new direction",
        "A fresh answer on the new branch.",
        "[done]",
        2,
    );
    tmux.line("/tree");
    let screen = tmux.wait_for("◀ leaf", 1);
    assert_contains(&screen, "┬ 2 branches at #");
    assert_contains(&screen, "user \"run the long job\"");
    assert_contains(&screen, "user \"a new direction\"");
    tmux.ctrl_d();

    // The log: the steer arrived during step 1 and was delivered after its tool
    // settled; the interrupted bash call settled as cancelled; the session is intact.
    let log = read_session(&session).unwrap();
    xcsh_replay::replay_branch(&log, log.leaf()).unwrap();
    let types: Vec<String> = log
        .entries
        .iter()
        .map(|e| e.type_name().to_string())
        .collect();
    assert_steer_delivered_after_the_tools(&types);
    let cancelled = log.entries.iter().any(|e| {
        matches!(&e.body, Body::Record(Record::ToolResult(r)) if r.outcome.content.contains("not undone"))
    });
    assert!(cancelled, "{types:?}");

    // `--continue` goes on from the branch the user was on.
    let out = env.run_on(
        Wire::OpenAi,
        &server.url(),
        &["--continue", "-p", "and now?"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Continued where you were.\n");
    let log = read_session(&session).unwrap();
    let path = Dag::from_log(&log).path_to_root(log.leaf()).unwrap();
    let prompts: Vec<String> = path
        .iter()
        .filter_map(|id| match &log.get(*id).unwrap().body {
            Body::Record(Record::UserMessage { text, .. }) => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(prompts, ["start the work", "a new direction", "and now?"]);
}

/// `/new` is refused while a turn runs; once it has ended, `/new` leaves the session
/// (saying how to come back to it) and the next prompt starts a second session file
/// holding only that prompt, the one xcsh names as it exits.
#[test]
fn new_starts_a_new_session_file_with_the_next_prompt() {
    let Some((env, server)) = Env::new().in_tmux_with(long_bash_then("A fresh answer.")) else {
        return;
    };
    let tmux = env.interactive(Wire::OpenAi, &server.url(), "--permissions yolo");
    tmux.line("run the long job");
    let first = session_on(&tmux.wait_for(r#"[bash] {"command":"sleep 30"}"#, 1));
    tmux.line("/new");
    tmux.wait_for(
        "(that command cannot run during a turn: send it again once the turn ends; Ctrl-C stops it)",
        1,
    );
    tmux.keys(&["C-c"]);
    tmux.wait_for("[stopped by you]", 1);
    assert_eq!(env.sessions(), std::slice::from_ref(&first));

    let id = session_id(&first);
    tmux.line("/new");
    tmux.wait_for(
        &format!("[new session] the next prompt starts it (the last one: xcsh --resume {id})"),
        1,
    );
    tmux.turn("a fresh start", "A fresh answer.", "[done]", 1);
    tmux.ctrl_d();

    let (second, prompts) = env.after_new(&first);
    assert_eq!(prompts, [["run the long job"], ["a fresh start"]]);
    assert_contains(
        &tmux.screen(),
        &format!(
            "to continue this session: xcsh --resume {}",
            session_id(&second)
        ),
    );
}
