//! What a first-time user meets: the missing key's error says how to try xcsh
//! without one, README's first command answers the question it asks, and `xcsh
//! replay` given no TARGET replays this workspace's newest session, as the views do.

mod support;

use support::env::{Env, session_of, stderr, stdout};
use support::{assert_contains, untimed};

#[test]
fn a_missing_key_says_how_to_try_xcsh_without_one() {
    // The sandbox off in the config: the run says nothing else on stderr.
    let env = Env::unsandboxed();
    let out = env.run(&["-p", "hi"]);
    assert_eq!(
        (out.status.code(), stdout(&out), stderr(&out)),
        (
            Some(1),
            String::new(),
            "xcsh: error: no API key for openai: set OPENAI_API_KEY; only a server on 127.0.0.1/localhost may go without one\n  without a key, README's demo plays a scripted model (no network): `xcsh run --script fixtures/scripts/demo.jsonl \"what is in the fixtures folder?\"` in xcsh's checkout; or another provider: --provider anthropic (ANTHROPIC_API_KEY)\n".to_string()
        )
    );
    let out = env.run(&["--provider", "anthropic", "-p", "hi"]);
    assert_eq!(
        (out.status.code(), stderr(&out)),
        (
            Some(1),
            "xcsh: error: no API key for anthropic: set ANTHROPIC_API_KEY; only a server on 127.0.0.1/localhost may go without one\n  without a key, README's demo plays a scripted model (no network): `xcsh run --script fixtures/scripts/demo.jsonl \"what is in the fixtures folder?\"` in xcsh's checkout; or another provider: --provider openai (OPENAI_API_KEY)\n".to_string()
        )
    );
}

/// README's first command, as README writes it, in the checkout: the script's
/// answer is about what the prompt asks.
#[test]
fn readmes_demo_answers_its_own_question() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let command = readme
        .lines()
        .find_map(|l| l.strip_prefix("cargo run -- "))
        .unwrap();
    assert_eq!(
        command,
        r#"run --script fixtures/scripts/demo.jsonl "what is in the fixtures folder?""#
    );
    let env = Env::new();
    let out = env.run_in(
        root,
        &[
            "run",
            "--script",
            "fixtures/scripts/demo.jsonl",
            "what is in the fixtures folder?",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "Let me look at the fixtures folder.\nThe fixtures folder holds data for tests and demos, no code: faux-provider scripts under scripts/ (JSON Lines, one model step per line), including the demo.jsonl that produced this answer.\n"
    );
}

#[test]
fn replay_without_a_target_replays_this_workspaces_newest_session() {
    let env = Env::new();
    let script = env.script("s.jsonl", &[r#"{"text":"done"}"#]);
    let run = |prompt: &str| {
        let out = env.run_script(&script, &["-p", prompt]);
        assert!(out.status.success(), "{}", stderr(&out));
        session_of(&out)
    };
    let _older = run("first");
    let newest = run("second");
    let out = env.run(&["replay"]);
    assert_eq!(
        (out.status.code(), untimed(&stdout(&out)), stderr(&out)),
        (
            Some(0),
            format!(
                "{}: 5 entries replayed (2 inputs, 2 decisions) in _ ms, no divergence\n",
                newest.display()
            ),
            String::new()
        )
    );
    // A workspace with no session says so, in the words of `xcsh log`.
    let empty = env.subdir("empty");
    let (replay, log) = (
        env.run_in(&empty, &["replay"]),
        env.run_in(&empty, &["log"]),
    );
    assert_eq!(
        (replay.status.code(), stderr(&replay)),
        (Some(1), stderr(&log))
    );
    assert_contains(&stderr(&replay), "no SESSION given");
}
