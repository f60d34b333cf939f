//! The memory entries (SPEC.md §28): the index a turn's requests carry, the
//! extraction after a turn, the snapshot of the notes it left, a note forgotten; the
//! note names and scopes they share, and the parser of an extraction's answer (pure,
//! shared by the journal that records it and the tests).

use serde::{Deserialize, Serialize};
use xcsh_machine::{Assembled, StepOutcome};

use super::TimedEvent;

/// Where a note lives: `$XCSH_HOME/memory/` (the user's, every workspace) or
/// `<workspace root>/.xcsh/memory/` (this project's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryScope {
    User,
    Project,
}

impl MemoryScope {
    pub fn name(self) -> &'static str {
        match self {
            MemoryScope::User => "user",
            MemoryScope::Project => "project",
        }
    }

    pub fn parse(s: &str) -> Option<MemoryScope> {
        match s {
            "user" => Some(MemoryScope::User),
            "project" => Some(MemoryScope::Project),
            _ => None,
        }
    }
}

/// The longest note name.
pub const MAX_NOTE_NAME: usize = 64;
/// The longest note description (one line).
pub const MAX_NOTE_DESCRIPTION: usize = 200;

/// Why `name` is not a note name, if it is not one: a slug of 1 to 64 lowercase
/// ASCII letters, digits, `-` and `_`, starting with a letter or digit.
pub fn bad_note_name(name: &str) -> Option<String> {
    let first_ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let all_ok = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    (!first_ok || !all_ok || name.len() > MAX_NOTE_NAME).then(|| {
        format!(
            "`{name}` is not a note name (1 to {MAX_NOTE_NAME} of a-z, 0-9, `-`, `_`, starting with a letter or digit)"
        )
    })
}

/// Why `description` is not a note description, if it is not one: one line, not
/// blank, at most 200 characters.
pub fn bad_note_description(description: &str) -> Option<String> {
    if description.trim().is_empty() {
        Some("the description is empty".into())
    } else if description.contains(['\n', '\r']) {
        Some("the description is more than one line".into())
    } else if description.chars().count() > MAX_NOTE_DESCRIPTION {
        Some(format!(
            "the description is longer than {MAX_NOTE_DESCRIPTION} characters"
        ))
    } else {
        None
    }
}

/// One note as an entry names it: scope, name and the blake3 (hex) of its file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NoteRef {
    pub scope: MemoryScope,
    pub name: String,
    pub hash: String,
}

/// Input `memory_index`: the index a turn's requests carry, recorded before its
/// `user_message`: its text (as placed in the system prompt), the blake3 (hex) of
/// the text, and the notes it lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryIndexRecord {
    pub text: String,
    pub hash: String,
    pub notes: Vec<NoteRef>,
}

/// `memory_extraction`: the one model call after a completed turn, recorded like a
/// step (its events with their timing, how it ended, the assembled message with its
/// usage), with the notes its answer proposes and what was wrong with the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtractionRecord {
    pub events: Vec<TimedEvent>,
    pub outcome: StepOutcome,
    pub message: Assembled,
    /// The notes to write (valid ones only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<ProposedNote>,
    /// What was refused: an unparsable answer, an invalid or secret-bearing note.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// A note the extraction proposes to add or replace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposedNote {
    pub scope: MemoryScope,
    pub name: String,
    pub description: String,
    pub body: String,
}

/// `memory_snapshot`: the notes after an extraction's notes were written (every
/// note of both scopes, with hashes), which of them were written, and the notes
/// that could not be written (with why).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotRecord {
    pub notes: Vec<NoteRef>,
    pub written: Vec<NoteRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

/// `memory_forget`: the user deleted a note (`/memory forget NAME`); `hash` is the
/// file's before it was deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForgetRecord {
    pub scope: MemoryScope,
    pub name: String,
    pub hash: String,
}

