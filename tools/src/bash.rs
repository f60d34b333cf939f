//! `bash {command, timeout_ms?}`: `bash -c` in the workspace root with stdin at EOF,
//! in its own process group; a timeout or the cancellation token kills the whole
//! group (SIGKILL) so no grandchild survives. Its output streams to a
//! [`ToolProgress`] as it is read (transient); it and the result, made the same
//! way without it, have their terminal escapes removed. Its environment is exactly
//! [`ShellEnv`] (secrets left out) asking for no colour and no pager
//! ([`PLAIN_OUTPUT_ENV`]), plus the call's marker: when the call settles, every
//! process it left behind, in the group or not, is killed ([`procs`]).

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::caps::{CappedLines, Caps, Escapes};
use super::params::Param;
use super::procs;
use super::{CANCELLED_NOTE, OutputStream, ToolProgress};
use crate::sandbox::Sandbox;
use gate::Gate;
use xcsh_log::secrets::ShellEnv;
use xcsh_machine::{CallId, ToolOutcome, ToolStatus};
use xcsh_ports::Durable;

mod gate;

pub(crate) const NAME: &str = "bash";

/// The timeout of a call that gives no `timeout_ms`.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// The largest `timeout_ms` a call may ask for (10 minutes).
pub(crate) const MAX_TIMEOUT_MS: u64 = 600_000;

/// Set in every shell's environment over the shell environment's own values: they
/// ask programs for plain text, without colour (`NO_COLOR`, `CLICOLOR`, a terminal
/// that has none) or a pager waiting for keys. What colour still comes (a forced
/// `--color=always`) is removed from the result ([`CappedLines::write`]).
const PLAIN_OUTPUT_ENV: &[(&str, &str)] = &[
    ("NO_COLOR", "1"),
    ("CLICOLOR", "0"),
    ("TERM", "dumb"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
];

/// Removed from every shell's environment: they force colour on whatever the
/// output is.
const COLOUR_FORCING_ENV: &[&str] = &["CLICOLOR_FORCE", "FORCE_COLOR"];

/// How long to wait for the output pipes to close once the shell has ended.
const PIPE_CLOSE_BOUND: Duration = Duration::from_secs(2);

pub(crate) const DESCRIPTION: &str = "Run a shell command with `bash -c` in the workspace root. \
Standard input is empty (a command reading it sees end-of-file at once, so nothing can \
prompt). The command runs in its own process group: when the timeout (default 120000 ms, \
`timeout_ms` up to 600000) expires or the user interrupts, the whole group is killed, \
background jobs included. The result gives the exit code, the duration, stdout and stderr \
(each capped at 2000 lines / 50 KiB: a longer stream shows its start and its end, with a \
marker between them saying what was left out; redirect long output to a file and `grep` or \
`read` it). \
Use the dedicated tools rather than bash for reading, listing, searching and editing files.";

/// Added to bash's description when the sandbox is on.
pub(crate) const SANDBOXED_DESCRIPTION: &str = "It runs in a sandbox: it may write only \
inside the workspace and $TMPDIR (with --sandbox read-only only $TMPDIR), and has no network \
unless the user allowed it; a command the sandbox refused says so in its result.";

/// The description of `bash_outside_sandbox` (offered only when the sandbox is on).
pub(crate) const OUTSIDE_DESCRIPTION: &str = "Run one shell command like `bash`, but outside \
the sandbox (writes anywhere the user may write, and the network). Every call asks the user \
for approval, so use it only for a command that failed in `bash` because the sandbox refused \
it, and say why.";

pub(crate) const PARAMS: &[Param] = &[
    Param::text("command", "The command line, run as `bash -c <command>`.").required(),
    Param::integer("timeout_ms", 1, "Kill the command (and everything it started) after this many milliseconds (default 120000).")
        .at_most(MAX_TIMEOUT_MS),
];

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    command: String,
    timeout_ms: Option<u64>,
}

/// Where a pipe's output goes as it is read (transient progress), with the bytes
/// read but not sent yet: a piece is sent when it ends a line, or when the pipe has
/// nothing more ready (a prompt or a progress bar without a newline).
struct Live {
    progress: ToolProgress,
    stream: OutputStream,
    /// The live view loses escapes as the result does, so the card shows the text
    /// the model will read.
    escapes: Escapes,
    pending: Vec<u8>,
}

