//! The runtime stays flat per step (issue 19 item 5): one run of 1,000 tool steps with
//! the faux provider and the echo tool, durable logging included, whose per-step
//! overhead (the gap between two consecutive `StepStarted` events as the interface
//! receives them) is compared at step 10 and at step 1,000; and, reported separately,
//! the size-proportional part a real provider adds per step: the OpenAI Chat
//! Completions request body of the context at those steps, serialized (µs per KB).
//! Not divan: it prints `NAME VALUE` lines that `scripts/bench.sh` reads.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use xcsh_machine::ProviderError;
use xcsh_ports::ModelRequest;
use xcsh_providers::faux::{FauxProvider, ScriptCall, ScriptStep};
use xcsh_providers::{BoxFuture, Provider, StreamCall, Wrapper};
use xcsh_runtime::RunEvent;

mod support;

/// Tool steps in the run (plus the final answer).
const STEPS: usize = 1_000;
/// Runs; the figures are medians over them.
const RUNS: usize = 5;
/// The steps around which a gap is taken (a median over ±WINDOW steps).
const EARLY: usize = 10;
const LATE: usize = STEPS;
const WINDOW: usize = 5;

/// The faux provider, keeping the requests of two steps (by the number of
/// messages they carry) for the body figure.
struct Capturing {
    inner: FauxProvider,
    calls: Mutex<usize>,
    kept: Arc<Mutex<Vec<(usize, ModelRequest)>>>,
}

impl Wrapper for Capturing {
    fn inner(&self) -> &dyn Provider {
        &self.inner
    }

    fn stream_inner(&self, call: StreamCall) -> BoxFuture<Result<(), ProviderError>> {
        // A poisoned lock means a panic elsewhere in the bench: stop there.
        let mut n = self.calls.lock().expect("the call counter");
        *n += 1;
        if *n == EARLY || *n == LATE {
            self.kept
                .lock()
                .expect("the kept requests")
                .push((*n, call.request.clone()));
        }
        self.inner.stream(call)
    }
}

fn script() -> Vec<ScriptStep> {
    let mut steps: Vec<ScriptStep> = (0..STEPS)
        .map(|_| ScriptStep {
            tool_calls: vec![ScriptCall {
                id: None,
                name: "echo".into(),
                arguments: serde_json::json!({"x": 1}),
            }],
            ..ScriptStep::default()
        })
        .collect();
    steps.push(ScriptStep {
        text: "done".into(),
        ..ScriptStep::default()
    });
    steps
}

/// One run: the instants at which each step started, and the requests kept.
fn run(
    rt: &tokio::runtime::Runtime,
    dir: &std::path::Path,
    n: usize,
) -> (Vec<Instant>, Vec<(usize, ModelRequest)>) {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let provider = Arc::new(Capturing {
        inner: FauxProvider::from_steps("bench", script()),
        calls: Mutex::new(0),
        kept: Arc::clone(&kept),
    });
    let path = dir.join(format!("long-run-{n}.jsonl"));
    let mut starts = Vec::with_capacity(STEPS + 1);
    let steps = support::run(rt, &path, provider, |event| {
        if let RunEvent::StepStarted { .. } = event {
            starts.push(Instant::now());
        }
    });
    assert_eq!(steps as usize, STEPS + 1, "every step of the script ran");
    let kept = std::mem::take(&mut *kept.lock().expect("the kept requests"));
    (starts, kept)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median gap in µs between the starts of consecutive steps around `step`
/// (1-based: the gap ending at step k is `starts[k-1] - starts[k-2]`).
fn gap_around(starts: &[Instant], step: usize) -> f64 {
    let hi = step.min(starts.len());
    let lo = hi.saturating_sub(2 * WINDOW).max(2);
    median(
        (lo..=hi)
            .map(|k| (starts[k - 1] - starts[k - 2]).as_secs_f64() * 1e6)
            .collect(),
    )
}

/// µs per KB of serializing the OpenAI body of `request`, and its size in KB.
fn body_cost(request: &ModelRequest) -> (f64, f64) {
    let once = || {
        serde_json::to_vec(&xcsh_providers::openai::wire::body("m", request, false))
            .expect("a body serializes")
    };
    let kb = once().len() as f64 / 1024.0;
    let reps = (2_000.0 / kb).clamp(5.0, 2_000.0) as usize;
    let t0 = Instant::now();
    for _ in 0..reps {
        std::hint::black_box(once());
    }
    let us = t0.elapsed().as_secs_f64() * 1e6 / reps as f64;
    (us / kb, kb)
}

fn main() {
    let dir = std::env::var_os("XCSH_BENCH_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("xcsh-bench"));
    std::fs::create_dir_all(&dir).expect("the bench directory");
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.worker_threads(2).enable_all();
    let rt = builder.build().expect("a tokio runtime");
    let (mut early, mut late, mut total) = (Vec::new(), Vec::new(), Vec::new());
    let mut bodies = Vec::new();
    for n in 0..RUNS {
        let (starts, kept) = run(&rt, &dir, n);
        early.push(gap_around(&starts, EARLY));
        late.push(gap_around(&starts, LATE));
        total.push((starts[starts.len() - 1] - starts[0]).as_secs_f64() * 1e6 / STEPS as f64);
        bodies = kept;
    }
    println!("long_run_steps {STEPS}");
    println!("long_run_runs {RUNS}");
    println!("long_run_gap_at_{EARLY}_us {:.1}", median(early));
    println!("long_run_gap_at_{LATE}_us {:.1}", median(late));
    println!("long_run_gap_mean_us {:.1}", median(total));
    for (step, request) in &bodies {
        let (per_kb, kb) = body_cost(request);
        println!("long_run_body_at_{step}_kb {kb:.1}");
        println!("long_run_body_at_{step}_us_per_kb {per_kb:.2}");
    }
}
