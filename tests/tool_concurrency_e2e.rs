//! `--max-parallel-tools N` and `max_parallel_tools` in config.toml against the real
//! binary (SPEC.md §14.1, §16.2, §22.3): validated (0 is a usage error naming the
//! flag or the key), shown by `xcsh config`, and whatever the limit, a step's
//! `tool_result` entries follow its dispatch order.

mod support;

use support::env::{Env, lines, stderr};

/// The `call_id`s of a session's `tool_dispatched` and of its `tool_result` entries,
/// in file order.
fn dispatch_and_settlement(path: &std::path::Path) -> (Vec<String>, Vec<String>) {
    let mut dispatched = Vec::new();
    let mut settled = Vec::new();
    for line in lines(path) {
        match line["type"].as_str().unwrap() {
            "tool_dispatched" => {
                dispatched.push(line["data"]["call"]["id"].as_str().unwrap().to_string());
            }
            "tool_result" => settled.push(line["data"]["call_id"].as_str().unwrap().to_string()),
            _ => {}
        }
    }
    (dispatched, settled)
}

#[test]
fn max_parallel_tools_0_on_the_command_line_is_a_usage_error_naming_the_flag() {
    let env = Env::new();
    let script = env.script("s.jsonl", &[r#"{"text":"done"}"#]);
    let out = env.run_script(&script, &["--max-parallel-tools", "0", "-p", "go"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "error: invalid value '0' for '--max-parallel-tools <N>': 0 is not in 1..{}\n\nFor more information, try '--help'.\n",
            u64::MAX
        )
    );
    assert!(
        !env.home().join("sessions").exists(),
        "no session was started"
    );
}

#[test]
fn max_parallel_tools_0_in_the_config_file_is_a_usage_error_naming_the_key_and_the_file() {
    let env = Env::new();
    std::fs::create_dir_all(env.home()).unwrap();
    let config = env.home().join("config.toml");
    std::fs::write(&config, "max_parallel_tools = 0\n").unwrap();
    let script = env.script("s.jsonl", &[r#"{"text":"done"}"#]);
    let out = env.run_script(&script, &["-p", "go"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "xcsh: error: max_parallel_tools must be at least 1 ({})\n",
            config.display()
        )
    );
}

#[test]
fn xcsh_config_shows_max_parallel_tools_and_where_it_came_from() {
    let env = Env::new();
    let defaults: serde_json::Value = serde_json::from_str(&env.ok(&["config", "--json"])).unwrap();
    assert_eq!(
        defaults["max_parallel_tools"],
        serde_json::json!({"value": 8, "source": {"kind": "default"}})
    );
    std::fs::create_dir_all(env.home()).unwrap();
    let config = env.home().join("config.toml");
    std::fs::write(&config, "max_parallel_tools = 3\n").unwrap();
    let from_file: serde_json::Value =
        serde_json::from_str(&env.ok(&["config", "--json"])).unwrap();
    assert_eq!(
        from_file["max_parallel_tools"],
        serde_json::json!({"value": 3, "source": {"kind": "file", "path": config}})
    );
}

#[test]
fn with_max_parallel_tools_1_an_interrupt_settles_the_waiting_calls_without_starting_them() {
    let env = Env::new();
    // A long sleep holds the only slot; the three calls after it wait.
    let script = env.script(
        "s.jsonl",
        &[
            r#"{"tool_calls":[{"name":"sleep","arguments":{"ms":600000}},{"name":"echo","arguments":{"x":1}},{"name":"sleep","arguments":{"ms":0}},{"name":"echo","arguments":{"x":2}}]}"#,
            r#"{"text":"never reached"}"#,
        ],
    );
    let user = env.file("user.jsonl", r#"{"after":"tool_call","interrupt":true}"#);
    let out = env.run_script(
        &script,
        &[
            "--max-parallel-tools",
            "1",
            "--user-script",
            user.to_str().unwrap(),
            "-p",
            "go",
        ],
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let session = env.only_session();
    let (dispatched, settled) = dispatch_and_settlement(&session);
    assert_eq!(dispatched.len(), 4);
    assert_eq!(settled, dispatched, "settled in dispatch order");
    let contents: Vec<String> = lines(&session)
        .iter()
        .filter(|l| l["type"] == "tool_result")
        .map(|l| format!("{} {}", l["data"]["status"], l["data"]["content"]))
        .collect();
    let waited = |name: &str| {
        format!(
            "\"cancelled\" \"`{name}` was cancelled by the user before it started (it was waiting: at most 1 tool calls run at once); it did nothing\""
        )
    };
    assert_eq!(
        contents,
        vec![
            "\"cancelled\" \"sleep cancelled by the user; side effects it already had were not undone\"".to_string(),
            waited("echo"),
            waited("sleep"),
            waited("echo"),
        ]
    );
    env.assert_replays_clean(&session);
}