fn names(notes: &[NoteRef]) -> String {
    if notes.is_empty() {
        return "none".into();
    }
    notes
        .iter()
        .map(|n| note_name(n.scope, &n.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A note as the views name it: `scope/name`.
fn note_name(scope: MemoryScope, name: &str) -> String {
    format!("{}/{}", scope.name(), name)
}

/// What `say` makes of `items`, or nothing where there are none.
fn if_any<T>(items: &[T], say: impl FnOnce(&[T]) -> String) -> String {
    if items.is_empty() {
        String::new()
    } else {
        say(items)
    }
}

impl MemoryIndexRecord {
    /// One line for the views.
    pub fn summary(&self) -> String {
        format!(
            "memory index of {} note(s): {} (hash {})",
            self.notes.len(),
            names(&self.notes),
            self.hash.get(..8).unwrap_or(&self.hash)
        )
    }
}

impl ExtractionRecord {
    /// One line for the views.
    pub fn summary(&self) -> String {
        let how = match &self.outcome {
            StepOutcome::Completed => "completed".to_string(),
            StepOutcome::Failed { error } => format!("failed: {}", error.message),
            StepOutcome::Aborted => "interrupted".to_string(),
        };
        let proposed = self
            .notes
            .iter()
            .map(|n| note_name(n.scope, &n.name))
            .collect::<Vec<_>>();
        format!(
            "memory extraction {how}: {} note(s) proposed{}{}",
            proposed.len(),
            if_any(&proposed, |p| format!(" ({})", p.join(", "))),
            if_any(&self.problems, |p| format!("; {} refused", p.len())),
        )
    }
}

impl SnapshotRecord {
    /// One line for the views.
    pub fn summary(&self) -> String {
        format!(
            "memory snapshot: {} note(s), written {}{}",
            self.notes.len(),
            names(&self.written),
            if_any(&self.errors, |e| format!("; {} error(s)", e.len())),
        )
    }
}

impl ForgetRecord {
    /// One line for the views.
    pub fn summary(&self) -> String {
        format!(
            "memory note {} forgotten",
            note_name(self.scope, &self.name)
        )
    }
}

/// The notes an extraction's answer proposes, and what was refused. The answer is
/// a JSON object `{"notes":[{"scope","name","description","body"}]}` (a Markdown
/// code fence around it is allowed; `scope` defaults to `project`); an answer that
/// is not one proposes nothing and says why. A note with a redaction placeholder
/// (`[redacted:`: a secret reached it) is refused, as is an invalid one.
pub fn parse_extraction(answer: &str) -> (Vec<ProposedNote>, Vec<String>) {
    #[derive(Deserialize)]
    struct Answer {
        notes: Vec<Raw>,
    }
    #[derive(Deserialize)]
    struct Raw {
        #[serde(default)]
        scope: Option<String>,
        name: String,
        description: String,
        body: String,
    }
    let trimmed = answer.trim();
    let json = match (trimmed.find('{'), trimmed.rfind('}')) {
        (Some(a), Some(b)) if a < b => &trimmed[a..=b],
        _ => trimmed,
    };
    let parsed: Answer = match serde_json::from_str(json) {
        Ok(a) => a,
        Err(e) => {
            return (
                Vec::new(),
                vec![format!(
                    "the answer is not a JSON object {{\"notes\": [...]}}: {e}"
                )],
            );
        }
    };
    let mut notes = Vec::new();
    let mut problems = Vec::new();
    for raw in parsed.notes {
        let scope = match raw.scope.as_deref() {
            None => MemoryScope::Project,
            Some(s) => match MemoryScope::parse(s) {
                Some(scope) => scope,
                None => {
                    problems.push(format!(
                        "note `{}`: scope `{s}` is neither `user` nor `project`",
                        raw.name
                    ));
                    continue;
                }
            },
        };
        let description = raw.description.trim().to_string();
        let body = raw.body.trim().to_string();
        let why = bad_note_name(&raw.name)
            .or_else(|| bad_note_description(&description))
            .or_else(|| body.is_empty().then(|| "the body is empty".to_string()))
            .or_else(|| {
                [&raw.name, &description, &body]
                    .iter()
                    .any(|t| t.contains("[redacted:"))
                    .then(|| "it holds a secret (a redacted value)".to_string())
            });
        match why {
            Some(why) => problems.push(format!("note `{}` refused: {why}", raw.name)),
            None => notes.push(ProposedNote {
                scope,
                name: raw.name,
                description,
                body,
            }),
        }
    }
    (notes, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_in_a_fence_gives_its_valid_notes_and_names_the_refused_ones() {
        let answer = "Here:\n```json\n{\"notes\":[\
            {\"name\":\"build\",\"description\":\"How to build\",\"body\":\"cargo build\"},\
            {\"scope\":\"user\",\"name\":\"style\",\"description\":\"Prefers tabs\",\"body\":\"tabs\"},\
            {\"name\":\"Bad Name\",\"description\":\"x\",\"body\":\"y\"},\
            {\"name\":\"key\",\"description\":\"the key\",\"body\":\"it is [redacted:API_KEY]\"},\
            {\"scope\":\"team\",\"name\":\"t\",\"description\":\"x\",\"body\":\"y\"},\
            {\"name\":\"two\",\"description\":\"a\\nb\",\"body\":\"y\"}]}\n```";
        let (notes, problems) = parse_extraction(answer);
        assert_eq!(
            notes,
            vec![
                ProposedNote {
                    scope: MemoryScope::Project,
                    name: "build".into(),
                    description: "How to build".into(),
                    body: "cargo build".into(),
                },
                ProposedNote {
                    scope: MemoryScope::User,
                    name: "style".into(),
                    description: "Prefers tabs".into(),
                    body: "tabs".into(),
                },
            ]
        );
        assert_eq!(
            problems,
            vec![
                "note `Bad Name` refused: `Bad Name` is not a note name (1 to 64 of a-z, 0-9, `-`, `_`, starting with a letter or digit)",
                "note `key` refused: it holds a secret (a redacted value)",
                "note `t`: scope `team` is neither `user` nor `project`",
                "note `two` refused: the description is more than one line",
            ]
        );
    }

    #[test]
    fn an_answer_that_is_not_json_proposes_nothing_and_says_why() {
        let (notes, problems) = parse_extraction("I keep nothing");
        assert_eq!(notes, Vec::new());
        assert_eq!(
            problems,
            vec![
                "the answer is not a JSON object {\"notes\": [...]}: expected value at line 1 column 1"
            ]
        );
    }

    #[test]
    fn note_names_are_safe_slugs() {
        for good in ["a", "build-commands", "x_1", "9lives"] {
            assert_eq!(bad_note_name(good), None, "{good}");
        }
        for bad in ["", "-a", "A", "a/b", "..", "a.md", &"a".repeat(65)] {
            assert!(bad_note_name(bad).is_some(), "{bad}");
        }
    }
}
