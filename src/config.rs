//! Configuration: `$XCSH_HOME/config.toml` (default `~/.xcsh/config.toml`) with
//! named profiles. Flags override the chosen profile, the profile overrides the
//! file's top level, and that overrides the built-in defaults; `xcsh config` prints
//! the effective values and where each came from.

use std::collections::BTreeMap;
use std::fmt;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use serde::{Deserialize, Serialize};
use xcsh_log::secrets::EnvPolicy;
use xcsh_machine::Limits;
use xcsh_runtime::DEFAULT_MAX_PARALLEL_TOOLS;
use xcsh_tools::sandbox::{SandboxMode, SandboxPolicy};

use crate::exit::UsageError;
use crate::sessions;

/// The environment variables xcsh takes credentials from: bash never gets them
/// (unless `[shell_env] include` names them) and their values are redacted from
/// every log and cassette (§21.5).
pub const CREDENTIAL_VARS: [&str; 2] = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"];

/// Declares [`Layer`] and [`ConfigFile`] from one list of settings (the file's top
/// level holds the same keys as a profile, and `profile` and `profiles` besides;
/// serde's `flatten` would lose the line and column of a wrong value's error), and
/// [`ConfigFile::top`].
macro_rules! settings {
    ($($(#[$doc:meta])* $name:ident: $ty:ty,)*) => {
        /// One layer of settings: the file's top level, or one profile.
        #[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
        #[serde(deny_unknown_fields)]
        pub struct Layer {
            $($(#[$doc])* pub $name: Option<$ty>,)*
        }

        /// The whole file: the top-level settings, the default profile, the profiles.
        #[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
        #[serde(deny_unknown_fields)]
        pub struct ConfigFile {
            /// The profile used when `--profile` is not given.
            pub profile: Option<String>,
            $($(#[$doc])* pub $name: Option<$ty>,)*
            #[serde(default)]
            pub profiles: BTreeMap<String, Layer>,
            /// `[mcp_servers.NAME]` (SPEC.md §32): top level only, as in Codex.
            #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
            pub mcp_servers: BTreeMap<String, xcsh_mcp::ServerToml>,
        }

        impl ConfigFile {
            /// The top-level settings as a layer.
            pub fn top(&self) -> Layer {
                Layer {
                    $($name: self.$name.clone(),)*
                }
            }
        }
    };
}

settings! {
    provider: String,
    model: String,
    base_url: String,
    permissions: String,
    max_steps: u32,
    max_tokens: u64,
    max_output_tokens: u32,
    compact_at: u64,
    system_prompt: PathBuf,
    max_parallel_tools: usize,
    shell_env: ShellEnvLayer,
    /// `read-only`, `workspace-write` or `off` (§21.7).
    sandbox: String,
    /// Whether sandboxed commands may use the network.
    sandbox_network: bool,
    /// Memory (SPEC.md §28): off unless true.
    memory: bool,
    /// Delegation (SPEC.md §29): the `task` tool is offered only when true.
    delegate: bool,
    /// `[otel]`: where finished runs' spans go (SPEC.md "Traces (OpenTelemetry)").
    otel: OtelLayer,
}

/// `[shell_env]`: which variables bash gets besides the default policy (§21.5).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ShellEnvLayer {
    /// Globs of names kept even though they match a secret pattern.
    pub include: Option<Vec<String>>,
    /// Globs of more names removed.
    pub exclude: Option<Vec<String>>,
}

/// `[otel]` in config.toml (SPEC.md §31).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OtelLayer {
    /// The collector's OTLP/HTTP base URL (`/v1/traces` is added).
    pub endpoint: Option<String>,
    /// Message content in the spans (off by default).
    pub content: Option<bool>,
    /// Extra request headers (e.g. `Authorization` for Langfuse).
    pub headers: Option<BTreeMap<String, String>>,
}

/// The effective `[otel]` settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OtelSettings {
    #[serde(rename = "otel_endpoint")]
    pub endpoint: Option<Setting<String>>,
    #[serde(rename = "otel_content")]
    pub content: Setting<bool>,
    /// Header values can be credentials: never printed (only their names).
    #[serde(skip)]
    pub headers: Setting<BTreeMap<String, String>>,
}

impl OtelSettings {
    /// The rows of `xcsh config`.
    pub fn rows(&self) -> Vec<(String, String, String)> {
        vec![
            match &self.endpoint {
                Some(e) => (
                    "otel.endpoint".into(),
                    e.value.clone(),
                    e.source.to_string(),
                ),
                None => ("otel.endpoint".into(), "none".into(), "default".into()),
            },
            (
                "otel.content".into(),
                self.content.value.to_string(),
                self.content.source.to_string(),
            ),
            (
                "otel.headers".into(),
                if self.headers.value.is_empty() {
                    "none".into()
                } else {
                    let names: Vec<&str> = self.headers.value.keys().map(String::as_str).collect();
                    format!("{} (values hidden)", names.join(", "))
                },
                self.headers.source.to_string(),
            ),
        ]
    }
}

/// Where an effective value came from. `Session`: the session a run continues
/// (`--resume`, `--continue`), for its provider, model and base URL (SPEC §22.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    Default,
    File { path: PathBuf },
    Profile { name: String, path: PathBuf },
    Flag,
    Session { id: String },
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File { path } => write!(f, "{}", path.display()),
            Source::Profile { name, path } => write!(f, "profile {name} in {}", path.display()),
            Source::Flag => f.write_str("command line"),
            Source::Session { id } => write!(f, "session {id}"),
        }
    }
}

