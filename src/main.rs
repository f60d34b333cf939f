//! The `xcsh` binary: the command-line interface over the runtime and the toolkits.

mod provider_cmd;
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
    /// Print the normalized events of one recorded provider stream as JSON Lines.
    ProviderParse(provider_cmd::ParseArgs),
    /// Re-parse every recorded provider stream and compare with its golden file.
    ProviderTest(provider_cmd::TestArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Run(args) => run::main(args),
        Command::Sessions(args) => sessions::main(args),
        Command::ProviderParse(args) => provider_cmd::parse_main(args),
        Command::ProviderTest(args) => provider_cmd::test_main(args),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xcsh: error: {}", chain(&e));
            ExitCode::from(1)
        }
    }
}

/// The error and its causes, leaving out a cause whose text the message before it
/// already contains (library errors often quote their source).
fn chain(error: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if !out.contains(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
    }
    out
}
