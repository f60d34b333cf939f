//! Choosing and configuring the provider of a run: the faux script player or one of
//! the HTTP wire protocols, optionally recorded to or played from a cassette.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};

use crate::config::{Effective, Setting, Source};
use xcsh_log::secrets::Secrets;
use xcsh_providers::Provider;
use xcsh_providers::anthropic::AnthropicProvider;
use xcsh_providers::cassette::{Cassette, CassetteWriter, Pace, Redactor, Tape};
use xcsh_providers::faux::FauxProvider;
use xcsh_providers::http::{ANTHROPIC, ConfigError, HttpConfig, OPENAI, Service};
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
        self.provider.map(name)
    }
}

/// A provider as `--provider` and the config file spell it.
fn name(kind: ProviderKind) -> String {
    kind.to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

/// The provider the flags (over the configuration) name: `--script` without
/// `--provider` means the faux provider, whatever the config says.
fn kind(args: &ProviderArgs, config: &Effective) -> Result<ProviderKind> {
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
    Ok(configured.unwrap_or(if args.script.is_some() {
        ProviderKind::Faux
    } else {
        ProviderKind::Openai
    }))
}

/// The model of a wire protocol when neither `--model` nor the config names one.
fn default_model(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "claude-sonnet-4-5",
        ProviderKind::OpenaiResponses => "gpt-5",
        ProviderKind::Openai | ProviderKind::Faux => "gpt-4.1",
    }
}

/// Builds the provider the flags (over the configuration) name, in `cwd`, and says
/// what it is made of (recorded in the session its runs write, SPEC §22.2).
pub fn build(
    args: &ProviderArgs,
    cwd: &Path,
    config: &Effective,
) -> Result<(Arc<dyn Provider>, Choice)> {
    let kind = kind(args, config)?;
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
        let provider: Arc<dyn Provider> = Arc::new(FauxProvider::from_file(script)?);
        return Ok((provider, choice_of(kind, args, config)));
    }
    if args.script.is_some() {
        bail!("--script is for --provider faux");
    }
    let model = config
        .model
        .as_ref()
        .map_or(default_model(kind), |m| m.value.as_str());
    let base_url = config.base_url.as_ref().map(|b| b.value.clone());
    // Playing a cassette needs no key: nothing reaches the network.
    let key = args.cassette.as_ref().map(|_| "cassette".to_string());
    let service = match kind {
        ProviderKind::Anthropic => ANTHROPIC,
        ProviderKind::OpenaiResponses | ProviderKind::Openai | ProviderKind::Faux => OPENAI,
    };
    let mut http = HttpConfig::for_service(service, model, base_url, key)
        .map_err(|e| with_no_key_hint(e, service))?;
    if !(args.idle_timeout.is_finite() && args.idle_timeout > 0.0) {
        bail!(
            "--idle-timeout {}: give a positive number of seconds",
            args.idle_timeout
        );
    }
    http.idle_timeout = Duration::from_secs_f64(args.idle_timeout);
    let redactor = redactor(known_secrets(), cwd);
    if let Some(path) = &args.record {
        http.tape = Some(Tape::Record(Arc::new(CassetteWriter::create(
            path, redactor,
        )?)));
    } else if let Some(path) = &args.cassette {
        let pace = match args.pace {
            PaceArg::Full => Pace::Full,
            PaceArg::Recorded => Pace::Recorded,
        };
        http.tape = Some(Tape::Play(Arc::new(Cassette::load(path, pace, redactor)?)));
    }
    let provider: Arc<dyn Provider> = match kind {
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(http)?),
        ProviderKind::OpenaiResponses => Arc::new(ResponsesProvider::new(http)?),
        ProviderKind::Openai | ProviderKind::Faux => Arc::new(OpenAiProvider::new(http)?),
    };
    Ok((provider, choice_of(kind, args, config)))
}

/// A missing key's error with a second line: how to try xcsh without one (README's
/// first command, the faux provider) and how to choose another provider.
fn with_no_key_hint(error: ConfigError, service: Service) -> anyhow::Error {
    if !matches!(error, ConfigError::MissingKey { .. }) {
        return error.into();
    }
    let other = if service.name == ANTHROPIC.name {
        "--provider openai (OPENAI_API_KEY)"
    } else {
        "--provider anthropic (ANTHROPIC_API_KEY)"
    };
    anyhow::anyhow!(
        "{error}\n  without a key, README's demo plays a scripted model (no network): `xcsh run --script fixtures/scripts/demo.jsonl \"what is in the fixtures folder?\"` in xcsh's checkout; or another provider: {other}"
    )
}

