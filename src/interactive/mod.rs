//! Interactive xcsh: the terminal UI (`xcsh-tui`) on a terminal; the plain line
//! mode with `--plain`, on `TERM=dumb` (or no `TERM`), or when stdout is not a
//! terminal. Both carry out the same commands (`commands.rs`).

mod commands;
mod plain;
mod tui;

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::Result;

use crate::setup::Setup;
use crate::signals::{self, Signals};

/// SIGTERM and SIGHUP interrupt a running turn and end the session, with their own
/// exit code (`signals`); the terminal is given back as it was. With `pick`
/// (`xcsh --resume` without a session; the terminal UI only, [`no_terminal_ui`]
/// is `None`) the terminal UI opens on the session picker.
pub async fn main(setup: Setup, plain: bool, pick: bool) -> Result<ExitCode> {
    let signals = Signals::new()?;
    let ended = if no_terminal_ui(plain).is_some() {
        plain::main(setup, signals).await
    } else {
        tui::main(setup, signals, pick).await
    };
    signals::restore_terminal();
    Ok(match signals::received() {
        Some(t) => t.exit().into(),
        None => ended?,
    })
}

/// Why the interactive mode is the plain line mode, not the terminal UI: `--plain`
/// (`plain`), `TERM` unset, empty or `dumb`, or stdout not a terminal; `None` for
/// the terminal UI.
pub fn no_terminal_ui(plain: bool) -> Option<&'static str> {
    let term = std::env::var("TERM").unwrap_or_default();
    if plain {
        Some("not with --plain")
    } else if term.is_empty() {
        Some("TERM is not set")
    } else if term == "dumb" {
        Some("TERM=dumb")
    } else if !std::io::stdout().is_terminal() {
        Some("stdout is not a terminal")
    } else {
        None
    }
}
