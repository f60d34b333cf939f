//! Cassettes: a run's provider traffic, recorded and played back. A cassette is a
//! JSON Lines file: a header line, then one line per exchange holding the request
//! (endpoint path and body, with secrets and volatile values replaced by
//! placeholders) and the response (the raw body bytes with their chunk boundaries
//! and times, how the body ended, the retries before it, or the error it came to).
//! Playback serves the same bytes, at full speed or at the recorded pace; it matches
//! on the redacted request body, and a miss names the closest recorded request with
//! a diff.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use xcsh_log::secrets::Secrets;
use xcsh_machine::{ProviderError, ProviderErrorKind};

pub const CASSETTE_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: not a cassette line: {source}")]
    Parse {
        path: PathBuf,
        line: usize,
        source: serde_json::Error,
    },
    #[error("{path}: not a cassette (the first line must be a cassette header)")]
    NotACassette { path: PathBuf },
}

/// Replaces secrets and volatile values by placeholders, longest first, so that a
/// recording never holds them and a playback in another place still matches.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Replaced by `[redacted:NAME]` in the request body and, by the writer, in
    /// the whole exchange (response bytes and errors too, §20.2).
    pub secrets: Secrets,
    pairs: Vec<(String, String)>,
}

impl Redactor {
    /// `secrets` are replaced by their placeholders; `volatile` pairs (value, name)
    /// by `{{name}}` (e.g. the workspace path as `{{cwd}}`).
    pub fn new(secrets: Secrets, volatile: &[(String, String)]) -> Redactor {
        let mut pairs: Vec<(String, String)> = volatile
            .iter()
            .filter(|(v, _)| !v.is_empty())
            .map(|(v, name)| (v.clone(), format!("{{{{{name}}}}}")))
            .collect();
        // Longest first: a path and its parent both redact to their own names.
        pairs.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        Redactor { secrets, pairs }
    }

    /// A request body with the secrets, then the volatile values, replaced.
    pub fn redact(&self, text: &str) -> String {
        let mut out = self.secrets.redact(text).into_owned();
        for (value, placeholder) in &self.pairs {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), placeholder);
            }
            // Inside a JSON string a value may appear escaped (paths with `"` or `\`).
            let escaped = serde_json::to_string(value).unwrap_or_default();
            let escaped = escaped.trim_matches('"');
            if escaped != value && out.contains(escaped) {
                out = out.replace(escaped, placeholder);
            }
        }
        out
    }
}

/// One piece of a response body as it arrived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// Milliseconds after the request was sent.
    pub ms: u64,
    /// The bytes, as text when they are UTF-8 (a chunk may split a character: then
    /// `hex` holds them instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hex: Option<String>,
}

impl Chunk {
    pub fn new(ms: u64, bytes: &[u8]) -> Chunk {
        match std::str::from_utf8(bytes) {
            Ok(t) => Chunk {
                ms,
                text: Some(t.to_string()),
                hex: None,
            },
            Err(_) => Chunk {
                ms,
                text: None,
                hex: Some(bytes.iter().map(|b| format!("{b:02x}")).collect()),
            },
        }
    }

    pub fn bytes(&self) -> Vec<u8> {
        if let Some(t) = &self.text {
            return t.as_bytes().to_vec();
        }
        let hex = self.hex.as_deref().unwrap_or("");
        (0..hex.len() / 2)
            .filter_map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
            .collect()
    }
}

/// How a recorded body ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BodyEnd {
    /// The server closed the body normally.
    Complete,
    /// The connection broke (`detail` as the client saw it).
    Broken { detail: String },
    /// No byte came for the idle timeout.
    Idle,
}

/// A retry announced before the response that counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retry {
    pub attempt: u32,
    pub reason: String,
    pub delay_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Response {
    /// A streamed 2xx body.
    Stream {
        status: u16,
        chunks: Vec<Chunk>,
        end: BodyEnd,
    },
    /// The request came to an error before any body (after its retries).
    Error { error: ProviderError },
}

/// One request and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    /// The endpoint path (`/v1/chat/completions`), not the host.
    pub path: String,
    /// The JSON body, redacted.
    pub body: Value,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retries: Vec<Retry>,
    pub response: Response,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Header {
    cassette: u32,
}

/// How fast a cassette plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pace {
    /// As fast as the run takes the bytes.
    #[default]
    Full,
    /// Each chunk at its recorded time after the request.
    Recorded,
}

/// Appends exchanges to a cassette file as they complete.
#[derive(Debug)]
pub struct CassetteWriter {
    path: PathBuf,
    file: Mutex<File>,
    pub redactor: Redactor,
}

impl CassetteWriter {
    pub fn create(path: &Path, redactor: Redactor) -> Result<CassetteWriter, CassetteError> {
        let io = |source| CassetteError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = File::create(path).map_err(io)?;
        let header = serde_json::to_string(&Header {
            cassette: CASSETTE_VERSION,
        })
        .unwrap_or_default();
        writeln!(file, "{header}").map_err(io)?;
        Ok(CassetteWriter {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            redactor,
        })
    }

