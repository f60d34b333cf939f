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
/// exit code (`signals`); the terminal is given back as it was.
pub async fn main(setup: Setup, plain: bool) -> Result<ExitCode> {
    let dumb = std::env::var("TERM").map_or(true, |t| t.is_empty() || t == "dumb");
    let signals = Signals::new()?;
    let ended = if plain || dumb || !std::io::stdout().is_terminal() {
        plain::main(setup, signals).await
    } else {
        tui::main(setup, signals).await
    };
    signals::restore_terminal();
    Ok(match signals::received() {
        Some(t) => t.exit().into(),
        None => ended?,
    })
}