/// What a run's provider is made of: the provider, the model it calls (a wire
/// protocol's), the base URL the flags or the config gave, the faux script
/// (absolute). Never a key: keys come from the environment, every time. A new
/// session's header records its first run's; a later run records its own as a
/// `provider` entry when it differs from the branch's; a run on an existing session
/// takes the branch's where the command line chooses nothing else (SPEC §22.2).
pub type Choice = xcsh_log::ProviderRecord;

/// What a provider of `kind` built from `args` over `config` is made of.
fn choice_of(kind: ProviderKind, args: &ProviderArgs, config: &Effective) -> Choice {
    let faux = kind == ProviderKind::Faux;
    Choice {
        provider: name(kind),
        model: (!faux).then(|| {
            config
                .model
                .as_ref()
                .map_or(default_model(kind), |m| m.value.as_str())
                .to_string()
        }),
        base_url: config
            .base_url
            .as_ref()
            .map(|b| b.value.clone())
            .filter(|url| !faux && keepable(url)),
        script: args
            .script
            .as_ref()
            .filter(|_| faux)
            .map(|s| std::path::absolute(s).unwrap_or_else(|_| s.clone())),
    }
}

/// Applies `session`, the choice the session `id` last recorded on its branch, to
/// a run on it (SPEC §22.2): unless the command line names another provider
/// (`--provider`; `--script`, the faux one; `--model`, `--base-url`, `--record` or
/// `--cassette`, a wire protocol), the provider, model, base URL and faux script
/// are the session's where the command line gives none (a flag, or the profile
/// `--profile` names when `profile_named`); the config file's never mix in.
/// Returns the line that says what was taken when that changed anything, e.g.
/// `continuing with anthropic · MODEL from the session`.
pub fn apply(
    session: &Choice,
    id: &str,
    args: &mut ProviderArgs,
    effective: &mut Effective,
    profile_named: bool,
) -> Option<String> {
    let chosen = |s: &Option<Setting<String>>| {
        s.as_ref().is_some_and(|s| match &s.source {
            Source::Flag => true,
            Source::Profile { .. } => profile_named,
            Source::Default | Source::File { .. } | Source::Session { .. } => false,
        })
    };
    let named = if chosen(&effective.provider) {
        effective.provider.as_ref().map(|p| p.value.clone())
    } else {
        args.kind_name()
            .or_else(|| args.script.as_ref().map(|_| name(ProviderKind::Faux)))
    };
    let wire = chosen(&effective.model) || chosen(&effective.base_url) || args.uses_cassette();
    let faux = session.provider == name(ProviderKind::Faux);
    match &named {
        Some(named) if *named != session.provider => return None,
        None if wire && faux => return None,
        _ => {}
    }
    let before = made(args, effective);
    let setting = |value: &String| Setting {
        value: value.clone(),
        source: Source::Session { id: id.to_string() },
    };
    if !chosen(&effective.provider) {
        effective.provider = Some(setting(&session.provider));
    }
    if !chosen(&effective.model) {
        effective.model = session.model.as_ref().map(setting);
    }
    if !chosen(&effective.base_url) {
        effective.base_url = session.base_url.as_ref().map(setting);
    }
    if faux && args.script.is_none() {
        args.script.clone_from(&session.script);
    }
    let after = made(args, effective)?;
    (Some(&after) != before.as_ref()).then(|| format!("continuing with {after} from the session"))
}

/// What a run's provider would be made of (`None`: an error [`build`] reports).
fn made(args: &ProviderArgs, config: &Effective) -> Option<Choice> {
    kind(args, config)
        .ok()
        .map(|kind| choice_of(kind, args, config))
}