/// A value and its source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Setting<T> {
    pub value: T,
    pub source: Source,
}

impl<T> Setting<T> {
    /// `value`, the built-in default.
    fn by_default(value: T) -> Setting<T> {
        Setting {
            value,
            source: Source::Default,
        }
    }
}

/// The effective configuration of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Effective {
    pub provider: Option<Setting<String>>,
    pub model: Option<Setting<String>>,
    pub base_url: Option<Setting<String>>,
    pub permissions: Option<Setting<String>>,
    pub max_steps: Setting<u32>,
    pub max_tokens: Setting<u64>,
    pub max_output_tokens: Setting<u32>,
    pub compact_at: Setting<u64>,
    pub system_prompt: Option<Setting<PathBuf>>,
    /// At most this many tool calls of a step run at once.
    pub max_parallel_tools: Setting<NonZeroUsize>,
    /// `[shell_env]`, per key like every setting (the nearest layer wins).
    #[serde(flatten)]
    pub shell_env: ShellEnv,
    /// The sandbox mode asked for (`workspace-write` by default); the run uses
    /// `off` where the kernel cannot sandbox ([`Effective::sandbox_policy`]).
    pub sandbox: Setting<SandboxMode>,
    pub sandbox_network: Setting<bool>,
    /// Memory on (SPEC.md §28); off by default.
    pub memory: Setting<bool>,
    /// The `task` tool offered (SPEC.md §29); off by default.
    pub delegate: Setting<bool>,
    /// `[otel]` (SPEC.md "Traces (OpenTelemetry)").
    #[serde(flatten)]
    pub otel: OtelSettings,
}

/// The effective `[shell_env]` lists (`shell_env_include` and `shell_env_exclude`
/// in `xcsh config --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShellEnv {
    #[serde(rename = "shell_env_include")]
    pub include: Setting<Vec<String>>,
    #[serde(rename = "shell_env_exclude")]
    pub exclude: Setting<Vec<String>>,
}

impl Effective {
    /// Which variables bash gets: the default policy (secret-named and credential
    /// variables removed) with `[shell_env]` applied.
    pub fn env_policy(&self) -> EnvPolicy {
        EnvPolicy {
            include: self.shell_env.include.value.clone(),
            exclude: self.shell_env.exclude.value.clone(),
            credential_vars: CREDENTIAL_VARS.iter().map(|v| (*v).to_string()).collect(),
        }
    }

    /// The sandbox asked for, as the tools take it (before the kernel's answer).
    pub fn sandbox_policy(&self) -> SandboxPolicy {
        SandboxPolicy {
            mode: self.sandbox.value,
            network: self.sandbox_network.value,
        }
    }

    pub fn limits(&self) -> Limits {
        Limits {
            max_steps: self.max_steps.value,
            max_tokens: self.max_tokens.value,
            max_output_tokens: self.max_output_tokens.value,
            compact_at_tokens: self.compact_at.value,
        }
    }
}

/// The config file's path: `$XCSH_HOME/config.toml`.
pub fn path() -> Result<PathBuf> {
    Ok(sessions::home()?.join("config.toml"))
}

