//! The `xcsh` binary: the command-line interface over the runtime and the toolkits.

mod run;
mod sessions;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// xcsh: a coding-agent runtime whose every move is recorded, replayable and inspectable.
#[derive(Debug, Parser)]
#[command(name = "xcsh", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run an agent on a prompt (one-shot with -p or --json).
    Run(run::RunArgs),
    /// List the sessions of this workspace (all workspaces with --all).
    Sessions(sessions::SessionsArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Run(args) => run::main(args),
        Command::Sessions(args) => sessions::main(args),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xcsh: error: {e:#}");
            ExitCode::from(1)
        }
    }
}
