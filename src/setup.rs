//! What a run or an interactive session is made of (`Setup`), shared by the one-shot
//! run (`run.rs`), the interactive front ends (`interactive/`) and `--redrive`.

use std::sync::Arc;

use anyhow::{Result, bail};
use xcsh_machine::{Limits, Permissions};
use xcsh_runtime::SessionTarget;
use xcsh_tools::sandbox::SandboxPolicy;

use crate::config;
use crate::providers::{self, ProviderArgs};

/// The system prompt when neither `--system-prompt` nor the config names one.
pub(crate) const DEFAULT_SYSTEM_PROMPT: &str = "You are xcsh, a coding agent. Work in the user's workspace with the tools you are given. Be precise and brief. For a task of several steps, keep a plan with the `plan` tool: one item in progress at a time, updated as each step is done.";

/// What a run or an interactive session is made of, resolved from the flags, the
/// config file and the defaults.
pub(crate) struct Setup {
    /// The session's workspace: the tools' root (§12.1, §22.2).
    pub cwd: std::path::PathBuf,
    pub session: SessionTarget,
    pub limits: Limits,
    pub system_prompt: String,
    pub provider: Arc<dyn xcsh_providers::Provider>,
    /// What `provider` is made of: each run records it in its session when it
    /// differs from the last one on the branch, for a later `--resume` (§22.2).
    pub choice: providers::Choice,
    pub tools: Arc<dyn xcsh_tools::ToolExecutor>,
    pub permissions: Permissions,
    /// At most this many tool calls of a step run at once.
    pub max_parallel_tools: std::num::NonZeroUsize,
    /// What the provider was built from, to switch models (`/model NAME`).
    pub provider_args: ProviderArgs,
    pub effective: config::Effective,
    /// The secret values kept out of the log (§21.5).
    pub secrets: xcsh_log::secrets::Secrets,
    /// The sandbox the tools run under (`off` where the kernel cannot sandbox).
    pub sandbox: SandboxPolicy,
    /// Memory (SPEC.md §28): `None` when off (the default).
    pub memory: Option<xcsh_runtime::memory::MemoryOptions>,
    /// `--delegate`: the model may start sub-agents with the `task` tool (§29).
    pub delegate: bool,
}

/// The options of a run, with the `task` tool offered when `delegate`
/// (`--delegate`) asks.
pub(crate) fn offer_task(
    delegate: bool,
    opts: xcsh_runtime::RunOptions,
) -> xcsh_runtime::RunOptions {
    if delegate {
        xcsh_runtime::task::delegating(opts)
    } else {
        opts
    }
}

impl Setup {
    /// Rebuilds the provider with another model (`/model NAME`).
    pub fn switch_model(&mut self, model: &str) -> Result<()> {
        if self.provider.name() == "faux" {
            bail!("/model: the faux provider plays a script and has no models");
        }
        if self.provider_args.uses_cassette() {
            bail!("/model: not with --record or --cassette (the cassette is for one model)");
        }
        let mut effective = self.effective.clone();
        effective.model = Some(config::Setting {
            value: model.to_string(),
            source: config::Source::Flag,
        });
        (self.provider, self.choice) =
            providers::build(&self.provider_args, &self.cwd, &effective)?;
        self.effective = effective;
        Ok(())
    }
}
