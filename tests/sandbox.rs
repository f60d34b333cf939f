//! The sandbox (SPEC.md §21.7) against the real binary: under `workspace-write`
//! bash cannot write outside the workspace or reach a server on 127.0.0.1 but
//! writes inside; `off` lets all three through; `read-only` writes nowhere;
//! SIGKILL of xcsh mid-call leaves no process of the call; the call outside the
//! sandbox is asked on a terminal, recorded and replayed, and denied with no one to
//! ask; `xcsh config` shows the mode; on a kernel without Landlock (a seccomp filter
//! makes it look so) xcsh says so once and runs with the sandbox off.

#[path = "support/pty.rs"]
mod pty;
mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use pty::Pty;
use serde_json::{Value, json};
use support::assert_contains;
use support::env::{Env, bodies, stderr, stdout, tool_outcomes};
use xcsh_log::{Body, Record};
use xcsh_machine::{SandboxConfig, SandboxMode, ToolOutcome, ToolStatus};
use xcsh_tools::testing::sandbox_supported as supported;

/// A faux script whose first step calls `tool` once per command, then says done.
fn script(env: &Env, tool: &str, commands: &[String]) -> PathBuf {
    let calls: Vec<Value> = commands
        .iter()
        .map(|c| json!({"name": tool, "arguments": {"command": c}}))
        .collect();
    let first = json!({ "tool_calls": calls }).to_string();
    env.script("s.jsonl", &[first.as_str(), r#"{"text":"done"}"#])
}

/// A fresh environment where the sandbox is supported; None elsewhere (the test then
/// passes without running).
fn sandboxed_env() -> Option<Env> {
    supported().then(Env::new)
}

/// A script whose one call, `bash_outside_sandbox`, touches `name` outside the
/// workspace; the path it touches and the script.
fn touching_outside(env: &Env, name: &str) -> (PathBuf, PathBuf) {
    let target = env.dir.path().join(name);
    let s = script(
        env,
        "bash_outside_sandbox",
        &[format!("touch {}", target.display())],
    );
    (target, s)
}

fn run(env: &Env, script: &Path, flags: &[&str]) -> Output {
    env.run_standard(script, &[flags, &["-p", "go"]].concat())
}

/// The sandbox recorded in the session's (first) prompt.
fn recorded_sandbox(session: &Path) -> Option<SandboxConfig> {
    bodies(session)
        .find_map(|b| match b {
            Body::Record(Record::UserMessage { config, .. }) => Some(config.sandbox),
            _ => None,
        })
        .flatten()
}

/// A server on 127.0.0.1 that answers every connection with `hello` (and counts
/// them); the thread ends with the test process.
fn local_server() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = std::sync::Arc::clone(&served);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
            );
        }
    });
    (port, served)
}

/// `touch OUTSIDE/x`, curl and Python to the local server, a write inside.
/// A successful run of [`three_commands`] under `--sandbox MODE`: its session, the
/// outcomes of its calls, and how many connections the local server served.
fn three_commands_under(env: &Env, mode: &str) -> (PathBuf, Vec<ToolOutcome>, usize) {
    let (port, served) = local_server();
    let s = script(env, "bash", &three_commands(env, port));
    let out = run(env, &s, &["--sandbox", mode]);
    assert!(out.status.success(), "{}", stderr(&out));
    let session = env.only_session();
    let results = tool_outcomes(&session);
    (
        session,
        results,
        served.load(std::sync::atomic::Ordering::SeqCst),
    )
}

fn three_commands(env: &Env, port: u16) -> Vec<String> {
    let outside = env.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    vec![
        format!("touch {}/x", outside.display()),
        format!("curl -sS --max-time 10 http://127.0.0.1:{port}/"),
        format!(
            "python3 -c 'import socket; s = socket.create_connection((\"127.0.0.1\", {port}), 10); print(\"connected\")'"
        ),
        "echo inside > inside.txt && cat inside.txt".to_owned(),
    ]
}

const SANDBOX_NOTE: &str = "sandbox: the command ran in the sandbox (workspace-write: it writes only inside the workspace and $TMPDIR, and has no network)";

#[test]
fn under_workspace_write_bash_cannot_write_outside_or_reach_a_local_server_but_writes_inside() {
    let Some(env) = sandboxed_env() else {
        return;
    };
    let (session, results, served) = three_commands_under(&env, "workspace-write");
    assert_eq!(results.len(), 4, "{results:#?}");
    for (i, denied) in results[..3].iter().enumerate() {
        assert_eq!(
            denied.status,
            ToolStatus::Error,
            "call {i}: {}",
            denied.content
        );
        assert!(
            denied.content.contains(SANDBOX_NOTE)
                && denied
                    .content
                    .contains("call `bash_outside_sandbox` with the same arguments"),
            "call {i}: {}",
            denied.content
        );
    }
    assert!(!env.dir.path().join("outside/x").exists());
    assert_eq!(served, 0);
    assert_eq!(results[3].status, ToolStatus::Ok, "{}", results[3].content);
    assert!(results[3].content.contains("stdout:\ninside\n"));
    assert_eq!(
        recorded_sandbox(&session),
        Some(SandboxConfig {
            mode: SandboxMode::WorkspaceWrite,
            network: false,
            always_ask: vec!["bash_outside_sandbox".into()],
            unattended: true,
        })
    );
    env.assert_clean(&session);
}

