//! Traces (SPEC.md "Traces (OpenTelemetry)"): `xcsh otel S --endpoint URL` sends a
//! session's spans over OTLP/HTTP, `xcsh export S --format otlp` writes them as
//! OTLP/JSON, and `--otel-endpoint URL` on `xcsh run` (or `[otel]` in config.toml)
//! sends each finished run's spans. A collector that is down is a notice, never a
//! failed run: the send is bounded by a timeout.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use xcsh_log::family::{Depth, load_family};
use xcsh_otel::{Endpoint, Options};

use crate::config::OtelLayer;

/// The flags of `xcsh run` for traces.
#[derive(Debug, Clone, Default, Args)]
pub struct RunOtelArgs {
    /// Send each finished run's spans to this OTLP/HTTP collector (e.g.
    /// http://127.0.0.1:4318); `[otel] endpoint` in config.toml.
    #[arg(long, value_name = "URL")]
    otel_endpoint: Option<String>,
    /// Include message content (prompts, completions, tool arguments and results).
    #[arg(long)]
    otel_content: bool,
    /// An extra request header, NAME=VALUE (repeatable).
    #[arg(long, value_name = "NAME=VALUE")]
    otel_header: Vec<String>,
}

impl RunOtelArgs {
    /// The flags as a config layer (the nearest layer wins, per key).
    pub fn layer(&self) -> Result<Option<OtelLayer>> {
        if self.otel_endpoint.is_none() && !self.otel_content && self.otel_header.is_empty() {
            return Ok(None);
        }
        let mut headers = BTreeMap::new();
        for h in &self.otel_header {
            let (k, v) = split_header("--otel-header", h)?;
            headers.insert(k, v);
        }
        Ok(Some(OtelLayer {
            endpoint: self.otel_endpoint.clone(),
            content: self.otel_content.then_some(true),
            headers: (!headers.is_empty()).then_some(headers),
        }))
    }
}

fn split_header(flag: &str, spec: &str) -> Result<(String, String)> {
    match spec.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.trim().to_owned())),
        _ => Err(crate::exit::UsageError(format!("{flag} {spec:?}: expected NAME=VALUE")).into()),
    }
}

#[derive(Debug, Args)]
pub struct OtelArgs {
    /// The session (a path, an id, or a prefix of one).
    session: String,
    /// The collector's OTLP/HTTP base URL; the spans go to URL/v1/traces.
    #[arg(long, value_name = "URL")]
    endpoint: String,
    /// Include message content (prompts, completions, tool arguments and results).
    #[arg(long)]
    otel_content: bool,
    /// An extra request header, NAME=VALUE (repeatable; e.g. Langfuse's
    /// `Authorization=Basic …`).
    #[arg(long = "header", value_name = "NAME=VALUE")]
    headers: Vec<String>,
    /// Give up after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    timeout: u64,
    /// The provider the session ran against (the log does not record it).
    #[arg(long, value_name = "NAME")]
    provider: Option<String>,
    /// The model the session ran against (the log does not record it).
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
}

/// The spans of a session file and its sub-agents (with a notice per child that
/// could not be read).
fn family_spans(path: &Path, opts: &Options) -> Result<Vec<xcsh_otel::SpanData>> {
    let family =
        load_family(path, Depth::All).with_context(|| format!("cannot read {}", path.display()))?;
    for p in family.problems() {
        eprintln!("xcsh: {p}");
    }
    Ok(xcsh_otel::spans_of_family(&family, opts))
}

/// `xcsh otel`.
pub fn main(args: OtelArgs) -> Result<ExitCode> {
    let looks_like_a_path =
        args.session.contains(std::path::MAIN_SEPARATOR) || args.session.ends_with(".jsonl");
    if looks_like_a_path && !Path::new(&args.session).exists() {
        anyhow::bail!("{}: no such session file", args.session);
    }
    let path = crate::sessions::resolve(&args.session)?;
    let opts = Options {
        content: args.otel_content,
        provider: args.provider,
        model: args.model,
    };
    let spans = family_spans(&path, &opts)?;
    let mut to = Endpoint::new(&args.endpoint);
    to.timeout = Duration::from_secs(args.timeout.max(1));
    for h in &args.headers {
        let (k, v) = split_header("--header", h)?;
        to.headers.insert(k, v);
    }
    let n = spans.len();
    xcsh_otel::send_blocking(spans, &to)?;
    eprintln!(
        "xcsh: sent {n} span(s) to {}",
        xcsh_otel::traces_url(&args.endpoint)?
    );
    Ok(ExitCode::SUCCESS)
}

/// `xcsh export S --format otlp`: the OTLP/JSON of a session and its sub-agents.
pub fn otlp_json(path: &Path, content: bool) -> Result<String> {
    let opts = Options {
        content,
        ..Options::default()
    };
    Ok(xcsh_otel::to_otlp_json(family_spans(path, &opts)?)?)
}

/// After a run of `xcsh run`: its spans (and its sub-agents') to the configured
/// collector, if any. A failure is a notice; the send is bounded by a timeout.
pub async fn after_run(
    settings: &crate::config::OtelSettings,
    session: &Path,
    provider: Option<String>,
    model: Option<String>,
) {
    let Some(endpoint) = &settings.endpoint else {
        return;
    };
    let opts = Options {
        content: settings.content.value,
        provider,
        model,
    };
    let url = endpoint.value.clone();
    let spans = match load_family(session, Depth::All) {
        Ok(family) => xcsh_otel::spans_of_last_run(&family, &opts),
        Err(e) => {
            eprintln!("xcsh: traces not sent to {url}: cannot read the session: {e}");
            return;
        }
    };
    let mut to = Endpoint::new(&url);
    to.headers = settings.headers.value.clone();
    if let Err(e) = xcsh_otel::send(spans, &to).await {
        eprintln!("xcsh: traces not sent: {e}");
    }
}
