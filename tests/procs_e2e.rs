//! Every process of a bash call dies with the call (SPEC §21.4, "Processes"), and
//! SIGTERM / SIGHUP to xcsh are an interrupt (§16.5): the real binary against a
//! local server, each call's processes found afterwards by a unique string in
//! their command line (`/proc/*/cmdline`).

mod support;

use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use support::env::{Env, lines, stderr, types};
use support::mock_server::{MockServer, Reply};
use support::sse::{Wire, chat, chat_usage, openai_call};
use xcsh_tools::testing::processes_holding;

/// A `sleep` argument no other test (or process) uses: `1000.<test pid><n>`.
fn seconds(n: u32) -> String {
    format!("1000.{}{n:02}", std::process::id())
}

/// Waits (bounded) until no process holds `needle`; kills and reports the ones
/// still there after 10 s.
fn assert_none_left(needle: &str) {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let left = processes_holding(needle);
        if left.is_empty() {
            return;
        }
        if Instant::now() > until {
            for (pid, _) in &left {
                let _ = std::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status();
            }
            panic!("processes of the call were left: {left:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (bounded) until some process holds `needle`.
fn wait_for_process(needle: &str) {
    let until = Instant::now() + Duration::from_secs(20);
    while processes_holding(needle).is_empty() {
        assert!(Instant::now() < until, "no process holds {needle}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn bash_call(command: &str, timeout_ms: Option<u64>) -> Reply {
    let mut args = serde_json::json!({ "command": command });
    if let Some(ms) = timeout_ms {
        args["timeout_ms"] = ms.into();
    }
    Reply::sse(openai_call(&[], "call_1", "bash", &args.to_string(), 10))
}

/// The `(status, content)` of the session's tool results.
fn results(session: &Path) -> Vec<(String, String)> {
    lines(session)
        .iter()
        .filter(|l| l["type"] == "tool_result")
        .map(|l| {
            (
                l["data"]["status"].as_str().unwrap().to_string(),
                l["data"]["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A server whose first step asks for one long bash call (with `timeout_ms`): a
/// detached `sleep SECS` and one in the call's group; its second answers `then`.
fn long_call_server(secs: &str, timeout_ms: Option<u64>, then: &str) -> MockServer {
    MockServer::start(vec![
        bash_call(
            &format!("setsid sleep {secs} > /dev/null 2>&1 & sleep {secs}"),
            timeout_ms,
        ),
        Reply::openai_text(then, 10),
    ])
}

/// Runs `command` as one bash call (then a text step), returns the output and the
/// one tool result.
fn run_call(env: &Env, command: &str) -> (Output, (String, String)) {
    let server = MockServer::start(vec![
        bash_call(command, None),
        Reply::openai_text("done", 10),
    ]);
    let out = env.run_on(Wire::OpenAi, &server.url(), &["-p", "go"]);
    let session = env.only_session();
    let mut all = results(&session);
    assert_eq!(all.len(), 1, "{}", stderr(&out));
    (out, all.remove(0))
}

/// The line of a result naming what the call left behind.
fn left_behind(content: &str) -> &str {
    content
        .lines()
        .find(|l| l.contains("it left behind"))
        .unwrap_or_else(|| panic!("no line about leftovers in: {content}"))
}

/// Checks a call that left exactly one `sleep` behind: the run completed, the
/// result names it, and it is gone. The command waits until that `sleep` runs
/// before the shell exits.
fn assert_one_sleep_killed(command: &str, n: u32) {
    let env = Env::unsandboxed();
    let secs = seconds(n);
    let command = format!(
        "{}\n until pgrep -fx 'sleep {secs}' > /dev/null; do sleep 0.01; done",
        command.replace("SECS", &secs)
    );
    let (out, (status, content)) = run_call(&env, &command);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(status, "ok", "{content}");
    let line = left_behind(&content);
    assert!(
        line.starts_with("1 process it left behind was killed: ") && line.ends_with(" (sleep)"),
        "{line}"
    );
    assert_none_left(&secs);
}

#[test]
fn a_setsid_child_dies_with_its_call_and_the_result_names_it() {
    assert_one_sleep_killed("setsid -f sleep SECS", 1);
}

#[test]
fn a_nohup_background_child_dies_with_its_call() {
    assert_one_sleep_killed("nohup sleep SECS > /dev/null 2>&1 &", 2);
}

#[test]
fn a_disowned_background_child_holding_the_output_dies_with_its_call() {
    assert_one_sleep_killed("sleep SECS & disown", 3);
}

#[test]
fn a_child_of_a_subshell_that_exited_dies_with_its_call() {
    assert_one_sleep_killed("( sleep SECS & )", 4);
}

#[test]
fn a_detached_child_that_ignores_sigterm_and_sighup_dies_with_its_call() {
    // The call ends once the detached shell's `sleep` runs (so both are there to
    // be found, the trap set before the sleep started).
    let env = Env::unsandboxed();
    let secs = seconds(5);
    let command = format!(
        "setsid bash -c 'trap \"\" TERM HUP; sleep {secs}; echo never' > /dev/null 2>&1 < /dev/null & until pgrep -fx 'sleep {secs}' > /dev/null; do sleep 0.01; done"
    );
    let (out, (status, content)) = run_call(&env, &command);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(status, "ok", "{content}");
    let line = left_behind(&content);
    assert!(
        line.starts_with("2 processes it left behind were killed: ")
            && line.contains(" (bash)")
            && line.contains(" (sleep)"),
        "{line}"
    );
    assert_none_left(&secs);
}

#[test]
fn a_call_that_leaves_nothing_says_nothing_about_leftovers() {
    let env = Env::unsandboxed();
    let (out, (status, content)) = run_call(&env, "sleep 0; echo plain");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(status, "ok");
    assert!(!content.contains("left behind"), "{content}");
    assert!(content.contains("stdout:\nplain"), "{content}");
}

#[test]
fn a_timed_out_call_kills_its_detached_children_too() {
    let env = Env::unsandboxed();
    let secs = seconds(6);
    let server = long_call_server(&secs, Some(300), "done");
    let out = env.run_on(Wire::OpenAi, &server.url(), &["-p", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (status, content) = results(&env.only_session()).remove(0);
    assert_eq!(status, "error");
    support::assert_starts_with(&content, "timed out after 300 ms");
    assert!(
        left_behind(&content).starts_with("1 process it left behind was killed: "),
        "{content}"
    );
    assert_none_left(&secs);
}

/// One step asking for two bash calls at once, `call_a` and `call_b`.
fn two_bash_calls(a: &str, b: &str) -> Reply {
    let mut frames = Vec::new();
    for (index, (id, command)) in [("call_a", a), ("call_b", b)].into_iter().enumerate() {
        let args =
            serde_json::to_string(&serde_json::json!({ "command": command }).to_string()).unwrap();
        frames.push(chat(&format!(
            r#"{{"index":0,"delta":{{"tool_calls":[{{"index":{index},"id":"{id}","type":"function","function":{{"name":"bash","arguments":{args}}}}}]}},"finish_reason":null}}"#
        )));
    }
    frames.push(chat(
        r#"{"index":0,"delta":{},"finish_reason":"tool_calls"}"#,
    ));
    frames.push(chat_usage(10, 10));
    frames.push("data: [DONE]\n\n".into());
    Reply::sse(frames)
}

#[test]
fn a_settling_call_leaves_the_detached_processes_of_a_call_still_running_alone() {
    let env = Env::unsandboxed();
    let (secs_a, secs_b) = (seconds(13), seconds(14));
    // b detaches a sleep, waits until a has settled (a's sleep is gone), then
    // checks that its own sleep still runs; both are killed when their call ends.
    let a = format!("setsid -f sleep {secs_a} > /dev/null 2>&1");
    let b = format!(
        "setsid -f sleep {secs_b} > /dev/null 2>&1\n\
         until pgrep -fx 'sleep {secs_b}' > /dev/null; do sleep 0.01; done\n\
         until ! pgrep -fx 'sleep {secs_a}' > /dev/null; do sleep 0.01; done\n\
         pgrep -fx 'sleep {secs_b}' > /dev/null && echo mine-still-runs"
    );
    let server = MockServer::start(vec![two_bash_calls(&a, &b), Reply::openai_text("done", 10)]);
    let out = env.run_on(Wire::OpenAi, &server.url(), &["-p", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let all = results(&env.only_session());
    assert_eq!(all.len(), 2);
    for (status, content) in &all {
        assert_eq!(status, "ok", "{content}");
        assert!(
            left_behind(content).starts_with("1 process it left behind was killed: "),
            "{content}"
        );
    }
    assert!(
        all[1].1.contains("stdout:\nmine-still-runs"),
        "{}",
        all[1].1
    );
    assert_none_left(&secs_a);
    assert_none_left(&secs_b);
}

/// Starts a one-shot run of one long bash call (a detached `sleep` and one in
/// the group) and returns it once both sleeps run.
fn start_long_call(env: &Env, server: &MockServer, secs: &str) -> Child {
    let child = env
        .cmd_on(Wire::OpenAi, &server.url(), &["run", "-p", "go"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while processes_holding(secs).len() < 2 {
        assert!(Instant::now() < until, "the call did not start its sleeps");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// Sends `signal` to xcsh mid-call: it exits `code`, the log records the
/// interrupt and the cancelled call, and no process of the call is left.
fn signal_mid_call(signal: i32, code: i32, n: u32) {
    let env = Env::unsandboxed();
    let secs = seconds(n);
    let server = long_call_server(&secs, None, "never asked");
    let child = start_long_call(&env, &server, &secs);
    // SAFETY: kill sends a signal to the child this test started.
    unsafe {
        libc::kill(libc::pid_t::try_from(child.id()).unwrap(), signal);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
    let session = env.only_session();
    let types = types(&session);
    assert!(types.contains(&"interrupt".to_string()), "{types:?}");
    let (status, content) = results(&session).remove(0);
    assert_eq!(status, "cancelled", "{content}");
    let last = lines(&session).pop().unwrap();
    assert_eq!(last["type"], "run_finished");
    assert_eq!(last["data"]["reason"]["kind"], "interrupted", "{last}");
    assert_none_left(&secs);
    env.assert_replays_clean(&session);
}

#[test]
fn sigterm_mid_call_settles_the_call_kills_its_processes_and_exits_143() {
    signal_mid_call(libc::SIGTERM, 143, 7);
}

#[test]
fn sighup_mid_call_settles_the_call_kills_its_processes_and_exits_129() {
    signal_mid_call(libc::SIGHUP, 129, 8);
}

/// The parent and the process group of process `pid` (from `/proc/PID/stat`), or
/// none once it is gone.
fn parent_and_group(pid: u32) -> Option<(u32, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(") ")?.1.split_whitespace().collect();
    Some((fields[1].parse().unwrap(), fields[2].parse().unwrap()))
}

/// Interactive xcsh (`--plain`, or the terminal UI) runs one long bash call; then
/// `signal` to it: it exits `code` once the call settled, the log records the
/// interrupt, and no process of the call is left.
fn signal_interactive(plain: bool, signal: i32, code: i32, n: u32) {
    if !support::tmux::tmux_available() {
        return;
    }
    let env = Env::unsandboxed();
    let secs = seconds(n);
    let server = long_call_server(&secs, None, "never asked");
    let tmux = if plain {
        env.interactive(Wire::OpenAi, &server.url(), "--permissions yolo")
    } else {
        env.tui(Wire::OpenAi, &server.url(), "--permissions yolo", "")
    };
    tmux.line("go");
    wait_for_process(&secs);
    // The sleep still in the call's group is a child of the shell, which leads the
    // group and is xcsh's child. (The shell's own command line holds `secs` too, so
    // two holders can be the shell and the detached sleep, before the shell forked
    // its foreground sleep: wait for that one.)
    let until = Instant::now() + Duration::from_secs(20);
    let shell = loop {
        let found = processes_holding(&secs)
            .into_iter()
            .filter_map(|(pid, _)| parent_and_group(pid))
            .find(|(parent, group)| parent == group);
        if let Some((shell, _)) = found {
            break shell;
        }
        assert!(Instant::now() < until, "the call did not start its sleeps");
        std::thread::sleep(Duration::from_millis(20));
    };
    let xcsh = parent_and_group(shell).expect("the shell runs").0;
    // SAFETY: kill sends a signal to the xcsh this test started (in tmux).
    unsafe {
        libc::kill(libc::pid_t::try_from(xcsh).unwrap(), signal);
    }
    assert_eq!(tmux.wait_exit(), code, "{}", tmux.screen());
    let session = env.only_session();
    let types = types(&session);
    assert!(types.contains(&"interrupt".to_string()), "{types:?}");
    assert_eq!(results(&session).remove(0).0, "cancelled");
    assert_eq!(types.last().unwrap(), "run_finished", "{types:?}");
    assert_none_left(&secs);
}

/// One `signal_interactive` test a row: `name: plain, signal => exit code, sleep n;`.
macro_rules! signal_interactive_tests {
    ($($name:ident: $plain:expr, $signal:expr => $code:expr, $n:expr;)*) => {
        $(
            #[test]
            fn $name() {
                signal_interactive($plain, $signal, $code, $n);
            }
        )*
    };
}

signal_interactive_tests! {
    sigterm_to_the_plain_interactive_mode_mid_call_settles_it_and_exits_143: true, libc::SIGTERM => 143, 9;
    sighup_to_the_plain_interactive_mode_mid_call_settles_it_and_exits_129: true, libc::SIGHUP => 129, 10;
    sigterm_to_the_terminal_ui_mid_call_settles_it_and_exits_143: false, libc::SIGTERM => 143, 11;
    sighup_to_the_terminal_ui_mid_call_settles_it_and_exits_129: false, libc::SIGHUP => 129, 12;
}

/// The pid of the xcsh whose `XCSH_HOME` is `home`.
fn xcsh_of(home: &Path) -> u32 {
    let bin = std::fs::canonicalize(support::env::BIN).unwrap();
    let wanted = format!("XCSH_HOME={}", home.display());
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let is_xcsh = std::fs::read_link(entry.path().join("exe")).is_ok_and(|exe| exe == bin);
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if is_xcsh && environ.split(|b| *b == 0).any(|v| v == wanted.as_bytes()) {
            return pid;
        }
    }
    panic!("no xcsh runs with {wanted}");
}

/// The children of process `pid` (every thread's).
fn children_of(pid: u32) -> Vec<String> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let text = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        out.extend(text.split_whitespace().map(|c| {
            let stat = std::fs::read_to_string(format!("/proc/{c}/stat")).unwrap_or_default();
            format!("{c}: {}", stat.trim())
        }));
    }
    out
}

#[test]
fn orphans_that_exited_on_their_own_are_reaped_and_xcsh_keeps_no_zombie() {
    if !support::tmux::tmux_available() {
        return;
    }
    let env = Env::unsandboxed();
    // Two orphans reparented to xcsh that exit before the call ends: one in the
    // call's group, one in a session of its own.
    let server = MockServer::start(vec![
        bash_call(
            "( true & ); ( setsid true & ); sleep 0.3; echo finished",
            None,
        ),
        Reply::openai_text("all done", 10),
    ]);
    let tmux = env.interactive(Wire::OpenAi, &server.url(), "--permissions yolo");
    tmux.line("go");
    tmux.wait_for("all done", 1);
    let xcsh = xcsh_of(&env.home());
    assert_eq!(children_of(xcsh), Vec::<String>::new());
    let (status, content) = results(&env.only_session()).remove(0);
    assert_eq!(status, "ok");
    assert!(
        !content.contains("left behind"),
        "nothing was alive: {content}"
    );
    tmux.ctrl_d();
}
