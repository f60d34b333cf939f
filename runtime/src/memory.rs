//! Memory in a run (SPEC.md §28): what the runtime needs to record a turn's index
//! and place it in the system prompt, and the extraction call after the turn (its
//! fixed prompt, the turn rendered as its input with secrets and private files
//! filtered, the call itself, its events timed like a step's).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use xcsh_log::TimedEvent;
use xcsh_log::describe::speaker;
use xcsh_log::secrets::Secrets;
use xcsh_machine::Message;
use xcsh_providers::{ModelRequest, Provider};
use xcsh_tools::memory::{MemoryStore, Private};

use super::inflight::{Done, spawn_side_call};

/// Memory for a run: the store, and the workspace root whose `.gitignore` and
/// `.xcshignore` files mark private paths.
#[derive(Debug, Clone)]
pub struct MemoryOptions {
    pub store: MemoryStore,
    pub root: PathBuf,
}

/// The system prompt of a turn with memory: the prompt (with the project
/// instructions), then the memory index.
pub fn system_with_index(system: &str, index: &str) -> String {
    format!("{}\n\n{}", system.trim_end(), index.trim_end())
}

/// The fixed system prompt of the extraction call; the turn follows as the one user
/// message, the current index after this prompt.
pub const EXTRACTION_PROMPT: &str = "You maintain a coding agent's long-term memory: short Markdown notes that help in later sessions. Read the turn below (the user's message, the assistant's answers, its tool calls and their results) and propose notes to add or update: durable facts worth knowing next time (how to build and test this project, its conventions, where things are, the user's stated preferences), never passing details of this turn, never secrets (keys, tokens, passwords) or the content of private files. To update a note, reuse its name from the index below. Answer with one JSON object and nothing else: {\"notes\": [{\"scope\": \"project\" or \"user\", \"name\": \"a-slug\", \"description\": \"one line\", \"body\": \"Markdown\"}]}; `user` is for facts about the user that hold in every project. Answer {\"notes\": []} when nothing is worth keeping.";

/// The extraction's input: the turn as text, private files' content replaced by
/// the marker and every known secret value by its placeholder.
pub fn render_turn(mut turn: Vec<Message>, private: &mut Private, secrets: &Secrets) -> String {
    private.filter(&mut turn);
    let mut out = String::new();
    for m in &turn {
        match m {
            Message::User { origin, text } => {
                out.push_str(&format!(
                    "## {}\n\n{}\n\n",
                    speaker(*origin),
                    text.trim_end()
                ));
            }
            Message::Assistant {
                text, tool_calls, ..
            } => {
                if !text.is_empty() {
                    out.push_str(&format!("## Assistant\n\n{}\n\n", text.trim_end()));
                }
                for c in tool_calls {
                    out.push_str(&format!("## Tool call {} {}\n\n", c.name, c.arguments));
                }
            }
            Message::ToolResult {
                name,
                is_error,
                content,
                ..
            } => {
                let status = if *is_error { "error" } else { "ok" };
                out.push_str(&format!(
                    "## Tool result {name} ({status})\n\n{}\n\n",
                    content.trim_end()
                ));
            }
            Message::Summary { text } => {
                out.push_str(&format!(
                    "## Summary of earlier work\n\n{}\n\n",
                    text.trim_end()
                ));
            }
        }
    }
    secrets.redact(out.trim_end()).into_owned()
}

/// Starts the extraction call; its end (the events with their times since it
/// started, and how it ended) comes back as [`Done::Extraction`].
pub(super) fn spawn_extraction(
    provider: &Arc<dyn Provider>,
    request: ModelRequest,
    cancel: CancellationToken,
    done: mpsc::UnboundedSender<Done>,
) {
    let started = Instant::now();
    spawn_side_call(
        provider,
        request,
        cancel,
        done,
        move |events: &mut Vec<TimedEvent>, event| {
            let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            events.push(TimedEvent { ms, event });
        },
        |result, events| Done::Extraction { events, result },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use xcsh_machine::{CallId, ToolCall, UserOrigin};

    #[test]
    fn spec_quotes_the_extraction_prompt_exactly() {
        let spec =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../SPEC.md")).unwrap();
        assert!(spec.contains(&format!("\n> {EXTRACTION_PROMPT}\n")));
    }

    #[test]
    fn the_turn_is_rendered_with_private_content_and_secrets_filtered() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".xcshignore"), "private.txt\n").unwrap();
        let mut private = Private::new(dir.path());
        let secrets = Secrets::new([("OPENAI_API_KEY", "sk-secret-123456")]);
        let turn = vec![
            Message::User {
                origin: UserOrigin::Prompt,
                text: "my key is sk-secret-123456".into(),
            },
            Message::Assistant {
                text: "Reading.".into(),
                reasoning: String::new(),
                reasoning_signature: String::new(),
                reasoning_blocks: Vec::new(),
                tool_calls: vec![ToolCall {
                    id: CallId("c1".into()),
                    name: "read".into(),
                    arguments: r#"{"path":"private.txt"}"#.into(),
                }],
            },
            Message::ToolResult {
                call_id: CallId("c1".into()),
                name: "read".into(),
                is_error: false,
                content: "hunter2".into(),
            },
        ];
        assert_eq!(
            render_turn(turn, &mut private, &secrets),
            "## User\n\nmy key is [redacted:OPENAI_API_KEY]\n\n## Assistant\n\nReading.\n\n## Tool call read {\"path\":\"private.txt\"}\n\n## Tool result read (ok)\n\n[private file: content withheld from memory]"
        );
    }
}
