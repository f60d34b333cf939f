//! The faux provider: plays a JSON Lines script, one line per model step, as real
//! chunked stream events. Needs no key and no network; honors cancel between chunks.
//!
//! A line: `{"text":"…","reasoning":"…","tool_calls":[{"name":"echo","arguments":{…}}],
//! "finish":"tool_calls","usage":{"input":120,"output":30},"error":"…","chunk_delay_ms":0}`
//! (every field optional).
//!
//! A script may serve a family (SPEC.md §29.5): a step with `"agent":"NAME"` is for
//! the sub-agent whose `task` call has the description NAME (`StreamCall::agent`),
//! a step without one for the parent. Each request takes the next step of its own
//! agent, so the order between sub-agents running at once does not matter; the steps
//! of one agent are played in script order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::http::cancelled;
use super::{BoxFuture, ModelRequest, Provider, StreamCall, StreamSink};
use xcsh_machine::{
    CallId, FinishReason, Message, ProviderError, ProviderErrorKind, StreamEvent, Usage,
};

/// Bytes per text delta: small enough that a step streams as many chunks.
const CHUNK: usize = 12;

#[derive(Debug, thiserror::Error)]
pub enum FauxError {
    #[error("{path}: cannot read the faux script: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: not a faux script step: {source}")]
    Parse {
        path: PathBuf,
        line: usize,
        source: serde_json::Error,
    },
}

/// One scripted model step.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptStep {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub reasoning: String,
    #[serde(default)]
    pub tool_calls: Vec<ScriptCall>,
    #[serde(default)]
    pub finish: Option<FinishReason>,
    #[serde(default)]
    pub usage: Option<ScriptUsage>,
    /// Fail the step with this provider message after streaming the text.
    #[serde(default)]
    pub error: Option<String>,
    /// Delay between chunks, to let a test or a user act mid-stream.
    #[serde(default)]
    pub chunk_delay_ms: u64,
    /// The sub-agent this step is for (the `description` of its `task` call);
    /// absent: the parent's.
    #[serde(default)]
    pub agent: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptCall {
    #[serde(default)]
    pub id: Option<String>,
    pub name: String,
    /// Arguments as JSON; a string is sent verbatim (to script invalid arguments).
    #[serde(default)]
    pub arguments: serde_json::Value,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptUsage {
    pub input: u64,
    pub output: u64,
}

/// A step and its 1-based line in the script.
type Lined = (usize, ScriptStep);

/// Plays a script; each `stream` call takes the next step of its agent.
#[derive(Debug)]
pub struct FauxProvider {
    source: String,
    /// Per agent (`None`: the parent), its steps in script order, each with its
    /// 1-based line in the script (call ids name the line).
    steps: Arc<BTreeMap<Option<String>, Vec<Lined>>>,
    /// Per agent (`None`: the parent), how many of its steps were requested.
    next: Mutex<BTreeMap<Option<String>, usize>>,
}

impl FauxProvider {
    pub fn from_file(path: &Path) -> Result<FauxProvider, FauxError> {
        let text = std::fs::read_to_string(path).map_err(|source| FauxError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        FauxProvider::from_script(&path.display().to_string(), &text).map_err(|(line, source)| {
            FauxError::Parse {
                path: path.to_path_buf(),
                line,
                source,
            }
        })
    }

    /// Parses a script; on error returns the 1-based line and the JSON error.
    pub fn from_script(
        source: &str,
        text: &str,
    ) -> Result<FauxProvider, (usize, serde_json::Error)> {
        let mut steps = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            steps.push((i + 1, serde_json::from_str(line).map_err(|e| (i + 1, e))?));
        }
        Ok(FauxProvider::by_agent(source, steps))
    }

    /// A provider over steps given in code; step N counts as line N.
    pub fn from_steps(source: &str, steps: Vec<ScriptStep>) -> FauxProvider {
        FauxProvider::by_agent(
            source,
            steps.into_iter().enumerate().map(|(i, s)| (i + 1, s)),
        )
    }

    /// Steps with their lines, grouped by agent once, so that a request finds its
    /// step without walking the script.
    fn by_agent(source: &str, steps: impl IntoIterator<Item = Lined>) -> Self {
        let mut by_agent: BTreeMap<Option<String>, Vec<Lined>> = BTreeMap::new();
        for (line, step) in steps {
            by_agent
                .entry(step.agent.clone())
                .or_default()
                .push((line, step));
        }
        FauxProvider {
            source: source.to_string(),
            steps: Arc::new(by_agent),
            next: Mutex::new(BTreeMap::new()),
        }
    }
}

impl Provider for FauxProvider {
    fn name(&self) -> &str {
        "faux"
    }

    fn model(&self) -> &str {
        "faux-script"
    }

    /// Plays the next step of the call's agent (`None`: the parent).
    fn stream(&self, call: StreamCall) -> BoxFuture<Result<(), ProviderError>> {
        let StreamCall {
            request,
            sink,
            cancel,
            agent: key,
        } = call;
        let index = {
            // A poisoned lock only means another request panicked: the counts hold.
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let n = next.entry(key.clone()).or_insert(0);
            *n += 1;
            *n - 1
        };
        let steps = Arc::clone(&self.steps);
        let source = self.source.clone();
        Box::pin(async move {
            let own = steps.get(&key).map_or(&[][..], Vec::as_slice);
            let Some((line, step)) = own.get(index) else {
                let whose = match &key {
                    Some(agent) => format!(" for the sub-agent {agent:?}"),
                    None => String::new(),
                };
                return Err(ProviderError {
                    kind: ProviderErrorKind::ScriptExhausted,
                    message: format!(
                        "the faux script {source} has {} step(s){whose} and step {} was requested",
                        own.len(),
                        index + 1
                    ),
                });
            };
            play(step, *line, &request, &sink, &cancel).await
        })
    }
}

async fn pause(step: &ScriptStep, cancel: &CancellationToken) -> Result<(), ProviderError> {
    if step.chunk_delay_ms > 0 {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(step.chunk_delay_ms)) => {}
            () = cancel.cancelled() => {}
        }
    } else {
        tokio::task::yield_now().await;
    }
    if cancel.is_cancelled() {
        Err(cancelled())
    } else {
        Ok(())
    }
}

