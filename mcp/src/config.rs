//! A server's configuration: `[mcp_servers.NAME]` of config.toml as written
//! ([`ServerToml`], the field names of Codex's config) and as resolved
//! ([`ServerConfig`]: one transport, the timeouts as durations).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How long a server may take to start (spawn, initialize, list its tools) when
/// `startup_timeout_sec` is not given.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one tool call may take when `tool_timeout_sec` is not given (Codex's
/// default).
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// `[mcp_servers.NAME]` as written in config.toml.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerToml {
    /// The program of a stdio server.
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Variables set for it besides xcsh's environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Where it runs (default: the session's workspace).
    pub cwd: Option<PathBuf>,
    /// The endpoint of a streamable HTTP server (instead of `command`).
    pub url: Option<String>,
    /// `false`: configured, not started.
    pub enabled: Option<bool>,
    pub startup_timeout_sec: Option<f64>,
    pub tool_timeout_sec: Option<f64>,
}

/// How xcsh reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking JSON-RPC on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP at `url`.
    StreamableHttp { url: String },
}

/// One configured server, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    pub enabled: bool,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
}

/// Why `[mcp_servers.NAME]` cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "[mcp_servers.{0}]: a server name may hold only letters, digits, `_` and `-` (its tools are named `mcp__NAME__TOOL`)"
    )]
    BadName(String),
    #[error("[mcp_servers.{0}]: give `command` (a stdio server) or `url` (streamable HTTP)")]
    NoTransport(String),
    #[error("[mcp_servers.{0}]: give `command` or `url`, not both")]
    BothTransports(String),
    #[error("[mcp_servers.{0}]: `args`, `env` and `cwd` are for a `command`, not a `url`")]
    StdioFieldsOnUrl(String),
    #[error("[mcp_servers.{name}]: `{field}` must be a positive number of seconds, not {value}")]
    BadTimeout {
        name: String,
        field: &'static str,
        value: f64,
    },
}

impl ServerToml {
    /// This table, of the server `name`, resolved.
    pub fn resolve(&self, name: &str) -> Result<ServerConfig, ConfigError> {
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err(ConfigError::BadName(name.to_owned()));
        }
        let transport = match (&self.command, &self.url) {
            (Some(_), Some(_)) => return Err(ConfigError::BothTransports(name.to_owned())),
            (None, None) => return Err(ConfigError::NoTransport(name.to_owned())),
            (Some(command), None) => Transport::Stdio {
                command: command.clone(),
                args: self.args.clone(),
                env: self.env.clone(),
                cwd: self.cwd.clone(),
            },
            (None, Some(url)) => {
                if !self.args.is_empty() || !self.env.is_empty() || self.cwd.is_some() {
                    return Err(ConfigError::StdioFieldsOnUrl(name.to_owned()));
                }
                Transport::StreamableHttp { url: url.clone() }
            }
        };
        let seconds = |field: &'static str, value: Option<f64>, default: Duration| match value {
            None => Ok(default),
            Some(v) if v.is_finite() && v > 0.0 && v < 1e9 => Ok(Duration::from_secs_f64(v)),
            Some(value) => Err(ConfigError::BadTimeout {
                name: name.to_owned(),
                field,
                value,
            }),
        };
        Ok(ServerConfig {
            name: name.to_owned(),
            transport,
            enabled: self.enabled.unwrap_or(true),
            startup_timeout: seconds(
                "startup_timeout_sec",
                self.startup_timeout_sec,
                DEFAULT_STARTUP_TIMEOUT,
            )?,
            tool_timeout: seconds(
                "tool_timeout_sec",
                self.tool_timeout_sec,
                DEFAULT_TOOL_TIMEOUT,
            )?,
        })
    }
}

/// Every table of `[mcp_servers]`, resolved, in name order; the first error stops.
pub fn resolve_all(
    tables: &BTreeMap<String, ServerToml>,
) -> Result<Vec<ServerConfig>, ConfigError> {
    tables.iter().map(|(name, t)| t.resolve(name)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The server `name` of the table `[mcp_servers.NAME]` whose body is `text`,
    /// resolved.
    fn resolved(name: &str, text: &str) -> Result<ServerConfig, ConfigError> {
        toml::from_str::<ServerToml>(text).unwrap().resolve(name)
    }

    #[test]
    fn a_command_table_resolves_to_a_stdio_server_with_the_default_timeouts() {
        assert_eq!(
            resolved(
                "s",
                "command = \"npx\"\nargs = [\"-y\", \"srv\"]\nenv = { A = \"1\" }\n"
            )
            .unwrap(),
            ServerConfig {
                name: "s".into(),
                transport: Transport::Stdio {
                    command: "npx".into(),
                    args: vec!["-y".into(), "srv".into()],
                    env: BTreeMap::from([("A".into(), "1".into())]),
                    cwd: None,
                },
                enabled: true,
                startup_timeout: DEFAULT_STARTUP_TIMEOUT,
                tool_timeout: DEFAULT_TOOL_TIMEOUT,
            }
        );
    }

    #[test]
    fn each_wrong_table_names_the_server_and_what_is_wrong() {
        let cases = [
            ("ok", "url = \"http://x\"\ncommand = \"a\"\n"),
            ("ok", "enabled = true\n"),
            ("ok", "url = \"http://x\"\nargs = [\"a\"]\n"),
            ("ok", "command = \"a\"\ntool_timeout_sec = 0\n"),
            ("a.b", "command = \"a\"\n"),
        ];
        let errors: Vec<String> = cases
            .iter()
            .map(|(name, text)| resolved(name, text).unwrap_err().to_string())
            .collect();
        expect_test::expect![[r#"
            [
                "[mcp_servers.ok]: give `command` or `url`, not both",
                "[mcp_servers.ok]: give `command` (a stdio server) or `url` (streamable HTTP)",
                "[mcp_servers.ok]: `args`, `env` and `cwd` are for a `command`, not a `url`",
                "[mcp_servers.ok]: `tool_timeout_sec` must be a positive number of seconds, not 0",
                "[mcp_servers.a.b]: a server name may hold only letters, digits, `_` and `-` (its tools are named `mcp__NAME__TOOL`)",
            ]
        "#]]
        .assert_debug_eq(&errors);
    }

    #[test]
    fn an_unknown_field_is_refused_by_the_parser() {
        let e = toml::from_str::<ServerToml>("command = \"a\"\ntimeout = 3\n").unwrap_err();
        assert!(e.to_string().contains("unknown field `timeout`"), "{e}");
    }
}
