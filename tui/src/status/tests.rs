//! Tests of the status line.

use expect_test::expect;

use super::*;
use crate::testkit::{lines_text, styled};

fn working() -> Status {
    Status {
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        permissions: Permissions::Ask,
        sandbox: Some("workspace-write".into()),
        session_id: "0199a3f2-7c1e-7d2b-9a44-1b2c3d4e5f60".into(),
        turn: Some(Turn {
            step: 3,
            max_steps: 32,
            started_ms: 10_000,
        }),
        context_tokens: Some(41_200),
        compact_at: 100_000,
        spent: 120_000,
        budget: 1_000_000,
        estimated: false,
        retry: None,
    }
}

fn both(status: &Status, now_ms: u64) -> String {
    format!(
        "{}{}",
        lines_text(&[status.line(40, now_ms, &Theme::COLOR)], 40),
        lines_text(&[status.line(120, now_ms, &Theme::COLOR)], 120)
    )
}

#[test]
fn the_working_status_line_at_40_and_120_columns() {
    expect![[r#"
        claude-sonnet-4-5 · ask · step 3/32
        anthropic · claude-sonnet-4-5 · ask · sandbox workspace-write · step 3/32 · ctx 41k/100k · spent 120k/1M · 14.0s
    "#]]
    .assert_eq(&both(&working(), 24_000));
}

#[test]
fn an_idle_status_line_without_budget_shows_just_the_spend() {
    let idle = Status {
        turn: None,
        sandbox: None,
        budget: 0,
        spent: 3_400,
        estimated: true,
        permissions: Permissions::Yolo,
        ..working()
    };
    expect![[r#"
        claude-sonnet-4-5 · yolo · ctx 41k/100k
        anthropic · claude-sonnet-4-5 · yolo · ctx 41k/100k · spent ~3.4k · 0199a3f2
    "#]]
    .assert_eq(&both(&idle, 0));
}

#[test]
fn a_retry_is_shown_first_as_a_warning_and_counts_down() {
    let status = Status {
        retry: Some(Retry {
            reason: "429 rate limited".into(),
            at_ms: 12_000,
        }),
        ..working()
    };
    expect![[r#"
        retrying in 2s: 429 rate limited · ask
        retrying in 2s: 429 rate limited · anthropic · claude-sonnet-4-5 · ask · step 3/32 · ctx 41k/100k · spent 120k/1M · 0.5s
    "#]]
    .assert_eq(&both(&status, 10_500));
    let line = status.line(120, 10_500, &Theme::COLOR);
    assert_eq!(
        styled(&[line]).split('·').next(),
        Some("⟦yellow:retrying in 2s: 429 rate limited⟧⟦dim: ")
    );
}

#[test]
fn context_near_the_threshold_and_spend_near_the_budget_are_warnings() {
    let status = Status {
        context_tokens: Some(85_000),
        spent: 950_000,
        sandbox: None,
        session_id: String::new(),
        provider: "p".into(),
        ..working()
    };
    expect![[r#"
        ⟦dim:p⟧⟦dim: · ⟧claude-sonnet-4-5⟦dim: · ⟧⟦dim:ask⟧⟦dim: · ⟧step 3/32⟦dim: · ⟧⟦yellow:ctx 85k/100k⟧⟦dim: · ⟧⟦yellow:spent 950k/1M⟧⟦dim: · ⟧⟦dim:0.0s⟧
    "#]]
    .assert_eq(&styled(&[status.line(120, 10_000, &Theme::COLOR)]));
}

#[test]
fn the_status_line_never_overflows() {
    let status = working();
    for w in 1..=40 {
        assert!(
            status.line(w, 24_000, &Theme::MONO).width() <= usize::from(w),
            "width {w}"
        );
    }
}

#[test]
fn the_footer_hints_follow_the_state_and_fit_40_columns() {
    let mut text = String::new();
    for state in [
        FooterState::Idle,
        FooterState::ConfirmExit,
        FooterState::Working,
        FooterState::Asking,
        FooterState::QuestionWaits,
        FooterState::DenyMessage,
        FooterState::Searching,
        FooterState::Overlay,
    ] {
        for w in [40, 120] {
            let line = footer(state, w, &Theme::COLOR);
            assert!(line.width() <= usize::from(w));
            text.push_str(&lines_text(&[line], w));
        }
    }
    expect![[r#"
        ⏎ send · Alt⏎/^J newline · / commands
        ⏎ send · Alt⏎/^J newline · / commands · @ files · ^T transcript · ^D exit
        ^C again to exit · Esc stay
        ^C again to exit · Esc stay
        ⏎ steer · Tab queue · Esc/^C stop
        ⏎ steer · Tab queue · Esc/^C stop · ^T transcript
        y a A n m answer · Esc type a steer
        y a A n m answer · Esc type a steer · ^T show all · ^C stop
        ⏎ steer · Esc back to the question
        ⏎ steer · Esc back to the question · ^C stop
        ⏎ sends · Esc back
        ⏎ sends · Esc back
        ⏎ accept · Esc cancel · ^R older
        ⏎ accept · Esc cancel · ^R older
        ↑↓ move · ⏎ select · / filter
        ↑↓ move · ⏎ select · / filter · Esc close
    "#]]
    .assert_eq(&text);
    expect![[r#"
        ⟦cyan,bold:^C⟧⟦dim: again to exit⟧⟦dim: · ⟧⟦cyan,bold:Esc⟧⟦dim: stay⟧
    "#]]
    .assert_eq(&styled(&[footer(
        FooterState::ConfirmExit,
        40,
        &Theme::COLOR,
    )]));
}
