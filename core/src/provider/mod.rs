//! The provider interface: a model request in, normalized stream events out,
//! cancellable; the faux script player, the three HTTP wire protocols (OpenAI Chat
//! Completions, Anthropic Messages, OpenAI Responses) and cassettes.

pub mod anthropic;
pub mod cassette;
pub mod decode;
pub mod faux;
pub mod fields;
pub mod http;
pub mod openai;
pub mod regress;
pub mod responses;
pub mod sse;

use std::future::Future;
use std::pin::Pin;

use serde::Serialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::machine::{Message, ProviderError, StepNo, StreamEvent};
use crate::tools::ToolSpec;

/// A boxed, sendable future: the shape every provider and tool returns.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Everything a provider needs to make one request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelRequest {
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub max_output_tokens: u32,
}

/// What travels from a provider stream to the owner task: events, then one end.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamItem {
    Event(StreamEvent),
    End(Result<(), ProviderError>),
}

/// Where a provider sends the events of one stream. Sending never blocks; `send`
/// returns false once the run no longer listens.
#[derive(Debug, Clone)]
pub struct StreamSink {
    step: StepNo,
    tx: mpsc::UnboundedSender<(StepNo, StreamItem)>,
}

impl StreamSink {
    pub fn new(step: StepNo, tx: mpsc::UnboundedSender<(StepNo, StreamItem)>) -> StreamSink {
        StreamSink { step, tx }
    }

    pub fn send(&self, event: StreamEvent) -> bool {
        self.tx.send((self.step, StreamItem::Event(event))).is_ok()
    }
}

/// A model provider. `stream` sends the step's events to `sink` and resolves when
/// the stream ends: `Ok` when it finished, `Err` when it failed. When `cancel`
/// fires it stops as soon as it can (between chunks at the latest) and resolves.
pub trait Provider: Send + Sync + 'static {
    /// Provider name as the user selects it (`faux`, `openai`, …).
    fn name(&self) -> &str;
    /// The model it calls.
    fn model(&self) -> &str;
    fn stream(
        &self,
        request: ModelRequest,
        sink: StreamSink,
        cancel: CancellationToken,
    ) -> BoxFuture<Result<(), ProviderError>>;
    /// The request exactly as this provider would send it (the HTTP body for the
    /// wire protocols), for `--show-context`.
    fn render_request(&self, request: &ModelRequest) -> serde_json::Value {
        serde_json::to_value(request).unwrap_or_default()
    }
}
