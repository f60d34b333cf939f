//! `bash {command, timeout_ms?}`: `bash -c` in the workspace root with stdin at EOF,
//! in its own process group; a timeout or the cancellation token kills the whole
//! group (SIGKILL) so no grandchild survives.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::CANCELLED_NOTE;
use super::caps::{CappedLines, Caps};
use crate::machine::{ToolOutcome, ToolStatus};

pub(crate) const NAME: &str = "bash";

/// The timeout of a call that gives no `timeout_ms`.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// The largest `timeout_ms` a call may ask for (10 minutes).
pub(crate) const MAX_TIMEOUT_MS: u64 = 600_000;

/// How long to wait for the output pipes to close once the shell has ended.
const PIPE_CLOSE_BOUND: Duration = Duration::from_secs(2);

pub(crate) const DESCRIPTION: &str = "Run a shell command with `bash -c` in the workspace root. \
Standard input is empty (a command reading it sees end-of-file at once, so nothing can \
prompt). The command runs in its own process group: when the timeout (default 120000 ms, \
`timeout_ms` up to 600000) expires or the user interrupts, the whole group is killed, \
background jobs included. The result gives the exit code, the duration, stdout and stderr \
(each capped at 2000 lines / 50 KiB; redirect long output to a file and `grep` or `read` it). \
Use the dedicated tools rather than bash for reading, listing, searching and editing files.";

pub(crate) fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1, "description": "The command line, run as `bash -c <command>`."},
            "timeout_ms": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_MS, "description": "Kill the command (and everything it started) after this many milliseconds (default 120000)."}
        },
        "required": ["command"],
        "additionalProperties": false
    })
}

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    command: String,
    timeout_ms: Option<u64>,
}

/// Kills the process group with SIGKILL when dropped while armed, so the group dies
/// even if the call's future is dropped mid-flight.
struct GroupGuard {
    pgid: libc::pid_t,
    armed: bool,
}

impl GroupGuard {
    fn kill(&self) {
        // SAFETY: killpg only sends a signal; a group that is already gone yields
        // ESRCH, which is fine to ignore.
        unsafe {
            libc::killpg(self.pgid, libc::SIGKILL);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            self.kill();
        }
    }
}

/// What was read from one pipe: a prefix of at most the byte cap, and the totals.
#[derive(Debug, Default)]
struct Drained {
    kept: Vec<u8>,
    total_bytes: usize,
    newlines: usize,
    ends_with_newline: bool,
}

impl Drained {
    fn total_lines(&self) -> usize {
        if self.total_bytes == 0 || self.ends_with_newline {
            self.newlines
        } else {
            self.newlines + 1
        }
    }
}

async fn drain<R: AsyncRead + Unpin>(pipe: Option<R>, keep: usize) -> Drained {
    let mut drained = Drained::default();
    let Some(mut pipe) = pipe else {
        return drained;
    };
    let mut buf = vec![0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let chunk = &buf[..n];
                let room = keep.saturating_sub(drained.kept.len());
                drained.kept.extend_from_slice(&chunk[..room.min(n)]);
                drained.total_bytes += n;
                drained.newlines += chunk.iter().filter(|b| **b == b'\n').count();
                drained.ends_with_newline = chunk.last() == Some(&b'\n');
            }
        }
    }
    drained
}

fn render_stream(name: &str, drained: &Drained, caps: Caps) -> String {
    if drained.total_bytes == 0 {
        return format!("{name}: (empty)");
    }
    let text = String::from_utf8_lossy(&drained.kept);
    let mut out = CappedLines::new(caps);
    for line in text.lines() {
        out.push(line);
    }
    out.raise_totals(drained.total_lines(), drained.total_bytes);
    format!(
        "{name}:\n{}",
        out.finish(Some("redirect the output to a file and grep or read it"))
    )
}

/// How the shell ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Exited,
    TimedOut,
    Cancelled,
}

pub(crate) async fn run(
    root: &Path,
    caps: Caps,
    default_timeout: Duration,
    args: Args,
    cancel: CancellationToken,
) -> ToolOutcome {
    let error = |content: String| ToolOutcome {
        status: ToolStatus::Error,
        content,
    };
    let timeout = args
        .timeout_ms
        .map(Duration::from_millis)
        .unwrap_or(default_timeout);
    let started = Instant::now();
    let mut child = match Command::new("bash")
        .arg("-c")
        .arg(&args.command)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return error(format!("cannot start `bash -c` for `command`: {e}")),
    };
    // A freshly spawned child that has not been waited for always has an id.
    let Some(pgid) = child.id().and_then(|id| libc::pid_t::try_from(id).ok()) else {
        return error("`bash -c` started without a process id".to_owned());
    };
    let mut guard = GroupGuard { pgid, armed: true };
    let stdout = tokio::spawn(drain(child.stdout.take(), caps.max_bytes));
    let stderr = tokio::spawn(drain(child.stderr.take(), caps.max_bytes));

    let (end, exited): (End, Option<std::io::Result<ExitStatus>>) = tokio::select! {
        biased;
        () = cancel.cancelled() => (End::Cancelled, None),
        status = child.wait() => (End::Exited, Some(status)),
        () = tokio::time::sleep(timeout) => (End::TimedOut, None),
    };
    let mut notes = Vec::new();
    let status = match exited {
        Some(status) => status,
        None => {
            // Kill before reaping the leader, so the pgid cannot have been reused.
            guard.kill();
            child.wait().await
        }
    };
    let stdout_abort = stdout.abort_handle();
    let stderr_abort = stderr.abort_handle();
    let mut pipes = Box::pin(async { (stdout.await, stderr.await) });
    let drained = match tokio::time::timeout(PIPE_CLOSE_BOUND, &mut pipes).await {
        Ok(drained) => Some(drained),
        Err(_) if end == End::Exited => {
            // Background jobs of the command still hold its output: end them.
            guard.kill();
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
    let (out, err) = match drained {
        Some((Ok(out), Ok(err))) => (out, err),
        Some(_) => (Drained::default(), Drained::default()),
        None => {
            stdout_abort.abort();
            stderr_abort.abort();
            notes.push(
                "the output pipes stayed open (a process that left the group holds them); output is missing"
                    .to_owned(),
            );
            (Drained::default(), Drained::default())
        }
    };
    // Whatever remains of the group after a normal exit (detached with its own
    // output) is left alone; after a timeout or a cancel it was killed above.
    guard.armed = false;
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
    lines.push(render_stream("stdout", &out, caps));
    lines.push(render_stream("stderr", &err, caps));
    let status = match status_word {
        ToolStatus::Ok if code != Some(0) => ToolStatus::Error,
        other => other,
    };
    ToolOutcome {
        status,
        content: lines.join("\n"),
    }
}
