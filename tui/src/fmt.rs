//! Small formatting helpers shared by the history widgets (cells, tool cards,
//! approvals, the status line): untrusted text made safe, clipping and path
//! shortening by display width, durations and token counts.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
use xcsh_machine::{ApprovedBy, ProviderErrorKind, StopReason};

/// How many columns a tab becomes (tool output, `read`'s line-number prefix).
const TAB: usize = 4;

/// Untrusted text (model text, tool output, arguments) made safe to show: escape
/// sequences and control characters become visible (`xcsh_inspect`'s
/// `neutralize`), tabs become spaces (a terminal cell cannot hold a tab).
pub fn clean(text: &str) -> String {
    let safe = xcsh_inspect::terminal::neutralize(text);
    if !safe.contains('\t') {
        return safe.into_owned();
    }
    let mut out = String::with_capacity(safe.len() + 8);
    let mut col = 0;
    for ch in safe.chars() {
        match ch {
            '\t' => {
                let n = TAB - col % TAB;
                out.extend(std::iter::repeat_n(' ', n));
                col += n;
            }
            '\n' => {
                out.push(ch);
                col = 0;
            }
            _ => {
                out.push(ch);
                col += ch.width().unwrap_or(0);
            }
        }
    }
    out
}

/// The display width of `s` in terminal columns.
pub fn width(s: &str) -> usize {
    s.width()
}

/// `s` cut to at most `max` columns, ending in `…` when something was cut.
pub fn clip(s: &str, max: usize) -> String {
    clipped(s, max, Keep::Start)
}

/// `s` cut from the left to at most `max` columns, starting with `…`.
fn clip_left(s: &str, max: usize) -> String {
    clipped(s, max, Keep::End)
}

/// Which end of a clipped text stays.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    Start,
    End,
}

/// `s` cut to at most `max` columns, keeping `keep` and putting `…` where it was cut.
fn clipped(s: &str, max: usize, keep: Keep) -> String {
    if s.width() <= max {
        return s.to_owned();
    }
    if max == 0 {
        return String::new();
    }
    let chars: Vec<char> = match keep {
        Keep::Start => s.chars().collect(),
        Keep::End => s.chars().rev().collect(),
    };
    let mut kept = Vec::new();
    let mut used = 0;
    for ch in chars {
        let w = ch.width().unwrap_or(0);
        if used + w > max - 1 {
            break;
        }
        kept.push(ch);
        used += w;
    }
    match keep {
        Keep::Start => kept.into_iter().chain(['…']).collect(),
        Keep::End => ['…'].into_iter().chain(kept.into_iter().rev()).collect(),
    }
}

/// A path shortened from the left to `max` columns: whole leading components go
/// first (`…/src/lib.rs`), then the file name is cut from the left (`…ib.rs`).
pub fn shorten_path(path: &str, max: usize) -> String {
    if path.width() <= max {
        return path.to_owned();
    }
    let mut rest = path;
    while let Some(i) = rest.find('/') {
        rest = &rest[i + 1..];
        if rest.is_empty() {
            break;
        }
        let candidate = format!("…/{rest}");
        if candidate.width() <= max {
            return candidate;
        }
    }
    clip_left(path, max)
}

/// A duration as people read it: `0.4s`, `3.2s`, `1m 05s`, `2h 03m`.
pub fn duration(ms: u64) -> String {
    let secs = ms / 1000;
    if secs < 60 {
        format!("{}.{}s", secs, (ms % 1000) / 100)
    } else if secs < 3600 {
        format!("{}m {:02}s", secs / 60, secs % 60)
    } else {
        format!("{}h {:02}m", secs / 3600, (secs % 3600) / 60)
    }
}