#[test]
fn with_sandbox_off_the_same_commands_all_succeed() {
    let env = Env::new();
    let (session, results, served) = three_commands_under(&env, "off");
    assert_eq!(results.len(), 4);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r.status, ToolStatus::Ok, "call {i}: {}", r.content);
        assert!(!r.content.contains("sandbox:"), "call {i}: {}", r.content);
    }
    assert!(results[1].content.contains("stdout:\nhello"));
    assert!(results[2].content.contains("stdout:\nconnected"));
    assert!(env.dir.path().join("outside/x").exists());
    assert_eq!(served, 2);
    assert_eq!(
        recorded_sandbox(&session),
        Some(SandboxConfig {
            mode: SandboxMode::Off,
            network: false,
            always_ask: Vec::new(),
            unattended: true,
        })
    );
    env.assert_clean(&session);
}

/// A seccomp filter for the child about to exec xcsh that makes
/// `landlock_create_ruleset` (syscall 444 on x86_64 and aarch64) fail with ENOSYS,
/// as on a kernel built without Landlock; everything else is allowed.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn without_landlock(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    const LD_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    const JEQ: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    const RET: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
    let op = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let filter = [
        op(LD_ABS, 0, 0, 0), // seccomp_data.nr
        op(JEQ, 0, 1, 444),
        op(RET, 0, 0, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
        op(RET, 0, 0, libc::SECCOMP_RET_ALLOW),
    ];
    // SAFETY: the closure runs between fork and exec and only makes two system
    // calls on memory prepared before the fork (`filter` lives in the closure).
    unsafe {
        command.pre_exec(move || {
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr() as *mut libc::sock_filter,
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &prog as *const libc::sock_fprog,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[test]
fn on_a_kernel_without_landlock_xcsh_says_so_once_and_runs_with_the_sandbox_off() {
    let env = Env::new();
    let outside = env.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let s = script(&env, "bash", &[format!("touch {}/x", outside.display())]);
    let mut command = env.standard(&s, &["-p", "go"]);
    without_landlock(&mut command);
    let out = command.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let said: Vec<&str> = std::str::from_utf8(&out.stderr)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("xcsh: the sandbox is off: workspace-write was asked (default)"))
        .collect();
    assert_eq!(said.len(), 1, "{}", stderr(&out));
    assert_contains(said[0], "Landlock");
    let session = env.only_session();
    assert_eq!(tool_outcomes(&session)[0].status, ToolStatus::Ok);
    assert!(
        outside.join("x").exists(),
        "with the sandbox off bash writes outside"
    );
    assert_eq!(
        recorded_sandbox(&session).map(|c| c.mode),
        Some(SandboxMode::Off)
    );
}

#[test]
fn sandbox_network_lets_a_sandboxed_command_reach_the_local_server() {
    let Some(env) = sandboxed_env() else {
        return;
    };
    let (port, served) = local_server();
    let s = script(
        &env,
        "bash",
        &[format!("curl -sS --max-time 10 http://127.0.0.1:{port}/")],
    );
    let out = run(&env, &s, &["--sandbox-network"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let results = tool_outcomes(&env.only_session());
    assert_eq!(results[0].status, ToolStatus::Ok, "{}", results[0].content);
    assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[test]
fn read_only_lets_bash_write_only_its_tmpdir_and_refuses_the_write_tool() {
    let Some(env) = sandboxed_env() else {
        return;
    };
    let first = json!({"tool_calls": [
        {"name": "bash", "arguments": {"command": "touch inside.txt"}},
        {"name": "bash", "arguments": {"command": "echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\""}},
        {"name": "write", "arguments": {"path": "new.txt", "content": "x"}},
    ]})
    .to_string();
    let s = env.script("s.jsonl", &[first.as_str(), r#"{"text":"done"}"#]);
    let out = run(&env, &s, &["--sandbox", "read-only"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let session = env.only_session();
    let results = tool_outcomes(&session);
    assert_eq!(
        results[0].status,
        ToolStatus::Error,
        "{}",
        results[0].content
    );
    assert!(
        results[0]
            .content
            .contains("sandbox: the command ran in the sandbox (read-only: it writes nowhere but $TMPDIR and has no network)"),
        "{}",
        results[0].content
    );
    assert_eq!(results[1].status, ToolStatus::Ok, "{}", results[1].content);
    assert_eq!(
        results[2],
        ToolOutcome {
            status: ToolStatus::Error,
            content: "`write` was not run: the sandbox is read-only (--sandbox read-only), so no file may be changed; tell the user what you would change instead".into(),
        }
    );
    assert!(!env.workspace().join("inside.txt").exists());
    assert!(!env.workspace().join("new.txt").exists());
    env.assert_clean(&session);
}

/// Waits (30 s at most) until `done` holds for the processes holding `marker`.
fn wait_for_processes(marker: &str, what: &str, done: impl Fn(&[(u32, String)]) -> bool) {
    support::poll(
        Duration::from_secs(30),
        Duration::from_millis(20),
        || xcsh_tools::testing::processes_holding(marker),
        |found| done(found),
        |found| format!("waited for {what}: {found:?}"),
    );
}

#[test]
fn sigkill_of_xcsh_mid_call_leaves_no_process_of_the_call() {
    let Some(env) = sandboxed_env() else {
        return;
    };
    let marker = format!("xcsh-sandbox-kill-{}", std::process::id());
    // A detached child (setsid, its own output) and the shell's own wait.
    let command = format!(
        "setsid sh -c 'sleep 300; : {marker}-detached' </dev/null >/dev/null 2>&1 & sh -c 'sleep 300; : {marker}-waited'"
    );
    let s = script(&env, "bash", &[command]);
    let mut child = env
        .standard(&s, &["--json", "go"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_processes(&marker, "both processes of the call", |p| p.len() >= 2);
    child.kill().unwrap();
    child.wait().unwrap();
    wait_for_processes(
        &marker,
        "no process of the call",
        <[(u32, String)]>::is_empty,
    );
}

#[test]
fn a_call_outside_the_sandbox_is_asked_on_the_terminal_recorded_and_replayed() {
    let Some(env) = sandboxed_env() else {
        return;
    };
    let (target, s) = touching_outside(&env, "outside-approved");
    let mut term = Pty::spawn(env.standard(&s, &["go"]));
    term.wait_for("allow `bash_outside_sandbox`", 1);
    term.send("y\r");
    let (status, seen) = term.finish();
    assert!(status.success(), "{}", String::from_utf8_lossy(&seen));
    assert!(target.exists());
    let session = env.only_session();
    let answers: Vec<String> = bodies(&session)
        .filter_map(|b| match b {
            Body::Record(Record::ApprovalAnswer { call_id, .. }) => Some(call_id.0),
            _ => None,
        })
        .collect();
    assert_eq!(answers.len(), 1);
    assert_eq!(tool_outcomes(&session)[0].status, ToolStatus::Ok);
    env.assert_clean(&session);
}

#[test]
fn without_a_terminal_a_call_outside_the_sandbox_is_denied_saying_why() {
    let Some(env) = sandboxed_env() else {
        return;
    };
    let (target, s) = touching_outside(&env, "outside-denied");
    let out = run(&env, &s, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!target.exists());
    let session = env.only_session();
    let text = std::fs::read_to_string(&session).unwrap();
    assert_contains(&text, r#""by":"no_one_to_ask""#);
    assert_contains(
        &text,
        "denied: `bash_outside_sandbox` needs the user's approval every time (it runs a command outside the sandbox), and no one can give it in this run (a one-shot run without a terminal); the call was not run",
    );
    env.assert_clean(&session);
}

#[test]
fn xcsh_config_shows_the_sandbox_and_where_it_came_from() {
    let env = Env::new();
    let defaults: Value = serde_json::from_str(&env.ok(&["config", "--json"])).unwrap();
    assert_eq!(
        defaults["sandbox"],
        json!({"value": "workspace-write", "source": {"kind": "default"}})
    );
    assert_eq!(
        defaults["sandbox_network"],
        json!({"value": false, "source": {"kind": "default"}})
    );
    std::fs::create_dir_all(env.home()).unwrap();
    let config = env.home().join("config.toml");
    std::fs::write(
        &config,
        "sandbox = \"read-only\"\n[profiles.open]\nsandbox = \"off\"\nsandbox_network = true\n",
    )
    .unwrap();
    let from_file: Value = serde_json::from_str(&env.ok(&["config", "--json"])).unwrap();
    assert_eq!(
        from_file["sandbox"],
        json!({"value": "read-only", "source": {"kind": "file", "path": config}})
    );
    let table = env.ok(&["config", "--profile", "open"]);
    let row = table
        .lines()
        .find(|l| l.contains(" sandbox "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(
        row.contains(" off ") && row.contains("profile open in"),
        "{row}"
    );

    std::fs::write(&config, "sandbox = \"strict\"\n").unwrap();
    let bad = env.run(&["config"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains(&format!(
            "sandbox = \"strict\" ({}): use read-only, workspace-write or off",
            config.display()
        )),
        "{}{}",
        stdout(&bad),
        stderr(&bad)
    );
}