    /// Appends one exchange (one line, flushed), with every known secret value in it
    /// (request, response bytes, error) replaced by its placeholder.
    pub fn write(&self, exchange: &Exchange) -> Result<(), CassetteError> {
        let line = serde_json::to_string(exchange).unwrap_or_default();
        let line = self.redactor.secrets.redact(&line);
        // A poisoned lock only means another writer panicked mid-line; the file is
        // still usable for whole lines.
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        writeln!(file, "{line}")
            .and_then(|()| file.flush())
            .map_err(|source| CassetteError::Io {
                path: self.path.clone(),
                source,
            })
    }
}

/// A cassette loaded for playback; each exchange is served once, in any order the
/// requests match.
#[derive(Debug)]
pub struct Cassette {
    path: PathBuf,
    exchanges: Vec<Exchange>,
    used: Mutex<Vec<bool>>,
    pub pace: Pace,
    pub redactor: Redactor,
}

impl Cassette {
    pub fn load(path: &Path, pace: Pace, redactor: Redactor) -> Result<Cassette, CassetteError> {
        let file = File::open(path).map_err(|source| CassetteError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut exchanges = Vec::new();
        for (i, line) in BufReader::new(file).lines().enumerate() {
            let line = line.map_err(|source| CassetteError::Io {
                path: path.to_path_buf(),
                source,
            })?;
            let parse = |source| CassetteError::Parse {
                path: path.to_path_buf(),
                line: i + 1,
                source,
            };
            if i == 0 {
                serde_json::from_str::<Header>(&line).map_err(|_| CassetteError::NotACassette {
                    path: path.to_path_buf(),
                })?;
                continue;
            }
            if line.trim().is_empty() {
                continue;
            }
            exchanges.push(serde_json::from_str(&line).map_err(parse)?);
        }
        let used = Mutex::new(vec![false; exchanges.len()]);
        Ok(Cassette {
            path: path.to_path_buf(),
            exchanges,
            used,
            pace,
            redactor,
        })
    }

    pub fn len(&self) -> usize {
        self.exchanges.len()
    }

    /// The recorded exchanges, in file order.
    pub fn exchanges(&self) -> &[Exchange] {
        &self.exchanges
    }

    pub fn is_empty(&self) -> bool {
        self.exchanges.is_empty()
    }

    /// Takes the first unused exchange whose path and redacted body match; on a miss
    /// the error names the closest recorded request and shows the difference.
    pub fn take(&self, path: &str, body: &Value) -> Result<Exchange, ProviderError> {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        let found = self
            .exchanges
            .iter()
            .enumerate()
            .find(|(i, e)| !used[*i] && e.path == path && e.body == *body);
        if let Some((i, e)) = found {
            used[i] = true;
            return Ok(e.clone());
        }
        let wanted = pretty(path, body);
        let closest = self
            .exchanges
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let text = pretty(&e.path, &e.body);
                let ratio = similar::TextDiff::from_lines(&text, &wanted).ratio();
                (ratio, i, text)
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let message = match closest {
            None => format!("cassette {}: it holds no exchange", self.path.display()),
            Some((_, i, text)) => format!(
                "cassette {}: no recorded request matches this one{}; the closest is exchange {} (line {}):\n{}",
                self.path.display(),
                if used[i] {
                    " (the closest was already played)"
                } else {
                    ""
                },
                i + 1,
                i + 2,
                similar::TextDiff::from_lines(&text, &wanted)
                    .unified_diff()
                    .context_radius(3)
                    .header("recorded", "this request")
            ),
        };
        Err(ProviderError {
            kind: ProviderErrorKind::Http,
            message,
        })
    }
}

fn pretty(path: &str, body: &Value) -> String {
    format!(
        "POST {path}\n{}\n",
        serde_json::to_string_pretty(body).unwrap_or_default()
    )
}

/// Where a provider's HTTP traffic goes: recorded, or served from a cassette.
#[derive(Debug, Clone)]
pub enum Tape {
    Record(Arc<CassetteWriter>),
    Play(Arc<Cassette>),
}

impl Tape {
    /// The body as it is recorded and matched.
    pub fn redacted(&self, body: &str) -> Value {
        let redactor = match self {
            Tape::Record(w) => &w.redactor,
            Tape::Play(c) => &c.redactor,
        };
        let text = redactor.redact(body);
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    }
}

/// The recorded body of an exchange, served chunk by chunk.
#[derive(Debug)]
pub struct Playback {
    chunks: VecDeque<Chunk>,
    end: BodyEnd,
    pace: Pace,
    last_ms: u64,
}

/// What the next read of a body gives.
#[derive(Debug)]
pub enum Next {
    Bytes(Vec<u8>),
    End,
    Broken(String),
    Idle,
}

impl Playback {
    pub fn new(chunks: Vec<Chunk>, end: BodyEnd, pace: Pace) -> Playback {
        Playback {
            chunks: chunks.into(),
            end,
            pace,
            last_ms: 0,
        }
    }