async fn play(
    step: &ScriptStep,
    line: usize,
    request: &ModelRequest,
    sink: &StreamSink,
    cancel: &CancellationToken,
) -> Result<(), ProviderError> {
    let mut events = Vec::new();
    for chunk in chunks(&step.reasoning) {
        events.push(StreamEvent::ReasoningDelta { text: chunk });
    }
    for chunk in chunks(&step.text) {
        events.push(StreamEvent::TextDelta { text: chunk });
    }
    for (i, call) in step.tool_calls.iter().enumerate() {
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        let id = call
            .id
            .clone()
            .unwrap_or_else(|| format!("call_{line}_{}", i + 1));
        events.push(StreamEvent::ToolCallStart {
            index,
            id: CallId(id),
            name: call.name.clone(),
        });
        let args = match &call.arguments {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => "{}".to_string(),
            other => other.to_string(),
        };
        for chunk in chunks(&args) {
            events.push(StreamEvent::ToolCallDelta {
                index,
                arguments: chunk,
            });
        }
        events.push(StreamEvent::ToolCallEnd { index });
    }
    if step.error.is_none() {
        let usage = match step.usage {
            Some(u) => Usage {
                input_tokens: u.input,
                output_tokens: u.output,
                ..Usage::default()
            },
            None => Usage {
                input_tokens: estimate_request_tokens(request),
                output_tokens: ((step.text.len() + step.reasoning.len()) as u64).div_ceil(4),
                ..Usage::default()
            },
        };
        events.push(StreamEvent::Usage { usage });
        let finish = step.finish.unwrap_or(if step.tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        });
        events.push(StreamEvent::Finish { reason: finish });
    }
    for event in events {
        pause(step, cancel).await?;
        if !sink.send(event) {
            return Err(cancelled());
        }
    }
    match &step.error {
        Some(message) => Err(ProviderError {
            kind: ProviderErrorKind::Api,
            message: message.clone(),
        }),
        None => Ok(()),
    }
}

/// Splits text into deltas of about `CHUNK` bytes, on character boundaries.
fn chunks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        if current.len() >= CHUNK {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// A deterministic stand-in for the input tokens a real provider would report.
fn estimate_request_tokens(request: &ModelRequest) -> u64 {
    let bytes: usize = request.system.len()
        + request
            .messages
            .iter()
            .map(|m| match m {
                Message::User { text, .. } | Message::Summary { text } => text.len(),
                Message::Assistant {
                    text,
                    reasoning,
                    tool_calls,
                    ..
                } => {
                    text.len()
                        + reasoning.len()
                        + tool_calls.iter().map(|c| c.arguments.len()).sum::<usize>()
                }
                Message::ToolResult { content, .. } => content.len(),
            })
            .sum::<usize>();
    (bytes as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::mpsc;
    use xcsh_machine::StepNo;

    /// The text the step served to `agent` (`None`: the parent) streams, or its error.
    async fn served(faux: &FauxProvider, agent: Option<&str>) -> Result<String, String> {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let request = ModelRequest {
            system: String::new(),
            messages: Default::default(),
            tools: Vec::new(),
            max_output_tokens: 100,
        };
        let sink = StreamSink::new(StepNo(1), tx);
        let cancel = CancellationToken::new();
        let call = StreamCall {
            agent: agent.map(str::to_owned),
            ..StreamCall::new(request, sink, cancel)
        };
        let ended = faux.stream(call).await;
        let mut text = String::new();
        while let Ok((_, item)) = rx.try_recv() {
            if let crate::StreamItem::Event(StreamEvent::TextDelta { text: t }) = item {
                text.push_str(&t);
            }
        }
        ended.map(|()| text).map_err(|e| e.message)
    }

    #[tokio::test]
    async fn each_agent_takes_its_own_next_step_whatever_the_order_of_requests() {
        let script = [
            r#"{"text":"parent 1"}"#,
            r#"{"agent":"a","text":"a 1"}"#,
            r#"{"agent":"b","text":"b 1"}"#,
            r#"{"agent":"a","text":"a 2"}"#,
            r#"{"text":"parent 2"}"#,
        ]
        .join("\n");
        let faux = FauxProvider::from_script("family.jsonl", &script).unwrap();
        let mut got = Vec::new();
        for agent in [Some("b"), Some("a"), None, Some("a"), None, Some("b"), None] {
            got.push(served(&faux, agent).await);
        }
        assert_eq!(
            got,
            [
                Ok("b 1".to_string()),
                Ok("a 1".into()),
                Ok("parent 1".into()),
                Ok("a 2".into()),
                Ok("parent 2".into()),
                Err("the faux script family.jsonl has 1 step(s) for the sub-agent \"b\" and step 2 was requested".into()),
                Err("the faux script family.jsonl has 2 step(s) and step 3 was requested".into()),
            ]
        );
    }
}
