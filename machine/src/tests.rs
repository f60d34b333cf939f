//! The machine's transcript tests, and the few that check one function directly.
//!
//! Every file under `machine/test_data/` is a transcript: the inputs, one `> ` line
//! each in the language of [`crate::script`], with the effects each made indented
//! under it; `# ` lines say what the transcript shows. A `given NAME` line plays
//! `test_data/given/NAME.txt` at that point, and checks that it makes the effects
//! written there, so that a transcript that starts from a common state shows only
//! what it is about. [`every_transcript_plays_as_written`] plays each file from a new
//! machine and compares what it makes with the file, whole; `UPDATE_EXPECT=1`
//! writes what it made instead.

use std::path::{Path, PathBuf};

use expect_test::{expect, expect_file};

use super::*;
use crate::script::ScriptReader;

struct Harness {
    machine: Machine,
    reader: ScriptReader,
}

impl Harness {
    fn new() -> Harness {
        Harness {
            machine: Machine::new(),
            reader: ScriptReader::new(),
        }
    }

    /// Plays the transcript `text` (of `file`, for messages) and returns the one it
    /// makes: its comments and `given` lines as they are, each input line with the
    /// effects it makes now. A `step` line's stream events are fed silently before
    /// its end.
    fn play(&mut self, text: &str, file: &Path) -> String {
        let mut out = String::new();
        for (n, line) in text.lines().enumerate() {
            if line.starts_with("  ") {
                continue; // an effect: its input makes it again
            }
            out.push_str(line);
            out.push('\n');
            if let Some(name) = line.strip_prefix("given ") {
                self.given(name, file);
            } else if let Some(script) = line.strip_prefix("> ") {
                let mut inputs = self
                    .reader
                    .read(script)
                    .unwrap_or_else(|e| panic!("{}:{}: {e}", file.display(), n + 1));
                let Some(shown) = inputs.pop() else {
                    continue; // a setting (`config`, `usage`): no input
                };
                for input in inputs {
                    let silent = self.machine.handle(input);
                    // Only text notices come out of streaming; they are not decisions.
                    assert!(
                        silent.iter().all(|e| matches!(e, Effect::Notify(_))),
                        "{silent:?}"
                    );
                }
                for effect in self.machine.handle(shown) {
                    out.push_str("  ");
                    out.push_str(&render(&effect));
                    out.push('\n');
                }
            }
        }
        // Context hashes make transcripts unreadable; shorten them to 8 hex digits.
        shorten_hashes(&out)
    }

    /// Plays the given `name` here (in `file`); it must make the effects its own
    /// file holds.
    fn given(&mut self, name: &str, file: &Path) {
        let within = file;
        let file = data().join("given").join(format!("{name}.txt"));
        let text = read(&file);
        let made = self.play(&text, &file);
        assert!(
            made == text,
            "given {name} ({}) makes other effects in {}:\n{made}",
            file.display(),
            within.display()
        );
    }
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data")
}

