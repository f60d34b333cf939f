//! Reading a tool's result text (the formats of `tools/src/*.rs`) back into
//! what a card shows: bash's exit code and output lines, and the counts of
//! read/list/grep/glob. Any text parses: what is not recognized is shown as it is.

use std::collections::BTreeSet;

/// The prefix of the caps' truncation trailer (`tools/src/caps.rs`).
const TRUNCATED: &str = "[output truncated: ";

/// bash's result: `exit code: N`, `duration: N ms`, notes, then `stdout:` and
/// `stderr:` sections.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BashResult {
    /// The exit code line's value (`0`, `1`, `none (killed by signal 9)`).
    pub exit: Option<String>,
    /// Lines before `exit code:` (timed out, cancelled) and notes after `duration:`.
    pub notes: Vec<String>,
    /// The output lines, stdout's then stderr's (truncation trailers included).
    pub output: Vec<String>,
}

/// Reads bash's result text.
pub fn bash(content: &str) -> BashResult {
    let mut result = BashResult::default();
    let mut lines = content.split('\n').peekable();
    while let Some(line) = lines.next_if(|l| !is_stream_header(l, "stdout")) {
        if let Some(code) = line.strip_prefix("exit code: ") {
            result.exit = Some(code.to_owned());
        } else if !line.starts_with("duration: ") {
            result.notes.push(line.to_owned());
        }
    }
    let rest: Vec<&str> = lines.collect();
    // stderr's header is the last one: stdout's own text may contain the word.
    let stderr_at = rest
        .iter()
        .rposition(|l| is_stream_header(l, "stderr"))
        .unwrap_or(rest.len());
    for (i, line) in rest.iter().enumerate() {
        let header = i == 0 || i == stderr_at;
        if !header {
            result.output.push((*line).to_owned());
        }
    }
    result
}

/// How a bash call ended, for its colour: exit code 0, another code, a signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Success,
    Failure,
    Signal,
}

impl BashResult {
    /// How the call ended, in the words a card's header and the line mode's result
    /// line use (`exit 0`, `exit 1`, `signal 9` for `none (killed by signal 9)`),
    /// when the result says.
    pub fn ending(&self) -> Option<(String, Ending)> {
        let code = self.exit.as_deref()?;
        Some(match code.strip_prefix("none (killed by ") {
            Some(signal) => (signal.trim_end_matches(')').to_owned(), Ending::Signal),
            None if code == "0" => ("exit 0".to_owned(), Ending::Success),
            None => (format!("exit {code}"), Ending::Failure),
        })
    }

    /// The last `n` output lines (trailing blank lines left out) and how many lines
    /// of output come before them: those of the result, and for a stream whose
    /// middle was left out (its marker before the tail) the lines it left out.
    pub fn tail(&self, n: usize) -> (usize, &[String]) {
        let end = self
            .output
            .iter()
            .rposition(|l| !l.trim().is_empty())
            .map_or(0, |i| i + 1);
        let skip = end.saturating_sub(n);
        let earlier = self.output[..skip]
            .iter()
            .map(|l| left_out(l).map_or(1, |cut| cut))
            .sum();
        (earlier, &self.output[skip..end])
    }
}

/// `… N earlier lines`: what a tail of output leaves out before it, if anything.
pub fn earlier(n: usize) -> Option<String> {
    let plural = if n == 1 { "line" } else { "lines" };
    (n > 0).then(|| format!("… {n} earlier {plural}"))
}

fn is_stream_header(line: &str, name: &str) -> bool {
    line.strip_prefix(name)
        .is_some_and(|r| r == ":" || r == ": (empty)")
}

/// The one-line summary of a read-only tool's result.
pub fn summary(tool: &str, content: &str) -> Option<String> {
    let lines: Vec<&str> = content.lines().collect();
    let trailer = lines.iter().find_map(|l| truncation(l));
    let body: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !(l.starts_with('[') && l.ends_with(']')))
        .collect();
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let of_total = |shown: usize| match trailer {
        Some((_, total)) if total > shown => format!(" (of {total}, truncated)"),
        Some(_) | None => String::new(),
    };
    Some(match tool {
        "read" => {
            if content.ends_with("is empty (0 lines)") {
                return Some("empty file".to_owned());
            }
            let n = body.iter().filter(|l| is_numbered(l)).count();
            let total = lines.iter().find_map(|l| read_total(l));
            let mut s = format!("read {}", plural(n, "line", "lines"));
            if let Some(total) = total {
                s.push_str(&format!(" of {total}"));
            } else {
                s.push_str(&of_total(n));
            }
            s
        }
        "list" => {
            if body.len() == 1
                && (body[0].starts_with("no entries") || body[0].ends_with("has no entries"))
            {
                return Some("no entries".to_owned());
            }
            let n = body.len();
            format!("{}{}", plural(n, "entry", "entries"), of_total(n))
        }
        "grep" => {
            if body.len() == 1 && body[0].starts_with("no matches for ") {
                return Some("no matches".to_owned());
            }
            let files: BTreeSet<&str> = body.iter().filter_map(|l| grep_file(l)).collect();
            let n = body.len();
            format!(
                "{} in {}{}",
                plural(n, "match", "matches"),
                plural(files.len(), "file", "files"),
                of_total(n)
            )
        }
        "glob" => {
            if body.len() == 1 && body[0].starts_with("no files match ") {
                return Some("no files".to_owned());
            }
            let n = body.len();
            format!("{}{}", plural(n, "file", "files"), of_total(n))
        }
        _ => return None,
    })
}

