//! Where and how a wire-protocol provider talks HTTP: [`HttpConfig`] from flags and
//! the environment (base URL, key, model, idle timeout, retries, a cassette), its
//! checks ([`ConfigError`]), and the shared `reqwest` client.

use std::fmt;
use std::time::Duration;

use super::error_chain;
use crate::cassette::Tape;

pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
pub const DEFAULT_MAX_ATTEMPTS: u32 = 4;
pub const DEFAULT_RETRY_BASE: Duration = Duration::from_millis(500);
pub const DEFAULT_MAX_RETRY_WAIT: Duration = Duration::from_secs(60);
/// The `anthropic-version` header every Messages request carries.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A service whose base URL and key come from flags, else from its variables.
#[derive(Debug, Clone, Copy)]
pub struct Service {
    /// The name a missing key's error gives.
    pub name: &'static str,
    pub base_var: &'static str,
    pub key_var: &'static str,
    pub default_base_url: &'static str,
}

/// OpenAI (Chat Completions and Responses) and compatible servers.
pub const OPENAI: Service = Service {
    name: "openai",
    base_var: "OPENAI_BASE_URL",
    key_var: "OPENAI_API_KEY",
    default_base_url: DEFAULT_OPENAI_BASE_URL,
};

/// Anthropic Messages.
pub const ANTHROPIC: Service = Service {
    name: "anthropic",
    base_var: "ANTHROPIC_BASE_URL",
    key_var: "ANTHROPIC_API_KEY",
    default_base_url: DEFAULT_ANTHROPIC_BASE_URL,
};

/// Where and how a provider talks HTTP. `Debug` never shows the key.
#[derive(Clone)]
pub struct HttpConfig {
    /// E.g. `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`,
    /// `https://api.anthropic.com`.
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    /// No byte for this long (waiting for the response or while streaming) fails the
    /// step with `idle_timeout`.
    pub idle_timeout: Duration,
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The first backoff step (doubled on each retry).
    pub retry_base: Duration,
    /// A `retry-after` longer than this is not waited for.
    pub max_retry_wait: Duration,
    /// Record the traffic to a cassette, or serve it from one instead of the network.
    pub tape: Option<Tape>,
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("idle_timeout", &self.idle_timeout)
            .field("max_attempts", &self.max_attempts)
            .field("retry_base", &self.retry_base)
            .field("max_retry_wait", &self.max_retry_wait)
            .field(
                "tape",
                &self.tape.as_ref().map(|t| match t {
                    Tape::Record(_) => "record",
                    Tape::Play(_) => "play",
                }),
            )
            .finish()
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error(
        "no API key for {provider}: set {var}; only a server on 127.0.0.1/localhost may go without one"
    )]
    MissingKey {
        provider: &'static str,
        var: &'static str,
    },
    #[error("the base URL {url:?} is not an http:// or https:// URL ({reason})")]
    BadBaseUrl { url: String, reason: String },
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
}

impl HttpConfig {
    /// A configuration with the default timeouts and retries.
    pub fn new(base_url: &str, api_key: Option<String>, model: &str) -> HttpConfig {
        HttpConfig {
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key,
            model: model.to_string(),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            retry_base: DEFAULT_RETRY_BASE,
            max_retry_wait: DEFAULT_MAX_RETRY_WAIT,
            tape: None,
        }
    }

    /// `service`'s configuration: flags first, then its variables (`OPENAI_BASE_URL`
    /// / `OPENAI_API_KEY`, `ANTHROPIC_BASE_URL` / `ANTHROPIC_API_KEY`).
    pub fn for_service(
        service: Service,
        model: &str,
        base_url: Option<String>,
        api_key: Option<String>,
    ) -> Result<HttpConfig, ConfigError> {
        HttpConfig::for_service_with_env(service, model, base_url, api_key, &|name| {
            std::env::var(name).ok()
        })
    }

    /// [`HttpConfig::for_service`] with the environment given as a lookup.
    pub fn for_service_with_env(
        service: Service,
        model: &str,
        base_url: Option<String>,
        api_key: Option<String>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<HttpConfig, ConfigError> {
        let non_empty = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
        let base_url = non_empty(base_url)
            .or_else(|| non_empty(env(service.base_var)))
            .unwrap_or_else(|| service.default_base_url.to_string());
        check_base_url(&base_url)?;
        let api_key = non_empty(api_key).or_else(|| non_empty(env(service.key_var)));
        if api_key.is_none() && !is_local_url(&base_url) {
            return Err(ConfigError::MissingKey {
                provider: service.name,
                var: service.key_var,
            });
        }
        Ok(HttpConfig::new(&base_url, api_key, model))
    }

    /// `{base_url}/{path}`.
    pub fn endpoint(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.base_url.trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }

    /// The base URL is on this machine (127.0.0.0/8, `localhost`, `::1`).
    pub fn is_local(&self) -> bool {
        is_local_url(&self.base_url)
    }
}

fn check_base_url(url: &str) -> Result<(), ConfigError> {
    let parsed = reqwest::Url::parse(url).map_err(|e| ConfigError::BadBaseUrl {
        url: url.to_string(),
        reason: e.to_string(),
    })?;
    match parsed.scheme() {
        "http" | "https" => Ok(()),
        other => Err(ConfigError::BadBaseUrl {
            url: url.to_string(),
            reason: format!("scheme {other}"),
        }),
    }
}

fn is_local_url(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    let Some(host) = parsed.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// The shared client: rustls, a connect timeout, no overall timeout (streams are
/// long; the idle timeout guards them).
pub fn client() -> Result<reqwest::Client, ConfigError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .user_agent(concat!("xcsh/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ConfigError::Client(error_chain(&e)))
}
