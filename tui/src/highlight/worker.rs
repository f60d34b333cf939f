//! Highlighting off the UI thread: the code lines of a streaming block are sent to
//! one highlighter thread as they complete, and the frame takes their spans once
//! they are back (transient view state, like the stream it serves).
//!
//! syntect costs tens of microseconds per line of Rust; on the UI thread that is
//! time a keystroke or a frame waits. Here the UI thread only submits a line and,
//! later, clones its finished spans; until then the line is drawn plain in the live
//! area (as a partial line is). Lines of one block are highlighted in order by the
//! one thread, with the parser state carried forward, so the spans are exactly those
//! of [`super::CodeHighlighter`] run inline (a test below holds that).

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};

use ratatui::text::Span;

use super::CodeHighlighter;
use crate::Theme;

/// One code block being highlighted on the worker.
#[derive(Debug, Clone)]
pub struct AsyncBlock {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    theme: Theme,
    /// Used by the worker only (lines of a block come in order through one channel).
    highlighter: Mutex<CodeHighlighter>,
    state: Mutex<Progress>,
    done: Condvar,
}

#[derive(Debug, Default)]
struct Progress {
    submitted: usize,
    lines: Vec<Vec<Span<'static>>>,
}

struct Job {
    shared: Arc<Shared>,
    text: String,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic on the worker mid-line leaves data that is still well-formed (a
    // vector of finished lines), so a poisoned lock is taken as it is.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The process's highlighter thread, started on first use. `None` when the thread
/// cannot be started: the caller then highlights inline.
fn worker() -> Option<&'static Mutex<Sender<Job>>> {
    static WORKER: OnceLock<Option<Mutex<Sender<Job>>>> = OnceLock::new();
    WORKER
        .get_or_init(|| {
            let (tx, rx) = channel::<Job>();
            std::thread::Builder::new()
                .name("xcsh-highlight".into())
                .spawn(move || {
                    for job in rx {
                        let theme = job.shared.theme;
                        let spans = std::panic::catch_unwind(AssertUnwindSafe(|| {
                            lock(&job.shared.highlighter).line(&job.text, &theme)
                        }))
                        // A syntax that panics on some line: that line is plain.
                        .unwrap_or_else(|_| CodeHighlighter::new("").line(&job.text, &theme));
                        let mut state = lock(&job.shared.state);
                        state.lines.push(spans);
                        job.shared.done.notify_all();
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
}

impl AsyncBlock {
    /// A block in `lang` whose lines are highlighted on the worker with `theme`;
    /// `None` when no worker thread could be started.
    pub fn new(lang: &str, theme: Theme) -> Option<AsyncBlock> {
        worker()?;
        Some(AsyncBlock {
            shared: Arc::new(Shared {
                theme,
                highlighter: Mutex::new(CodeHighlighter::new(lang)),
                state: Mutex::new(Progress::default()),
                done: Condvar::new(),
            }),
        })
    }

    /// The theme the spans are made for.
    pub fn theme(&self) -> Theme {
        self.shared.theme
    }

    /// Queues the block's next complete line (without its newline).
    pub fn submit(&self, text: &str) {
        let job = Job {
            shared: Arc::clone(&self.shared),
            text: text.to_string(),
        };
        lock(&self.shared.state).submitted += 1;
        let sent = worker().is_some_and(|tx| lock(tx).send(job).is_ok());
        if !sent {
            // The worker is gone (it cannot be: it catches a panicking syntax and
            // never drops its end of the channel): the line is plain, so that
            // `wait` still returns.
            let spans = CodeHighlighter::new("").line(text, &self.shared.theme);
            lock(&self.shared.state).lines.push(spans);
        }
    }

    /// How many lines were submitted.
    pub fn submitted(&self) -> usize {
        lock(&self.shared.state).submitted
    }

    /// Line `k`'s spans, if the worker has finished it.
    pub fn ready(&self, k: usize) -> Option<Vec<Span<'static>>> {
        lock(&self.shared.state).lines.get(k).cloned()
    }

    /// Waits until every submitted line is highlighted (the message ended, or a
    /// test wants a deterministic frame).
    pub fn wait(&self) {
        let mut state = lock(&self.shared.state);
        while state.lines.len() < state.submitted {
            state = self
                .shared
                .done
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worker_gives_the_spans_inline_highlighting_gives() {
        let code = [
            "fn main() {",
            "    let s = \"a /* not a comment */ b\";",
            "    /* a comment",
            "       that goes on */ let x = 1;",
            "}",
        ];
        let block = AsyncBlock::new("rust", Theme::COLOR).expect("a worker thread");
        for line in code {
            block.submit(line);
        }
        block.wait();
        let mut inline = CodeHighlighter::new("rust");
        for (k, line) in code.iter().enumerate() {
            assert_eq!(
                block.ready(k),
                Some(inline.line(line, &Theme::COLOR)),
                "line {k}"
            );
        }
        assert_eq!(block.ready(code.len()), None);
        assert_eq!(block.submitted(), code.len());
    }
}
