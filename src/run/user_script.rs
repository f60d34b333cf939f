//! `xcsh run --user-script FILE` (hidden, for developers and fixtures): user commands
//! that the one-shot CLI cannot take from a keyboard (steer, follow-up, interrupt),
//! each sent through the `RunHandle` when the run's event stream shows a given event.
//!
//! JSON Lines, one command per line, taken in order; a command waits for the first
//! event after the previous command that has type `after` (a `--json` event type such
//! as `tool_call`, `text_delta`, `step_started`) and, if `step` is given, that step:
//!
//! ```text
//! {"after":"tool_call","step":1,"steer":"also look at the README"}
//! {"after":"tool_call","step":1,"follow_up":"then summarize"}
//! {"after":"text_delta","step":2,"interrupt":true}
//! ```
//!
//! Several commands may wait for the same event; they are sent together, in order.
//! Make the moment deterministic with the input, not the clock: a `sleep` tool call or
//! a slow faux step (`chunk_delay_ms`) keeps the run where the command should land.

use std::collections::VecDeque;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use xcsh_runtime::{RunEvent, RunHandle};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    after: String,
    #[serde(default)]
    step: Option<u64>,
    #[serde(default)]
    steer: Option<String>,
    #[serde(default)]
    follow_up: Option<String>,
    #[serde(default)]
    interrupt: bool,
}

#[derive(Debug)]
enum Action {
    Steer(String),
    FollowUp(String),
    Interrupt,
}

#[derive(Debug)]
struct Command {
    after: String,
    step: Option<u64>,
    action: Action,
}

/// The commands not yet sent, in order.
#[derive(Debug)]
pub struct UserScript {
    commands: VecDeque<Command>,
}

impl UserScript {
    pub fn load(path: &Path) -> Result<UserScript> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the user script {}", path.display()))?;
        let mut commands = VecDeque::new();
        for (i, raw) in text.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            let at = || format!("{}:{}", path.display(), i + 1);
            let line: Line = serde_json::from_str(raw)
                .with_context(|| format!("{}: not a user-script command", at()))?;
            let action = match (line.steer, line.follow_up, line.interrupt) {
                (Some(text), None, false) => Action::Steer(text),
                (None, Some(text), false) => Action::FollowUp(text),
                (None, None, true) => Action::Interrupt,
                _ => bail!(
                    "{}: a command is exactly one of \"steer\", \"follow_up\" or \"interrupt\": true",
                    at()
                ),
            };
            commands.push_back(Command {
                after: line.after,
                step: line.step,
                action,
            });
        }
        Ok(UserScript { commands })
    }

    /// Sends every waiting command whose event this is.
    pub fn on_event(&mut self, event: &RunEvent, handle: &RunHandle) {
        let Ok(value) = serde_json::to_value(event) else {
            return;
        };
        let kind = value.get("type").and_then(|t| t.as_str());
        let step = value.get("step").and_then(|s| s.as_u64());
        while let Some(next) = self.commands.front() {
            if kind != Some(next.after.as_str()) || next.step.is_some_and(|s| Some(s) != step) {
                break;
            }
            let Some(command) = self.commands.pop_front() else {
                break;
            };
            match command.action {
                Action::Steer(text) => handle.steer(text),
                Action::FollowUp(text) => handle.follow_up(text),
                Action::Interrupt => handle.interrupt(),
            };
        }
    }

    /// Says which commands were never sent (their event did not happen).
    pub fn report_unsent(&self) {
        if let Some(first) = self.commands.front() {
            eprintln!(
                "xcsh: --user-script: {} command(s) never sent (the first waits for `{}`{})",
                self.commands.len(),
                first.after,
                first
                    .step
                    .map(|s| format!(" of step {s}"))
                    .unwrap_or_default()
            );
        }
    }
}
