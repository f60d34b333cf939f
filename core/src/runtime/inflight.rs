//! Work the owner task has in flight and polls itself: model calls and tool calls
//! (their futures, with panics caught), and what finished (a tool call, an
//! approval, a summary).

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::ApprovalAnswer;
use crate::log::FileChange;
use crate::machine::{
    CallId, ProviderError, ProviderErrorKind, StepNo, ToolCall, ToolOutcome, ToolStatus,
};
use crate::provider::BoxFuture;

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
}

/// A dispatched tool call and, once it finished, its outcome.
pub(super) struct InFlight {
    pub(super) call_id: CallId,
    pub(super) cancel: CancellationToken,
    pub(super) done: Option<Ended>,
}

/// A tool call that ended, waiting for the calls dispatched before it to settle:
/// its outcome, duration and the files it changed (taken from the executor when it
/// ended, so that its `tool_result` event carries them).
pub(super) struct Ended {
    pub(super) call: ToolCall,
    pub(super) outcome: ToolOutcome,
    pub(super) duration_ms: u64,
    pub(super) changes: Vec<FileChange>,
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

/// Resolves when one of `runs` ends (and removes it); pending while none runs. All
/// of them are polled each time, so that each call starts as soon as it is
/// dispatched; the others that ended meanwhile wait in `ended`. A tool that panics
/// while running is a tool error.
pub(super) fn next_tool_end<'a>(
    runs: &'a mut Vec<ToolRun>,
    ended: &'a mut std::collections::VecDeque<Done>,
) -> impl Future<Output = Done> + 'a {
    std::future::poll_fn(move |cx| {
        let mut i = 0;
        while i < runs.len() {
            let Poll::Ready(result) = Pin::new(&mut runs[i].work).poll(cx) else {
                i += 1;
                continue;
            };
            let ToolRun { call, started, .. } = runs.remove(i);
            let outcome = result.unwrap_or_else(|panic| ToolOutcome {
                status: ToolStatus::Error,
                content: format!(
                    "error: the tool `{}` failed: {}",
                    call.name,
                    panic_text(panic.as_ref())
                ),
            });
            let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            ended.push_back(Done::Tool {
                call,
                outcome,
                duration_ms,
            });
        }
        match ended.pop_front() {
            Some(done) => Poll::Ready(done),
            None => Poll::Pending,
        }
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
