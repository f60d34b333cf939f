//! Tests of the sandbox: real bash calls through `StandardTools` under each mode.

use super::*;
use crate::testing::sandbox_supported as supported;
use crate::{StandardTools, ToolExecutor, ToolOptions};
use tokio_util::sync::CancellationToken;
use xcsh_machine::{CallId, ToolCall, ToolOutcome, ToolStatus};

/// A workspace and the standard tools sandboxed in `mode` (no network), or nothing
/// where this kernel cannot sandbox (the test is then skipped).
fn sandboxed(mode: SandboxMode) -> Option<(tempfile::TempDir, StandardTools)> {
    if !supported() {
        return None;
    }
    let ws = tempfile::tempdir().unwrap();
    let options = ToolOptions {
        sandbox: SandboxPolicy {
            mode,
            network: false,
        },
        ..ToolOptions::default()
    };
    let tools = StandardTools::with_options(ws.path(), options).unwrap();
    Some((ws, tools))
}

async fn call(tools: &StandardTools, name: &str, arguments: serde_json::Value) -> ToolOutcome {
    tools
        .execute(
            ToolCall {
                id: CallId("c1".into()),
                name: name.into(),
                arguments: arguments.to_string(),
            },
            CancellationToken::new(),
        )
        .await
}

async fn bash(tools: &StandardTools, command: &str) -> ToolOutcome {
    call(tools, "bash", serde_json::json!({ "command": command })).await
}

#[tokio::test]
async fn workspace_write_lets_bash_write_inside_and_in_tmpdir_but_not_outside() {
    let Some((ws, tools)) = sandboxed(SandboxMode::WorkspaceWrite) else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let inside = bash(
        &tools,
        "echo a > inside.txt && echo b > \"$TMPDIR/t\" && echo c > /dev/null && cat \"$TMPDIR/t\"",
    )
    .await;
    assert_eq!(inside.status, ToolStatus::Ok, "{}", inside.content);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("inside.txt")).unwrap(),
        "a\n"
    );

    let target = outside.path().join("x");
    let refused = bash(&tools, &format!("touch {}", target.display())).await;
    assert_eq!(refused.status, ToolStatus::Error, "{}", refused.content);
    assert!(!target.exists());
    assert!(
        refused.content.contains("Permission denied")
            && refused.content.contains(
                "sandbox: the command ran in the sandbox (workspace-write: it writes only inside the workspace and $TMPDIR, and has no network), and its output says `Permission denied`: the sandbox probably refused it. If this one command must run outside the sandbox, call `bash_outside_sandbox` with the same arguments; the user is asked to approve it"
            ),
        "{}",
        refused.content
    );
}

#[tokio::test]
async fn bash_outside_sandbox_writes_where_bash_may_not() {
    let Some((_ws, tools)) = sandboxed(SandboxMode::WorkspaceWrite) else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("x");
    let done = call(
        &tools,
        OUTSIDE_TOOL,
        serde_json::json!({ "command": format!("touch {}", target.display()) }),
    )
    .await;
    assert_eq!(done.status, ToolStatus::Ok, "{}", done.content);
    assert!(target.exists());
}

