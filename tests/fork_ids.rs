//! A fork is named by its own id everywhere (the id in its file name, which
//! `--resume` takes): `xcsh sessions`, the `tree` header and the `run_started` event
//! of a run continued in it.

mod support;

use support::env::{Env, session_id};

#[test]
fn a_fork_is_named_by_its_own_id_in_sessions_tree_and_run_started() {
    let env = Env::new().with_var("NO_COLOR", "1");
    let script = env.script("s.jsonl", &[r#"{"text":"done"}"#]);
    env.ok_script(&script, &["-p", "first"]);
    let source = env.session();
    env.ok(&["fork", source.to_str().unwrap(), "4"]);
    let fork = env
        .sessions()
        .into_iter()
        .find(|p| *p != source)
        .expect("the fork, a session of this workspace");
    let (source_id, fork_id) = (session_id(&source), session_id(&fork));
    assert_ne!(source_id, fork_id);

    let listed: Vec<String> = env
        .ok(&["sessions", "--json"])
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let tree = env.ok(&["tree", &fork_id]);
    let header: Vec<&str> = tree.lines().take(2).collect();
    let run = env.ok_script(&script, &["--json", "--resume", &fork_id, "more"]);
    let started = run
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["type"] == "run_started")
        .unwrap();
    assert_eq!(
        (listed, header, started["session_id"].as_str().unwrap(),),
        (
            // Most recently active first: the fork ends with its origin label.
            vec![fork_id.clone(), source_id.clone()],
            vec![
                format!("forked from {source_id} @ 4").as_str(),
                format!("#0 session {fork_id} {}", env.workspace().display()).as_str(),
            ],
            fork_id.as_str(),
        )
    );
}

/// A label names its entry wherever an entry is asked for: `xcsh fork S NAME` and
/// `--resume S --at NAME` go to the entry its newest label of that name is on; a name
/// that is no label is an error listing the session's labels.
#[test]
fn a_label_names_the_entry_to_fork_at_and_to_continue_from() {
    let env = Env::new().with_var("NO_COLOR", "1");
    let script = env.script("s.jsonl", &[r#"{"text":"done"}"#]);
    env.ok_script(&script, &["-p", "first"]);
    env.ok_script(&script, &["--continue", "-p", "second"]);
    let source = env.session();
    let s = source.to_str().unwrap();
    // Entries: 0 session, 1 prompt, 2 started, 3 step, 4 finished, then the second
    // turn (5-8); `other` is written last, so it comes first in the error's list.
    let labelled = (
        env.ok(&["label", s, "4", "mark"]),
        env.ok(&["label", s, "#8", "other"]),
    );

    let forked = env.ok(&["fork", s, "mark"]);
    let fork = env
        .sessions()
        .into_iter()
        .find(|p| *p != source)
        .expect("the fork");
    let ran = env.run_script(&script, &["--resume", s, "--at", "mark", "-p", "again"]);
    let branch = xcsh_log::read_session(&source).unwrap().entries[11].clone();
    let unknown = env.run(&["fork", s, "after-fix"]);
    assert_eq!(
        (
            labelled,
            forked,
            String::from_utf8_lossy(&ran.stderr).into_owned(),
            (branch.parent, branch.body.type_name()),
            unknown.status.code(),
            String::from_utf8_lossy(&unknown.stderr).into_owned(),
        ),
        (
            (
                format!("labelled entry 4 of {s} as \"mark\" (entry 9); the leaf did not move\n"),
                format!("labelled entry 8 of {s} as \"other\" (entry 10); the leaf did not move\n"),
            ),
            format!(
                "forked {s} at entry 4 into {}: 5 entries copied (ids and hashes kept); origin recorded as label #11 \"forked from {} @ 4\"\ncontinue it with: xcsh run --resume {}\n",
                fork.display(),
                session_id(&source),
                fork.display()
            ),
            format!(
                "xcsh: continuing from entry 4 on a new branch (the previous leaf was 8)\nsession: {s}\n"
            ),
            (Some(xcsh_machine::EntryId(4)), "branch"),
            Some(1),
            format!(
                "xcsh: error: no entry or label \"after-fix\" in {s}; its labels, newest first: \"other\", \"mark\"\n"
            ),
        )
    );
}
