//! The parse floor of `scripts/bench.sh`: reads a session file and deserializes every
//! line with serde_json into typed bodies, with plain `#[derive(Deserialize)]` and
//! nothing else (one thread, no hash check, no timestamps, nothing kept): the log's
//! own types, except that the two the log deserializes by hand (`StepRecord`'s
//! events and `ToolResultRecord`) are declared here as the format defines them, with
//! `#[serde(flatten)]`, as a derive-only reader would. What a log command does beyond
//! this is its overhead (or, where it beats it, its own parsing).
//!
//! `cargo run --release -p xcsh-log --example parse_floor -- FILE`

use serde::Deserialize;
use xcsh_log::{FileChange, SessionHeader};
use xcsh_machine::{
    ApprovalScope, Assembled, CallId, Decision, EntryId, ProviderError, RunConfig, StepNo,
    StepOutcome, StreamEvent, Verdict,
};

/// The derived forms of `TimedEvent` and `ToolResultRecord`.
#[allow(dead_code)]
#[path = "../src/entry/derived.rs"]
mod derived;
use derived::{DerivedEvent, DerivedResult};

#[allow(dead_code)]
#[derive(Deserialize)]
struct StepRecord {
    step: StepNo,
    events: Vec<DerivedEvent>,
    outcome: StepOutcome,
    message: Assembled,
}

/// Every record entry type of the log as one derived, adjacently tagged enum, like
/// `Decision`: the same payload types as `Record` (so the same work per byte), the
/// envelope fields skipped by serde as unknown keys.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
enum Line {
    Session(SessionHeader),
    Branch {
        from_leaf: EntryId,
    },
    Label {
        target: EntryId,
        name: String,
    },
    UserMessage {
        text: String,
        config: RunConfig,
    },
    Steer {
        text: String,
    },
    FollowUp {
        text: String,
    },
    Interrupt {},
    Step(StepRecord),
    ToolResult(DerivedResult),
    CompactionSummary {
        #[serde(default)]
        summary: Option<String>,
        #[serde(default)]
        error: Option<ProviderError>,
    },
    Recovered {
        note: String,
    },
    LateEvent {
        step: StepNo,
        event: StreamEvent,
    },
    Undo {
        run: EntryId,
        files: Vec<std::path::PathBuf>,
    },
    Compact {
        config: RunConfig,
    },
    ApprovalAnswer {
        call_id: CallId,
        verdict: Verdict,
        scope: ApprovalScope,
    },
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: parse_floor FILE");
        std::process::exit(2);
    };
    let started = std::time::Instant::now();
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("parse_floor: {path}: {e}");
            std::process::exit(1);
        }
    };
    let mut lines = 0u64;
    for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let parsed = if is_decision(line) {
            serde_json::from_slice::<Decision>(line).map(drop)
        } else {
            serde_json::from_slice::<Line>(line).map(drop)
        };
        match parsed {
            Ok(()) => {}
            Err(e) => {
                eprintln!("parse_floor: {path}:{}: {e}", lines + 1);
                std::process::exit(1);
            }
        }
        lines += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{lines} lines, {} bytes in {secs:.3} s: {:.1} MB/s",
        bytes.len(),
        bytes.len() as f64 / secs / 1e6
    );
}

/// Whether the entry type of `line` (its first `"type":"…"`: the envelope's, which
/// comes before `data`) is a decision's.
fn is_decision(line: &[u8]) -> bool {
    const KEY: &[u8] = b"\"type\":\"";
    let Some(at) = memchr::memmem::find(line, KEY) else {
        return false;
    };
    let name = &line[at + KEY.len()..];
    let name = &name[..memchr::memchr(b'"', name).unwrap_or(name.len())];
    Decision::TYPE_NAMES.iter().any(|t| t.as_bytes() == name)
}
