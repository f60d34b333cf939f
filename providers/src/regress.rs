//! The provider regression harness: recorded streams (one SSE `data:` payload per
//! line, as in `../shared/provider-streams/`) are rebuilt into raw SSE bytes, parsed
//! through the SSE parser and a protocol's mapper whole, in seeded random chunkings
//! and byte by byte, and compared with golden files of normalized events.
//!
//! The golden format (also what `xcsh provider-parse` prints): one normalized
//! [`StreamEvent`] per line as JSON, then one line
//! `{"assembled":{"text","reasoning","tool_calls":[{"id","name","arguments"}],"usage",
//! "finish_reason","error","reasoning_signature","reasoning_blocks","skipped"}}` with
//! `null` where the stream gave none (tool call arguments parsed as JSON; kept as a
//! string when they do not parse; `reasoning_blocks` only when the reasoning came in
//! several blocks). Parsing stops at the first error, as a provider would; a stream
//! that ends before its protocol's end marker ends with a `disconnected` error.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::anthropic::AnthropicMapper;
use super::decode::{Decoder, Flow};
use super::openai::OpenAiMapper;
use super::responses::ResponsesMapper;
use super::sse::StreamMapper;
use xcsh_machine::{Assembler, FinishReason, ProviderError, ReasoningBlock, StreamEvent, Usage};

/// Seeded random chunkings per stream.
pub const CHUNKINGS: u32 = 32;
/// The environment variable naming the streams directory.
pub const STREAMS_ENV: &str = "XCSH_PROVIDER_STREAMS";

/// The three wire protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    OpenAiChat,
    Anthropic,
    OpenAiResponses,
}

impl Protocol {
    pub const ALL: [Protocol; 3] = [
        Protocol::OpenAiChat,
        Protocol::Anthropic,
        Protocol::OpenAiResponses,
    ];

    /// The name users select (`--protocol`, `--provider`).
    pub fn name(self) -> &'static str {
        match self {
            Protocol::OpenAiChat => "openai",
            Protocol::Anthropic => "anthropic",
            Protocol::OpenAiResponses => "openai-responses",
        }
    }

    pub fn from_name(name: &str) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The folder of its recordings under the streams directory.
    pub fn folder(self) -> &'static str {
        match self {
            Protocol::OpenAiChat => "openai-chat",
            Protocol::Anthropic => "anthropic-messages",
            Protocol::OpenAiResponses => "openai-responses",
        }
    }

    pub fn from_folder(folder: &str) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.folder() == folder)
    }

    pub fn mapper(self) -> Box<dyn StreamMapper> {
        match self {
            Protocol::OpenAiChat => Box::new(OpenAiMapper::default()),
            Protocol::Anthropic => Box::new(AnthropicMapper::default()),
            Protocol::OpenAiResponses => Box::new(ResponsesMapper::default()),
        }
    }

    /// Rebuilds the raw SSE bytes of a recording (one payload per line), as the
    /// streams README says: Chat Completions `data: <line>\n\n` per line then
    /// `data: [DONE]\n\n`; the other two `event: <payload.type>\ndata: <line>\n\n`.
    pub fn rebuild_sse(self, payloads: &str) -> Result<Vec<u8>, String> {
        let mut out = Vec::with_capacity(payloads.len() + payloads.len() / 4);
        for (n, line) in payloads.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            if self != Protocol::OpenAiChat {
                let value: Value = serde_json::from_str(line)
                    .map_err(|e| format!("line {}: not JSON: {e}", n + 1))?;
                let kind = value
                    .get("type")
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("line {}: the payload has no \"type\"", n + 1))?;
                out.extend_from_slice(b"event: ");
                out.extend_from_slice(kind.as_bytes());
                out.push(b'\n');
            }
            out.extend_from_slice(b"data: ");
            out.extend_from_slice(line.as_bytes());
            out.extend_from_slice(b"\n\n");
        }
        if self == Protocol::OpenAiChat {
            out.extend_from_slice(b"data: [DONE]\n\n");
        }
        Ok(out)
    }
}

/// What parsing one stream gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub events: Vec<StreamEvent>,
    pub error: Option<ProviderError>,
}

/// Parses raw SSE bytes delivered as `chunks` through the HTTP driver's decoder
/// ([`Decoder`], without an output limit).
pub fn parse_chunks<'a>(protocol: Protocol, chunks: impl IntoIterator<Item = &'a [u8]>) -> Parsed {
    let mut mapper = protocol.mapper();
    let mut decoder = Decoder::new(mapper.as_mut(), None);
    let mut events = Vec::new();
    for chunk in chunks {
        match decoder.push(chunk, &mut events) {
            Ok(Flow::More) => {}
            Ok(Flow::Stop) => {
                return Parsed {
                    events,
                    error: None,
                };
            }
            Err(error) => {
                return Parsed {
                    events,
                    error: Some(error),
                };
            }
        }
    }
    let error = decoder.end(&mut events).err();
    Parsed { events, error }
}