/// A token count in a few characters: `340`, `1.2k`, `41k`, `1M`, `2.5M`.
pub fn tokens(n: u64) -> String {
    fn scaled(n: u64, unit: u64, suffix: &str) -> String {
        let tenths = n * 10 / unit;
        if tenths < 100 && !tenths.is_multiple_of(10) {
            format!("{}.{}{suffix}", tenths / 10, tenths % 10)
        } else {
            format!("{}{suffix}", n / unit)
        }
    }
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => scaled(n, 1_000, "k"),
        _ => scaled(n, 1_000_000, "M"),
    }
}

/// `lines` (each wrapped to `width - prefix`) with `first` before the first row and
/// `rest` before every other row; both prefixes must be the same width.
pub fn prefixed(
    lines: Vec<Line<'static>>,
    width: u16,
    first: Span<'static>,
    rest: Span<'static>,
) -> Vec<Line<'static>> {
    let indent = u16::try_from(first.content.width()).unwrap_or(u16::MAX);
    let inner = width.saturating_sub(indent).max(1);
    let mut out = Vec::new();
    for line in lines {
        for row in crate::text::wrap(&line, inner) {
            let prefix = if out.is_empty() {
                first.clone()
            } else {
                rest.clone()
            };
            let mut spans = vec![prefix];
            spans.extend(row.spans);
            // Never wider than `width`, whatever the wrapper did with wide characters.
            let spans = clip_spans(spans, usize::from(width));
            out.push(Line::from(spans).style(row.style));
        }
    }
    if out.is_empty() {
        out.push(Line::from(first));
    }
    out
}

/// Plain `text` (already cleaned) as lines of one style, one per source line.
pub fn plain(text: &str, style: Style) -> Vec<Line<'static>> {
    text.split('\n')
        .map(|l| Line::from(Span::styled(l.trim_end_matches('\r').to_owned(), style)))
        .collect()
}

/// `spans` cut to `max` columns (the last span kept gets an `…`).
pub fn clip_spans(spans: Vec<Span<'static>>, max: usize) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut used = 0;
    for span in spans {
        let w = span.content.width();
        if used + w <= max {
            used += w;
            out.push(span);
            continue;
        }
        let room = max - used;
        if room > 0 {
            out.push(Span::styled(clip(&span.content, room), span.style));
        }
        break;
    }
    out
}

/// Why a run stopped, as the user reads it wherever it is shown: the terminal UI's
/// turn end, the line mode's, a one-shot run's stderr (`done`, `stopped by you`,
/// `stopped: …`, `failed: …`).
pub fn why_stopped(reason: &StopReason) -> String {
    match reason {
        StopReason::Completed => "done".to_owned(),
        StopReason::Interrupted => "stopped by you".to_owned(),
        StopReason::MaxSteps { limit } => format!("stopped: {limit} steps, the step limit"),
        StopReason::MaxTokens { limit, spent } => format!(
            "stopped: the budget of {} tokens is spent ({})",
            tokens(*limit),
            tokens(*spent)
        ),
        StopReason::OutputLimit => "stopped: the response hit its output limit".to_owned(),
        StopReason::ContentFilter => "stopped: the provider withheld the response".to_owned(),
        StopReason::ProviderError { error } => {
            format!(
                "failed: {}: {}",
                kind_name(error.kind),
                error.message.trim()
            )
        }
        StopReason::ContextOverflow { error, compacted } => format!(
            "failed: the request is too long for the model's context{}: {}",
            if *compacted {
                ", even after compacting the conversation"
            } else {
                " and could not be compacted"
            },
            error.message.trim()
        ),
        StopReason::Crashed => "failed: the previous process ended during the run".to_owned(),
    }
}

/// A provider error's kind, in words.
pub fn kind_name(kind: ProviderErrorKind) -> &'static str {
    match kind {
        ProviderErrorKind::Http => "HTTP error",
        ProviderErrorKind::Api => "API error",
        ProviderErrorKind::Disconnected => "disconnected",
        ProviderErrorKind::IdleTimeout => "idle timeout",
        ProviderErrorKind::Malformed => "malformed stream",
        ProviderErrorKind::ScriptExhausted => "script exhausted",
        ProviderErrorKind::ContextOverflow => "context overflow",
    }
}

