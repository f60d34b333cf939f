//! The tool-executor interface and the built-in test tools (`echo`, `sleep`). The
//! standard tools (read, write, edit, bash, …) implement the same trait.

mod bash;
mod beneath;
pub mod blobs;
pub mod caps;
mod edit;
mod glob;
mod grep;
mod list;
pub mod procs;
mod read;
pub mod sandbox;
pub mod standard;
pub mod testing;
pub mod workspace;
mod write;

pub use standard::{StandardTools, ToolOptions, is_mutating};

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::machine::{CallId, ToolCall, ToolOutcome};
use crate::provider::BoxFuture;

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
    /// Like `execute`, and reports the call's output to `progress` as it comes
    /// (transient: the outcome is what counts, and it is the same as `execute`'s).
    /// The default reports nothing; the standard tools report bash's output.
    fn execute_with_progress(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
        progress: ToolProgress,
    ) -> BoxFuture<ToolOutcome> {
        drop(progress);
        self.execute(call, cancel)
    }
    /// The names of the tools that change the workspace; they go through the
    /// permission policy. Read-only tools never ask.
    fn mutating(&self) -> Vec<String> {
        Vec::new()
    }
    /// The files call `id` changed, taken once after it settled (the runtime records
    /// them in the call's `tool_result` entry).
    fn take_file_changes(&self, _id: &CallId) -> Vec<crate::log::FileChange> {
        Vec::new()
    }
    /// Like `execute_with_progress`, for a call whose `tool_dispatched` entry is
    /// `dispatch` (durable already): an executor that keeps before-images names
    /// them by it (SPEC.md §21.6). The default forgets `dispatch`.
    fn execute_dispatched(
        &self,
        call: ToolCall,
        dispatch: blobs::Dispatch,
        cancel: CancellationToken,
        progress: ToolProgress,
    ) -> BoxFuture<ToolOutcome> {
        drop(dispatch);
        self.execute_with_progress(call, cancel, progress)
    }
    /// The results of the calls dispatched at `dispatches` are durable in their
    /// logs: their before-images are no longer needed. The default keeps none.
    fn results_durable(&self, dispatches: &[blobs::Dispatch]) {
        let _ = dispatches;
    }
    /// Where this executor keeps before-images, if it keeps any.
    fn before_images(&self) -> Option<blobs::BlobStore> {
        None
    }
    /// The sandbox the tools run under, recorded in `RunConfig.sandbox` (with the
    /// tools that are always asked). `None`: the executor has no sandbox setting.
    fn sandbox(&self) -> Option<crate::machine::SandboxConfig> {
        None
    }
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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    type Seen = Arc<Mutex<Vec<(OutputStream, String)>>>;

    fn collecting() -> (ToolProgress, Seen) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let progress = ToolProgress::new(move |stream, text| {
            sink.lock().unwrap().push((stream, text.to_owned()));
        });
        (progress, seen)
    }

    #[test]
    fn progress_reaches_the_sink_through_every_clone() {
        let (progress, seen) = collecting();
        progress.report(OutputStream::Stdout, "a\n");
        progress.clone().report(OutputStream::Stderr, "b\n");
        progress.report(OutputStream::Stdout, "");
        assert_eq!(
            *seen.lock().unwrap(),
            vec![
                (OutputStream::Stdout, "a\n".to_owned()),
                (OutputStream::Stderr, "b\n".to_owned())
            ]
        );
    }

    #[test]
    fn progress_stops_at_the_byte_budget_on_a_character_boundary() {
        let (progress, seen) = collecting();
        progress.report(OutputStream::Stdout, &"x".repeat(MAX_PROGRESS_BYTES - 1));
        // "é" is two bytes: only one is left, so nothing of it is sent.
        progress.report(OutputStream::Stdout, "é");
        assert!(progress.is_active());
        progress.report(OutputStream::Stdout, "yz");
        progress.report(OutputStream::Stdout, "more");
        assert!(!progress.is_active());
        let seen = seen.lock().unwrap();
        let sent: usize = seen.iter().map(|(_, t)| t.len()).sum();
        assert_eq!(sent, MAX_PROGRESS_BYTES);
        assert_eq!(seen.last().unwrap().1, "y");
        assert_eq!(seen.len(), 2);
    }

    #[test]
    fn the_none_sink_is_inactive_and_drops_reports() {
        let progress = ToolProgress::none();
        assert!(!progress.is_active());
        progress.report(OutputStream::Stdout, "dropped");
    }
}
