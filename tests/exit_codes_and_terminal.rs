//! What real use found (issue 13, items 10–14), against the real binary: one exit
//! code per outcome; unknown values and wrong files named clearly; nothing on stdout
//! from a failed run; control sequences from a model or a tool never reaching a
//! terminal (the log keeps them); and no input, such as an entry id at `u64::MAX`,
//! panicking the binary.

#[path = "support/pty.rs"]
mod pty;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use support::assert_contains;
use support::env::{Env, fixture, stderr, stdout};
use xcsh_log::{Body, Entry, EntryHash, Record, read_session};

/// A one-shot run of a faux script with the test tools.
fn script_run(env: &Env, script: &str, args: &[&str]) -> Output {
    env.run_script(env.file("script.jsonl", script), args)
}

/// The path of the recorded session `name`, as a command line names it.
fn fixture_arg(name: &str) -> String {
    fixture(name).to_str().unwrap().to_string()
}

/// `xcsh COMMAND PLAIN ARGS` of the recorded session `plain`, which must exit with
/// `code`; the session's path and the output.
fn on_plain(command: &str, args: &[&str], code: i32) -> (String, Output) {
    let plain = fixture_arg("plain");
    let out = Env::new().run(&[&[command, &plain], args].concat());
    assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
    (plain, out)
}

/// stderr without its last line, `session: PATH`.
fn stderr_before_session(o: &Output) -> String {
    let text = stderr(o);
    let cut = text.trim_end().rfind('\n').map_or(0, |i| i + 1);
    assert!(text[cut..].starts_with("session: "), "{text}");
    text[..cut].to_string()
}

// Item 10: one exit code per outcome.