/// Whether a base URL may be kept: not when it carries credentials (user
/// information, a query, a known key's value).
fn keepable(url: &str) -> bool {
    let authority = url.split("://").nth(1).unwrap_or(url);
    let authority = authority.split('/').next().unwrap_or(authority);
    !authority.contains('@') && !url.contains('?') && known_secrets().redact(url) == url
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
    use crate::config::{ConfigFile, Layer};

    /// The provider flags of `flags`, and the configuration they and `file` (a
    /// config file's text) make with `profile`.
    fn resolved(flags: &[&str], file: &str, profile: Option<&str>) -> (ProviderArgs, Effective) {
        #[derive(clap::Parser)]
        struct Flags {
            #[command(flatten)]
            provider: ProviderArgs,
        }
        let args = <Flags as clap::Parser>::parse_from([&["xcsh"], flags].concat()).provider;
        let file: ConfigFile = toml::from_str(file).unwrap();
        let layer = Layer {
            provider: args.kind_name(),
            model: args.model.clone(),
            base_url: args.base_url.clone(),
            ..Layer::default()
        };
        let effective =
            crate::config::resolve(&file, Path::new("config.toml"), profile, &layer).unwrap();
        (args, effective)
    }

    /// [`Choice::apply`] of `session` to a run with `flags` over `file`: the line it
    /// says, and the choice the run is then made of.
    fn resumed(
        session: &Choice,
        flags: &[&str],
        file: &str,
        profile: Option<&str>,
    ) -> (Option<String>, Option<Choice>) {
        let (mut args, mut effective) = resolved(flags, file, profile);
        let line = apply(session, "S", &mut args, &mut effective, profile.is_some());
        (line, made(&args, &effective))
    }

    /// A wire protocol's choice.
    fn wire(provider: &str, model: &str, base_url: &str) -> Choice {
        Choice {
            provider: provider.into(),
            model: Some(model.into()),
            base_url: Some(base_url.into()),
            script: None,
        }
    }

    fn anthropic() -> Choice {
        wire("anthropic", "claude-x", "http://127.0.0.1:4000")
    }

    #[test]
    fn a_session_choice_takes_the_place_of_the_config_files_but_not_of_the_command_lines() {
        let file = "provider = \"openai\"\nbase_url = \"http://127.0.0.1:11434/v1\"\nmodel = \"qwen3\"\n[profiles.local]\nprovider = \"openai\"\n";
        // Nothing on the command line: the session's, none of the file's.
        assert_eq!(
            resumed(&anthropic(), &[], file, None),
            (
                Some(
                    "continuing with anthropic · claude-x · http://127.0.0.1:4000 from the session"
                        .into()
                ),
                Some(anthropic())
            )
        );
        // The same provider named, another model: the session's base URL with it.
        assert_eq!(
            resumed(
                &anthropic(),
                &["--provider", "anthropic", "--model", "y"],
                file,
                None
            )
            .1,
            Some(Choice {
                model: Some("y".into()),
                ..anthropic()
            })
        );
        // Another provider named (a flag, or the profile --profile names): nothing
        // of the session's.
        let openai = wire("openai", "qwen3", "http://127.0.0.1:11434/v1");
        assert_eq!(
            resumed(&anthropic(), &["--provider", "openai"], file, None),
            (None, Some(openai.clone()))
        );
        assert_eq!(
            resumed(&anthropic(), &[], file, Some("local")),
            (None, Some(openai))
        );
    }

    #[test]
    fn a_scripted_sessions_script_is_taken_unless_the_command_line_asks_for_a_wire_protocol() {
        let faux = Choice {
            provider: "faux".into(),
            model: None,
            base_url: None,
            script: Some("/s/demo.jsonl".into()),
        };
        assert_eq!(
            resumed(&faux, &[], "", None),
            (
                Some("continuing with faux · script /s/demo.jsonl from the session".into()),
                Some(faux.clone())
            )
        );
        // `--base-url` (or `--model`) alone means a wire protocol: openai, as without
        // a session.
        assert_eq!(
            resumed(&faux, &["--base-url", "http://127.0.0.1:9/v1"], "", None),
            (
                None,
                Some(wire("openai", "gpt-4.1", "http://127.0.0.1:9/v1"))
            )
        );
    }

    #[test]
    fn a_base_url_with_credentials_in_it_is_not_kept() {
        assert!(keepable("http://127.0.0.1:4000/v1"));
        assert!(!keepable("https://user:pw@example.com/v1"));
        assert!(!keepable("https://example.com/v1?key=abc"));
    }

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
