//! The runtime loop with an instant model and an instant tool: runs of `STEPS` steps
//! (each asks for one `echo` call, then a final answer), durable logging included
//! (the log is synced before every model call and tool, on the real disk), with the
//! in-process faux provider and with the OpenAI Chat Completions provider against a
//! local HTTP server answering at once (the SSE frames of the e2e tests, sent with
//! TCP_NODELAY in one write); and one step of `DELTAS` text deltas sent at once by
//! the provider against one of a single delta, for the runtime's cost of a stream
//! delta (recording its time, the machine, the event to the interface, and its share
//! of the step entry). `scripts/bench.sh` divides.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use xcsh_machine::{FinishReason, ProviderError, StreamEvent};
use xcsh_providers::faux::{FauxProvider, ScriptCall, ScriptStep};
use xcsh_providers::http::HttpConfig;
use xcsh_providers::openai::OpenAiProvider;
use xcsh_providers::{BoxFuture, Provider, StreamCall};

#[allow(dead_code)]
#[path = "../../tests/support/sse.rs"]
mod sse;
mod support;

/// A provider that sends `n` text deltas at once, without yielding between them.
struct Burst(usize);

impl Provider for Burst {
    fn name(&self) -> &str {
        "burst"
    }

    fn model(&self) -> &str {
        "burst"
    }

    fn stream(&self, call: StreamCall) -> BoxFuture<Result<(), ProviderError>> {
        let (n, sink) = (self.0, call.sink);
        Box::pin(async move {
            for _ in 0..n {
                sink.send(StreamEvent::TextDelta {
                    text: "abcdefghijk ".into(),
                });
            }
            sink.send(StreamEvent::Finish {
                reason: FinishReason::Stop,
            });
            Ok(())
        })
    }
}

/// A local HTTP/1.1 server that answers each request with the next SSE body, all of
/// it in one write, on a socket with TCP_NODELAY (so that no Nagle delay is measured).
struct Sse {
    url: String,
}

impl Sse {
    fn start(bodies: Vec<Vec<String>>) -> Sse {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binds 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        let replies: Vec<Vec<u8>> = bodies
            .into_iter()
            .map(|frames| {
                let mut r = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
                for f in frames {
                    r.extend_from_slice(format!("{:x}\r\n{f}\r\n", f.len()).as_bytes());
                }
                r.extend_from_slice(b"0\r\n\r\n");
                r
            })
            .collect();
        let replies = Arc::new(std::sync::Mutex::new(std::collections::VecDeque::from(
            replies,
        )));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let replies = Arc::clone(&replies);
                std::thread::spawn(move || serve(stream, &replies));
            }
        });
        Sse { url }
    }
}

fn serve(stream: TcpStream, replies: &std::sync::Mutex<std::collections::VecDeque<Vec<u8>>>) {
    let _ = stream.set_nodelay(true);
    let Ok(read) = stream.try_clone() else { return };
    let mut reader = BufReader::new(read);
    let mut writer = stream;
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        let mut first = true;
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let l = line.trim_end();
            if l.is_empty() && !first {
                break;
            }
            first = false;
            if let Some((k, v)) = l.split_once(':')
                && k.trim().eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let reply = replies.lock().ok().and_then(|mut r| r.pop_front());
        let Some(reply) = reply else { return };
        if writer
            .write_all(&reply)
            .and_then(|()| writer.flush())
            .is_err()
        {
            return;
        }
    }
}

/// Tool steps per run (plus the final answer).
const STEPS: usize = 50;
/// Text deltas in the long step.
const DELTAS: usize = 2_000;

fn main() {
    divan::main();
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A new session path on the disk the sessions live on (not a tmpfs).
fn session_path() -> PathBuf {
    let dir = std::env::var_os("XCSH_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("xcsh-bench"));
    let _ = std::fs::create_dir_all(&dir);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("loop-{}-{n}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// One whole run; returns its steps.
fn run(rt: &tokio::runtime::Runtime, provider: Arc<dyn Provider>) -> u32 {
    support::run(rt, &session_path(), provider, |_| {})
}

fn tool_step() -> ScriptStep {
    ScriptStep {
        tool_calls: vec![ScriptCall {
            id: None,
            name: "echo".into(),
            arguments: serde_json::json!({"x": 1}),
        }],
        ..ScriptStep::default()
    }
}

fn answer(text: &str) -> ScriptStep {
    ScriptStep {
        text: text.into(),
        ..ScriptStep::default()
    }
}

#[divan::bench(sample_count = 20, sample_size = 1)]
fn faux_loop_50_steps(bencher: divan::Bencher) {
    let rt = runtime();
    bencher
        .with_inputs(|| {
            let mut steps = vec![tool_step(); STEPS];
            steps.push(answer("done"));
            Arc::new(FauxProvider::from_steps("bench", steps)) as Arc<dyn Provider>
        })
        .bench_local_values(|p| assert_eq!(run(&rt, p) as usize, STEPS + 1));
}

#[divan::bench(sample_count = 20, sample_size = 1)]
fn step_2000_deltas(bencher: divan::Bencher) {
    let rt = runtime();
    bencher
        .with_inputs(|| Arc::new(Burst(DELTAS)) as Arc<dyn Provider>)
        .bench_local_values(|p| assert_eq!(run(&rt, p), 1));
}

#[divan::bench(sample_count = 20, sample_size = 1)]
fn step_1_delta(bencher: divan::Bencher) {
    let rt = runtime();
    bencher
        .with_inputs(|| Arc::new(Burst(1)) as Arc<dyn Provider>)
        .bench_local_values(|p| assert_eq!(run(&rt, p), 1));
}

#[divan::bench(sample_count = 20, sample_size = 1)]
fn http_loop_50_steps(bencher: divan::Bencher) {
    let rt = runtime();
    bencher
        .with_inputs(|| {
            let mut bodies: Vec<Vec<String>> = (0..STEPS)
                .map(|i| sse::openai_call(&[], &format!("call_{i}"), "echo", "{\"x\":1}", 100))
                .collect();
            bodies.push(sse::openai_text(&["done"], 100));
            let server = Sse::start(bodies);
            let config = HttpConfig::new(&format!("{}/v1", server.url), Some("k".into()), "m");
            let provider =
                Arc::new(OpenAiProvider::new(config).expect("a provider")) as Arc<dyn Provider>;
            (server, provider)
        })
        .bench_local_values(|(server, p)| {
            assert_eq!(run(&rt, p) as usize, STEPS + 1);
            drop(server);
        });
}

/// The runtime the benchmarked runs and calls use: two workers, as `xcsh run`.
fn runtime() -> tokio::runtime::Runtime {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.worker_threads(2).enable_all();
    builder.build().expect("a tokio runtime")
}
