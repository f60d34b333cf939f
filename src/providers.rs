//! Choosing and configuring the provider of a run: the faux script player or one of
//! the HTTP wire protocols, optionally recorded to or played from a cassette.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};

use crate::config::Effective;
use xcsh_log::secrets::Secrets;
use xcsh_providers::Provider;
use xcsh_providers::anthropic::AnthropicProvider;
use xcsh_providers::cassette::{Cassette, CassetteWriter, Pace, Redactor, Tape};
use xcsh_providers::faux::FauxProvider;
use xcsh_providers::http::{ANTHROPIC, HttpConfig, OPENAI};
use xcsh_providers::openai::OpenAiProvider;
use xcsh_providers::responses::ResponsesProvider;

pub use crate::config::CREDENTIAL_VARS;

/// The secret values xcsh holds: the value of every credential variable that is
/// set (the API key of the run comes from one of them), named by the variable.
pub fn known_secrets() -> Secrets {
    known_secrets_in(&|name| std::env::var(name).ok())
}

/// [`known_secrets`] with the environment given as a lookup.
pub fn known_secrets_in(env: &dyn Fn(&str) -> Option<String>) -> Secrets {
    Secrets::new(
        CREDENTIAL_VARS
            .iter()
            .filter_map(|var| env(var).map(|value| (*var, value.trim().to_string()))),
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderKind {
    /// Plays a JSON Lines script (`--script`); no key, no network.
    Faux,
    /// OpenAI Chat Completions and every server that speaks it (Ollama, llama.cpp,
    /// vLLM, LM Studio, DeepSeek, Mistral, xAI, OpenRouter): OPENAI_API_KEY,
    /// OPENAI_BASE_URL.
    Openai,
    /// Anthropic Messages: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL.
    Anthropic,
    /// OpenAI Responses: OPENAI_API_KEY, OPENAI_BASE_URL.
    OpenaiResponses,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PaceArg {
    /// As fast as the run takes the bytes.
    Full,
    /// Each chunk at its recorded time.
    Recorded,
}

#[derive(Debug, Clone, Args)]
pub struct ProviderArgs {
    /// The provider (default: `faux` with --script, else `openai`).
    #[arg(long, value_enum)]
    provider: Option<ProviderKind>,
    /// The faux provider's script: JSON Lines, one model step per line.
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
    /// The model (defaults: openai gpt-4.1, anthropic claude-sonnet-4-5,
    /// openai-responses gpt-5).
    #[arg(long)]
    pub model: Option<String>,
    /// The API base URL (e.g. http://127.0.0.1:11434/v1 for Ollama).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Seconds without a byte from the provider before the step fails.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    idle_timeout: f64,
    /// Record every provider exchange of the run to this cassette.
    #[arg(long, value_name = "FILE", conflicts_with = "cassette")]
    record: Option<PathBuf>,
    /// Serve the provider from this cassette instead of the network.
    #[arg(long, value_name = "FILE")]
    cassette: Option<PathBuf>,
    /// Cassette playback speed.
    #[arg(long, value_enum, default_value_t = PaceArg::Full, requires = "cassette")]
    pace: PaceArg,
}

impl ProviderArgs {
    /// Whether the traffic goes to or comes from a cassette (then the provider
    /// cannot be rebuilt mid-session: a recording would start over).
    pub fn uses_cassette(&self) -> bool {
        self.record.is_some() || self.cassette.is_some()
    }

    /// The provider flag as the config file spells it.
    pub fn kind_name(&self) -> Option<String> {
        self.provider
            .and_then(|k| k.to_possible_value())
            .map(|v| v.get_name().to_string())
    }
}

/// Builds the provider the flags (over the configuration) name, in `cwd`.
pub fn build(args: &ProviderArgs, cwd: &Path, config: &Effective) -> Result<Arc<dyn Provider>> {
    // `--script` without `--provider` means the faux provider, whatever the config says.
    let configured = match &config.provider {
        _ if args.script.is_some() && args.provider.is_none() => Some(ProviderKind::Faux),
        Some(s) => Some(ProviderKind::from_str(&s.value, false).map_err(|_| {
            anyhow::anyhow!(
                "provider = {:?} ({}): use faux, openai, anthropic or openai-responses",
                s.value,
                s.source
            )
        })?),
        None => None,
    };
    let kind = configured.unwrap_or(if args.script.is_some() {
        ProviderKind::Faux
    } else {
        ProviderKind::Openai
    });
    if kind == ProviderKind::Faux {
        if args.record.is_some() || args.cassette.is_some() {
            bail!(
                "--record and --cassette need an HTTP provider (openai, anthropic, openai-responses), not faux"
            );
        }
        let script = args
            .script
            .as_ref()
            .context("--provider faux needs --script FILE (JSON Lines, one model step per line)")?;
        return Ok(Arc::new(FauxProvider::from_file(script)?));
    }
    if args.script.is_some() {
        bail!("--script is for --provider faux");
    }
    let model = |default: &str| {
        config
            .model
            .as_ref()
            .map(|m| m.value.clone())
            .unwrap_or_else(|| default.to_string())
    };
    let base_url = config.base_url.as_ref().map(|b| b.value.clone());
    // Playing a cassette needs no key: nothing reaches the network.
    let key = args.cassette.as_ref().map(|_| "cassette".to_string());
    let mut config = match kind {
        ProviderKind::Anthropic => {
            HttpConfig::for_service(ANTHROPIC, &model("claude-sonnet-4-5"), base_url, key)?
        }
        ProviderKind::OpenaiResponses => {
            HttpConfig::for_service(OPENAI, &model("gpt-5"), base_url, key)?
        }
        ProviderKind::Openai | ProviderKind::Faux => {
            HttpConfig::for_service(OPENAI, &model("gpt-4.1"), base_url, key)?
        }
    };
    if !(args.idle_timeout.is_finite() && args.idle_timeout > 0.0) {
        bail!(
            "--idle-timeout {}: give a positive number of seconds",
            args.idle_timeout
        );
    }
    config.idle_timeout = Duration::from_secs_f64(args.idle_timeout);
    let redactor = redactor(known_secrets(), cwd);
    if let Some(path) = &args.record {
        config.tape = Some(Tape::Record(Arc::new(CassetteWriter::create(
            path, redactor,
        )?)));
    } else if let Some(path) = &args.cassette {
        let pace = match args.pace {
            PaceArg::Full => Pace::Full,
            PaceArg::Recorded => Pace::Recorded,
        };
        config.tape = Some(Tape::Play(Arc::new(Cassette::load(path, pace, redactor)?)));
    }
    Ok(match kind {
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(config)?),
        ProviderKind::OpenaiResponses => Arc::new(ResponsesProvider::new(config)?),
        ProviderKind::Openai | ProviderKind::Faux => Arc::new(OpenAiProvider::new(config)?),
    })
}

/// Secrets (the credential variables' values) never reach a cassette; the
/// workspace and home paths are placeholders, so that a cassette plays back in
/// another checkout.
pub fn redactor(secrets: Secrets, cwd: &Path) -> Redactor {
    let mut volatile = vec![(cwd.display().to_string(), "cwd".to_string())];
    if let Some(home) = std::env::var_os("HOME") {
        volatile.push((
            PathBuf::from(home).display().to_string(),
            "home".to_string(),
        ));
    }
    Redactor::new(secrets, &volatile)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_known_secrets_are_the_credential_variables_that_are_set() {
        let env = |name: &str| match name {
            "OPENAI_API_KEY" => Some(" sk-test-0123456789 ".to_string()),
            "GITHUB_TOKEN" => Some("ghp_not_a_credential_of_xcsh".to_string()),
            _ => None,
        };
        let secrets = known_secrets_in(&env);
        assert_eq!(format!("{secrets:?}"), r#"["[redacted:OPENAI_API_KEY]"]"#);
        assert_eq!(
            secrets.redact("k=sk-test-0123456789"),
            "k=[redacted:OPENAI_API_KEY]"
        );
    }
}
