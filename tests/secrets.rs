//! Secrets stay out (§21.5): the real `xcsh` binary with `OPENAI_API_KEY` set; bash
//! does not get the key, provider errors quoting it (retried or final) are redacted, and the key is in
//! no file under `$XCSH_HOME` (session log, index, cassette); `[shell_env]`
//! include and exclude change what bash gets.

mod support;

use std::path::{Path, PathBuf};

use support::assert_contains;
use support::env::{Env, bodies, files_under, stderr, tool_outcomes};
use support::mock_server::{MockServer, Reply};
use support::sse::Wire;
use xcsh_log::{Body, Record};
use xcsh_machine::{StepOutcome, StreamEvent};

const KEY: &str = "sk-test-a1b2c3d4e5f6g7h8";
const PLACEHOLDER: &str = "[redacted:OPENAI_API_KEY]";

/// The files under `dir` whose bytes contain `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    files_under(dir)
        .into_iter()
        .filter(|p| {
            let bytes = std::fs::read(p).unwrap();
            bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
        })
        .collect()
}

/// The error of the session's failed step.
fn step_error(path: &Path) -> String {
    bodies(path)
        .find_map(|b| match b {
            Body::Record(Record::Step(s)) => match s.outcome {
                StepOutcome::Failed { error } => Some(error.message),
                StepOutcome::Completed | StepOutcome::Aborted => None,
            },
            _ => None,
        })
        .unwrap()
}

/// The reasons of the session's recorded retries.
fn retry_reasons(path: &Path) -> Vec<String> {
    bodies(path)
        .filter_map(|b| match b {
            Body::Record(Record::Step(s)) => Some(s.events),
            _ => None,
        })
        .flatten()
        .filter_map(|t| match t.event {
            StreamEvent::Retrying { reason, .. } => Some(reason),
            _ => None,
        })
        .collect()
}

fn bash_call(command: &str) -> Reply {
    let args = serde_json::json!({ "command": command }).to_string();
    Reply::openai_call("call_1", "bash", &args, 10)
}

fn unauthorized_quoting_the_key() -> Reply {
    let body = serde_json::json!({"error": {
        "message": format!("Incorrect API key provided: {KEY}"),
        "type": "invalid_request_error",
        "code": "invalid_api_key",
    }});
    Reply::error(401, &body.to_string(), &[])
}