#[test]
fn exit_0_a_completed_run() {
    let env = Env::new();
    let out = script_run(&env, r#"{"text":"done"}"#, &["-p", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "done\n");
}

#[test]
fn exit_0_nothing_to_minimize_is_not_a_failure() {
    let env = Env::new();
    let small = env.dir.path().join("small.jsonl");
    let path = fixture("steer");
    let out = env.run(&[
        "replay",
        path.to_str().unwrap(),
        "--minimize",
        "-o",
        small.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "xcsh: {}: replays without divergence, so there is nothing to minimize (minimizing needs a divergence; try --set to replay under other settings); nothing was written\n",
            path.display()
        )
    );
    assert_eq!(stdout(&out), "");
    assert!(!small.exists());
}

#[test]
fn exit_1_an_error() {
    let env = Env::new();
    let out = script_run(
        &env,
        r#"{"text":"x"}"#,
        &["--resume", "nosuchsession", "-p", "go"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "xcsh: error: session nosuchsession: no session file or session id matches\n"
    );
}

#[test]
fn exit_2_a_usage_error_whether_clap_or_xcsh_finds_it() {
    let env = Env::new();
    let unknown_flag = env.run(&["run", "--no-such-flag"]);
    assert_eq!(
        unknown_flag.status.code(),
        Some(2),
        "{}",
        stderr(&unknown_flag)
    );
    let at_without_session = script_run(&env, r#"{"text":"x"}"#, &["--at", "3", "-p", "go"]);
    assert_eq!(
        (
            at_without_session.status.code(),
            stderr(&at_without_session)
        ),
        (
            Some(2),
            "xcsh: error: --at needs a session to branch: add --continue or --resume SESSION\n"
                .to_string()
        )
    );
    let plain = fixture_arg("plain");
    let one_side = env.run(&["diff", &plain]);
    assert_eq!(one_side.status.code(), Some(2), "{}", stderr(&one_side));
    let bad_setting = env.run(&["replay", &plain, "--set", "bogus=1"]);
    assert_eq!(
        bad_setting.status.code(),
        Some(2),
        "{}",
        stderr(&bad_setting)
    );
    // (`four` would be a label's name: a name that is no label fails with exit 1.)
    let bad_entry = env.run(&["fork", &plain, "99999999999999999999"]);
    assert_eq!(bad_entry.status.code(), Some(2), "{}", stderr(&bad_entry));
}

#[test]
fn exit_3_a_provider_error_or_a_withheld_response() {
    let env = Env::new();
    let failed = script_run(
        &env,
        r#"{"text":"x","error":"overloaded (529)"}"#,
        &["-p", "go"],
    );
    assert_eq!(failed.status.code(), Some(3), "{}", stderr(&failed));
    let filtered = script_run(
        &env,
        r#"{"text":"no","finish":"content_filter"}"#,
        &["-p", "go"],
    );
    assert_eq!(filtered.status.code(), Some(3), "{}", stderr(&filtered));
}

#[test]
fn exit_4_a_limit_stopped_the_run() {
    let env = Env::new();
    let calls = r#"{"tool_calls":[{"name":"echo","arguments":{"n":1}}]}
{"tool_calls":[{"name":"echo","arguments":{"n":2}}]}
{"text":"done"}"#;
    let steps = script_run(&env, calls, &["--max-steps", "1", "-p", "go"]);
    assert_eq!(steps.status.code(), Some(4), "{}", stderr(&steps));
    let length = script_run(&env, r#"{"text":"cut","finish":"length"}"#, &["-p", "go"]);
    assert_eq!(length.status.code(), Some(4), "{}", stderr(&length));
    let budget = script_run(
        &env,
        r#"{"tool_calls":[{"name":"echo"}],"usage":{"input":900,"output":200}}"#,
        &["--max-tokens", "1000", "-p", "go"],
    );
    assert_eq!(budget.status.code(), Some(4), "{}", stderr(&budget));
}

#[test]
fn exit_130_an_interrupted_run() {
    let env = Env::new();
    let user = env.file(
        "user.jsonl",
        r#"{"after":"tool_call","step":1,"interrupt":true}"#,
    );
    let out = script_run(
        &env,
        r#"{"tool_calls":[{"name":"sleep","arguments":{"ms":60000}}]}"#,
        &["--user-script", user.to_str().unwrap(), "-p", "wait"],
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
}

// Item 11: unknown values and wrong files are named clearly.

#[test]
fn events_rejects_an_unknown_type_and_lists_the_valid_ones() {
    let (_, out) = on_plain("events", &["--type", "tool_result,bogus"], 2);
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert_contains(&err, "invalid value 'bogus' for '--type <TYPE>'");
    for valid in [
        "session",
        "tool_result",
        "run_finished",
        "text_delta",
        "finish",
    ] {
        assert!(err.contains(valid), "{valid} is not listed: {err}");
    }
}

#[test]
fn a_directory_is_not_a_session_file() {
    let env = Env::new();
    let dir = env.dir.path().to_str().unwrap().to_string();
    let want = format!("xcsh: error: {dir}: a directory, not a session file\n");
    for args in [
        vec!["log", &dir],
        vec!["events", &dir],
        vec!["check", &dir],
        vec!["run", "--resume", &dir, "-p", "go"],
    ] {
        let out = env.run(&args);
        assert_eq!(
            (out.status.code(), stderr(&out)),
            (Some(1), want.clone()),
            "{args:?}"
        );
    }
}

#[test]
fn a_file_that_is_not_json_is_not_a_session_log() {
    let env = Env::new();
    let notes = env.file("notes.txt", "hello\nworld\n");
    let p = notes.to_str().unwrap();
    let want = format!("{p}: not a session log (line 1 is not JSON)\n");
    // Every view but `check` (below) and `diff` (which names both sides).
    let views = views_of(p)
        .into_iter()
        .filter(|args| !matches!(args[0], "check" | "diff"));
    for args in views.chain([vec!["export", p, "--format", "json"]]) {
        let out = env.run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("xcsh: error: ") && err.ends_with(&want),
            "{args:?}: {err}"
        );
        assert_eq!(err.matches(p).count(), 1, "{args:?}: the path once: {err}");
    }
    // `check` reports it as its one finding.
    let check = env.run(&["check", p]);
    assert_eq!(check.status.code(), Some(1));
    expect_test::expect![[r#"
        error   not_a_session          line 1: not a session log (line 1 is not JSON)
    "#]]
    .assert_eq(
        &stdout(&check)
            .lines()
            .next()
            .map(|l| format!("{l}\n"))
            .unwrap_or_default(),
    );
}

#[test]
fn replay_until_an_entry_past_the_end_says_which_entries_there_are() {
    let (plain, out) = on_plain("replay", &["--until", "99"], 1);
    assert_eq!(
        stderr(&out),
        format!("xcsh: error: {plain}: no entry 99 (the session has entries 0-4)\n")
    );
}

// Item 12: what a run prints, and only that.

#[test]
fn a_failed_print_run_writes_nothing_to_stdout() {
    let env = Env::new();
    let out = script_run(
        &env,
        r#"{"text":"Looking.","tool_calls":[{"name":"echo"}]}
{"text":"The status is","error":"overloaded (529)"}"#,
        &["-p", "go"],
    );
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stdout, b"");
    assert_eq!(
        stderr_before_session(&out),
        "xcsh: run failed: API error: overloaded (529)\n"
    );
}

#[test]
fn automatic_compaction_in_a_one_shot_run_is_told_on_stderr() {
    let env = Env::new();
    let script = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scripts/sessions/compaction.jsonl"),
    )
    .unwrap();
    let print = script_run(
        &env,
        &script,
        &["--compact-at", "1000", "-p", "Echo two things."],
    );
    assert_eq!(print.status.code(), Some(0), "{}", stderr(&print));
    assert_eq!(stdout(&print), "Both echoes are done.\n");
    expect_test::expect![[r#"
        xcsh: compacting the conversation (1200 input tokens)
        xcsh: compacted the conversation: 1200 → 30 tokens
    "#]]
    .assert_eq(&stderr_before_session(&print));
}

#[test]
fn model_with_the_faux_provider_prints_only_the_refusal() {
    let env = Env::new();
    let s = env.file("script.jsonl", r#"{"text":"x"}"#);
    let mut term = plain_mode(&env, &s, &["--tools", "test"]);
    term.send("/model gpt-5\r");
    term.wait_for("has no models", 1);
    prompt(&term);
    // `/help` after it: its text comes after all `/model` printed.
    term.send("/help\r");
    let seen = term.wait_for("as it lists them)", 1);
    prompt(&term);
    term.send("/exit\r");
    let (status, _) = term.finish();
    assert!(status.success());
    let refusal = seen
        .find("xcsh: /model: the faux provider plays a script and has no models")
        .unwrap_or_else(|| panic!("no refusal: {seen}"));
    let help = seen.find("while idle:").unwrap();
    assert_eq!(
        &seen[refusal..help].matches("[model]").count(),
        &0,
        "a refused `/model NAME` shows only the refusal: {seen}"
    );
}

/// Interactive xcsh in its plain line mode with `flags`, playing `script`, in a
/// terminal; returned at its first prompt.
fn plain_mode(env: &Env, script: &Path, flags: &[&str]) -> pty::Pty {
    let script = ["--script", script.to_str().unwrap()];
    let term = pty::Pty::spawn(env.cmd(&[&["--plain"], flags, &script].concat()));
    prompt(&term);
    term
}

/// Waits for the interactive prompt on the last line, ready for a line (what is
/// typed before the line editor takes over the terminal may be lost).
fn prompt(term: &pty::Pty) {
    term.wait_until("the prompt", |seen| {
        seen.rsplit('\n')
            .next()
            .is_some_and(|last| last.contains("› "))
    });
}

// Item 13: control sequences never reach a terminal.

/// A model that tries to clear the screen, retitle the window, write the clipboard
/// (OSC 52), ring the bell, and overwrite a line with a carriage return, in its text
/// and through a tool's output.
const HOSTILE_TEXT: &str =
    "Done.\u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}]52;c;cm0gLXJmIH4=\u{7}\rall good\u{9b}1A";

/// A file of the workspace that the model reads: its first line writes the
/// clipboard.
const HOSTILE_FILE: &str = "\u{1b}]52;c;cm0gLXJmIH4=\u{7} copied\nline 2\n";

fn hostile_script(env: &Env) -> String {
    std::fs::write(env.workspace().join("notes.txt"), HOSTILE_FILE).unwrap();
    let call = json!({
        "text": "Checking.",
        "tool_calls": [{"name": "read", "arguments": {"path": "notes.txt"}}],
    });
    let answer = json!({ "text": HOSTILE_TEXT });
    format!("{call}\n{answer}\n")
}

/// `xcsh run` of [`hostile_script`] with the standard tools.
fn hostile_cmd(env: &Env, args: &[&str]) -> Command {
    env.standard(env.file("hostile.jsonl", &hostile_script(env)), args)
}

fn control_bytes(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    text.chars()
        // The terminal turns each newline into CR LF.
        .filter(|&c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(0xff))
        .collect()
}

#[test]
fn model_text_and_tool_output_on_a_terminal_are_neutralized_and_the_log_keeps_the_bytes() {
    let env = Env::new();
    let streamed = pty::Pty::spawn(hostile_cmd(&env, &["go"]));
    let (status, seen) = streamed.finish();
    assert!(status.success(), "{}", String::from_utf8_lossy(&seen));
    assert_eq!(
        control_bytes(&seen),
        b"",
        "{}",
        String::from_utf8_lossy(&seen)
    );
    let shown = String::from_utf8_lossy(&seen);
    assert_contains(
        &shown,
        "Done.␛[2J␛]0;pwned␇␛]52;c;cm0gLXJmIH4=␇␍all good\\u{9b}1A",
    );
    assert_contains(
        &shown,
        "[read] Ok:      1\t␛]52;c;cm0gLXJmIH4=␇ copied (+1 lines)",
    );

    let log = read_session(&env.only_session()).unwrap();
    let last_text = log.entries.iter().rev().find_map(|e| match &e.body {
        Body::Record(Record::Step(s)) => Some(s.message.text.clone()),
        _ => None,
    });
    assert_eq!(last_text.as_deref(), Some(HOSTILE_TEXT));
}

#[test]
fn piped_print_output_keeps_the_bytes_and_stderr_is_neutralized() {
    let env = Env::new();
    let out = hostile_cmd(&env, &["-p", "go"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{HOSTILE_TEXT}\n"));
    let streamed = hostile_cmd(&env, &["go"]).output().unwrap();
    assert_eq!(stdout(&streamed), format!("Checking.\n{HOSTILE_TEXT}\n"));
    assert_eq!(
        control_bytes(&streamed.stderr),
        b"",
        "{}",
        stderr(&streamed)
    );
    assert_contains(
        &stderr(&streamed),
        "[read] Ok:      1\t␛]52;c;cm0gLXJmIH4=␇ copied (+1 lines)",
    );
}

#[test]
fn the_interactive_mode_shows_a_hostile_model_its_text_and_not_its_sequences() {
    let env = Env::new();
    let s = env.file("hostile.jsonl", &hostile_script(&env));
    let mut term = plain_mode(&env, &s, &["--permissions", "yolo"]);
    let before = term.seen().len();
    term.send("go\r");
    term.wait_for("[done]", 1);
    prompt(&term);
    term.send("/exit\r");
    let (status, seen) = term.finish();
    assert!(status.success());
    // The line editor draws with escape sequences of its own; none of the model's
    // may come through.
    assert_no_model_sequences(&String::from_utf8_lossy(&seen[before..]));
}

#[test]
fn the_terminal_ui_shows_a_hostile_model_its_text_and_not_its_sequences() {
    let env = Env::new();
    let s = env.file("hostile.jsonl", &hostile_script(&env));
    let mut cmd = env.cmd(&["--permissions", "yolo", "--script", s.to_str().unwrap()]);
    cmd.env("TERM", "xterm-256color");
    let mut term = pty::Pty::spawn(cmd);
    term.wait_for("commands", 1);
    let before = term.seen().len();
    term.send("go\r");
    term.wait_for("done", 1);
    term.send("\u{4}");
    let (status, seen) = term.finish();
    assert!(status.success());
    // The UI draws with escape sequences of its own (cursor moves, colours,
    // synchronized updates); none of the model's may come through.
    assert_no_model_sequences(&String::from_utf8_lossy(&seen[before..]));
}

/// What the hostile model wrote is on screen as visible text, and none of its
/// control sequences (OSC, BEL, clear screen, 8-bit CSI) reached the terminal.
fn assert_no_model_sequences(run: &str) {
    for sequence in ["\u{1b}]", "\u{7}", "\u{1b}[2J", "\u{9b}"] {
        assert!(
            !run.contains(sequence),
            "{sequence:?} reached the terminal: {run:?}"
        );
    }
    assert_contains(run, "␛]52;c;cm0gLXJmIH4=␇");
}

#[test]
fn the_inspect_views_neutralize_what_the_model_wrote() {
    let env = Env::new();
    let out = hostile_cmd(&env, &["-p", "go"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let session = env.only_session();
    let s = session.to_str().unwrap();
    let leaf = read_session(&session).unwrap().leaf().to_string();
    for args in [
        vec!["log", s],
        vec!["events", s],
        vec!["tree", s],
        vec!["tree", s, "--full"],
        vec!["stats", s],
        vec!["diff", s, &format!("{s}@4")],
        vec!["diff", s, &format!("{s}@4"), "--context"],
        vec!["replay", s, "--until", &leaf],
    ] {
        let out = env.run(&args);
        assert!(
            out.status.code().is_some_and(|c| c < 2),
            "{args:?}: {}",
            stderr(&out)
        );
        assert_eq!(
            control_bytes(&out.stdout),
            b"",
            "{args:?}: {}",
            stdout(&out)
        );
    }
    // A view with --json is JSON: every control character is escaped there.
    let json = env.run(&["log", s, "--json"]);
    assert_contains(&stdout(&json), r"\u001b]52;c;");
    // An export to a pipe is data: the bytes as they came.
    let md = env.run(&["export", s, "--format", "md"]);
    assert_contains(&stdout(&md), HOSTILE_TEXT);
}

// Item 14: no input panics the binary.

/// A session written by the real binary, then given new ids (every entry but the
/// header shifted so that the last one is `last`) and a new, valid hash chain.
fn shifted_session(env: &Env, last: u64) -> PathBuf {
    let out = script_run(
        env,
        r#"{"text":"Looking.","tool_calls":[{"name":"echo","arguments":{"a":1}}]}
{"text":"All done."}"#,
        &["-p", "go"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let session = env.only_session();
    let text = std::fs::read_to_string(&session).unwrap();
    let shift = last - (text.lines().count() as u64 - 1);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            for key in ["id", "parent"] {
                if let Some(id) = v[key].as_u64().filter(|&id| id > 0 || key == "parent") {
                    v[key] = json!(if id == 0 { 0 } else { id + shift });
                }
            }
            v
        })
        .collect();
    let path = env.dir.path().join("huge-ids.jsonl");
    std::fs::write(&path, chain(&lines)).unwrap();
    path
}

/// Entries given as JSON objects (`v`, `id`, `parent`, `ts`, `type`, `data`; any
/// `hash` ignored), encoded with a valid hash chain.
fn chain(lines: &[Value]) -> String {
    let mut out = String::new();
    let mut hashes: std::collections::HashMap<u64, EntryHash> = Default::default();
    for v in lines {
        let mut v = v.clone();
        v.as_object_mut().unwrap().remove("hash");
        let mut text = v.to_string();
        text.pop();
        text.push_str(&format!(",\"hash\":\"{}\"}}", "0".repeat(64)));
        let entry = Entry::decode(&text).unwrap();
        let parent_hash = entry.parent.map(|p| hashes[&p.0]);
        let (line, hash) = Entry::encode(
            entry.id,
            entry.parent,
            parent_hash.as_ref(),
            entry.ts,
            &entry.body,
        );
        hashes.insert(entry.id.0, hash);
        out.push_str(std::str::from_utf8(&line).unwrap());
    }
    out
}

/// The command lines of every view of the session `p` (and of `check`, `replay`
/// and `diff`).
fn views_of(p: &str) -> Vec<Vec<&str>> {
    vec![
        vec!["tree", p],
        vec!["tree", p, "--full"],
        vec!["log", p],
        vec!["events", p],
        vec!["stats", p],
        vec!["check", p],
        vec!["replay", p],
        vec!["export", p, "--format", "md"],
        vec!["export", p, "--format", "html"],
        vec!["diff", p, p],
    ]
}

fn assert_no_panic(env: &Env, args: &[&str]) -> Output {
    no_panic(args, env.run(args))
}

/// `out`, of `xcsh ARGS`, which must not have panicked.
fn no_panic(args: &[&str], out: Output) -> Output {
    let err = stderr(&out);
    assert!(
        out.status.code() != Some(101) && !err.contains("panicked"),
        "xcsh {args:?} panicked: {err}"
    );
    out
}

/// `xcsh run --resume SESSION` of one more step, which must not panic.
fn resume_with_more(env: &Env, session: &str) -> Output {
    let s = env.file("more.jsonl", r#"{"text":"more"}"#);
    let args = ["--resume", session, "-p", "more"];
    no_panic(&args, env.run_script(s, &args))
}

#[test]
fn resuming_a_session_whose_last_entry_id_is_u64_max_is_a_clear_error() {
    let env = Env::new();
    let path = shifted_session(&env, u64::MAX);
    let p = path.to_str().unwrap();
    let out = resume_with_more(&env, p);
    assert_eq!(
        (out.status.code(), stderr(&out)),
        (
            Some(1),
            format!(
                "xcsh: error: {p}: entry 18446744073709551615 has the largest possible id; nothing can be appended to this session\n"
            )
        )
    );
    let at = u64::MAX.to_string();
    let label = assert_no_panic(&env, &["label", p, &at, "name"]);
    assert_eq!(label.status.code(), Some(1), "{}", stderr(&label));
    let fork_out = env.dir.path().join("fork.jsonl");
    let fork = assert_no_panic(&env, &["fork", p, &at, "-o", fork_out.to_str().unwrap()]);
    assert_eq!(fork.status.code(), Some(1), "{}", stderr(&fork));
}

#[test]
fn no_view_of_a_session_with_ids_near_u64_max_panics() {
    let env = Env::new();
    let path = shifted_session(&env, u64::MAX);
    let p = path.to_str().unwrap();
    let until_the_last = vec!["replay", p, "--until", "18446744073709551615"];
    for args in views_of(p).into_iter().chain([until_the_last]) {
        let out = assert_no_panic(&env, &args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn extreme_usage_and_timestamps_in_a_log_panic_nothing() {
    let env = Env::new();
    let base = shifted_session(&env, 9);
    let text = std::fs::read_to_string(&base).unwrap();
    let big = json!(u64::MAX);
    let lines: Vec<Value> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            // The header in 1700, everything after it in 2200: more nanoseconds apart
            // than an i64 holds.
            v["ts"] = json!(if i == 0 {
                "1700-01-01T00:00:00.000Z"
            } else {
                "2200-01-01T00:00:00.000Z"
            });
            if v["type"] == "step" {
                for e in v["data"]["events"].as_array_mut().unwrap() {
                    e["ms"] = big.clone();
                }
                v["data"]["message"]["usage"] =
                    json!({"input_tokens": big, "output_tokens": big, "cache_read_tokens": big});
            }
            if v["type"] == "run_finished" {
                v["data"]["usage"] = json!({"input_tokens": big, "output_tokens": big});
            }
            if v["type"] == "user_message" {
                // Big enough for the views to write a derived index, and read it.
                v["data"]["text"] = json!("x".repeat(1 << 20));
            }
            v
        })
        .collect();
    let path = env.dir.path().join("extreme.jsonl");
    std::fs::write(&path, chain(&lines)).unwrap();
    let p = path.to_str().unwrap();
    let more = [
        vec!["events", p, "--type", "step"],
        vec!["sessions", "--all"],
    ];
    for args in views_of(p).into_iter().chain(more) {
        if args[0] == "sessions" {
            let dir = env.dir.path().join("home/sessions/extreme");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::copy(&path, dir.join("2200-01-01T00-00-00-000Z_extreme.jsonl")).unwrap();
        }
        assert_no_panic(&env, &args);
    }
    assert!(
        xcsh_log::index::index_path(&path).exists(),
        "the views that read the index had one"
    );
    let resumed = resume_with_more(&env, p);
    assert!(resumed.status.code().is_some(), "{}", stderr(&resumed));
}

// Issue 14: the fallbacks of the terminal UI.

#[test]
fn on_a_dumb_terminal_the_plain_line_mode_runs_a_turn() {
    let env = Env::new();
    let s = env.file("plain.jsonl", r#"{"text":"a plain answer"}"#);
    let mut cmd = env.cmd(&["--script", s.to_str().unwrap()]);
    cmd.env("TERM", "dumb");
    let mut term = pty::Pty::spawn(cmd);
    term.wait_for("/help for commands", 1);
    term.send("go\r");
    term.wait_for("[done]", 1);
    term.send("/exit\r");
    let (status, seen) = term.finish();
    assert!(status.success());
    let seen = String::from_utf8_lossy(&seen);
    assert_contains(&seen, "a plain answer");
    // No terminal UI: no synchronized updates, no cursor moves of its own.
    assert!(!seen.contains("\u{1b}[?2026h"), "{seen:?}");
}
