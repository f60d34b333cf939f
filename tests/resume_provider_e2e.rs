//! `--resume` and `--continue` go on with the provider, model, base URL and faux
//! script the session last ran with (its last `provider` entry on the branch),
//! unless the command line names others (SPEC §22.2); keys still come from the
//! environment, never from the session.

mod support;

#[path = "support/pty.rs"]
mod pty;

use std::path::Path;
use std::process::Output;

use support::env::{Env, SECRET, files_under, prompts, session_id, session_of, stderr, stdout};
use support::mock_server::{MockServer, Reply};
use support::sse::Wire;

/// A one-shot run of `args` (the test tools, so the sandbox says nothing) that
/// must succeed; its output.
fn ok(env: &Env, args: &[&str]) -> Output {
    let out = env.run(&[&["run", "--tools", "test"], args].concat());
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    out
}

/// Asserts that `out`, a completed run on `session`, answered `answer` after
/// saying that it took `taken` from the session.
#[track_caller]
fn assert_continued(out: &Output, answer: &str, taken: &str, session: &Path) {
    assert_eq!(
        (stdout(out), stderr(out)),
        (
            format!("{answer}\n"),
            format!(
                "xcsh: continuing with {taken} from the session\nsession: {}\n",
                session.display()
            )
        )
    );
}

/// A server on the Anthropic wire that answers `first answer`, then `second
/// answer`; and its URL.
fn two_anthropic_answers() -> (MockServer, String) {
    let server = MockServer::start(vec![
        Reply::sse(Wire::Anthropic.text_step("first answer")),
        Reply::sse(Wire::Anthropic.text_step("second answer")),
    ]);
    let url = server.url();
    (server, url)
}

/// The flags of a session on the Anthropic wire at `url`, model `m`, with the
/// test tools.
fn on_anthropic(url: &str) -> [&str; 8] {
    [
        "--tools",
        "test",
        "--provider",
        "anthropic",
        "--base-url",
        url,
        "--model",
        "m",
    ]
}

/// What the session at `path` records of its providers, in file order: the
/// header's (its first run's), then the `data` of each `provider` entry.
fn provider_entries(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter_map(|entry| match entry["type"].as_str() {
            // The first run's provider is in the header; a change is an entry.
            Some("session") => Some(entry["data"]["provider"].clone()).filter(|p| !p.is_null()),
            Some("provider") => Some(entry["data"].clone()),
            _ => None,
        })
        .collect()
}

/// Every file under `dir` whose bytes hold `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<std::path::PathBuf> {
    files_under(dir)
        .into_iter()
        .filter(|f| String::from_utf8_lossy(&std::fs::read(f).unwrap()).contains(needle))
        .collect()
}

#[test]
fn resuming_an_anthropic_session_without_provider_flags_reaches_the_anthropic_server() {
    let env = Env::new();
    let (server, url) = two_anthropic_answers();
    // The first run has a key in its environment; the session must not keep it.
    let first = env
        .cmd(&[&["run"], &on_anthropic(&url)[..], &["-p", "hi"]].concat())
        .env("ANTHROPIC_API_KEY", SECRET)
        .output()
        .unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let session = session_of(&first);
    let id = session_id(&session);

    // As the interactive mode's parting line says: `xcsh --resume ID`.
    let out = ok(&env, &["--resume", &id, "-p", "hi again"]);
    assert_continued(
        &out,
        "second answer",
        &format!("anthropic · m · {url}"),
        &session,
    );
    let received: Vec<_> = server
        .received()
        .iter()
        .map(|r| {
            let body: serde_json::Value = serde_json::from_str(&r.body).unwrap();
            (
                r.path.clone(),
                body["model"].as_str().unwrap().to_string(),
                r.header("x-api-key").map(str::to_string),
            )
        })
        .collect();
    assert_eq!(
        received,
        [
            ("/v1/messages".into(), "m".into(), Some(SECRET.to_string())),
            // The key came from the first run's environment; this one has none.
            ("/v1/messages".into(), "m".into(), None),
        ]
    );
    assert_eq!(prompts(&session), ["hi", "hi again"]);
    // The session's log holds what the first run was made of, once (the second
    // ran with the same), and no key: no file does.
    assert_eq!(
        provider_entries(&session),
        [serde_json::json!({"provider": "anthropic", "model": "m", "base_url": url})]
    );
    assert_eq!(
        files_holding(&env.home(), SECRET),
        Vec::<std::path::PathBuf>::new()
    );
    env.assert_clean(&session);
}