/// Reads the config file (absent = empty).
pub fn load(path: &Path) -> Result<ConfigFile> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ConfigFile::default()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// Resolves flags over the profile over the file over the defaults. `flags` is the
/// run's own layer (from its command line).
pub fn resolve(
    file: &ConfigFile,
    path: &Path,
    profile: Option<&str>,
    flags: &Layer,
) -> Result<Effective> {
    let profile_name = profile.map(str::to_string).or_else(|| file.profile.clone());
    let profile = match &profile_name {
        Some(name) => Some(file.profiles.get(name).with_context(|| {
            let known: Vec<&str> = file.profiles.keys().map(String::as_str).collect();
            format!(
                "no profile `{name}` in {} (profiles there: {})",
                path.display(),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )
        })?),
        None => None,
    };
    let top = file.top();
    let layers: Vec<(&Layer, Source)> = {
        let mut l = vec![(flags, Source::Flag)];
        if let (Some(p), Some(name)) = (profile, &profile_name) {
            l.push((
                p,
                Source::Profile {
                    name: name.clone(),
                    path: path.to_path_buf(),
                },
            ));
        }
        l.push((
            &top,
            Source::File {
                path: path.to_path_buf(),
            },
        ));
        l
    };
    fn pick<T: Clone>(
        layers: &[(&Layer, Source)],
        get: impl Fn(&Layer) -> Option<T>,
    ) -> Option<Setting<T>> {
        layers.iter().find_map(|(layer, source)| {
            get(layer).map(|value| Setting {
                value,
                source: source.clone(),
            })
        })
    }
    /// The nearest layer's value, else `default`.
    fn pick_or<T: Clone>(
        layers: &[(&Layer, Source)],
        get: impl Fn(&Layer) -> Option<T>,
        default: T,
    ) -> Setting<T> {
        pick(layers, get).unwrap_or(Setting::by_default(default))
    }
    let defaults = Limits::default();
    let max_steps = pick_or(&layers, |l| l.max_steps, defaults.max_steps);
    if max_steps.value == 0 {
        bail!("max_steps must be at least 1 ({})", max_steps.source);
    }
    let max_parallel_tools = match pick(&layers, |l| l.max_parallel_tools) {
        None => Setting::by_default(DEFAULT_MAX_PARALLEL_TOOLS),
        Some(Setting { value, source }) => match NonZeroUsize::new(value) {
            Some(value) => Setting { value, source },
            // The flag refuses 0 itself (clap); this is the file's or a profile's.
            None => {
                return Err(UsageError(format!(
                    "max_parallel_tools must be at least 1 ({source})"
                ))
                .into());
            }
        },
    };
    let permissions = pick(&layers, |l| l.permissions.clone());
    if let Some(p) = &permissions
        && !["ask", "readonly", "yolo"].contains(&p.value.as_str())
    {
        bail!(
            "permissions = {:?} ({}): use ask, readonly or yolo",
            p.value,
            p.source
        );
    }
    let globs = |get: fn(&ShellEnvLayer) -> Option<Vec<String>>| {
        pick_or(&layers, |l| l.shell_env.as_ref().and_then(get), Vec::new())
    };
    let shell_env = ShellEnv {
        include: globs(|s| s.include.clone()),
        exclude: globs(|s| s.exclude.clone()),
    };
    let sandbox = match pick(&layers, |l| l.sandbox.clone()) {
        None => Setting::by_default(SandboxMode::WorkspaceWrite),
        Some(Setting { value, source }) => Setting {
            value: parse_sandbox(&value).with_context(|| {
                format!("sandbox = {value:?} ({source}): use read-only, workspace-write or off")
            })?,
            source,
        },
    };
    let sandbox_network = pick_or(&layers, |l| l.sandbox_network, false);
    let memory = pick_or(&layers, |l| l.memory, false);
    let delegate = pick_or(&layers, |l| l.delegate, false);
    let otel = OtelSettings {
        endpoint: pick(&layers, |l| {
            l.otel.as_ref().and_then(|o| o.endpoint.clone())
        }),
        content: pick_or(&layers, |l| l.otel.as_ref().and_then(|o| o.content), false),
        headers: pick_or(
            &layers,
            |l| l.otel.as_ref().and_then(|o| o.headers.clone()),
            BTreeMap::new(),
        ),
    };
    Ok(Effective {
        otel,
        memory,
        delegate,
        sandbox,
        sandbox_network,
        shell_env,
        provider: pick(&layers, |l| l.provider.clone()),
        model: pick(&layers, |l| l.model.clone()),
        base_url: pick(&layers, |l| l.base_url.clone()),
        permissions,
        max_steps,
        max_parallel_tools,
        max_tokens: pick_or(&layers, |l| l.max_tokens, defaults.max_tokens),
        max_output_tokens: pick_or(&layers, |l| l.max_output_tokens, defaults.max_output_tokens),
        compact_at: pick_or(&layers, |l| l.compact_at, defaults.compact_at_tokens),
        // A relative path in the file is relative to the file, not to where xcsh runs.
        system_prompt: pick(&layers, |l| l.system_prompt.clone()).map(|mut s| {
            if let Source::File { path } | Source::Profile { path, .. } = &s.source
                && s.value.is_relative()
                && let Some(dir) = path.parent()
            {
                s.value = dir.join(&s.value);
            }
            s
        }),
    })
}