/// Who answered an approval without asking, in words (`bash: denied (…)`).
pub fn approved_by(by: ApprovedBy) -> &'static str {
    match by {
        ApprovedBy::PolicyYolo => "--permissions yolo",
        ApprovedBy::PolicyReadonly => "the session is read-only: --permissions readonly",
        ApprovedBy::NoOneToAsk => "always asked, and no one to ask",
        ApprovedBy::ToolGrant => "allowed for the session by an earlier a",
        ApprovedBy::CallGrant => "this call allowed for the session by an earlier A",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each way a run can stop, in the words every mode shows.
    #[test]
    fn why_stopped_words_every_stop() {
        use xcsh_machine::ProviderError;
        let error = |kind, message: &str| ProviderError {
            kind,
            message: message.into(),
        };
        let reasons = [
            StopReason::Completed,
            StopReason::Interrupted,
            StopReason::MaxSteps { limit: 32 },
            StopReason::MaxTokens {
                limit: 400_000,
                spent: 401_234,
            },
            StopReason::OutputLimit,
            StopReason::ContentFilter,
            StopReason::ProviderError {
                error: error(ProviderErrorKind::Api, "overloaded (529)\n"),
            },
            StopReason::ContextOverflow {
                error: error(ProviderErrorKind::ContextOverflow, "128000 tokens at most"),
                compacted: false,
            },
            StopReason::ContextOverflow {
                error: error(ProviderErrorKind::ContextOverflow, "128000 tokens at most"),
                compacted: true,
            },
            StopReason::Crashed,
        ];
        let words: Vec<String> = reasons.iter().map(why_stopped).collect();
        expect_test::expect![[r#"
            done
            stopped by you
            stopped: 32 steps, the step limit
            stopped: the budget of 400k tokens is spent (401k)
            stopped: the response hit its output limit
            stopped: the provider withheld the response
            failed: API error: overloaded (529)
            failed: the request is too long for the model's context and could not be compacted: 128000 tokens at most
            failed: the request is too long for the model's context, even after compacting the conversation: 128000 tokens at most
            failed: the previous process ended during the run"#]]
        .assert_eq(&words.join("\n"));
    }

    #[test]
    fn clip_counts_columns_and_marks_the_cut() {
        assert_eq!(clip("hello world", 5), "hell…");
        assert_eq!(clip("hello", 5), "hello");
        assert_eq!(clip("日本語テキスト", 5), "日本…");
        assert_eq!(clip("abc", 0), "");
    }

    #[test]
    fn long_paths_lose_their_leading_components_first() {
        assert_eq!(
            shorten_path("core/src/tools/edit.rs", 40),
            "core/src/tools/edit.rs"
        );
        assert_eq!(
            shorten_path("core/src/tools/edit.rs", 16),
            "…/tools/edit.rs"
        );
        assert_eq!(shorten_path("core/src/tools/edit.rs", 9), "…/edit.rs");
        assert_eq!(shorten_path("core/src/tools/edit.rs", 6), "…it.rs");
    }

    #[test]
    fn durations_and_token_counts_read_short() {
        let d: Vec<String> = [400, 3_240, 65_000, 7_380_000].map(duration).into();
        assert_eq!(d, ["0.4s", "3.2s", "1m 05s", "2h 03m"]);
        let t: Vec<String> = [340, 1_234, 41_000, 100_000, 1_000_000, 2_500_000]
            .map(tokens)
            .into();
        assert_eq!(t, ["340", "1.2k", "41k", "100k", "1M", "2.5M"]);
    }

    #[test]
    fn clean_makes_escapes_visible_and_expands_tabs() {
        assert_eq!(clean("a\tb\x1b[31m"), "a   b␛[31m");
        assert_eq!(clean("     1\tfn"), "     1  fn");
    }
}
