//! The status line (provider and model, permission mode, step n of max, context
//! against the compaction threshold, spend against the budget, the turn's elapsed
//! time, a retry as it happens, the session id) and the footer's key hints for the
//! UI's state. Both fit any width by dropping their least important parts first.

use ratatui::text::{Line, Span};
use xcsh_machine::Permissions;

use crate::Theme;
use crate::fmt;
use crate::theme::Role;

/// The turn in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turn {
    /// The step running now (1-based) and the run's `max_steps`.
    pub step: u32,
    pub max_steps: u32,
    /// When the turn started (the UI's clock).
    pub started_ms: u64,
}

/// A provider request that failed and is tried again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retry {
    /// Why (`429 rate limited`), from the `retrying` stream event.
    pub reason: String,
    /// When the next attempt starts (the UI's clock): the event's time + `delay_ms`.
    pub at_ms: u64,
}

/// What the status line shows; the app keeps it up to date from run events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub provider: String,
    pub model: String,
    pub permissions: Permissions,
    /// The sandbox mode, once there is one.
    pub sandbox: Option<String>,
    pub session_id: String,
    /// Set while the agent works.
    pub turn: Option<Turn>,
    /// The context size of the last request, if one was made.
    pub context_tokens: Option<u64>,
    /// The compaction threshold (`compact_at_tokens`); 0 = never.
    pub compact_at: u64,
    /// Tokens spent in the run so far (`Usage::spend`).
    pub spent: u64,
    /// The spend budget (`max_tokens`); 0 = none.
    pub budget: u64,
    /// The spend is (partly) estimated.
    pub estimated: bool,
    pub retry: Option<Retry>,
}

/// One part of the status line and how long it survives narrowing (higher stays).
struct Segment {
    spans: Vec<Span<'static>>,
    keep: u8,
}

impl Status {
    /// The status line at `width` columns. Narrowing drops, in this order: the
    /// session id, the provider, the sandbox, the spend, the elapsed time, the
    /// permission mode, the context, the step; the model and a retry stay longest.
    pub fn line(&self, width: u16, now_ms: u64, theme: &Theme) -> Line<'static> {
        let dim = theme.style(Role::Status);
        let seg = |text: String, role: Option<Role>, keep: u8| Segment {
            spans: vec![Span::styled(text, role.map_or(dim, |r| theme.style(r)))],
            keep,
        };
        let mut segments = Vec::new();
        if let Some(retry) = &self.retry {
            let secs = retry.at_ms.saturating_sub(now_ms).div_ceil(1000);
            let reason = fmt::clip(&fmt::clean(retry.reason.trim()).replace('\n', " "), 48);
            segments.push(seg(
                format!("retrying in {secs}s: {reason}"),
                Some(Role::Warning),
                9,
            ));
        }
        segments.push(seg(fmt::clean(&self.provider), None, 1));
        segments.push(seg(fmt::clean(&self.model), Some(Role::Text), 8));
        let (mode, role) = match self.permissions {
            Permissions::Ask => ("ask", None),
            Permissions::Readonly => ("read-only", None),
            Permissions::Yolo => ("yolo", Some(Role::Warning)),
        };
        segments.push(seg(mode.to_owned(), role, 5));
        if let Some(sandbox) = &self.sandbox {
            segments.push(seg(format!("sandbox {}", fmt::clean(sandbox)), None, 2));
        }
        if let Some(turn) = &self.turn {
            segments.push(seg(
                format!("step {}/{}", turn.step, turn.max_steps),
                Some(Role::Text),
                7,
            ));
        }
        if let Some(ctx) = self.context_tokens {
            let near = self.compact_at > 0 && ctx.saturating_mul(10) >= self.compact_at * 8;
            let text = match self.compact_at {
                0 => format!("ctx {}", fmt::tokens(ctx)),
                at => format!("ctx {}/{}", fmt::tokens(ctx), fmt::tokens(at)),
            };
            segments.push(seg(text, near.then_some(Role::Warning), 6));
        }
        if self.spent > 0 || self.budget > 0 {
            let approx = if self.estimated { "~" } else { "" };
            let near = self.budget > 0 && self.spent.saturating_mul(10) >= self.budget * 9;
            let text = match self.budget {
                0 => format!("spent {approx}{}", fmt::tokens(self.spent)),
                b => format!(
                    "spent {approx}{}/{}",
                    fmt::tokens(self.spent),
                    fmt::tokens(b)
                ),
            };
            segments.push(seg(text, near.then_some(Role::Warning), 3));
        }
        if let Some(turn) = &self.turn {
            segments.push(seg(
                fmt::duration(now_ms.saturating_sub(turn.started_ms)),
                None,
                4,
            ));
        }
        let short: String = self.session_id.chars().take(8).collect();
        if !short.is_empty() {
            segments.push(seg(fmt::clean(&short), None, 0));
        }
        fit(segments, width, theme)
    }
}

