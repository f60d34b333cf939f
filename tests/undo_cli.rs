//! `xcsh undo SESSION[@ENTRY]` from the command line (SPEC.md §17.3, §21.6): its
//! argument errors and their exit codes, the last run undone as `/undo` undoes it,
//! and a settled call's before-image removed once its result is durable.

mod support;

use support::env::{Env, first_entry, names_in, stderr, stdout};
use support::mock_server::{MockServer, Reply};
use support::sse::Wire;
use xcsh_log::Body;
use xcsh_machine::Decision;

/// A session whose one run read `f.txt` and wrote it (`old\n` → `new\n`).
fn session_with_a_write() -> (Env, std::path::PathBuf) {
    let env = Env::new()
        .with_file("f.txt", "old\n")
        .with_var("OPENAI_API_KEY", "k");
    let server = MockServer::start(Reply::openai_rewrite_of_f_txt(10).into());
    let out = env.run_on(Wire::OpenAi, &server.url(), &["-p", "rewrite f.txt"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let session = env.only_session();
    (env, session)
}

/// `xcsh undo SESSION`, which must succeed: what it printed, and the run's entry.
fn undone(env: &Env, session: &std::path::Path) -> (String, xcsh_machine::EntryId) {
    let out = env.run(&["undo", session.to_str().unwrap()]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let run = first_entry(session, |b| {
        matches!(b, Body::Record(xcsh_log::Record::UserMessage { .. }))
    });
    (stdout(&out), run)
}

/// What undo says when it reverted `file` (in the workspace) of the run at `run`,
/// then `more`.
fn reverted(env: &Env, run: xcsh_machine::EntryId, file: &str, more: &str) -> String {
    let file = env.workspace().canonicalize().unwrap().join(file);
    format!(
        "[undo] reverted the changes of the run at entry {run}: {}; the model is told with the next prompt on this branch{more}\n",
        file.display()
    )
}

/// The names in `$XCSH_HOME/blobs`, sorted.
fn blobs(env: &Env) -> Vec<String> {
    names_in(&env.home().join("blobs"))
}

#[test]
fn a_settled_write_leaves_no_before_image_behind() {
    let (env, _session) = session_with_a_write();
    assert_eq!(blobs(&env), vec!["lock".to_owned()]);
}

#[test]
fn undo_of_a_session_reverts_its_last_run_as_slash_undo_does() {
    let (env, session) = session_with_a_write();
    let (said, run) = undone(&env, &session);
    assert_eq!(said, reverted(&env, run, "f.txt", ""));
    assert_eq!(
        std::fs::read_to_string(env.workspace().join("f.txt")).unwrap(),
        "old\n"
    );
    env.assert_clean(&session);
}

#[test]
fn undo_without_a_session_is_a_usage_error() {
    let env = Env::new();
    let out = env.run(&["undo"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn undo_of_an_unknown_session_fails_naming_it() {
    let env = Env::new();
    std::fs::create_dir_all(env.home().join("sessions")).unwrap();
    let out = env.run(&["undo", "nosuch"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "xcsh: error: session nosuch: no session file or session id matches\n"
    );
}

#[test]
fn undo_at_a_name_that_is_no_label_fails_and_with_no_session_is_a_usage_error() {
    let (env, session) = session_with_a_write();
    let out = env.run(&["undo", &format!("{}@abc", session.display())]);
    let nowhere = env.run(&["undo", "nosuch@abc"]);
    assert_eq!(
        (
            out.status.code(),
            stderr(&out),
            nowhere.status.code(),
            stderr(&nowhere)
        ),
        (
            Some(1),
            format!(
                "xcsh: error: no entry or label \"abc\" in {}; it has no labels\n",
                session.display()
            ),
            Some(2),
            "xcsh: error: `nosuch@abc`: `abc` is not an entry id (N or #N)\n".to_string()
        )
    );
}

#[test]
fn undo_at_an_entry_the_session_does_not_hold_fails() {
    let (env, session) = session_with_a_write();
    let out = env.run(&["undo", &format!("{}@999", session.display())]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let last = xcsh_log::read_session(&session).unwrap().leaf();
    assert_eq!(
        stderr(&out),
        format!(
            "xcsh: error: {}: no entry 999 (the session has entries 0-{last})\n",
            session.display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(env.workspace().join("f.txt")).unwrap(),
        "new\n"
    );
}

#[test]
fn undo_at_an_entry_that_is_no_dispatch_fails_and_points_to_the_run() {
    let (env, session) = session_with_a_write();
    let out = env.run(&["undo", &format!("{}@1", session.display())]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "xcsh: error: entry 1 is not a tool call's dispatch (`tool_dispatched`); `xcsh undo SESSION` undoes the last run\n"
    );
    // The entry named by a label is the same entry.
    env.ok(&["label", session.to_str().unwrap(), "1", "ask"]);
    let by_label = env.run(&["undo", &format!("{}@ask", session.display())]);
    assert_eq!(
        (by_label.status.code(), stderr(&by_label)),
        (out.status.code(), stderr(&out))
    );
}

#[test]
fn undo_at_a_settled_call_fails_because_its_before_image_is_gone() {
    let (env, session) = session_with_a_write();
    let write = first_entry(
        &session,
        |b| matches!(b, Body::Decision(Decision::ToolDispatched { call, .. }) if call.name == "write"),
    );
    let out = env.run(&["undo", &format!("{}@{write}", session.display())]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "xcsh: error: no before-image is kept for entry {write} (`write` call_2): only a call a crash interrupted has one until it is undone; a settled call's changes are undone with its run (`/undo`, `xcsh undo SESSION`)\n"
        )
    );
    assert_eq!(
        std::fs::read_to_string(env.workspace().join("f.txt")).unwrap(),
        "new\n"
    );
}

/// What a run's `bash` commands changed is not recorded, so undo cannot put it back:
/// it says so, beside the files it reverted.
#[test]
fn undo_says_what_the_runs_bash_commands_changed_is_not_put_back() {
    let env = Env::new();
    let script = env.script(
        "s.jsonl",
        &[
            r#"{"tool_calls":[{"name":"write","arguments":{"path":"g.txt","content":"g\n"}},{"name":"bash","arguments":{"command":"echo b > b.txt"}}],"finish":"tool_calls"}"#,
            r#"{"text":"Done.","finish":"stop"}"#,
        ],
    );
    let made = env.run_standard(&script, &["--permissions", "yolo", "-p", "make files"]);
    assert!(made.status.success(), "{}{}", stdout(&made), stderr(&made));
    let session = env.only_session();
    let (said, run) = undone(&env, &session);
    assert_eq!(
        said,
        reverted(
            &env,
            run,
            "g.txt",
            ". Not put back: whatever its 1 bash command(s) changed (undo reverts what edit and write record)"
        )
    );
    assert_eq!(
        (
            env.workspace().join("g.txt").exists(),
            env.workspace().join("b.txt").exists()
        ),
        (false, true)
    );
}
