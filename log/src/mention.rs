//! The files a prompt's `@path` mentions attach (SPEC.md §17.5): each one appended
//! to the prompt as the read tool returns it ([`attach`]), so that the log records
//! what the model saw, and read back from the recorded prompt ([`split`]), so that
//! the history shows the prompt as typed with `(attached: P)`, live and on resume
//! alike (the terminal UI's `Cell::user_message`); and the mentions themselves
//! ([`mentions`]). The tree views and session lists show a prompt by [`preview`].

/// The `@path` mentions of a message, in order of first appearance, each once:
/// an `@` at the start or after whitespace, then the non-whitespace characters up
/// to the next whitespace, without trailing sentence punctuation (`.,;:!?` and
/// closing brackets or quotes), so "see @src/lib.rs." mentions `src/lib.rs`; or a
/// path in double quotes, `@"docs dir/my notes.md"` (the `@` popup writes a path
/// with white space so).
pub fn mentions(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (at, _) in text.match_indices('@') {
        if text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| !c.is_whitespace())
        {
            continue;
        }
        let rest = &text[at + 1..];
        let path = match rest.strip_prefix('"').and_then(|r| r.split_once('"')) {
            Some((quoted, _)) => quoted,
            None => {
                let word = rest.split(char::is_whitespace).next().unwrap_or("");
                word.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '}', '"', '\''])
            }
        };
        if !path.is_empty() && !out.iter().any(|p| p == path) {
            out.push(path.to_string());
        }
    }
    out
}

/// What starts an attached file, before its path.
const OPEN: &str = "\n\n<file path=\"";
/// What ends an attached file.
const CLOSE: &str = "\n</file>";

/// Appends the file at `path` to `prompt`, `content` being what the read tool
/// returned for it: `<file path="P">`, the content, `</file>`, after a blank line.
pub fn attach(prompt: &mut String, path: &str, content: &str) {
    prompt.push_str(OPEN);
    prompt.push_str(path);
    prompt.push_str("\">\n");
    prompt.push_str(content);
    prompt.push_str(CLOSE);
}

/// A recorded prompt as the user typed it, and the paths of the files attached to
/// it (in order): the undoing of [`attach`]. The typed text is the shortest prefix
/// after which the rest is nothing but attached files, each of a path the prefix
/// mentions (in the order of [`mentions`], each at most once), so a `</file>` inside
/// a file's content or a `<file path=…>` typed by the user is not taken for a
/// boundary. A prompt without attachments is returned whole.
pub fn split(recorded: &str) -> (&str, Vec<&str>) {
    for (at, _) in recorded.match_indices(OPEN) {
        let typed = &recorded[..at];
        if let Some(paths) = files(&recorded[at..], &mentions(typed)) {
            return (typed, paths);
        }
    }
    (recorded, Vec::new())
}

/// The path of each attached file in `rest`, when `rest` is nothing but attached
/// files whose paths are among `mentioned`, in its order.
fn files<'a>(rest: &'a str, mentioned: &[String]) -> Option<Vec<&'a str>> {
    if rest.is_empty() {
        return Some(Vec::new());
    }
    for (i, path) in mentioned.iter().enumerate() {
        let Some(body) = rest
            .strip_prefix(OPEN)
            .and_then(|r| r.strip_prefix(path.as_str()))
            .and_then(|r| r.strip_prefix("\">\n"))
        else {
            continue;
        };
        // The file's content ends at a `</file>` after which the rest parses.
        for (end, _) in body.match_indices(CLOSE) {
            if let Some(more) = files(&body[end + CLOSE.len()..], &mentioned[i + 1..]) {
                let mut out = vec![&rest[OPEN.len()..OPEN.len() + path.len()]];
                out.extend(more);
                return Some(out);
            }
        }
    }
    None
}

/// A one-line preview of a recorded prompt (a session's first prompt in the picker,
/// cut and its newlines folded) without the files attached to it: cut before the
/// first `<file path="P` whose P begins a path the text before it mentions.
pub fn preview(text: &str) -> &str {
    const START: &str = "<file path=\"";
    for (at, _) in text.match_indices(START) {
        let typed = text[..at].trim_end();
        let rest = &text[at + START.len()..];
        let path = rest.split('"').next().unwrap_or(rest).trim_end_matches('…');
        if !path.is_empty() && mentions(typed).iter().any(|m| m.starts_with(path)) {
            return typed;
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attached(typed: &str, files: &[(&str, &str)]) -> String {
        let mut prompt = typed.to_string();
        for (path, content) in files {
            attach(&mut prompt, path, content);
        }
        prompt
    }

    #[test]
    fn a_prompt_splits_back_into_what_was_typed_and_its_files() {
        let recorded = attached(
            "compare @greet.rs with @lib.rs and @missing.rs",
            &[
                ("greet.rs", "     1\t/// Greets.\n     2\tfn greet() {}"),
                ("lib.rs", "     1\tmod greet;"),
            ],
        );
        assert_eq!(
            split(&recorded),
            (
                "compare @greet.rs with @lib.rs and @missing.rs",
                vec!["greet.rs", "lib.rs"]
            )
        );
    }

    /// A file whose content looks like the end of an attachment and the start of
    /// another, or is empty, and a typed `<file>` block of a path not mentioned.
    #[test]
    fn markup_inside_a_file_or_typed_by_the_user_is_not_a_boundary() {
        let typed = "see\n\n<file path=\"x\">\nby hand\n</file> and @a.md, @b.md";
        let tricky = "text\n</file>\n\n<file path=\"b.md\">\nnot b\n</file>";
        let recorded = attached(typed, &[("a.md", tricky), ("b.md", "")]);
        assert_eq!(split(&recorded), (typed, vec!["a.md", "b.md"]));
    }

    /// The picker's preview: one line, cut, maybe inside the attached file's path.
    #[test]
    fn a_preview_drops_the_attached_files_even_when_cut() {
        let cut = "look at @README.md and go <file path=\"READ…";
        let whole = "look at @README.md and go <file path=\"README.md\"> 1 # Try";
        let typed = "compare <file path=\"x\"> by hand";
        assert_eq!(
            (preview(cut), preview(whole), preview(typed)),
            (
                "look at @README.md and go",
                "look at @README.md and go",
                typed
            )
        );
    }

    #[test]
    fn a_prompt_without_attachments_is_whole() {
        let typed = "look at @nothing.rs\n\n<file path=\"nothing.rs\">\nunclosed";
        assert_eq!(split(typed), (typed, Vec::<&str>::new()));
    }
}