    pub async fn next(&mut self) -> Next {
        match self.chunks.pop_front() {
            Some(chunk) => {
                if self.pace == Pace::Recorded && chunk.ms > self.last_ms {
                    tokio::time::sleep(Duration::from_millis(chunk.ms - self.last_ms)).await;
                }
                self.last_ms = chunk.ms;
                Next::Bytes(chunk.bytes())
            }
            None => match &self.end {
                BodyEnd::Complete => Next::End,
                BodyEnd::Broken { detail } => Next::Broken(detail.clone()),
                BodyEnd::Idle => Next::Idle,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_replaces_secrets_and_volatile_values_longest_first() {
        let r = Redactor::new(
            Secrets::new([("OPENAI_API_KEY", "sk-test-123")]),
            &[
                ("/home/u/work".into(), "cwd".into()),
                ("/home/u".into(), "home".into()),
            ],
        );
        assert_eq!(
            r.redact(r#"{"key":"sk-test-123","p":"/home/u/work/a.rs","h":"/home/u/.x"}"#),
            r#"{"key":"[redacted:OPENAI_API_KEY]","p":"{{cwd}}/a.rs","h":"{{home}}/.x"}"#
        );
    }

    #[test]
    fn chunks_keep_bytes_exactly_even_inside_a_character() {
        let bytes = "é".as_bytes();
        for piece in [&bytes[..1], &bytes[1..], bytes] {
            assert_eq!(Chunk::new(3, piece).bytes(), piece);
        }
        assert_eq!(Chunk::new(3, &bytes[..1]).hex.as_deref(), Some("c3"));
    }

    #[test]
    fn the_writer_redacts_secrets_in_response_bytes_and_errors_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let secrets = Secrets::new([("OPENAI_API_KEY", "sk-test-a\"b-cdef")]);
        let w = CassetteWriter::create(&path, Redactor::new(secrets, &[])).unwrap();
        let exchange = |response| Exchange {
            path: "/v1/chat/completions".into(),
            body: serde_json::json!({"m": "sk-test-a\"b-cdef"}),
            retries: vec![],
            response,
        };
        w.write(&exchange(Response::Stream {
            status: 200,
            chunks: vec![Chunk::new(0, b"data: sk-test-a\"b-cdef\n\n")],
            end: BodyEnd::Complete,
        }))
        .unwrap();
        w.write(&exchange(Response::Error {
            error: ProviderError {
                kind: ProviderErrorKind::Api,
                message: "HTTP 401: Incorrect API key provided: sk-test-a\"b-cdef".into(),
            },
        }))
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("cdef"), "{text}");
        let c = Cassette::load(&path, Pace::Full, Redactor::default()).unwrap();
        let placeholder = "[redacted:OPENAI_API_KEY]";
        assert_eq!(
            c.exchanges()[0].response,
            Response::Stream {
                status: 200,
                chunks: vec![Chunk::new(0, format!("data: {placeholder}\n\n").as_bytes())],
                end: BodyEnd::Complete,
            }
        );
        assert_eq!(
            c.exchanges()[1].response,
            Response::Error {
                error: ProviderError {
                    kind: ProviderErrorKind::Api,
                    message: format!("HTTP 401: Incorrect API key provided: {placeholder}"),
                },
            }
        );
        assert_eq!(c.exchanges()[1].body, serde_json::json!({"m": placeholder}));
    }

    #[test]
    fn a_miss_names_the_closest_request_with_a_diff() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let w = CassetteWriter::create(&path, Redactor::default()).unwrap();
        for text in ["hello", "goodbye"] {
            w.write(&Exchange {
                path: "/v1/chat/completions".into(),
                body: serde_json::json!({"model": "m", "messages": [{"role": "user", "content": text}]}),
                retries: vec![],
                response: Response::Stream {
                    status: 200,
                    chunks: vec![Chunk::new(0, b"data: [DONE]\n\n")],
                    end: BodyEnd::Complete,
                },
            })
            .unwrap();
        }
        let c = Cassette::load(&path, Pace::Full, Redactor::default()).unwrap();
        let body =
            serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "hello!"}]});
        let err = c.take("/v1/chat/completions", &body).unwrap_err();
        let message = err.message.replace(&path.display().to_string(), "C");
        expect_test::expect![[r#"
            cassette C: no recorded request matches this one; the closest is exchange 2 (line 3):
            --- recorded
            +++ this request
            @@ -2,7 +2,7 @@
             {
               "messages": [
                 {
            -      "content": "goodbye",
            +      "content": "hello!",
                   "role": "user"
                 }
               ],
        "#]]
        .assert_eq(&message);
        let exact =
            serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "goodbye"}]});
        assert!(c.take("/v1/chat/completions", &exact).is_ok());
        assert!(
            c.take("/v1/chat/completions", &exact).is_err(),
            "each exchange plays once"
        );
    }
}