#[tokio::test]
async fn read_only_refuses_writes_in_the_workspace_and_the_file_tools() {
    let Some((ws, tools)) = sandboxed(SandboxMode::ReadOnly) else {
        return;
    };
    let refused = bash(&tools, "touch inside.txt").await;
    assert_eq!(refused.status, ToolStatus::Error, "{}", refused.content);
    assert!(!ws.path().join("inside.txt").exists());
    assert!(refused.content.contains("sandbox: the command ran in the sandbox (read-only: it writes nowhere but $TMPDIR and has no network)"), "{}", refused.content);
    let tmp = bash(&tools, "echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"").await;
    assert_eq!(tmp.status, ToolStatus::Ok, "{}", tmp.content);

    let write = call(
        &tools,
        "write",
        serde_json::json!({ "path": "new.txt", "content": "x" }),
    )
    .await;
    assert_eq!(
        write,
        ToolOutcome {
            status: ToolStatus::Error,
            content: "`write` was not run: the sandbox is read-only (--sandbox read-only), so no file may be changed; tell the user what you would change instead".into()
        }
    );
    assert!(!ws.path().join("new.txt").exists());
}

#[tokio::test]
async fn a_sandboxed_call_runs_as_the_init_of_its_own_pid_namespace_and_its_background_dies_with_it()
 {
    let Some((_ws, tools)) = sandboxed(SandboxMode::WorkspaceWrite) else {
        return;
    };
    let marker = format!("xcsh-pidns-marker-{}", std::process::id());
    // `$$` is the shell's pid in its namespace; the detached child holds no pipe.
    let done = bash(
        &tools,
        &format!(
            "echo pid=$$; setsid sh -c 'sleep 300; : {marker}' </dev/null >/dev/null 2>&1 & id -u"
        ),
    )
    .await;
    assert_eq!(done.status, ToolStatus::Ok, "{}", done.content);
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    assert!(
        done.content.contains(&format!("stdout:\npid=1\n{uid}\n")),
        "{}",
        done.content
    );
    assert_eq!(crate::testing::processes_holding(&marker), Vec::new());
}

#[test]
fn the_tcp_and_socket_rules_are_lifted_with_network() {
    if !supported() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let sandbox = |network| {
        let mode = SandboxMode::WorkspaceWrite;
        Sandbox::new(ws.path(), SandboxPolicy { mode, network }).unwrap()
    };
    let with = sandbox(true);
    assert!(with.filter.is_empty());
    let without = sandbox(false);
    assert_eq!(without.filter.len(), 12);
    let tmp = without.tmp().to_owned();
    assert!(tmp.is_dir());
    drop(without);
    assert!(!tmp.exists(), "the private temporary directory is removed");
}

#[test]
fn denial_marks_are_found_in_the_output() {
    assert_eq!(
        looks_denied("touch: cannot touch '/x': Permission denied", false),
        Some("Permission denied")
    );
    assert_eq!(
        looks_denied("PermissionError: [Errno 1] Operation not permitted", true),
        Some("Operation not permitted")
    );
    let curl =
        "curl: (7) Failed to connect to 127.0.0.1 port 80 after 0 ms: Couldn't connect to server";
    assert_eq!(
        looks_denied(curl, false),
        Some("Couldn't connect to server")
    );
    assert_eq!(
        looks_denied(curl, true),
        None,
        "with the network open it is not the sandbox"
    );
    assert_eq!(
        looks_denied("cargo: could not find `Cargo.toml`", false),
        None
    );
}

#[test]
fn with_the_sandbox_the_tools_offer_the_call_outside_it_and_say_bash_is_sandboxed() {
    let Some((_ws, on)) = sandboxed(SandboxMode::WorkspaceWrite) else {
        return;
    };
    let names: Vec<String> = on.specs().into_iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "read",
            "list",
            "grep",
            "glob",
            "edit",
            "write",
            "bash",
            OUTSIDE_TOOL,
            "plan"
        ]
    );
    assert_eq!(
        on.mutating(),
        ["edit", "write", "bash", OUTSIDE_TOOL].map(String::from)
    );
    let bash = on.specs().into_iter().find(|s| s.name == "bash").unwrap();
    assert!(
        bash.description
            .ends_with("a command the sandbox refused says so in its result.")
    );
    let (_other, off) = sandboxed(SandboxMode::Off).expect("the sandbox runs here");
    assert_eq!(off.specs().len(), 8, "the seven and plan");
    assert_eq!(
        off.sandbox(),
        Some(xcsh_machine::SandboxConfig {
            mode: SandboxMode::Off,
            network: false,
            always_ask: Vec::new(),
            unattended: false,
        })
    );
}

#[test]
fn the_temporary_directory_of_a_gone_xcsh_is_removed_and_a_living_ones_kept() {
    let base = tempfile::tempdir().unwrap();
    // No process has pid 2^22 + 1 (above the kernel's pid_max limit).
    let gone = base.path().join(format!("{TMP_PREFIX}4194305-0"));
    let living = base
        .path()
        .join(format!("{TMP_PREFIX}{}-0", std::process::id()));
    let other = base.path().join("xcsh-sandbox-notapid");
    for dir in [&gone, &living, &other] {
        std::fs::create_dir(dir).unwrap();
    }
    std::fs::write(gone.join("f"), "x").unwrap();
    remove_stale_dirs(base.path());
    assert!(!gone.exists());
    assert!(living.exists());
    assert!(other.exists());
}