impl Live {
    fn new(progress: ToolProgress, stream: OutputStream) -> Option<Live> {
        progress.is_active().then_some(Live {
            progress,
            stream,
            escapes: Escapes::default(),
            pending: Vec::new(),
        })
    }

    /// Takes a chunk just read; sends the whole lines it completes.
    fn push(&mut self, chunk: &[u8]) {
        if !self.progress.is_active() {
            return;
        }
        self.escapes.strip(chunk, &mut self.pending);
        if let Some(end) = self.pending.iter().rposition(|b| *b == b'\n') {
            let rest = self.pending.split_off(end + 1);
            let lines = std::mem::replace(&mut self.pending, rest);
            self.progress
                .report(self.stream, &String::from_utf8_lossy(&lines));
        }
    }

    /// The pipe is quiet (or closed, `end`): sends the partial line read so far,
    /// keeping back an incomplete UTF-8 character unless the pipe ended.
    fn quiet(&mut self, end: bool) {
        if self.pending.is_empty() {
            return;
        }
        let upto = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            Err(e) if e.error_len().is_none() && !end => e.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        if upto == 0 {
            return;
        }
        let rest = self.pending.split_off(upto);
        let piece = std::mem::replace(&mut self.pending, rest);
        self.progress
            .report(self.stream, &String::from_utf8_lossy(&piece));
    }
}

/// Reads a pipe to its end: its start and its end are kept within the caps
/// ([`CappedLines::head_and_tail`]), all of it counted.
async fn drain<R: AsyncRead + Unpin>(
    pipe: Option<R>,
    caps: Caps,
    mut live: Option<Live>,
) -> CappedLines {
    let mut drained = CappedLines::head_and_tail(caps);
    let Some(mut pipe) = pipe else {
        return drained;
    };
    let mut buf = vec![0u8; 8192];
    loop {
        let read = match live.as_mut().filter(|l| !l.pending.is_empty()) {
            // A partial line waits: if nothing more is ready now, send it first.
            Some(live) => {
                let mut ready = None;
                std::future::poll_fn(|cx| {
                    let mut rb = tokio::io::ReadBuf::new(&mut buf);
                    match std::pin::Pin::new(&mut pipe).poll_read(cx, &mut rb) {
                        std::task::Poll::Ready(r) => {
                            ready = Some(r.map(|()| rb.filled().len()));
                        }
                        std::task::Poll::Pending => {}
                    }
                    std::task::Poll::Ready(())
                })
                .await;
                match ready {
                    Some(r) => r,
                    None => {
                        live.quiet(false);
                        pipe.read(&mut buf).await
                    }
                }
            }
            None => pipe.read(&mut buf).await,
        };
        match read {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let chunk = &buf[..n];
                if let Some(live) = live.as_mut() {
                    live.push(chunk);
                }
                drained.write(chunk);
            }
        }
    }
    if let Some(live) = live.as_mut() {
        live.quiet(true);
    }
    drained
}

fn render_stream(name: &str, drained: CappedLines) -> String {
    if drained.is_empty() {
        return format!("{name}: (empty)");
    }
    format!(
        "{name}:\n{}",
        drained.finish(Some("redirect the output to a file and grep or read it"))
    )
}