pub fn parse_whole(protocol: Protocol, sse: &[u8]) -> Parsed {
    parse_chunks(protocol, [sse])
}

pub fn parse_byte_by_byte(protocol: Protocol, sse: &[u8]) -> Parsed {
    parse_chunks(protocol, sse.chunks(1))
}

/// Splits `len` bytes into chunks whose lengths are drawn from a seeded generator;
/// each chunking has its own maximum chunk length (2 to 8192 bytes). Returns the
/// chunk lengths.
pub fn random_chunk_lengths(len: usize, seed: u64) -> Vec<usize> {
    let mut rng = SplitMix64(seed);
    let max = 1usize << (1 + rng.next() % 13);
    let mut lengths = Vec::new();
    let mut left = len;
    while left > 0 {
        let n = (1 + (rng.next() as usize) % max).min(left);
        lengths.push(n);
        left -= n;
    }
    lengths
}

/// The seed of chunking `k` of the stream `name`: stable across runs and machines.
pub fn chunking_seed(name: &str, k: u32) -> u64 {
    let mut hasher = blake3::Hasher::new();
    hasher.update(name.as_bytes());
    hasher.update(&k.to_le_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&hasher.finalize().as_bytes()[..8]);
    u64::from_le_bytes(first)
}

pub fn parse_random(protocol: Protocol, sse: &[u8], seed: u64) -> Parsed {
    let lengths = random_chunk_lengths(sse.len(), seed);
    let mut at = 0;
    let chunks = lengths.into_iter().map(|n| {
        let chunk = &sse[at..at + n];
        at += n;
        chunk
    });
    parse_chunks(protocol, chunks)
}

/// The generator of the chunkings (SplitMix64): small, seeded, deterministic.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[derive(Serialize)]
struct CallOut {
    id: String,
    name: String,
    arguments: Value,
}

#[derive(Serialize)]
struct AssembledOut {
    text: Option<String>,
    reasoning: Option<String>,
    tool_calls: Vec<CallOut>,
    usage: Option<Usage>,
    finish_reason: Option<FinishReason>,
    error: Option<ProviderError>,
    reasoning_signature: Option<String>,
    /// Only when the reasoning came in several blocks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    reasoning_blocks: Vec<ReasoningBlock>,
    skipped: u32,
}

#[derive(Serialize)]
struct AssembledLine {
    assembled: AssembledOut,
}

/// The assembled line of a parse (see the module doc), keys in the documented order.
pub fn assembled_line(parsed: &Parsed) -> String {
    // Serializing plain data with string keys cannot fail.
    serde_json::to_string(&assembled(parsed)).unwrap_or_default()
}

fn assembled(parsed: &Parsed) -> AssembledLine {
    let mut assembler = Assembler::default();
    let mut saw_usage = false;
    for event in &parsed.events {
        saw_usage |= matches!(event, StreamEvent::Usage { .. });
        assembler.push(event);
    }
    let a = assembler.finish();
    let non_empty = |s: String| (!s.is_empty()).then_some(s);
    AssembledLine {
        assembled: AssembledOut {
            text: non_empty(a.text),
            reasoning: non_empty(a.reasoning),
            tool_calls: a
                .tool_calls
                .into_iter()
                .map(|c| CallOut {
                    arguments: serde_json::from_str(&c.arguments)
                        .unwrap_or(Value::String(c.arguments)),
                    id: c.id.0,
                    name: c.name,
                })
                .collect(),
            usage: saw_usage.then_some(a.usage),
            finish_reason: a.finish,
            error: parsed.error.clone(),
            reasoning_signature: non_empty(a.reasoning_signature),
            reasoning_blocks: a.reasoning_blocks,
            skipped: a.skipped,
        },
    }
}

/// The golden text of a parse: one event per line, then the assembled line.
pub fn render(parsed: &Parsed) -> String {
    let mut out = String::new();
    for event in &parsed.events {
        // A `StreamEvent` always serializes (plain data, string keys).
        out.push_str(&serde_json::to_string(event).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(&assembled_line(parsed));
    out.push('\n');
    out
}

/// Where a stream comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Recorded from a provider (`../shared/provider-streams/`): another project's
    /// data, never copied into this repository.
    Recorded,
    /// Written for this project from the providers' API documentation, for cases
    /// no recording has (a restarted message, several thinking blocks, wrong
    /// types): `fixtures/provider-streams/<folder>/synthetic/`, golden files beside.
    Synthetic,
}

/// The folder of the synthetic streams under each protocol's golden folder.
pub const SYNTHETIC: &str = "synthetic";

/// One stream: a recording under the streams directory, or a synthetic one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamFile {
    pub protocol: Protocol,
    /// The file name without `.jsonl`.
    pub name: String,
    pub path: PathBuf,
    pub origin: Origin,
}