#[test]
fn the_key_reaches_neither_bash_nor_any_file_under_xcsh_home() {
    let env = Env::new()
        .with_var("OPENAI_API_KEY", KEY)
        .with_var("XCSH_TEST_PLAIN", "kept-as-is");
    std::fs::create_dir_all(env.home()).unwrap();
    let cassette = env.home().join("rec.jsonl");
    let rate_limited = serde_json::json!({"error": {
        "message": format!("Rate limit reached for key {KEY}"),
        "type": "rate_limit",
    }});
    let server = MockServer::start(vec![
        Reply::error(429, &rate_limited.to_string(), &[("retry-after", "0")]),
        bash_call("echo \"key=$OPENAI_API_KEY\"; env"),
        unauthorized_quoting_the_key(),
    ]);
    let out = env.run_on(
        Wire::OpenAi,
        &server.url(),
        &[
            "--record",
            cassette.to_str().unwrap(),
            "-p",
            "print the key",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_contains(
        &stderr(&out),
        &format!(
            "HTTP 401 Unauthorized: Incorrect API key provided: {PLACEHOLDER} (invalid_api_key)"
        ),
    );

    let session = env.only_session();
    let outcomes = tool_outcomes(&session);
    assert_eq!(outcomes.len(), 1);
    let bash = &outcomes[0].content;
    assert_contains(bash, "stdout:\nkey=\n");
    assert_contains(bash, "XCSH_TEST_PLAIN=kept-as-is");
    assert!(!bash.contains("OPENAI_API_KEY"), "{bash}");
    assert_eq!(
        step_error(&session),
        format!(
            "HTTP 401 Unauthorized: Incorrect API key provided: {PLACEHOLDER} (invalid_api_key)"
        )
    );

    // The model's second request carried the bash output: no key there either.
    let received = server.received();
    assert_eq!(received.len(), 3);
    assert!(!received[2].body.contains(KEY));
    assert_eq!(
        retry_reasons(&session),
        [format!(
            "HTTP 429 Too Many Requests: Rate limit reached for key {PLACEHOLDER} (rate_limit)"
        )]
    );

    assert!(cassette.is_file());
    // Walks every file: the log, its lock-free neighbours, the cassette. (A log this
    // small is indexed in memory only; an index file is built from the log's lines.)
    let all = files_under(&env.home());
    assert!(all.contains(&cassette) && all.contains(&session), "{all:?}");
    assert_eq!(files_holding(&env.home(), KEY), Vec::<PathBuf>::new());
    let holding = files_holding(&env.home(), PLACEHOLDER);
    assert!(holding.contains(&cassette), "{holding:?}");
    assert!(holding.contains(&session), "{holding:?}");
    env.assert_replays_clean(&session);
}

#[test]
fn a_credential_bash_gets_by_include_is_redacted_in_the_result_and_replays_clean() {
    let env = Env::new().with_var("OPENAI_API_KEY", KEY);
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.home().join("config.toml"),
        "[shell_env]\ninclude = [\"openai_api_*\"]\n",
    )
    .unwrap();
    let script = env.script(
        "s.jsonl",
        &[
            r#"{"tool_calls":[{"name":"bash","arguments":{"command":"echo \"key=$OPENAI_API_KEY\""}}]}"#,
            r#"{"text":"done"}"#,
        ],
    );
    let out = env.run_standard(&script, &["-p", "print the key"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let session = env.only_session();
    let outcomes = tool_outcomes(&session);
    assert!(
        outcomes[0]
            .content
            .contains(&format!("stdout:\nkey={PLACEHOLDER}\n")),
        "{}",
        outcomes[0].content
    );
    assert_eq!(files_holding(&env.home(), KEY), Vec::<PathBuf>::new());
    env.assert_replays_clean(&session);
}

#[test]
fn shell_env_include_keeps_a_secret_named_variable_and_exclude_removes_more() {
    let env = Env::new()
        .with_var("MY_BUILD_TOKEN", "tok")
        .with_var("OTHER_TOKEN", "other")
        .with_var("AWS_REGION", "eu-west-1")
        .with_var("XCSH_TEST_PLAIN", "plain");
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.home().join("config.toml"),
        "profile = \"p\"\n[shell_env]\ninclude = [\"NOT_THIS\"]\n\
         [profiles.p.shell_env]\ninclude = [\"my_build_*\"]\nexclude = [\"AWS_*\"]\n",
    )
    .unwrap();
    let script = env.script(
        "s.jsonl",
        &[
            r#"{"tool_calls":[{"name":"bash","arguments":{"command":"env | grep -E '^(MY_BUILD_TOKEN|OTHER_TOKEN|AWS_REGION|XCSH_TEST_PLAIN)=' | sort"}}]}"#,
            r#"{"text":"done"}"#,
        ],
    );
    let out = env.run_standard(&script, &["-p", "show the env"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let outcomes = tool_outcomes(&env.only_session());
    let content = &outcomes[0].content;
    let stdout = content
        .split_once("stdout:\n")
        .and_then(|(_, rest)| rest.split_once("\nstderr:"))
        .map(|(s, _)| s)
        .unwrap();
    assert_eq!(
        stdout, "MY_BUILD_TOKEN=tok\nXCSH_TEST_PLAIN=plain",
        "{content}"
    );

    let config = env.ok(&["config"]);
    for row in [
        "shell_env.removed",
        "*KEY*, *SECRET*, *TOKEN*, *PASSWORD*, OPENAI_API_KEY, ANTHROPIC_API_KEY",
        "shell_env.include",
        "my_build_*",
        "shell_env.exclude",
        "AWS_*",
        "profile p in",
    ] {
        assert!(config.contains(row), "{row}: {config}");
    }
}