/// Where the shell's own `PATH` finds `bash` (as `execvp` in the child would: a
/// relative entry from the workspace root, `/bin:/usr/bin` when `PATH` is unset): an
/// executable file, by its path. Given a path, std spawns with `posix_spawn` (the
/// kernel's vfork and exec); given a bare name under a changed environment, it must
/// fork, which copies this process's page tables and costs about a third of the
/// call. `None` when no `bash` is there: the child then looks it up itself and
/// fails with the usual error.
fn shell_program(env: &ShellEnv, root: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = env
        .vars()
        .find(|(name, _)| *name == "PATH")
        .map_or(std::ffi::OsStr::new("/bin:/usr/bin"), |(_, value)| value);
    std::env::split_paths(path)
        .map(|dir| root.join(dir).join("bash"))
        .find(|bash| {
            std::fs::metadata(bash)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// How the shell ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Exited,
    TimedOut,
    Cancelled,
}

/// How one tool set starts its shells: the program (found once, when the tool set
/// is made), the workspace root, the shell environment, the default timeout, and
/// whether the gate holds (tried at the first call that could use it).
#[derive(Debug)]
pub(crate) struct Shells {
    program: Option<PathBuf>,
    root: PathBuf,
    env: ShellEnv,
    default_timeout: Duration,
    gate: std::sync::OnceLock<bool>,
}

impl Shells {
    pub(crate) fn new(root: &Path, env: ShellEnv, default_timeout: Duration) -> Shells {
        Shells {
            program: shell_program(&env, root),
            root: root.to_path_buf(),
            env,
            default_timeout,
            gate: std::sync::OnceLock::new(),
        }
    }

    /// `bash -c text` as every call runs it: in the workspace root, its own process
    /// group, exactly the shell environment (secrets left out) asking for plain
    /// output ([`PLAIN_OUTPUT_ENV`]), stdin at EOF, stdout and stderr piped.
    fn command(&self, text: &str) -> std::process::Command {
        use std::os::unix::process::CommandExt;
        let mut command = match &self.program {
            Some(bash) => std::process::Command::new(bash),
            None => std::process::Command::new("bash"),
        };
        command
            .arg0("bash")
            .arg("-c")
            .arg(text)
            .current_dir(&self.root)
            .env_clear()
            .envs(self.env.vars())
            .envs(PLAIN_OUTPUT_ENV.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        for name in COLOUR_FORCING_ENV {
            command.env_remove(name);
        }
        command
    }

    /// Whether calls may start their shell held at a gate ([`gate`]): not when the
    /// environment changes how bash starts (its own `BASH_ENV`, or `SHELLOPTS` /
    /// `POSIXLY_CORRECT`, which may turn the start-up file off or trace it), and
    /// only if the shell, tried once, holds.
    pub(crate) fn gate_holds(&self) -> bool {
        *self.gate.get_or_init(|| {
            let changes_start_up = self.env.vars().any(|(name, _)| {
                ["BASH_ENV", "ENV", "SHELLOPTS", "POSIXLY_CORRECT"]
                    .iter()
                    .any(|v| name == *v)
            });
            !changes_start_up && gate::holds(self.command("printf ran"))
        })
    }

    /// Starts the shell of a call (held at a gate when `gated`): spawned now, so
    /// that it starts up while the caller waits for the dispatch to be durable. Must
    /// be called inside the tokio runtime. An error is the call's result.
    pub(crate) fn start(
        &self,
        call: &CallId,
        sandbox: Option<&std::sync::Arc<Sandbox>>,
        args: &Args,
        gated: bool,
    ) -> Result<Shell, ToolOutcome> {
        let error = |content: String| ToolOutcome {
            status: ToolStatus::Error,
            content,
        };
        let timeout = args
            .timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(self.default_timeout);
        let mut command = self.command(&args.command);
        let gate = match gated.then(|| Gate::hold(&mut command)).transpose() {
            Ok(gate) => gate,
            Err(e) => return Err(error(format!("cannot start `bash -c` for `command`: {e}"))),
        };
        let mut command = Command::from(command);
        if let Some(sandbox) = sandbox {
            sandbox.confine(&mut command);
        }
        let (child, procs) = match procs::spawn_marked(&mut command, call) {
            Ok(spawned) => spawned,
            Err(e) => return Err(error(format!("cannot start `bash -c` for `command`: {e}"))),
        };
        // A freshly spawned child that has not been waited for always has an id.
        let Some(pgid) = child.id().and_then(|id| libc::pid_t::try_from(id).ok()) else {
            return Err(error("`bash -c` started without a process id".to_owned()));
        };
        Ok(Shell {
            child,
            procs,
            pgid,
            gate,
            timeout,
        })
    }

    /// Runs a call's shell, not gated, to its end.
    pub(crate) async fn run(
        &self,
        call: &CallId,
        caps: Caps,
        sandbox: Option<&std::sync::Arc<Sandbox>>,
        args: Args,
        cancel: CancellationToken,
        progress: ToolProgress,
    ) -> ToolOutcome {
        match self.start(call, sandbox, &args, false) {
            Ok(shell) => finish(shell, caps, sandbox, cancel, progress, Durable::now()).await,
            Err(outcome) => outcome,
        }
    }
}

/// A shell started for a call: running, or held at its gate.
pub(crate) struct Shell {
    child: tokio::process::Child,
    procs: procs::CallProcs,
    pgid: libc::pid_t,
    gate: Option<Gate>,
    timeout: Duration,
}

/// Runs a started shell to its end: opens its gate once `durable` (a shell held
/// there whose dispatch never becomes durable, or whose call is cancelled first,
/// exits without running its command), then reads its output until it ends, times
/// out or is cancelled.
pub(crate) async fn finish(
    shell: Shell,
    caps: Caps,
    sandbox: Option<&std::sync::Arc<Sandbox>>,
    cancel: CancellationToken,
    progress: ToolProgress,
    durable: Durable,
) -> ToolOutcome {
    let Shell {
        mut child,
        mut procs,
        pgid,
        gate,
        timeout,
    } = shell;
    let mut notes = Vec::new();
    if let Some(gate) = gate {
        let go = tokio::select! {
            biased;
            () = cancel.cancelled() => false,
            durable = durable.wait() => durable,
        };
        if go {
            // A shell that is gone already says why in its exit status.
            let _ = gate.open();
        } else {
            drop(gate);
            notes.push(format!(
                "the command was not run: the call ended before its dispatch was durable (the shell exited {} at its gate)",
                gate::HELD_EXIT
            ));
        }
    }
    let started = Instant::now();
    let stdout = tokio::spawn(drain(
        child.stdout.take(),
        caps,
        Live::new(progress.clone(), OutputStream::Stdout),
    ));
    let stderr = tokio::spawn(drain(
        child.stderr.take(),
        caps,
        Live::new(progress, OutputStream::Stderr),
    ));

    let (end, exited): (End, Option<std::io::Result<ExitStatus>>) = tokio::select! {
        biased;
        () = cancel.cancelled() => (End::Cancelled, None),
        status = child.wait() => (End::Exited, Some(status)),
        () = tokio::time::sleep(timeout) => (End::TimedOut, None),
    };
    let status = match exited {
        Some(status) => status,
        None => {
            // Kill before reaping the leader, so the pgid cannot have been reused.
            // (A dropped call's group dies in `CallProcs`'s drop.)
            procs.kill_group();
            child.wait().await
        }
    };
    procs.shell_reaped();
    if end != End::Exited {
        // Everything of the call dies now, so the pipes close at once.
        procs.end();
    }
    let stdout_abort = stdout.abort_handle();
    let stderr_abort = stderr.abort_handle();
    let mut pipes = Box::pin(async { (stdout.await, stderr.await) });
    let drained = match tokio::time::timeout(PIPE_CLOSE_BOUND, &mut pipes).await {
        Ok(drained) => Some(drained),
        Err(_) if end == End::Exited => {
            // Background jobs of the command still hold its output: end them (found
            // and named first, then the group).
            procs.end();
            procs.kill_group();
            notes.push(format!(
                "background processes still held the output {} ms after the shell exited; process group {pgid} was killed",
                PIPE_CLOSE_BOUND.as_millis()
            ));
            tokio::time::timeout(PIPE_CLOSE_BOUND, &mut pipes)
                .await
                .ok()
        }
        Err(_) => None,
    };
    let none = || {
        (
            CappedLines::head_and_tail(caps),
            CappedLines::head_and_tail(caps),
        )
    };
    let (out, err) = match drained {
        Some((Ok(out), Ok(err))) => (out, err),
        Some(_) => none(),
        None => {
            stdout_abort.abort();
            stderr_abort.abort();
            notes.push(
                "the output pipes stayed open (a process that left the group holds them); output is missing"
                    .to_owned(),
            );
            none()
        }
    };
    // Whatever the call left behind, in its group or detached, dies with it.
    notes.extend(procs.finish());
    let duration = started.elapsed().as_millis();

    let mut lines = Vec::new();
    let status_word = match end {
        End::Cancelled => {
            lines.push(format!(
                "bash {CANCELLED_NOTE}; process group {pgid} was killed"
            ));
            ToolStatus::Cancelled
        }
        End::TimedOut => {
            lines.push(format!(
                "timed out after {} ms; process group {pgid} was killed",
                timeout.as_millis()
            ));
            ToolStatus::Error
        }
        End::Exited => ToolStatus::Ok,
    };
    let code = match &status {
        Ok(s) => match (s.code(), s.signal()) {
            (Some(code), _) => {
                lines.push(format!("exit code: {code}"));
                Some(code)
            }
            (None, Some(signal)) => {
                lines.push(format!("exit code: none (killed by signal {signal})"));
                None
            }
            (None, None) => {
                lines.push("exit code: none".to_owned());
                None
            }
        },
        Err(e) => {
            lines.push(format!("exit code: unknown ({e})"));
            None
        }
    };
    lines.push(format!("duration: {duration} ms"));
    lines.extend(notes);
    let stdout = render_stream("stdout", out);
    let stderr = render_stream("stderr", err);
    let status = match status_word {
        ToolStatus::Ok if code != Some(0) => ToolStatus::Error,
        other => other,
    };
    let denied = sandbox
        .filter(|_| status == ToolStatus::Error)
        .and_then(|s| s.denial_note(&format!("{stdout}\n{stderr}")));
    lines.extend([stdout, stderr]);
    lines.extend(denied);
    ToolOutcome {
        status,
        content: lines.join("\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use xcsh_log::secrets::EnvPolicy;

    /// The live view is sent the text the result will hold: a colour code split
    /// between two reads is removed, not shown as `␛[31m` until the card settles.
    #[test]
    fn the_live_view_loses_escapes_split_across_reads() {
        let seen = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&seen);
        let progress = ToolProgress::new(move |_, text| sink.lock().unwrap().push_str(text));
        let mut live = Live::new(progress, OutputStream::Stdout).expect("an active sink");
        live.push(b"\x1b[3");
        live.push(b"1mred\x1b[0m\nbl");
        live.quiet(true);
        assert_eq!(*seen.lock().unwrap(), "red\nbl");
    }

    #[tokio::test]
    async fn bash_runs_with_exactly_the_shell_env_it_is_given() {
        let dir = tempfile::tempdir().unwrap();
        let path = std::env::var_os("PATH").unwrap_or_default();
        let env = EnvPolicy::default().apply([
            ("PATH".into(), path),
            ("XCSH_PLAIN".into(), "plain".into()),
            ("OPENAI_API_KEY".into(), "sk-test-0123456789".into()),
        ]);
        let args = Args {
            command: r#"printf '%s|' "$0" "${XCSH_PLAIN-unset}" "${OPENAI_API_KEY-unset}" "${HOME-unset}""#
                .into(),
            timeout_ms: None,
        };
        let outcome = Shells::new(dir.path(), env, DEFAULT_TIMEOUT)
            .run(
                &CallId("c1".into()),
                Caps::default(),
                None,
                args,
                CancellationToken::new(),
                ToolProgress::none(),
            )
            .await;
        assert_eq!(outcome.status, ToolStatus::Ok, "{}", outcome.content);
        assert!(
            outcome.content.contains("stdout:\nbash|plain|unset|unset|"),
            "{}",
            outcome.content
        );
    }

    /// CRLF output (Windows tools, progress bars) is shown as lines, and the CRs
    /// dropped are not reported as output cut.
    #[test]
    fn crlf_output_is_whole_without_a_truncation_trailer() {
        let mut drained = CappedLines::head_and_tail(Caps::default());
        for piece in [&b"line1\r"[..], b"\nline2\r\nline3\r\n"] {
            drained.write(piece);
        }
        assert_eq!(
            render_stream("stdout", drained),
            "stdout:\nline1\nline2\nline3"
        );
        assert_eq!(
            render_stream("stderr", CappedLines::head_and_tail(Caps::default())),
            "stderr: (empty)"
        );
    }

    #[test]
    fn bash_is_found_on_the_shells_own_path_from_the_workspace_root() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (sub, mode) in [("plain", 0o644), ("bin", 0o755), ("later", 0o755)] {
            std::fs::create_dir(root.join(sub)).unwrap();
            let bash = root.join(sub).join("bash");
            std::fs::write(&bash, "").unwrap();
            std::fs::set_permissions(&bash, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        std::fs::create_dir(root.join("dir")).unwrap();
        std::fs::create_dir(root.join("dir/bash")).unwrap();
        let env = |path: &str| EnvPolicy::default().apply([("PATH".into(), path.into())]);
        // Not a file, not executable, missing: skipped; a relative entry is from the
        // root.
        assert_eq!(
            shell_program(&env("nowhere:dir:plain:bin:later"), root),
            Some(root.join("bin/bash"))
        );
        assert_eq!(shell_program(&env("nowhere:plain"), root), None);
        // Without PATH, the default search path.
        let unset = EnvPolicy::default().apply(std::iter::empty());
        let default = ["/bin/bash", "/usr/bin/bash"].map(PathBuf::from);
        assert!(default.contains(&shell_program(&unset, root).expect("a bash on this machine")));
    }
}
