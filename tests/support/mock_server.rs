//! A local HTTP server for end-to-end tests: listens on 127.0.0.1 (an ephemeral
//! port), answers each request with the next scripted response (SSE bodies sent as
//! chunked frames), records every request, and injects faults: disconnect after N
//! bytes, stall, 429 with retry-after, 5xx, a body without end.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Body pieces, each written and flushed as one HTTP chunk.
    pub chunks: Vec<Vec<u8>>,
    pub fault: Option<Fault>,
    /// Server-side pacing: a pause before each chunk after the first.
    pub pace: Option<std::time::Duration>,
    /// After the chunks, this one is written again and again until the client
    /// closes the connection (a provider that streams without end).
    pub endless: Option<Vec<u8>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Close the connection after this many body bytes (mid-stream).
    DisconnectAfter(usize),
    /// Send the chunks before this index, then keep the connection open silently
    /// until the client gives up and closes it (its idle timeout).
    StallAt(usize),
}

impl Reply {
    /// A `text/event-stream` body, one chunk per SSE frame.
    pub fn sse(frames: Vec<String>) -> Reply {
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks: frames.into_iter().map(String::into_bytes).collect(),
            fault: None,
            pace: None,
            endless: None,
        }
    }

    /// An OpenAI Chat Completions step that calls the tool `name` once, without
    /// text ([`super::sse::openai_call`]).
    pub fn openai_call(id: &str, name: &str, args: &str, prompt_tokens: u64) -> Reply {
        Reply::sse(super::sse::openai_call(&[], id, name, args, prompt_tokens))
    }

    /// An OpenAI Chat Completions step answering `text` in one chunk
    /// ([`super::sse::openai_text`]).
    pub fn openai_text(text: &str, prompt_tokens: u64) -> Reply {
        Reply::sse(super::sse::openai_text(&[text], prompt_tokens))
    }

    /// The OpenAI steps of a turn that reads `f.txt`, writes `new\n` into it and
    /// answers `Rewrote f.txt.`, reporting `prompt_tokens`, then 10 and 20 more.
    pub fn openai_rewrite_of_f_txt(prompt_tokens: u64) -> [Reply; 3] {
        [
            Reply::openai_call("call_1", "read", r#"{"path":"f.txt"}"#, prompt_tokens),
            Reply::openai_call(
                "call_2",
                "write",
                r#"{"path":"f.txt","content":"new\n"}"#,
                prompt_tokens + 10,
            ),
            Reply::openai_text("Rewrote f.txt.", prompt_tokens + 20),
        ]
    }

    /// A turn the user steers while it streams: a step streaming `words` a chunk
    /// every `pace_ms` that calls bash to write `one.txt`, then the answer `Checked b
    /// too.`.
    pub fn openai_steered_bash(words: &[&str], pace_ms: u64) -> [Reply; 2] {
        [
            Reply::sse(super::sse::openai_call(
                words,
                "call_1",
                "bash",
                r#"{"command":"echo one > one.txt"}"#,
                100,
            ))
            .paced(pace_ms),
            Reply::openai_text("Checked b too.", 200),
        ]
    }

    /// A JSON error body with `status` (and optional headers such as retry-after).
    pub fn error(status: u16, body: &str, headers: &[(&str, &str)]) -> Reply {
        let mut h: Vec<(String, String)> = vec![("content-type".into(), "application/json".into())];
        h.extend(headers.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        Reply {
            status,
            headers: h,
            chunks: vec![body.as_bytes().to_vec()],
            fault: None,
            pace: None,
            endless: None,
        }
    }

    /// Streams slowly: `ms` between chunks (a model that takes its time).
    pub fn paced(mut self, ms: u64) -> Reply {
        self.pace = Some(std::time::Duration::from_millis(ms));
        self
    }

    /// Then writes `chunk` forever (until the client hangs up).
    pub fn then_forever(mut self, chunk: String) -> Reply {
        self.endless = Some(chunk.into_bytes());
        self
    }

    pub fn with_fault(mut self, fault: Fault) -> Reply {
        self.fault = Some(fault);
        self
    }
}

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    received: Vec<Received>,
}

/// The running server; it stops accepting when dropped (the accept loop ends at
/// the next connection or with the test process).
pub struct MockServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
}

impl MockServer {
    pub fn start(replies: Vec<Reply>) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let state = Arc::new(Mutex::new(State {
            replies: replies.into(),
            received: Vec::new(),
        }));
        let shared = Arc::clone(&state);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let shared = Arc::clone(&shared);
                thread::spawn(move || serve(stream, &shared));
            }
        });
        MockServer { addr, state }
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.lock().expect("mock state").received.clone()
    }
}

fn serve(stream: TcpStream, state: &Mutex<State>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    loop {
        let Some(request) = read_request(&mut reader) else {
            return;
        };
        let reply = {
            let mut s = state.lock().expect("mock state");
            s.received.push(request);
            s.replies.pop_front()
        };
        let reply = reply.unwrap_or_else(|| {
            Reply::error(
                500,
                r#"{"error":{"message":"mock server: no reply scripted"}}"#,
                &[],
            )
        });
        if !write_reply(&stream, &reply) {
            return;
        }
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Received> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            let (k, v) = (k.trim().to_string(), v.trim().to_string());
            if k.eq_ignore_ascii_case("content-length") {
                length = v.parse().unwrap_or(0);
            }
            headers.push((k, v));
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(Received {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// Writes the reply; false when the connection must close (a fault, or an error).
fn write_reply(mut stream: &TcpStream, reply: &Reply) -> bool {
    let mut head = format!(
        "HTTP/1.1 {} Mock\r\ntransfer-encoding: chunked\r\n",
        reply.status
    );
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    if stream.write_all(head.as_bytes()).is_err() {
        return false;
    }
    let mut sent = 0usize;
    for (i, chunk) in reply.chunks.iter().enumerate() {
        match reply.fault {
            Some(Fault::StallAt(at)) if at == i => {
                let _ = stream.flush();
                // Blocks until the client closes the connection.
                let _ = stream.read(&mut [0u8; 1]);
                return false;
            }
            Some(Fault::DisconnectAfter(limit)) if sent + chunk.len() > limit => {
                let part = &chunk[..limit - sent];
                let _ = stream.write_all(format!("{:x}\r\n", part.len()).as_bytes());
                let _ = stream.write_all(part);
                let _ = stream.flush();
                let _ = stream.shutdown(std::net::Shutdown::Both);
                return false;
            }
            _ => {}
        }
        if chunk.is_empty() {
            continue;
        }
        if let Some(pace) = reply.pace.filter(|_| i > 0) {
            thread::sleep(pace);
        }
        if !write_chunk(stream, chunk) {
            return false;
        }
        sent += chunk.len();
    }
    if let Some(chunk) = &reply.endless {
        while write_chunk(stream, chunk) {}
        return false;
    }
    stream
        .write_all(b"0\r\n\r\n")
        .and_then(|()| stream.flush())
        .is_ok()
}

/// Writes `chunk` as one HTTP chunk and flushes it; false when the connection failed.
fn write_chunk(mut stream: &TcpStream, chunk: &[u8]) -> bool {
    let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), chunk, b"\r\n"].concat();
    stream
        .write_all(&framed)
        .and_then(|()| stream.flush())
        .is_ok()
}