#[test]
fn the_command_line_wins_over_the_sessions_provider() {
    let env = Env::new();
    let anthropic = MockServer::start(vec![Reply::sse(
        Wire::Anthropic.text_step("from anthropic"),
    )]);
    let openai = MockServer::start(vec![
        Reply::sse(Wire::OpenAi.text_step("from openai")),
        Reply::sse(Wire::OpenAi.text_step("openai again")),
    ]);
    let anthropic_url = anthropic.url();
    let first = ok(
        &env,
        &[
            "--provider",
            "anthropic",
            "--base-url",
            &anthropic_url,
            "-p",
            "hi",
        ],
    );
    let session = session_of(&first);
    let id = session_id(&session);

    // Another provider named: nothing of the session's is taken, nothing said.
    let openai_url = format!("{}/v1", openai.url());
    let out = ok(
        &env,
        &[
            "--resume",
            &id,
            "--provider",
            "openai",
            "--base-url",
            &openai_url,
            "--model",
            "m2",
            "-p",
            "now openai",
        ],
    );
    assert_eq!(
        (stdout(&out), stderr(&out)),
        (
            "from openai\n".to_string(),
            format!("session: {}\n", session.display())
        )
    );
    let to_openai = openai.received();
    assert_eq!(
        (to_openai.len(), to_openai[0].path.as_str()),
        (1, "/v1/chat/completions")
    );
    let body: serde_json::Value = serde_json::from_str(&to_openai[0].body).unwrap();
    assert_eq!(body["model"], "m2");
    assert_eq!(
        anthropic.received().len(),
        1,
        "only the first run reached it"
    );

    // The session now remembers openai: `--continue` goes on with it.
    let out = ok(&env, &["--continue", "-p", "and again"]);
    assert_continued(
        &out,
        "openai again",
        &format!("openai · m2 · {openai_url}"),
        &session,
    );
    assert_eq!(openai.received().len(), 2);
    assert_eq!(
        provider_entries(&session),
        [
            serde_json::json!({"provider": "anthropic", "model": "claude-sonnet-4-5", "base_url": anthropic_url}),
            serde_json::json!({"provider": "openai", "model": "m2", "base_url": openai_url}),
        ]
    );
    env.assert_clean(&session);
}

#[test]
fn continuing_a_scripted_session_plays_the_sessions_script_again() {
    let env = Env::new();
    let script = env.script("s.jsonl", &[r#"{"text":"scripted answer"}"#]);
    let first = ok(&env, &["--script", script.to_str().unwrap(), "-p", "hi"]);
    let session = session_of(&first);

    let out = ok(&env, &["--continue", "-p", "hi again"]);
    let taken = format!("faux · script {}", script.display());
    assert_continued(&out, "scripted answer", &taken, &session);
    // The same script given again: nothing was taken, nothing is said.
    let out = ok(
        &env,
        &[
            "--continue",
            "--script",
            script.to_str().unwrap(),
            "-p",
            "third",
        ],
    );
    assert_eq!(stderr(&out), format!("session: {}\n", session.display()));
    assert_eq!(prompts(&session), ["hi", "hi again", "third"]);
    assert_eq!(
        provider_entries(&session),
        [serde_json::json!({"provider": "faux", "script": script})]
    );
    env.assert_clean(&session);
}

/// The line the interactive mode leaves with, `to continue this session: xcsh
/// --resume ID`, works for a session it started with provider flags.
#[test]
fn the_interactive_modes_parting_line_resumes_with_the_sessions_provider() {
    let env = Env::new();
    let (server, url) = two_anthropic_answers();
    let mut term = pty::Pty::spawn(env.cmd(&[&["--plain"], &on_anthropic(&url)[..]].concat()));
    term.wait_for("/help for commands", 1);
    term.send("hi\r");
    term.wait_for("[done]", 1);
    term.send("\x04");
    let (status, seen) = term.finish();
    assert!(status.success(), "{}", String::from_utf8_lossy(&seen));
    let seen = String::from_utf8_lossy(&seen);
    let session = env.only_session();
    let parting = format!(
        "to continue this session: xcsh --resume {}",
        session_id(&session)
    );
    assert!(seen.contains(&parting), "{seen}");

    let command: Vec<&str> = parting
        .split_once(": xcsh ")
        .unwrap()
        .1
        .split(' ')
        .collect();
    let out = ok(&env, &[&command[..], &["-p", "hi again"]].concat());
    assert_continued(
        &out,
        "second answer",
        &format!("anthropic · m · {url}"),
        &session,
    );
    assert_eq!(server.received().len(), 2);
}