impl StreamFile {
    /// `<golden_root>/<protocol-folder>/<name>.golden.jsonl` for a recording,
    /// `<golden_root>/<protocol-folder>/synthetic/<name>.golden.jsonl` for a
    /// synthetic stream.
    pub fn golden_path(&self, golden_root: &Path) -> PathBuf {
        let folder = golden_root.join(self.protocol.folder());
        let folder = match self.origin {
            Origin::Recorded => folder,
            Origin::Synthetic => folder.join(SYNTHETIC),
        };
        folder.join(format!("{}.golden.jsonl", self.name))
    }

    /// `<protocol-folder>/<name>`, or `<protocol-folder>/synthetic/<name>`.
    pub fn label(&self) -> String {
        match self.origin {
            Origin::Recorded => format!("{}/{}", self.protocol.folder(), self.name),
            Origin::Synthetic => format!("{}/{SYNTHETIC}/{}", self.protocol.folder(), self.name),
        }
    }
}

/// Every `<protocol-folder>/<name>.jsonl` under `dir`, sorted by folder then name.
pub fn discover(dir: &Path) -> std::io::Result<Vec<StreamFile>> {
    discover_in(dir, None, Origin::Recorded)
}

/// Every synthetic stream, `<protocol-folder>/synthetic/<name>.jsonl` under the
/// golden root, sorted by folder then name.
pub fn discover_synthetic(golden_root: &Path) -> std::io::Result<Vec<StreamFile>> {
    discover_in(golden_root, Some(SYNTHETIC), Origin::Synthetic)
}

fn discover_in(dir: &Path, sub: Option<&str>, origin: Origin) -> std::io::Result<Vec<StreamFile>> {
    let mut found = Vec::new();
    for protocol in Protocol::ALL {
        let folder = dir.join(protocol.folder());
        let folder = match sub {
            Some(sub) => folder.join(sub),
            None => folder,
        };
        if !folder.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&folder)? {
            let path = entry?.path();
            let Some(file) = path.file_name().and_then(|f| f.to_str()) else {
                continue;
            };
            if let Some(name) = file.strip_suffix(".jsonl")
                && !name.ends_with(".golden")
            {
                found.push(StreamFile {
                    protocol,
                    name: name.to_string(),
                    path: path.clone(),
                    origin,
                });
            }
        }
    }
    found.sort_by(|a, b| (a.protocol.folder(), &a.name).cmp(&(b.protocol.folder(), &b.name)));
    Ok(found)
}

/// The streams directory: `$XCSH_PROVIDER_STREAMS`, else
/// `<workspace_root>/../shared/provider-streams`.
pub fn streams_dir(workspace_root: &Path) -> PathBuf {
    match std::env::var_os(STREAMS_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => workspace_root.join("../shared/provider-streams"),
    }
}

/// How one stream fared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Whole, every chunking and byte by byte agree, and match the golden file.
    Pass,
    /// No golden file: parsed (and checked across chunkings) but not compared.
    NoGolden,
    /// The first difference found: what was compared, and a diff of it.
    Mismatch { what: String, diff: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Normalized events of the whole parse.
    pub events: usize,
    pub verdict: Verdict,
    /// The rendered whole parse (the golden text it should match).
    pub rendered: String,
}

/// Checks one recording: rebuild the SSE, parse it whole, in [`CHUNKINGS`] seeded
/// random chunkings and byte by byte; all must agree, and match `golden` if given.
pub fn check(
    protocol: Protocol,
    name: &str,
    payloads: &str,
    golden: Option<&str>,
) -> Result<Report, String> {
    let sse = protocol.rebuild_sse(payloads)?;
    let whole = parse_whole(protocol, &sse);
    let rendered = render(&whole);
    let report = |verdict| Report {
        events: whole.events.len(),
        verdict,
        rendered: rendered.clone(),
    };
    let mut variants: Vec<(String, Parsed)> = (0..CHUNKINGS)
        .map(|k| {
            let seed = chunking_seed(name, k);
            (
                format!("random chunking {k} (seed {seed:#018x})"),
                parse_random(protocol, &sse, seed),
            )
        })
        .collect();
    variants.push((
        "byte by byte".to_string(),
        parse_byte_by_byte(protocol, &sse),
    ));
    for (label, parsed) in variants {
        if parsed != whole {
            return Ok(report(Verdict::Mismatch {
                what: format!("whole parse vs {label}"),
                diff: first_difference(&rendered, &render(&parsed)),
            }));
        }
    }
    let Some(golden) = golden else {
        return Ok(report(Verdict::NoGolden));
    };
    if golden != rendered {
        return Ok(report(Verdict::Mismatch {
            what: "golden file vs parse".to_string(),
            diff: first_difference(golden, &rendered),
        }));
    }
    Ok(report(Verdict::Pass))
}

