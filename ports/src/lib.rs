//! The ports: the traits through which the runtime drives a model provider, the
//! tools and the user's approvals, and the types they share. Providers, tools and
//! the runtime all depend on this module; it depends on none of them.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use xcsh_machine::{
    ApprovalScope, CallId, Messages, ProviderError, StepNo, StreamEvent, ToolCall, ToolOutcome,
    Verdict,
};

pub mod arguments;
mod layered;
pub mod outcome;
pub use layered::{Layer, Layered};

/// A boxed, sendable future: the shape every provider and tool returns.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Everything a provider needs to make one request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelRequest {
    pub system: String,
    /// The context's messages, shared with it: a request is built without copying
    /// one (a `Vec<Message>` converts with `into`).
    pub messages: Messages,
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

/// One stream a provider is asked for ([`Provider::stream`]).
#[derive(Debug)]
pub struct StreamCall {
    pub request: ModelRequest,
    /// Where the stream's events go.
    pub sink: StreamSink,
    /// Fires when the run no longer wants the stream.
    pub cancel: CancellationToken,
    /// The sub-agent whose request this is (the `description` of its `task` call,
    /// SPEC.md §29.5): the faux provider serves it the script steps of that agent;
    /// the other providers ignore it. `None`: the run's own agent.
    pub agent: Option<String>,
}

impl StreamCall {
    /// A stream of the run's own agent.
    pub fn new(request: ModelRequest, sink: StreamSink, cancel: CancellationToken) -> StreamCall {
        StreamCall {
            request,
            sink,
            cancel,
            agent: None,
        }
    }
}

/// A model provider. `stream` sends the step's events to `call.sink` and resolves
/// when the stream ends: `Ok` when it finished, `Err` when it failed. When
/// `call.cancel` fires it stops as soon as it can (between chunks at the latest)
/// and resolves.
pub trait Provider: Send + Sync + 'static {
    /// Provider name as the user selects it (`faux`, `openai`, …).
    fn name(&self) -> &str;
    /// The model it calls.
    fn model(&self) -> &str;
    fn stream(&self, call: StreamCall) -> BoxFuture<Result<(), ProviderError>>;
    /// The request exactly as this provider would send it (the HTTP body for the
    /// wire protocols), for `--show-context`.
    fn render_request(&self, request: &ModelRequest) -> serde_json::Value {
        serde_json::to_value(request).unwrap_or_default()
    }
}

/// A provider that is another one (its name, its model, its requests as rendered)
/// but for what it does around a stream: a sub-agent's provider tags its requests,
/// a benchmark keeps some. Every `Wrapper` is a [`Provider`].
pub trait Wrapper: Send + Sync + 'static {
    /// The provider this one is.
    fn inner(&self) -> &dyn Provider;
    /// [`Provider::stream`], asked of [`Wrapper::inner`] as this wrapper does it.
    fn stream_inner(&self, call: StreamCall) -> BoxFuture<Result<(), ProviderError>>;
}

impl<W: Wrapper> Provider for W {
    fn name(&self) -> &str {
        self.inner().name()
    }

    fn model(&self) -> &str {
        self.inner().model()
    }

    fn stream(&self, call: StreamCall) -> BoxFuture<Result<(), ProviderError>> {
        self.stream_inner(call)
    }

    fn render_request(&self, request: &ModelRequest) -> serde_json::Value {
        self.inner().render_request(request)
    }
}

/// A tool as the model sees it: name, description and JSON schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