/// `(shown, total)` lines of a truncation trailer.
fn truncation(line: &str) -> Option<(usize, usize)> {
    let rest = line.strip_prefix(TRUNCATED)?;
    let (shown, rest) = rest.split_once(" of ")?;
    let (total, _) = rest.split_once(" lines")?;
    Some((shown.parse().ok()?, total.parse().ok()?))
}

/// How many lines bash's marker between a stream's start and end says it left out
/// (`[output truncated: CUT of TOTAL lines, … left out here; …]`).
fn left_out(line: &str) -> Option<usize> {
    line.contains(" left out here")
        .then(|| truncation(line))
        .flatten()
        .map(|(cut, _)| cut)
}

/// `read`'s `[lines 1-20 of 200 shown; …]` note: the file's line count.
fn read_total(line: &str) -> Option<usize> {
    let rest = line.strip_prefix("[lines ")?;
    let (_, rest) = rest.split_once(" of ")?;
    let (total, _) = rest.split_once(' ')?;
    total.parse().ok()
}

/// A `read` output line: `{:>6}\t{line}`.
fn is_numbered(line: &str) -> bool {
    line.split_once('\t')
        .is_some_and(|(n, _)| !n.trim().is_empty() && n.trim().bytes().all(|b| b.is_ascii_digit()))
}

/// The file of a grep match line `path:line:text`.
fn grep_file(line: &str) -> Option<&str> {
    let mut parts = line.splitn(3, ':');
    let file = parts.next()?;
    let number = parts.next()?;
    parts.next()?;
    (!number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())).then_some(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_results_split_into_exit_code_notes_and_output() {
        let content =
            "exit code: 1\nduration: 12 ms\nstdout:\nok\nstderr: not a header\nstderr:\nboom";
        assert_eq!(
            bash(content),
            BashResult {
                exit: Some("1".into()),
                notes: vec![],
                output: vec!["ok".into(), "stderr: not a header".into(), "boom".into()],
            }
        );
        let timed_out = "timed out after 100 ms; process group 7 was killed\nexit code: none (killed by signal 9)\nduration: 101 ms\nstdout: (empty)\nstderr: (empty)";
        assert_eq!(
            bash(timed_out),
            BashResult {
                exit: Some("none (killed by signal 9)".into()),
                notes: vec!["timed out after 100 ms; process group 7 was killed".into()],
                output: vec![],
            }
        );
    }

    /// How a call ended in words, and its last lines without the trailing blank
    /// ones, with the count of those before them.
    #[test]
    fn bash_results_say_how_they_ended_and_keep_a_tail() {
        let ended = |code: &str| {
            let result = BashResult {
                exit: Some(code.into()),
                ..BashResult::default()
            };
            result.ending()
        };
        assert_eq!(
            [ended("0"), ended("2"), ended("none (killed by signal 9)")],
            [
                Some(("exit 0".into(), Ending::Success)),
                Some(("exit 2".into(), Ending::Failure)),
                Some(("signal 9".into(), Ending::Signal)),
            ]
        );
        assert_eq!(BashResult::default().ending(), None);
        let result = bash("exit code: 0\nstdout:\na\nb\nc\n\nstderr:\n  ");
        let (skipped, tail) = result.tail(2);
        assert_eq!((skipped, tail), (1, &["b".to_owned(), "c".to_owned()][..]));
        assert_eq!(result.tail(9).0, 0);
        // A stream whose middle was left out: the lines before the tail are the
        // head's and those the marker says were left out, not the marker itself.
        let cut = bash(
            "exit code: 0\nstdout:\n1\n2\n[output truncated: 6 of 10 lines, 12 of 21 bytes left out here; cap 4 lines / 10 bytes; redirect]\n9\n10\n",
        );
        let (earlier_lines, tail) = cut.tail(2);
        assert_eq!(
            (earlier_lines, tail),
            (8, &["9".to_owned(), "10".to_owned()][..])
        );
        assert_eq!(
            [earlier(0), earlier(1), earlier(2)],
            [
                None,
                Some("… 1 earlier line".into()),
                Some("… 2 earlier lines".into())
            ]
        );
    }

    #[test]
    fn read_only_tools_summarize_with_counts() {
        let read = "    10\tfn a() {}\n    11\tfn b() {}\n[lines 10-11 of 200 shown; continue with offset 12]";
        let grep = "src/a.rs:1:x\nsrc/a.rs:9:x\nsrc/b.rs:2:x";
        let glob = "a.rs\nb.rs\n[output truncated: 2 of 5 lines, 10 of 25 bytes shown; cap 2 lines / 50 bytes; narrow the pattern or the path]";
        for (tool, output, want) in [
            ("read", read, Some("read 2 lines of 200")),
            ("read", "`x` is empty (0 lines)", Some("empty file")),
            ("list", "a/\nb.rs\nc@", Some("3 entries")),
            ("list", "`d` has no entries", Some("no entries")),
            ("grep", grep, Some("3 matches in 2 files")),
            (
                "grep",
                "no matches for `x` in `.` (files ignored …)",
                Some("no matches"),
            ),
            ("glob", glob, Some("2 files (of 5, truncated)")),
            ("bash", "x", None),
        ] {
            assert_eq!(summary(tool, output).as_deref(), want, "{tool}: {output:?}");
        }
    }
}
