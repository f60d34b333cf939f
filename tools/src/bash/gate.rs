//! The gate of a shell started before its call's dispatch is durable (SPEC.md §21.4):
//! bash is spawned and starts up (exec, loading, its own start-up) while the log
//! syncs, and runs nothing of the command until the runtime opens the gate. A gate
//! that closes without opening (the sync failed, the call was dropped, xcsh died)
//! makes the shell exit before the command: the gate fails closed.
//!
//! How: bash reads the file named by `BASH_ENV` whole, then runs it, before the
//! `-c` command; here that file is its stdin, a pipe that holds [`HOLD`] before the
//! shell is spawned. [`HOLD`] ends in a call of the check with no word, which
//! exits; [`OPEN`], written once the dispatch is durable, completes that call with
//! `go` and leaves no trace: the check and `BASH_ENV` unset, stdin `/dev/null` as
//! an ungated shell's. A shell that would not honour `BASH_ENV` (not GNU bash,
//! POSIX mode, privileged) would run its command at once, so [`holds`] tries the
//! shell once before any call is gated.

use std::io::{self, PipeWriter, Write};
use std::process::{Command, Stdio};

/// Read whole before any of it runs; ends in the check's call with no word.
const HOLD: &[u8] = b"__xcsh_gate() { [ \"$1\" = go ] || exit 125; }; __xcsh_gate";

/// Completes the check's call with `go`; then nothing of the gate is left.
const OPEN: &[u8] = b" go; unset -f __xcsh_gate; unset BASH_ENV; exec </dev/null\n";

/// The exit code of a shell whose gate closed without opening.
pub(crate) const HELD_EXIT: i32 = 125;

/// The runtime's end of a closed gate; dropped without [`Gate::open`], the shell
/// exits [`HELD_EXIT`] without running its command.
#[derive(Debug)]
pub(crate) struct Gate(PipeWriter);

impl Gate {
    /// Makes `command` (a `bash -c`) start held at a new gate: its stdin is the gate's
    /// pipe, which already holds [`HOLD`], so that no moment of the shell's life
    /// sees a gate without its check. (The pipe's ends are close-on-exec: no other
    /// process started meanwhile inherits them.)
    pub(crate) fn hold(command: &mut Command) -> io::Result<Gate> {
        let (reader, mut writer) = io::pipe()?;
        writer.write_all(HOLD)?;
        command.env("BASH_ENV", "/dev/stdin").stdin(reader);
        Ok(Gate(writer))
    }

    /// Lets the shell run its command. An error means the shell is gone already
    /// (its exit status says why).
    pub(crate) fn open(mut self) -> io::Result<()> {
        self.0.write_all(OPEN)
    }
}

/// Whether a shell built by `command` (a `bash -c 'printf ran'` with the call's
/// environment) honours the gate: held and closed without opening, it must exit
/// [`HELD_EXIT`] having printed nothing. Takes one shell start (about 1.5 ms).
pub(crate) fn holds(mut command: Command) -> bool {
    let Ok(gate) = Gate::hold(&mut command) else {
        return false;
    };
    command.stdout(Stdio::piped()).stderr(Stdio::null());
    let Ok(child) = command.spawn() else {
        return false;
    };
    drop(gate);
    child
        .wait_with_output()
        .is_ok_and(|out| out.status.code() == Some(HELD_EXIT) && out.stdout.is_empty())
}

#[cfg(test)]
mod tests {
    use super::super::{Args, DEFAULT_TIMEOUT, Shells, finish};
    use crate::ToolProgress;
    use crate::caps::Caps;
    use std::path::Path;
    use tokio_util::sync::CancellationToken;
    use xcsh_log::secrets::{EnvPolicy, ShellEnv};
    use xcsh_machine::{CallId, ToolOutcome, ToolStatus};
    use xcsh_ports::Durable;