fn read(file: &Path) -> String {
    std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// The `.txt` files under `dir`, at any depth, in name order.
fn transcripts(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry reads").path();
        if path.is_dir() {
            files.extend(transcripts(&path));
        } else if path.extension().is_some_and(|x| x == "txt") {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn render(effect: &Effect) -> String {
    match effect {
        Effect::Record(d) => {
            let json = serde_json::to_value(d).unwrap();
            format!("record {} {}", json["type"].as_str().unwrap(), json["data"])
        }
        Effect::CallModel { step } => format!("call_model step={step}"),
        Effect::ExecuteTool { call } => format!("execute {} {}", call.id, call.name),
        Effect::AskApproval { call } => format!("ask_approval {} {}", call.id, call.name),
        Effect::CancelModel { step } => format!("cancel_model step={step}"),
        Effect::CancelTool { call_id } => format!("cancel_tool {call_id}"),
        Effect::Summarize { upto } => format!("summarize upto={upto}"),
        Effect::CancelSummarize => "cancel_summarize".into(),
        Effect::Notify(n) => format!("notify {n:?}"),
    }
}

fn shorten_hashes(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(pos) = rest.find("\"context_hash\":\"") {
        let start = pos + "\"context_hash\":\"".len();
        out.push_str(&rest[..start + 8]);
        rest = &rest[start + 64..];
    }
    out.push_str(rest);
    out
}

/// Each transcript under `test_data/`, played from a new machine, makes the effects
/// it holds. Every file that plays otherwise is named before the first difference is
/// shown.
#[test]
fn every_transcript_plays_as_written() {
    let files = transcripts(&data());
    assert!(
        files.len() > 40,
        "{} transcripts under {}",
        files.len(),
        data().display()
    );
    let differ: Vec<(PathBuf, String)> = files
        .into_iter()
        .filter_map(|file| {
            let made = Harness::new().play(&read(&file), &file);
            (made != read(&file)).then_some((file, made))
        })
        .collect();
    for (file, _) in &differ {
        eprintln!("{}: plays otherwise", file.display());
    }
    for (file, made) in differ {
        expect_file![file].assert_eq(&made);
    }
}

#[test]
fn arguments_that_are_not_an_object_are_described_in_xcshs_own_words() {
    let described: Vec<String> = [
        "{\"path\":\"a\"}",
        "[1]",
        "\"text\"",
        "true",
        "null",
        "-3",
        "{\"path\":",
        "{path}",
        "{} trailing",
    ]
    .iter()
    .map(|text| format!("{text} -> {:?}", not_an_object(text)))
    .collect();
    expect![[r#"
        {"path":"a"} -> None
        [1] -> Some("they are an array")
        "text" -> Some("they are a string")
        true -> Some("they are a boolean")
        null -> Some("they are null")
        -3 -> Some("they are a number")
        {"path": -> Some("the JSON text ends early")
        {path} -> Some("they are not valid JSON")
        {} trailing -> Some("they are not valid JSON")"#]]
    .assert_eq(&described.join("\n"));
}

#[test]
fn every_stream_event_kind_is_its_serialized_tag_and_kinds_lists_them_all() {
    let text = String::new;
    let events = [
        StreamEvent::TextDelta { text: text() },
        StreamEvent::ReasoningDelta { text: text() },
        StreamEvent::ReasoningSignature { signature: text() },
        StreamEvent::ToolCallStart {
            index: 0,
            id: CallId(text()),
            name: text(),
        },
        StreamEvent::ToolCallDelta {
            index: 0,
            arguments: text(),
        },
        StreamEvent::ToolCallEnd { index: 0 },
        StreamEvent::Usage {
            usage: Usage::default(),
        },
        StreamEvent::Finish {
            reason: FinishReason::Stop,
        },
        StreamEvent::Retrying {
            attempt: 1,
            reason: text(),
            delay_ms: 0,
        },
        StreamEvent::Skipped { event_type: text() },
        StreamEvent::Restarted { reason: text() },
        StreamEvent::ReasoningBlockStart {},
        StreamEvent::ReasoningRedacted { data: text() },
        StreamEvent::OutputLimitExceeded {
            max_output_tokens: 1,
            output_bytes: 1,
        },
    ];
    let tags: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_value(e).expect("an event serializes")["kind"].to_string())
        .collect();
    let kinds: Vec<String> = events.iter().map(|e| format!("\"{}\"", e.kind())).collect();
    assert_eq!(tags, kinds);
    let listed: Vec<String> = StreamEvent::KINDS
        .iter()
        .map(|k| format!("\"{k}\""))
        .collect();
    assert_eq!(kinds, listed);
}

/// The hash of a step with a memory index is blake3 of the context's running hash,
/// `memory_index:` and the index's hash; the machine holds the index until a
/// prompt takes it, and a later index replaces an earlier one.
#[test]
fn the_memory_index_hash_is_the_context_hash_mixed_with_the_index() {
    let mut m = Machine::new();
    let _ = m.handle(Input::MemoryIndex {
        hash: "aaaa".into(),
    });
    let _ = m.handle(Input::MemoryIndex {
        hash: "bbbb".into(),
    });
    assert_eq!(m.memory_index(), Some("bbbb"));
    let effects = m.handle(Input::Prompt {
        text: "go".into(),
        config: RunConfig {
            limits: Limits::default(),
            tools: Vec::new(),
            mutating: Vec::new(),
            permissions: Permissions::Yolo,
            estimate_bytes_per_token: 0,
            sandbox: None,
        },
    });
    assert_eq!(m.memory_index(), None);
    let mut plain = Context::default();
    plain.push(
        None,
        Message::User {
            origin: UserOrigin::Prompt,
            text: "go".into(),
        },
    );
    let mut h = blake3::Hasher::new();
    h.update(blake3::Hash::from_hex(plain.hash_hex()).unwrap().as_bytes());
    h.update(b"memory_index:bbbb");
    assert_eq!(
        effects,
        vec![
            Effect::Record(Decision::StepStarted {
                step: StepNo(1),
                messages: 1,
                context_hash: h.finalize().to_hex().to_string(),
            }),
            Effect::CallModel { step: StepNo(1) },
        ]
    );
}