/// Joins the segments with ` · ` in their order, keeping the most important ones
/// that fit: each segment, from the highest `keep` down, stays if it still fits
/// (so a short segment survives a longer, more important one that did not).
fn fit(segments: Vec<Segment>, width: u16, theme: &Theme) -> Line<'static> {
    let width = usize::from(width);
    let widths: Vec<usize> = segments
        .iter()
        .map(|s| s.spans.iter().map(|s| fmt::width(&s.content)).sum())
        .collect();
    let mut order: Vec<usize> = (0..segments.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(segments[i].keep));
    let mut kept = vec![false; segments.len()];
    let mut used = 0;
    for (n, &i) in order.iter().enumerate() {
        let need = widths[i] + if used == 0 { 0 } else { 3 };
        // The most important segment always shows (clipped if need be).
        if n == 0 || used + need <= width {
            kept[i] = true;
            used += need;
        }
    }
    let mut spans = Vec::new();
    for (i, segment) in segments.into_iter().enumerate() {
        if !kept[i] {
            continue;
        }
        if !spans.is_empty() {
            spans.push(Span::styled(" · ", theme.style(Role::Dim)));
        }
        spans.extend(segment.spans);
    }
    Line::from(fmt::clip_spans(spans, width))
}

/// What the UI is doing, for the footer's hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FooterState {
    /// The prompt waits for a message.
    Idle,
    /// Ctrl-C was pressed once on an idle prompt.
    ConfirmExit,
    /// A run is in progress.
    Working,
    /// An approval question is open.
    Asking,
    /// A question is open but the input has the keys (Esc, Tab or a typed key
    /// moved them there).
    QuestionWaits,
    /// The user types the message of a denial (`m`).
    DenyMessage,
    /// A reverse history search (Ctrl-R) is open in the input.
    Searching,
    /// A full-screen overlay (transcript, tree, picker, diff) is open.
    Overlay,
}

/// The key hints of `state`, most useful first; the footer drops from the end.
fn hints(state: FooterState) -> &'static [(&'static str, &'static str)] {
    match state {
        FooterState::Idle => &[
            ("⏎", "send"),
            ("Alt⏎/^J", "newline"),
            ("/", "commands"),
            ("@", "files"),
            ("^T", "transcript"),
            ("^D", "exit"),
        ],
        FooterState::ConfirmExit => &[("^C", "again to exit"), ("Esc", "stay")],
        FooterState::Working => &[
            ("⏎", "steer"),
            ("Tab", "queue"),
            ("Esc/^C", "stop"),
            ("^T", "transcript"),
        ],
        FooterState::QuestionWaits => &[
            ("⏎", "steer"),
            ("Esc", "back to the question"),
            ("^C", "stop"),
        ],
        FooterState::Asking => &[
            ("y a A n m", "answer"),
            ("Esc", "type a steer"),
            ("^T", "show all"),
            ("^C", "stop"),
        ],
        FooterState::DenyMessage => &[("⏎", "sends"), ("Esc", "back")],
        FooterState::Searching => &[("⏎", "accept"), ("Esc", "cancel"), ("^R", "older")],
        FooterState::Overlay => &[
            ("↑↓", "move"),
            ("⏎", "select"),
            ("/", "filter"),
            ("Esc", "close"),
        ],
    }
}

/// The footer at `width` columns: as many of the state's hints as fit.
pub fn footer(state: FooterState, width: u16, theme: &Theme) -> Line<'static> {
    let width = usize::from(width);
    let mut spans = Vec::new();
    let mut used = 0;
    for (i, (key, label)) in hints(state).iter().enumerate() {
        let sep = if i == 0 { 0 } else { 3 };
        let need = sep + fmt::width(key) + 1 + fmt::width(label);
        if used + need > width {
            break;
        }
        if i > 0 {
            spans.push(Span::styled(" · ", theme.style(Role::Dim)));
        }
        spans.push(Span::styled(*key, theme.style(Role::Key)));
        spans.push(Span::styled(format!(" {label}"), theme.style(Role::Dim)));
        used += need;
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests;
