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
            vec![source_id.clone(), fork_id.clone()],
            vec![
                format!("forked from {source_id} @ 4").as_str(),
                format!("#0 session {fork_id} {}", env.workspace().display()).as_str(),
            ],
            fork_id.as_str(),
        )
    );
}