/// Runs tool calls. `execute` resolves exactly once; when `cancel` fires it stops
/// the work and resolves with status `cancelled`, saying plainly that side effects
/// already had were not undone.
pub trait ToolExecutor: Send + Sync + 'static {
    fn specs(&self) -> Vec<ToolSpec>;
    fn execute(&self, call: ToolCall, cancel: CancellationToken) -> BoxFuture<ToolOutcome>;
    /// Like `execute`, with all the runtime has for the call (`context`): where it
    /// reports its output as it comes, and, in a run, its dispatch and what the run
    /// had left. The outcome is the same as `execute`'s (progress is transient). The
    /// default uses only `context.cancel`; the standard tools report bash's output
    /// and keep before-images, and the `task` tool starts its sub-agent only in a run.
    fn execute_with(&self, call: ToolCall, context: CallContext) -> BoxFuture<ToolOutcome> {
        self.execute(call, context.cancel)
    }
    /// Whether `execute_with` may be called for `call` before its `tool_dispatched`
    /// entry is durable (write-ahead, SPEC.md §21.4): the executor then starts only
    /// what has no effect yet (bash: its shell, held at a gate) and does nothing of
    /// the call until `context.durable` resolves. The default, `false`, has the
    /// runtime call `execute_with` only once the dispatch is durable.
    fn starts_gated(&self, call: &ToolCall) -> bool {
        let _ = call;
        false
    }
    /// Whether `call`, about to be put to the user for approval, can succeed as it
    /// is: `Some` with the error it would return when it cannot (an edit of text the
    /// file does not hold, a write over a file not read). Asked before the question,
    /// so that no one approves a call certain to fail (SPEC.md §18.3); it changes
    /// nothing. The default: it can.
    fn check(&self, call: &ToolCall) -> Option<String> {
        let _ = call;
        None
    }
    /// The names of the tools that change the workspace; they go through the
    /// permission policy. Read-only tools never ask.
    fn mutating(&self) -> Vec<String> {
        Vec::new()
    }
    /// The files call `id` changed, taken once after it settled (the runtime records
    /// them in the call's `tool_result` entry).
    fn take_file_changes(&self, _id: &CallId) -> Vec<xcsh_log::FileChange> {
        Vec::new()
    }
    /// The sub-agent run call `id` started (a `task` call), taken once after it
    /// settled; the runtime records it in the call's `tool_result` entry.
    fn take_child_run(&self, _id: &CallId) -> Option<xcsh_log::ChildRun> {
        None
    }
    /// The results of the calls dispatched at `dispatches` are durable in their
    /// logs: their before-images are no longer needed. The default keeps none.
    fn results_durable(&self, dispatches: &[xcsh_log::blobs::Dispatch]) {
        let _ = dispatches;
    }
    /// Where this executor keeps before-images, if it keeps any.
    fn before_images(&self) -> Option<xcsh_log::blobs::BlobStore> {
        None
    }
    /// The sandbox the tools run under, recorded in `RunConfig.sandbox` (with the
    /// tools that are always asked). `None`: the executor has no sandbox setting.
    fn sandbox(&self) -> Option<xcsh_machine::SandboxConfig> {
        None
    }
}

/// What a tool call runs with besides itself ([`ToolExecutor::execute_with`]).
#[derive(Debug, Clone)]
pub struct CallContext {
    /// Fires when the call is cancelled.
    pub cancel: CancellationToken,
    /// Where the call reports its output as it comes.
    pub progress: ToolProgress,
    /// The call's `tool_dispatched` entry (durable already): an executor that keeps
    /// before-images names them by it (SPEC.md §21.6). `None` outside a run.
    pub dispatch: Option<xcsh_log::blobs::Dispatch>,
    /// What the run had left when the call started: the `task` tool sizes its
    /// sub-agent's limits from it (SPEC.md §29.3). `None` outside a run.
    pub run: Option<RunHeadroom>,
    /// When the call's dispatch is durable. Only a call started gated
    /// ([`ToolExecutor::starts_gated`]) can see it pending; every other call starts
    /// durable already.
    pub durable: Durable,
}

impl CallContext {
    /// A call outside a run that reports nothing (what `execute` gives).
    pub fn new(cancel: CancellationToken) -> CallContext {
        CallContext {
            cancel,
            progress: ToolProgress::none(),
            dispatch: None,
            run: None,
            durable: Durable::now(),
        }
    }
}

/// Whether a call's `tool_dispatched` entry is durable yet: the write-ahead rule a
/// call started gated ([`ToolExecutor::starts_gated`]) waits on before anything of
/// it happens. The runtime holds the [`MakeDurable`] of a sync in progress.
#[derive(Debug, Clone)]
pub struct Durable(Option<tokio::sync::watch::Receiver<bool>>);

/// The runtime's end of a [`Durable`]: [`MakeDurable::done`] once the log is synced.
/// Dropped without it, the dispatch never became durable, and the gated calls
/// must never start.
#[derive(Debug)]
pub struct MakeDurable(tokio::sync::watch::Sender<bool>);

impl Durable {
    /// Durable already (outside a run, or synced before the call started).
    pub fn now() -> Durable {
        Durable(None)
    }

    /// Not durable yet: it becomes so when the returned [`MakeDurable`] says so.
    pub fn pending() -> (MakeDurable, Durable) {
        let (tx, rx) = tokio::sync::watch::channel(false);
        (MakeDurable(tx), Durable(Some(rx)))
    }

    /// Whether it is durable at this moment.
    pub fn is_now(&self) -> bool {
        self.0.as_ref().is_none_or(|rx| *rx.borrow())
    }

    /// Resolves `true` once durable, `false` if it never will be (the sync failed
    /// and the runtime dropped its [`MakeDurable`]).
    pub async fn wait(self) -> bool {
        match self.0 {
            None => true,
            Some(mut rx) => rx.wait_for(|durable| *durable).await.is_ok(),
        }
    }
}

impl MakeDurable {
    /// The log is synced: every call waiting on this sync may go.
    pub fn done(self) {
        // Receivers that are gone (their calls ended) need no word.
        let _ = self.0.send(true);
    }
}

/// What a run had left when one of its tool calls started, and where it works: a
/// copy of numbers the run's machine holds (never shared state), passed with the
/// call (SPEC.md §29.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunHeadroom {
    /// The run's limits.
    pub limits: xcsh_machine::Limits,
    /// Steps taken in the current step window (the step that asked for the call
    /// included).
    pub steps_in_window: u32,
    /// Tokens charged against the spend budget so far (`Machine::spent`).
    pub spent: u64,
    /// The workspace the run's tools work in.
    pub cwd: String,
}

