//! `xcsh replay --redrive SESSION --cassette FILE`: runs the whole agent again (the
//! runtime, not only the machine) on the session's prompts, with the provider served
//! from the cassette and every tool result served from the session's log, writes a
//! new session, and reports whether it matches the original: decisions and the
//! conversation, ids and times aside.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use tokio_util::sync::CancellationToken;
use xcsh_log::{Body, Dag, Record, SessionLog, read_session, rebuild_context};
use xcsh_machine::{CallId, RunConfig, ToolCall, ToolOutcome, ToolStatus};
use xcsh_providers::anthropic::AnthropicProvider;
use xcsh_providers::cassette::{Cassette, Pace, Redactor, Tape};
use xcsh_providers::http::HttpConfig;
use xcsh_providers::openai::OpenAiProvider;
use xcsh_providers::responses::ResponsesProvider;
use xcsh_providers::{BoxFuture, Provider};
use xcsh_runtime::{RunOptions, SessionTarget, Task, instructions, run_agent};
use xcsh_tools::testing::TestTools;
use xcsh_tools::{StandardTools, ToolExecutor, ToolSpec};

use crate::sessions;

/// What a redrive found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redriven {
    pub new_session: PathBuf,
    pub runs: usize,
    /// The first difference, or None when decisions and conversation match.
    pub difference: Option<String>,
}

/// Tools whose results come from the recording: the same specs as the run had, the
/// recorded outcome for each call id.
struct RecordedTools {
    specs: Vec<ToolSpec>,
    mutating: Vec<String>,
    results: BTreeMap<CallId, (ToolCall, ToolOutcome)>,
    /// The recorded run's sandbox (its always-asked tools route the same).
    sandbox: Option<xcsh_machine::SandboxConfig>,
}

impl ToolExecutor for RecordedTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.specs.clone()
    }

    fn mutating(&self) -> Vec<String> {
        self.mutating.clone()
    }

    fn sandbox(&self) -> Option<xcsh_machine::SandboxConfig> {
        self.sandbox.clone()
    }

    fn execute(&self, call: ToolCall, _cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        let outcome = match self.results.get(&call.id) {
            Some((recorded, outcome)) if *recorded == call => outcome.clone(),
            Some((recorded, _)) => ToolOutcome {
                status: ToolStatus::Error,
                content: format!(
                    "redrive: call {} differs from the recording ({} {} was recorded, {} {} made now)",
                    call.id, recorded.name, recorded.arguments, call.name, call.arguments
                ),
            },
            None => ToolOutcome {
                status: ToolStatus::Error,
                content: format!("redrive: no recorded result for call {}", call.id),
            },
        };
        Box::pin(async move { outcome })
    }
}