/// A unified diff of the first hunk where `expected` and `actual` differ (long lines
/// are clipped around their first differing character).
pub fn first_difference(expected: &str, actual: &str) -> String {
    let diff = similar::TextDiff::from_lines(expected, actual);
    let Some(group) = diff.grouped_ops(1).into_iter().next() else {
        return "(no difference)".to_string();
    };
    let mut out = String::from("--- expected\n+++ actual\n");
    for op in group {
        for change in diff.iter_changes(&op) {
            let sign = match change.tag() {
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
                similar::ChangeTag::Equal => ' ',
            };
            let line = change.value().trim_end_matches('\n');
            out.push(sign);
            out.push_str(&clip_line(line, 400));
            out.push('\n');
        }
    }
    out
}

fn clip_line(line: &str, max: usize) -> String {
    if line.chars().count() <= max {
        return line.to_string();
    }
    let mut s: String = line.chars().take(max).collect();
    s.push_str(&format!("… ({} chars)", line.chars().count()));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebuild_follows_the_readme() {
        assert_eq!(
            Protocol::OpenAiChat
                .rebuild_sse("{\"a\":1}\n{\"b\":2}")
                .unwrap(),
            b"data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n"
        );
        assert_eq!(
            Protocol::Anthropic
                .rebuild_sse("{\"type\":\"ping\"}\n\n")
                .unwrap(),
            b"event: ping\ndata: {\"type\":\"ping\"}\n\n"
        );
        assert!(Protocol::OpenAiResponses.rebuild_sse("{}").is_err());
    }

    #[test]
    fn chunk_lengths_cover_the_input_and_are_seeded() {
        for seed in 0..50 {
            let lengths = random_chunk_lengths(1000, seed);
            assert_eq!(lengths.iter().sum::<usize>(), 1000);
            assert!(lengths.iter().all(|&n| n > 0));
            assert_eq!(lengths, random_chunk_lengths(1000, seed));
        }
        assert_ne!(chunking_seed("a", 0), chunking_seed("a", 1));
    }

    #[test]
    fn check_reports_agreement_and_golden_mismatch() {
        let payloads = concat!(
            r#"{"choices":[{"index":0,"delta":{"content":"Hé✓"}}]}"#,
            "\n",
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            "\n",
        );
        let report = check(Protocol::OpenAiChat, "t", payloads, None).unwrap();
        assert_eq!(report.verdict, Verdict::NoGolden);
        assert_eq!(report.events, 2);
        expect_test::expect![[r#"
            {"kind":"text_delta","text":"Hé✓"}
            {"kind":"finish","reason":"stop"}
            {"assembled":{"text":"Hé✓","reasoning":null,"tool_calls":[],"usage":null,"finish_reason":"stop","error":null,"reasoning_signature":null,"skipped":0}}
        "#]]
        .assert_eq(&report.rendered);
        let good = check(Protocol::OpenAiChat, "t", payloads, Some(&report.rendered)).unwrap();
        assert_eq!(good.verdict, Verdict::Pass);
        let bad_golden = report.rendered.replace("stop", "length");
        let bad = check(Protocol::OpenAiChat, "t", payloads, Some(&bad_golden)).unwrap();
        let Verdict::Mismatch { what, diff } = bad.verdict else {
            panic!("expected a mismatch");
        };
        assert_eq!(what, "golden file vs parse");
        assert!(
            diff.contains("-{\"kind\":\"finish\",\"reason\":\"length\"}"),
            "{diff}"
        );
        assert!(
            diff.contains("+{\"kind\":\"finish\",\"reason\":\"stop\"}"),
            "{diff}"
        );
    }

    #[test]
    fn a_stream_without_its_end_marker_is_a_disconnect() {
        let sse = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"content\":[]}}\n\n";
        let parsed = parse_whole(Protocol::Anthropic, sse);
        assert_eq!(
            parsed.error.map(|e| e.kind),
            Some(xcsh_machine::ProviderErrorKind::Disconnected)
        );
    }
}