/// A sandbox mode as the command line and the config file spell it.
pub fn parse_sandbox(text: &str) -> Option<SandboxMode> {
    [
        SandboxMode::ReadOnly,
        SandboxMode::WorkspaceWrite,
        SandboxMode::Off,
    ]
    .into_iter()
    .find(|m| m.name() == text)
}

/// The sandbox a run gets: the one asked for where the kernel can make it, else
/// `off` and why not (said once at start, §21.7).
pub fn effective_sandbox(asked: SandboxPolicy) -> (SandboxPolicy, Option<String>) {
    if asked.mode == SandboxMode::Off {
        return (asked, None);
    }
    match xcsh_tools::sandbox::probe() {
        Ok(_) => (asked, None),
        Err(e) => (
            SandboxPolicy {
                mode: SandboxMode::Off,
                network: asked.network,
            },
            Some(e.to_string()),
        ),
    }
}

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// Print the effective configuration as JSON.
    #[arg(long)]
    json: bool,
    /// Resolve with this profile.
    #[arg(long)]
    profile: Option<String>,
}

/// `xcsh config`: the effective configuration and where each value came from.
pub fn main(args: ConfigArgs) -> Result<ExitCode> {
    let path = path()?;
    let file = load(&path)?;
    let effective = resolve(&file, &path, args.profile.as_deref(), &Layer::default())?;
    if args.json {
        let mut value = serde_json::to_value(&effective)?;
        value["shell_env_removed"] = serde_json::json!(effective.env_policy().removed());
        let (running, why) = effective_sandbox(effective.sandbox_policy());
        value["sandbox_effective"] = serde_json::json!(running.mode);
        value["sandbox_unavailable"] = serde_json::json!(why);
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows: Vec<(String, String, String)> = Vec::new();
    let mut opt = |key: &str, s: &Option<Setting<String>>, unset: &str| {
        rows.push(match s {
            Some(s) => (key.into(), s.value.clone(), s.source.to_string()),
            None => (key.into(), unset.into(), "default".into()),
        })
    };
    opt(
        "provider",
        &effective.provider,
        "faux with --script, else openai",
    );
    opt("model", &effective.model, "per provider");
    opt(
        "base_url",
        &effective.base_url,
        "per provider (or its *_BASE_URL variable)",
    );
    opt(
        "permissions",
        &effective.permissions,
        "yolo with -p or --json, ask interactively",
    );
    rows.push(num("max_steps", &effective.max_steps));
    rows.push(num("max_tokens", &effective.max_tokens));
    rows.push(num("max_output_tokens", &effective.max_output_tokens));
    rows.push(num("compact_at", &effective.compact_at));
    rows.push(num("max_parallel_tools", &effective.max_parallel_tools));
    rows.push(match &effective.system_prompt {
        Some(s) => (
            "system_prompt".into(),
            s.value.display().to_string(),
            s.source.to_string(),
        ),
        None => ("system_prompt".into(), "built in".into(), "default".into()),
    });
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    rows.push((
        "shell_env.removed".into(),
        list(&effective.env_policy().removed()),
        "default".into(),
    ));
    rows.push((
        "shell_env.include".into(),
        list(&effective.shell_env.include.value),
        effective.shell_env.include.source.to_string(),
    ));
    rows.push((
        "shell_env.exclude".into(),
        list(&effective.shell_env.exclude.value),
        effective.shell_env.exclude.source.to_string(),
    ));
    let (running, why) = effective_sandbox(effective.sandbox_policy());
    rows.push((
        "sandbox".into(),
        match why {
            Some(why) => format!("off ({} asked, but {why})", effective.sandbox.value.name()),
            None => running.mode.name().to_string(),
        },
        effective.sandbox.source.to_string(),
    ));
    rows.push(num("sandbox_network", &effective.sandbox_network));
    rows.push(num("memory", &effective.memory));
    rows.push(num("delegate", &effective.delegate));
    rows.extend(effective.otel.rows());
    let mut table = comfy_table::Table::new();
    table
        .load_preset(comfy_table::presets::UTF8_FULL_CONDENSED)
        .set_header(["setting", "value", "from"]);
    for (k, v, s) in rows {
        table.add_row([k, v, s]);
    }
    println!("config file: {}", path.display());
    println!("{table}");
    Ok(ExitCode::SUCCESS)
}

fn num<T: fmt::Display>(key: &str, s: &Setting<T>) -> (String, String, String) {
    (key.into(), s.value.to_string(), s.source.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> ConfigFile {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn flags_override_the_profile_which_overrides_the_file_which_overrides_defaults() {
        let f = file(
            r#"
            provider = "anthropic"
            max_steps = 10
            max_tokens = 1000
            profile = "local"
            [profiles.local]
            provider = "openai"
            base_url = "http://127.0.0.1:11434/v1"
            max_steps = 20
            "#,
        );
        let path = Path::new("/h/config.toml");
        let flags = Layer {
            max_steps: Some(5),
            ..Layer::default()
        };
        let e = resolve(&f, path, None, &flags).unwrap();
        let local = Source::Profile {
            name: "local".into(),
            path: path.into(),
        };
        assert_eq!(
            e.max_steps,
            Setting {
                value: 5,
                source: Source::Flag
            }
        );
        assert_eq!(
            e.provider,
            Some(Setting {
                value: "openai".into(),
                source: local.clone()
            })
        );
        assert_eq!(
            e.max_tokens,
            Setting {
                value: 1000,
                source: Source::File { path: path.into() }
            }
        );
        assert_eq!(
            e.compact_at,
            Setting {
                value: 150_000,
                source: Source::Default
            }
        );
        assert_eq!(
            e.base_url,
            Some(Setting {
                value: "http://127.0.0.1:11434/v1".into(),
                source: local
            })
        );
    }

    #[test]
    fn shell_env_lists_come_whole_from_the_nearest_layer_and_feed_the_policy() {
        let f = file(
            r#"
            [shell_env]
            include = ["GH_*"]
            exclude = ["AWS_*"]
            [profiles.p.shell_env]
            include = ["NPM_TOKEN"]
            "#,
        );
        let path = Path::new("/h/config.toml");
        let e = resolve(&f, path, Some("p"), &Layer::default()).unwrap();
        assert_eq!(
            e.shell_env.include,
            Setting {
                value: vec!["NPM_TOKEN".to_string()],
                source: Source::Profile {
                    name: "p".into(),
                    path: path.into()
                }
            }
        );
        assert_eq!(
            e.shell_env.exclude,
            Setting {
                value: vec!["AWS_*".to_string()],
                source: Source::File { path: path.into() }
            }
        );
        let policy = e.env_policy();
        assert!(policy.keeps("NPM_TOKEN"));
        assert!(!policy.keeps("GH_TOKEN"));
        assert!(!policy.keeps("AWS_REGION"));
        assert!(!policy.keeps("ANTHROPIC_API_KEY"));
        assert!(policy.keeps("PATH"));
        let none = resolve(&ConfigFile::default(), path, None, &Layer::default()).unwrap();
        assert_eq!(none.shell_env.include.source, Source::Default);
        assert_eq!(none.env_policy().include, Vec::<String>::new());
        let bad: Result<ConfigFile, _> = toml::from_str("[shell_env]\nincluded = []\n");
        assert!(
            bad.unwrap_err()
                .to_string()
                .contains("unknown field `included`")
        );
    }

    #[test]
    fn an_unknown_profile_or_key_is_a_clear_error() {
        let f = file("[profiles.a]\nmodel = \"x\"\n");
        let err = resolve(&f, Path::new("/h/c.toml"), Some("b"), &Layer::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no profile `b` in /h/c.toml (profiles there: a)"
        );
        let bad: Result<ConfigFile, _> = toml::from_str("max_stpes = 3\n");
        assert!(
            bad.unwrap_err()
                .to_string()
                .contains("unknown field `max_stpes`")
        );
    }
}
