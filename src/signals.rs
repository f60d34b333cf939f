//! SIGTERM and SIGHUP to xcsh are an interrupt (SPEC §16.5, §17): the running turn
//! is interrupted, settles and is recorded, its tools are killed, and xcsh exits
//! 143 (SIGTERM) or 129 (SIGHUP); a second signal while it settles exits at once,
//! after killing every tool process. The one-shot run, the plain line mode and the
//! terminal UI all take them through [`Signals`].

use std::sync::OnceLock;

use anyhow::{Context, Result};
use tokio::signal::unix::{Signal, SignalKind, signal};
use xcsh_tools::procs;

use crate::exit::Exit;

/// A signal that ends xcsh the way an interrupt does, with its own exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// SIGTERM: exit 143.
    Term,
    /// SIGHUP (the terminal closed): exit 129.
    Hangup,
}

impl Termination {
    pub fn exit(self) -> Exit {
        match self {
            Termination::Term => Exit::Terminated,
            Termination::Hangup => Exit::HungUp,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Termination::Term => "SIGTERM",
            Termination::Hangup => "SIGHUP",
        }
    }
}

/// The first termination signal this process received, if any.
static RECEIVED: OnceLock<Termination> = OnceLock::new();

/// The terminal's settings when xcsh started (stdin, if it is a terminal), put
/// back when it exits at once (raw mode off).
static TERMINAL: OnceLock<Option<libc::termios>> = OnceLock::new();

/// The first termination signal received, if any: the exit code of a session that
/// ended after it is the signal's.
pub fn received() -> Option<Termination> {
    RECEIVED.get().copied()
}

/// The exit of a command that would end with `exit`: a termination signal's code
/// once one was received.
pub fn exit_after(exit: Exit) -> Exit {
    received().map_or(exit, Termination::exit)
}

/// SIGTERM and SIGHUP, as a stream of [`Termination`]s.
pub struct Signals {
    term: Signal,
    hangup: Signal,
}

impl Signals {
    /// Takes SIGTERM and SIGHUP from their default (which would end xcsh at once and
    /// leave its tools running), and notes the terminal's settings.
    pub fn new() -> Result<Signals> {
        TERMINAL.get_or_init(|| {
            // SAFETY: isatty and tcgetattr only read the descriptor's state into
            // `termios`, which is plain data.
            unsafe {
                let mut termios: libc::termios = std::mem::zeroed();
                (libc::isatty(0) == 1 && libc::tcgetattr(0, &mut termios) == 0).then_some(termios)
            }
        });
        Ok(Signals {
            term: signal(SignalKind::terminate()).context("cannot take SIGTERM")?,
            hangup: signal(SignalKind::hangup()).context("cannot take SIGHUP")?,
        })
    }

    /// The next termination signal; the first one is remembered ([`received`]).
    pub async fn recv(&mut self) -> Termination {
        let got = tokio::select! {
            biased;
            Some(()) = self.term.recv() => Termination::Term,
            Some(()) = self.hangup.recv() => Termination::Hangup,
            // The signal driver is gone (the runtime shuts down): none comes.
            else => std::future::pending().await,
        };
        let _ = RECEIVED.set(got);
        got
    }
}

/// Puts the terminal's settings back as they were when xcsh started (after a
/// mode that had it raw).
pub fn restore_terminal() {
    if let Some(Some(termios)) = TERMINAL.get() {
        // SAFETY: tcsetattr reads the saved settings; a terminal that is gone fails
        // harmlessly.
        unsafe {
            libc::tcsetattr(0, libc::TCSANOW, termios);
        }
    }
}

/// After SIGHUP the terminal is gone: stdout and stderr, where they are a
/// terminal, go to `/dev/null` from now on, and a closed pipe is an error to
/// ignore rather than a SIGPIPE, so the run settles and is recorded unseen.
pub fn detach_terminal() {
    // SAFETY: open, isatty, dup2 and close act on descriptors only; signal sets a
    // disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if null >= 0 {
            for fd in [1, 2] {
                if libc::isatty(fd) == 1 {
                    libc::dup2(null, fd);
                }
            }
            libc::close(null);
        }
    }
}

/// `written`, or nothing once a termination signal was received (the output's
/// reader may be gone; the run's end must still be reached).
pub fn unless_signalled(written: std::io::Result<()>) -> std::io::Result<()> {
    match written {
        Err(_) if received().is_some() => Ok(()),
        other => other,
    }
}

/// Exits at once (a second signal while settling): kills every tool process,
/// gives the terminal back, and exits with `exit`'s code.
pub fn exit_now(exit: Exit) -> ! {
    procs::end_everything();
    xcsh_mcp::kill_all();
    restore_terminal();
    std::process::exit(i32::from(exit.code()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigterm_exits_143_and_sighup_129_as_a_shell_reports_them() {
        assert_eq!(
            [Termination::Term, Termination::Hangup].map(|t| (t.name(), t.exit().code())),
            [("SIGTERM", 143), ("SIGHUP", 129)]
        );
    }
}