    fn env() -> ShellEnv {
        EnvPolicy::default().apply([("PATH".into(), std::env::var_os("PATH").unwrap_or_default())])
    }

    /// One bash call, its shell gated or not, with `durable` and `cancel`.
    async fn call(
        root: &Path,
        command: &str,
        gated: bool,
        durable: Durable,
        cancel: CancellationToken,
    ) -> ToolOutcome {
        let args = Args {
            command: command.into(),
            timeout_ms: None,
        };
        let shells = Shells::new(root, env(), DEFAULT_TIMEOUT);
        match shells.start(&CallId("c1".into()), None, &args, gated) {
            Ok(shell) => {
                finish(
                    shell,
                    Caps::default(),
                    None,
                    cancel,
                    ToolProgress::none(),
                    durable,
                )
                .await
            }
            Err(outcome) => outcome,
        }
    }

    /// The result without its `duration:` line (the one line that differs per run).
    fn timeless(outcome: &ToolOutcome) -> (ToolStatus, String) {
        let lines: Vec<&str> = outcome
            .content
            .lines()
            .filter(|l| !l.starts_with("duration: "))
            .collect();
        (outcome.status, lines.join("\n"))
    }

    #[tokio::test]
    async fn a_gated_shell_runs_its_command_as_an_ungated_one_once_durable() {
        let dir = tempfile::tempdir().unwrap();
        // Everything the gate could leave behind: variables, functions, stdin,
        // arguments, options, the last status.
        let command =
            r#"s=$?; env | sort; declare -F; readlink /proc/$$/fd/0; echo "$s $0 $# $-"; cat"#;
        let ungated = call(
            dir.path(),
            command,
            false,
            Durable::now(),
            CancellationToken::new(),
        )
        .await;
        let (make, durable) = Durable::pending();
        // The call spawns its shell and waits at the gate; then the sync is done.
        let (gated, ()) = tokio::join!(
            call(dir.path(), command, true, durable, CancellationToken::new()),
            async { make.done() },
        );
        assert_eq!(ungated.status, ToolStatus::Ok, "{}", ungated.content);
        assert_eq!(timeless(&gated), timeless(&ungated));
    }

    #[tokio::test]
    async fn a_gate_that_closes_without_opening_runs_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (make, durable) = Durable::pending();
        drop(make); // the sync failed
        let outcome = call(
            dir.path(),
            "touch ran",
            true,
            durable,
            CancellationToken::new(),
        )
        .await;
        assert!(!dir.path().join("ran").exists());
        assert_eq!(
            timeless(&outcome),
            (
                ToolStatus::Error,
                "exit code: 125\nthe command was not run: the call ended before its dispatch was durable (the shell exited 125 at its gate)\nstdout: (empty)\nstderr: (empty)".to_owned()
            )
        );
    }

    #[tokio::test]
    async fn a_gated_call_cancelled_before_its_dispatch_is_durable_runs_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (_make, durable) = Durable::pending();
        let cancel = CancellationToken::new();
        cancel.cancel();
        let outcome = call(dir.path(), "touch ran", true, durable, cancel).await;
        assert!(!dir.path().join("ran").exists());
        assert_eq!(outcome.status, ToolStatus::Cancelled, "{}", outcome.content);
    }

    #[test]
    fn the_gate_holds_for_this_machines_bash_and_is_off_when_the_env_changes_its_start_up() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Shells::new(dir.path(), env(), DEFAULT_TIMEOUT).gate_holds());
        let path = std::env::var_os("PATH").unwrap_or_default();
        for var in ["BASH_ENV", "ENV", "SHELLOPTS", "POSIXLY_CORRECT"] {
            let env = EnvPolicy::default()
                .apply([("PATH".into(), path.clone()), (var.into(), "x".into())]);
            let shells = Shells::new(dir.path(), env, DEFAULT_TIMEOUT);
            assert!(!shells.gate_holds(), "{var}");
        }
    }
}
