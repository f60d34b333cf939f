//! Work the owner task has in flight and polls itself: model calls and tool calls
//! (their futures, with panics caught; at most N tool calls run at once, the rest
//! wait in dispatch order), and what finished (a tool call, an approval, a summary).
//! The order in which what finished is recorded is the journal's (`xcsh_journal`).

use std::any::Any;
use std::collections::VecDeque;
use std::future::Future;
use std::num::NonZeroUsize;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::ApprovalAnswer;
use xcsh_machine::{
    CallId, ProviderError, ProviderErrorKind, StepNo, ToolCall, ToolOutcome, ToolStatus,
};
use xcsh_providers::BoxFuture;
use xcsh_tools::{CallContext, ToolExecutor};

/// Work that finished: a tool call, an approval, a summary.
pub(super) enum Done {
    Approval {
        call_id: CallId,
        answer: ApprovalAnswer,
    },
    Tool {
        call: ToolCall,
        outcome: ToolOutcome,
        duration_ms: u64,
    },
    Summary(Result<String, ProviderError>),
    /// The check of a call before its question (`ToolExecutor::check`).
    Checked {
        call_id: CallId,
        failure: Option<String>,
    },
    /// The memory extraction call ended (SPEC.md §28).
    Extraction {
        events: Vec<xcsh_log::TimedEvent>,
        result: Result<(), ProviderError>,
    },
}

/// A model call in flight: the provider's future, polled by the owner task itself
/// (no task of its own: each hop between tasks is a wake-up, often a context
/// switch, on the way of every step). Its events come over the stream channel; its
/// end is put behind them on the same channel.
pub(super) struct ModelCall {
    pub(super) step: StepNo,
    pub(super) stream: CatchUnwind<BoxFuture<Result<(), ProviderError>>>,
}

/// A dispatched tool call running: the executor's future, polled by the owner task
/// itself, like a model call (several run at once; a tool's blocking work runs on
/// the blocking pool, not in its future).
pub(super) struct ToolRun {
    pub(super) call: ToolCall,
    pub(super) started: Instant,
    pub(super) work: CatchUnwind<BoxFuture<ToolOutcome>>,
}

/// A dispatched tool call waiting for a free slot: it has not started.
struct Waiting {
    call: ToolCall,
    context: CallContext,
}

/// The dispatched tool calls the runtime executes: at most `limit` run at once
/// (SPEC.md §14.1, `max_parallel_tools`); the others wait, in dispatch order, and
/// start as running ones end. Waiting is the runtime's concern, not the machine's:
/// nothing about it is recorded, as the machine already settles calls in dispatch
/// order whatever order they end in.
pub(super) struct ToolSlots {
    tools: Arc<dyn ToolExecutor>,
    limit: NonZeroUsize,
    /// Running, in start order (= dispatch order).
    runs: Vec<ToolRun>,
    /// Dispatched, not started, in dispatch order.
    waiting: VecDeque<Waiting>,
    /// Calls that ended, not yet handed to the owner.
    ended: VecDeque<Done>,
}

impl ToolSlots {
    pub(super) fn new(tools: Arc<dyn ToolExecutor>, limit: NonZeroUsize) -> ToolSlots {
        ToolSlots {
            tools,
            limit,
            runs: Vec::new(),
            waiting: VecDeque::new(),
            ended: VecDeque::new(),
        }
    }

    /// A dispatched call: it starts now when a slot is free, else it waits behind
    /// the calls dispatched before it. Its decision is durable already, or (a call
    /// the executor starts gated) becomes so when `context.durable` says.
    pub(super) fn dispatch(&mut self, call: ToolCall, context: CallContext) {
        self.waiting.push_back(Waiting { call, context });
        self.fill();
    }

    /// Settles call `id` as cancelled without ever starting it, if it is waiting
    /// (a running call is cancelled through its token).
    pub(super) fn cancel_waiting(&mut self, id: &CallId) {
        if let Some(pos) = self.waiting.iter().position(|w| w.call.id == *id)
            && let Some(w) = self.waiting.remove(pos)
        {
            self.ended.push_back(never_started(w.call, self.limit));
        }
    }

    /// The running calls, to be driven to their end elsewhere; the waiting ones,
    /// which never started, are dropped.
    pub(super) fn take_running(&mut self) -> Vec<ToolRun> {
        self.waiting.clear();
        std::mem::take(&mut self.runs)
    }

    /// Starts waiting calls while a slot is free. A waiting call whose token was
    /// cancelled ends as cancelled instead.
    fn fill(&mut self) {
        while self.runs.len() < self.limit.get() {
            let Some(Waiting { call, context }) = self.waiting.pop_front() else {
                return;
            };
            if context.cancel.is_cancelled() {
                self.ended.push_back(never_started(call, self.limit));
                continue;
            }
            // An executor that panics instead of returning its future is a tool
            // error; the call settles.
            let tools = Arc::clone(&self.tools);
            let name = call.name.clone();
            let work = std::panic::catch_unwind(std::panic::AssertUnwindSafe({
                let call = call.clone();
                move || tools.execute_with(call, context)
            }))
            .unwrap_or_else(move |_| {
                Box::pin(async move {
                    ToolOutcome {
                        status: ToolStatus::Error,
                        content: format!("error: the tool `{name}` panicked starting"),
                    }
                })
            });
            self.runs.push(ToolRun {
                call,
                started: Instant::now(),
                work: CatchUnwind(work),
            });
        }
    }