pub async fn redrive(original: &Path, cassette: &Path) -> Result<Redriven> {
    let log = read_session(original)?;
    let leaf = log.leaf();
    let path = Dag::from_log(&log).path_to_root(leaf)?;
    let mut prompts: Vec<(String, RunConfig)> = Vec::new();
    let mut results = BTreeMap::new();
    let mut calls = BTreeMap::new();
    for id in &path {
        let Some(entry) = log.get(*id) else { continue };
        match &entry.body {
            Body::Record(Record::UserMessage { text, config }) => {
                prompts.push((text.clone(), config.clone()))
            }
            Body::Record(
                Record::Steer { .. }
                | Record::FollowUp { .. }
                | Record::Interrupt {}
                | Record::ApprovalAnswer { .. }
                | Record::Compact { .. }
                | Record::Undo { note: Some(_), .. }
                | Record::Branch { .. },
            ) => bail!(
                "{}: entry {id} is a {}: a redrive plays the prompts of one straight branch only",
                original.display(),
                entry.type_name()
            ),
            Body::Record(Record::ToolResult(r)) => {
                results.insert(r.call_id.clone(), r.outcome.clone());
            }
            Body::Decision(xcsh_machine::Decision::ToolDispatched { call, .. }) => {
                calls.insert(call.id.clone(), call.clone());
            }
            _ => {}
        }
    }
    let Some((_, first_config)) = prompts.first() else {
        bail!("{}: no prompt to redrive", original.display());
    };
    let results = calls
        .into_iter()
        .filter_map(|(id, call)| results.remove(&id).map(|o| (id, (call, o))))
        .collect();
    // The standard tools as the run had them: with `bash_outside_sandbox` when its
    // sandbox was on (§21.7), with `plan` when it was offered (§27; not in runs
    // recorded before it existed).
    let offered =
        |s: &ToolSpec| s.name != xcsh_tools::plan::NAME || first_config.tools.contains(&s.name);
    let standard = [false, true].into_iter().find_map(|sandboxed| {
        let all = StandardTools::specs_of(sandboxed);
        let specs: Vec<_> = all.into_iter().filter(|s| offered(s)).collect();
        specs
            .iter()
            .map(|s| &s.name)
            .eq(first_config.tools.iter())
            .then_some(specs)
    });
    // Other tools (an MCP server's, §32.6): the specs the cassette's first request
    // offered, when they are the recorded run's tools. No server is started.
    let test_names: Vec<String> = TestTools
        .specs()
        .into_iter()
        .filter(|s| offered(s))
        .map(|s| s.name)
        .collect();
    let from_cassette = (standard.is_none() && test_names != first_config.tools)
        .then(|| cassette_specs(cassette))
        .transpose()?
        .filter(|specs| specs.iter().map(|s| &s.name).eq(first_config.tools.iter()));
    let (specs, mutating) = match standard.or(from_cassette) {
        Some(specs) => (specs, first_config.mutating.clone()),
        None => (
            TestTools
                .specs()
                .into_iter()
                .filter(|s| offered(s))
                .collect(),
            TestTools.mutating(),
        ),
    };
    let tools = Arc::new(RecordedTools {
        specs,
        mutating,
        results,
        sandbox: first_config.sandbox.clone(),
    });

    let cwd = PathBuf::from(&log.header().cwd);
    let cwd = if cwd.is_dir() {
        cwd
    } else {
        std::env::current_dir()?
    };
    let provider = cassette_provider(cassette, &cwd)?;
    let home = sessions::home()?;
    let system = instructions::system_prompt(
        crate::setup::DEFAULT_SYSTEM_PROMPT,
        &instructions::discover(&cwd, Some(&home)),
    );
    let (session_id, new_path) = sessions::new_session(&cwd)?;
    let mut session = SessionTarget::New {
        path: new_path.clone(),
        session_id,
        cwd: cwd.display().to_string(),
    };
    for (text, config) in &prompts {
        let handle = run_agent(RunOptions {
            session,
            task: Task::Prompt(text.clone()),
            limits: config.limits,
            system_prompt: system.clone(),
            provider: Arc::clone(&provider),
            tools: tools.clone(),
            permissions: config.permissions,
            approver: None,
            max_parallel_tools: xcsh_runtime::DEFAULT_MAX_PARALLEL_TOOLS,
            secrets: crate::providers::known_secrets(),
            memory: None,
            // Compared with the source's log entry by entry: no `provider` entry.
            provider_record: None,
        })?;
        handle.result().await?;
        session = SessionTarget::Existing {
            path: new_path.clone(),
            at: None,
        };
    }
    let redriven = read_session(&new_path)?;
    Ok(Redriven {
        difference: compare(&log, &redriven)?,
        new_session: new_path,
        runs: prompts.len(),
    })
}