/// The sentence every cancelled tool result carries.
pub const CANCELLED_NOTE: &str =
    "cancelled by the user; side effects it already had were not undone";

/// Which output stream of a tool a piece of progress comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    Stdout,
    Stderr,
}

/// The most output bytes one call forwards as progress (1 MiB); later output is
/// not forwarded (the result still holds what its caps keep).
pub const MAX_PROGRESS_BYTES: usize = 1 << 20;

type ReportFn = dyn Fn(OutputStream, &str) + Send + Sync;

struct ProgressInner {
    report: Box<ReportFn>,
    /// Bytes still allowed (of [`MAX_PROGRESS_BYTES`]), shared by the clones.
    left: AtomicUsize,
}

/// Transient: where one running call reports its output as it comes (for the
/// interface to show), never recorded and never fed to the machine. Cheap to clone
/// (clones share the sink and the byte budget of [`MAX_PROGRESS_BYTES`]).
#[derive(Clone, Default)]
pub struct ToolProgress {
    inner: Option<Arc<ProgressInner>>,
}

impl std::fmt::Debug for ToolProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolProgress")
            .field(
                "left",
                &self.inner.as_ref().map(|i| i.left.load(Ordering::Relaxed)),
            )
            .finish_non_exhaustive()
    }
}

impl ToolProgress {
    /// A sink that calls `report` with each piece (at most [`MAX_PROGRESS_BYTES`]
    /// in all). `report` runs on the tool's task: it must not block.
    pub fn new(report: impl Fn(OutputStream, &str) + Send + Sync + 'static) -> ToolProgress {
        ToolProgress {
            inner: Some(Arc::new(ProgressInner {
                report: Box::new(report),
                left: AtomicUsize::new(MAX_PROGRESS_BYTES),
            })),
        }
    }

    /// A sink that drops everything (what `execute` uses).
    pub fn none() -> ToolProgress {
        ToolProgress { inner: None }
    }

    /// Whether reports go anywhere (a tool may skip the work of making them).
    pub fn is_active(&self) -> bool {
        self.inner
            .as_ref()
            .is_some_and(|i| i.left.load(Ordering::Relaxed) > 0)
    }

    /// Reports `text` from `stream`. Once the budget is spent the rest is dropped;
    /// the piece that crosses it is cut at a character boundary.
    pub fn report(&self, stream: OutputStream, text: &str) {
        let Some(inner) = &self.inner else {
            return;
        };
        if text.is_empty() {
            return;
        }
        let mut taken = 0;
        let update = inner
            .left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                let mut n = text.len().min(left);
                while !text.is_char_boundary(n) {
                    n -= 1;
                }
                taken = n;
                (n > 0).then(|| left - n)
            });
        if update.is_ok() {
            (inner.report)(stream, &text[..taken]);
        }
    }
}

/// A question for the user: may this mutating call run?
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    pub call: ToolCall,
    /// The workspace the call would run in.
    pub cwd: String,
    /// How many more questions of this run wait behind this one (calls the machine
    /// awaits an answer for). An answer's grant may cover some of them, so this is
    /// "N more waiting", not "1 of N".
    pub waiting: u32,
}

/// The user's answer: `y` = allow once, `a` = this tool for the session, `A` = this
/// exact call for the session, `n` = deny.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalAnswer {
    pub verdict: Verdict,
    pub scope: ApprovalScope,
    /// With a denial: what the user tells the model instead ("use a new file"); the
    /// denial result the model receives ends with `. The user says: MESSAGE`.
    /// Recorded in the `approval_answer` entry. Ignored (neither recorded nor sent)
    /// with `allow`, and when it is only blanks.
    pub message: Option<String>,
}

impl ApprovalAnswer {
    /// An answer without a message.
    pub fn new(verdict: Verdict, scope: ApprovalScope) -> ApprovalAnswer {
        ApprovalAnswer {
            verdict,
            scope,
            message: None,
        }
    }

    /// `n` with a message: deny once and tell the model `message`.
    pub fn deny_with(message: impl Into<String>) -> ApprovalAnswer {
        ApprovalAnswer {
            verdict: Verdict::Deny,
            scope: ApprovalScope::Once,
            message: Some(message.into()),
        }
    }

    /// The message as recorded: only with a denial, and only when not blank.
    pub fn recorded_message(&self) -> Option<String> {
        match self.verdict {
            Verdict::Allow => None,
            Verdict::Deny => self
                .message
                .as_deref()
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(str::to_owned),
        }
    }
}

/// Answers approval questions (the interactive prompt, or a library callback).
pub trait Approver: Send + Sync + 'static {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<ApprovalAnswer>;
}

#[cfg(test)]
mod tests;