    /// Resolves when a call ends (a running one, or a waiting one cancelled);
    /// pending while none does. All running calls are polled each time, so that
    /// each starts as soon as it is dispatched; the others that ended meanwhile
    /// wait in `ended`. Each end frees a slot for the next waiting call, which
    /// starts (and is polled) at once. A tool that panics while running is a tool
    /// error. Its duration counts from its start, not from its dispatch.
    pub(super) fn next_end(&mut self) -> impl Future<Output = Done> + '_ {
        std::future::poll_fn(move |cx| {
            let mut i = 0;
            while i < self.runs.len() {
                let Poll::Ready(result) = Pin::new(&mut self.runs[i].work).poll(cx) else {
                    i += 1;
                    continue;
                };
                let ToolRun { call, started, .. } = self.runs.remove(i);
                let outcome = result.unwrap_or_else(|panic| ToolOutcome {
                    status: ToolStatus::Error,
                    content: format!(
                        "error: the tool `{}` failed: {}",
                        call.name,
                        panic_text(panic.as_ref())
                    ),
                });
                let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                self.ended.push_back(Done::Tool {
                    call,
                    outcome,
                    duration_ms,
                });
                // Started calls go to the end of `runs`: this loop polls them.
                self.fill();
            }
            match self.ended.pop_front() {
                Some(done) => Poll::Ready(done),
                None => Poll::Pending,
            }
        })
    }
}

/// The result of a call cancelled while it waited for a slot: it never ran.
fn never_started(call: ToolCall, limit: NonZeroUsize) -> Done {
    let content = format!(
        "`{}` was cancelled by the user before it started (it was waiting: at most {limit} tool calls run at once); it did nothing",
        call.name
    );
    Done::Tool {
        call,
        outcome: ToolOutcome {
            status: ToolStatus::Cancelled,
            content,
        },
        duration_ms: 0,
    }
}

/// Resolves when one of `calls` ends (and removes it); pending while none is in
/// flight. A provider that panics while streaming fails its step like a provider
/// error.
pub(super) fn next_model_end(
    calls: &mut Vec<ModelCall>,
) -> impl Future<Output = (StepNo, Result<(), ProviderError>)> + '_ {
    std::future::poll_fn(move |cx| {
        for i in 0..calls.len() {
            if let Poll::Ready(result) = Pin::new(&mut calls[i].stream).poll(cx) {
                let call = calls.remove(i);
                let result = result.unwrap_or_else(|panic| {
                    Err(ProviderError {
                        kind: ProviderErrorKind::Malformed,
                        message: format!(
                            "the provider task failed: {}",
                            panic_text(panic.as_ref())
                        ),
                    })
                });
                return Poll::Ready((call.step, result));
            }
        }
        Poll::Pending
    })
}

/// A future whose panics are caught: `Err` with the panic's payload.
pub(super) struct CatchUnwind<F>(pub(super) F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Pin::new(inner).poll(cx))) {
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

/// How a panic reads, as tokio words a panicked task: `task ID panicked with
/// message "…"`.
pub(super) fn panic_text(panic: &(dyn Any + Send)) -> String {
    let task = tokio::task::try_id().map_or_else(String::new, |id| format!(" {id}"));
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned());
    match message {
        Some(m) => format!("task{task} panicked with message {m:?}"),
        None => format!("task{task} panicked"),
    }
}

/// A model call beside the run's steps (a compaction summary, a memory
/// extraction): its events folded into a `T` by `fold` on a task of its own, its
/// end and the folded value turned into what finished by `end`, sent on `done`.
pub(super) fn spawn_side_call<T: Default + Send + 'static>(
    provider: &Arc<dyn xcsh_providers::Provider>,
    request: xcsh_providers::ModelRequest,
    cancel: CancellationToken,
    done: tokio::sync::mpsc::UnboundedSender<Done>,
    mut fold: impl FnMut(&mut T, xcsh_machine::StreamEvent) + Send + 'static,
    end: impl FnOnce(Result<(), ProviderError>, T) -> Done + Send + 'static,
) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let sink = xcsh_providers::StreamSink::new(StepNo(0), tx);
    let stream = provider.stream(xcsh_providers::StreamCall::new(request, sink, cancel));
    tokio::spawn(async move {
        let collect = tokio::spawn(async move {
            let mut folded = T::default();
            while let Some((_, item)) = rx.recv().await {
                if let xcsh_providers::StreamItem::Event(event) = item {
                    fold(&mut folded, event);
                }
            }
            folded
        });
        let result = match tokio::spawn(stream).await {
            Ok(r) => r,
            Err(e) => Err(ProviderError {
                kind: ProviderErrorKind::Malformed,
                message: format!("the provider task failed: {e}"),
            }),
        };
        let folded = collect.await.unwrap_or_default();
        let _ = done.send(end(result, folded));
    });
}