/// The tools the first request of the cassette at `path` offered, in the format of
/// any of the three wire protocols (`function.parameters`, `input_schema`,
/// `parameters`).
fn cassette_specs(path: &Path) -> Result<Vec<ToolSpec>> {
    let cassette = Cassette::load(path, Pace::Full, Redactor::default())?;
    let Some(first) = cassette.exchanges().first() else {
        return Ok(Vec::new());
    };
    let tools = first.body["tools"].as_array().cloned().unwrap_or_default();
    Ok(tools
        .iter()
        .filter_map(|t| {
            let f = if t["function"].is_object() {
                &t["function"]
            } else {
                t
            };
            let parameters = [&f["parameters"], &f["input_schema"]]
                .into_iter()
                .find(|v| !v.is_null())?;
            Some(ToolSpec {
                name: f["name"].as_str()?.to_owned(),
                description: f["description"].as_str().unwrap_or_default().to_owned(),
                parameters: parameters.clone(),
            })
        })
        .collect())
}

/// The provider the cassette was recorded from (its endpoint path and model),
/// served from the cassette.
fn cassette_provider(path: &Path, cwd: &Path) -> Result<Arc<dyn Provider>> {
    let mut volatile = vec![(cwd.display().to_string(), "cwd".to_string())];
    if let Some(home) = std::env::var_os("HOME") {
        volatile.push((
            PathBuf::from(home).display().to_string(),
            "home".to_string(),
        ));
    }
    let cassette = Cassette::load(
        path,
        Pace::Full,
        Redactor::new(crate::providers::known_secrets(), &volatile),
    )?;
    let first = cassette
        .exchanges()
        .first()
        .with_context(|| format!("{}: the cassette holds no exchange", path.display()))?;
    let model = first.body["model"].as_str().unwrap_or_default().to_string();
    let recorded = first.path.clone();
    let (suffix, kind) = [
        ("chat/completions", "openai"),
        ("v1/messages", "anthropic"),
        ("responses", "openai-responses"),
    ]
    .into_iter()
    .find(|(suffix, _)| recorded.ends_with(suffix))
    .with_context(|| format!("{}: unknown endpoint {recorded}", path.display()))?;
    // Nothing listens there: every byte comes from the cassette.
    let base = format!(
        "http://127.0.0.1:9{}",
        recorded.trim_end_matches(suffix).trim_end_matches('/')
    );
    let mut config = HttpConfig::new(&base, None, &model);
    config.tape = Some(Tape::Play(Arc::new(cassette)));
    Ok(match kind {
        "anthropic" => Arc::new(AnthropicProvider::new(config)?),
        "openai-responses" => Arc::new(ResponsesProvider::new(config)?),
        _ => Arc::new(OpenAiProvider::new(config)?),
    })
}

/// Compares the decisions and the final conversation of two sessions' leaves.
fn compare(a: &SessionLog, b: &SessionLog) -> Result<Option<String>> {
    let decisions = |log: &SessionLog| -> Result<Vec<serde_json::Value>> {
        let path = Dag::from_log(log).path_to_root(log.leaf())?;
        Ok(path
            .iter()
            .filter_map(|id| log.get(*id))
            .filter_map(|e| match &e.body {
                Body::Decision(d) => serde_json::to_value(d).ok(),
                _ => None,
            })
            .collect())
    };
    let (da, db) = (decisions(a)?, decisions(b)?);
    for (i, pair) in da.iter().zip(&db).enumerate() {
        if pair.0 != pair.1 {
            return Ok(Some(format!(
                "decision {} differs:\n  original: {}\n  redriven: {}",
                i + 1,
                pair.0,
                pair.1
            )));
        }
    }
    if da.len() != db.len() {
        return Ok(Some(format!(
            "the original made {} decisions, the redrive {}",
            da.len(),
            db.len()
        )));
    }
    let messages = |log: &SessionLog| -> Result<Vec<xcsh_machine::Message>> {
        Ok(rebuild_context(log, log.leaf())?
            .into_iter()
            .map(|i| i.message)
            .collect())
    };
    if messages(a)? != messages(b)? {
        return Ok(Some("the conversations differ".into()));
    }
    Ok(None)
}
