//! Tests of the tool cards.

use expect_test::{Expect, expect};

use super::*;
use crate::testkit::{lines_text, narrow_and_wide, styled};

fn card(name: &str, arguments: &str) -> ToolCard {
    ToolCard::new(CallId("call_1".into()), name, arguments)
}

fn ok(content: &str, duration_ms: u64) -> ToolFinish {
    ToolFinish {
        status: ToolStatus::Ok,
        content: content.into(),
        duration_ms,
        synthetic: None,
        before: Before::NotRecorded,
    }
}

/// The card at 40 and at 120 columns, one snapshot.
fn both(card: &ToolCard, now_ms: u64, want: Expect) {
    let text = narrow_and_wide(
        lines_text(&card.lines(40, now_ms, &Theme::COLOR), 40),
        lines_text(&card.lines(120, now_ms, &Theme::COLOR), 120),
    );
    want.assert_eq(&text);
}

const BASH_OK: &str = "exit code: 0\nduration: 3200 ms\nstdout:\nline 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nstderr: (empty)";

#[test]
fn a_running_bash_card_shows_spinner_elapsed_time_and_the_live_tail() {
    let mut c = card(
        "bash",
        r#"{"command":"cargo test --workspace --all-features -- --nocapture"}"#,
    );
    c.start(1_000);
    for i in 1..=8 {
        c.push_output(&format!("test t{i} ... ok\n"));
    }
    c.push_output("running 3 te");
    both(
        &c,
        4_240,
        expect![[r#"
            ⠸ bash cargo test --workspace --… · 3.2s
              └ … 4 earlier lines
                test t5 ... ok
                test t6 ... ok
                test t7 ... ok
                test t8 ... ok
                running 3 te
            ---
            ⠸ bash cargo test --workspace --all-features -- --nocapture · 3.2s
            (lines 2-7 as above)
        "#]],
    );
}

#[test]
fn the_spinner_frame_follows_the_clock() {
    let mut c = card("bash", r#"{"command":"sleep 1"}"#);
    c.start(0);
    let frames: String = [0, 80, 160, 800]
        .iter()
        .map(|t| {
            c.lines(40, *t, &Theme::MONO)[0].spans[0]
                .content
                .to_string()
        })
        .collect();
    assert_eq!(frames, "⠋⠙⠹⠋");
}

#[test]
fn the_transient_tail_is_bounded_and_a_carriage_return_redraws_the_line() {
    let mut tail = TransientTail::default();
    for i in 0..(TRANSIENT_KEEP + 10) {
        tail.push(&format!("{i}\n"));
    }
    tail.push("progress 10%\rprogress 90%");
    let (earlier, shown) = tail.tail(2);
    assert_eq!(
        (earlier, shown),
        (TRANSIENT_KEEP + 9, vec!["73", "progress 90%"])
    );
    assert_eq!(tail.lines.len(), TRANSIENT_KEEP);
    tail.push(&"x".repeat(5_000));
    assert_eq!(tail.partial.len(), TRANSIENT_LINE_BYTES);
}

#[test]
fn a_finished_bash_card_shows_the_exit_code_and_the_last_lines() {
    let mut c = card("bash", r#"{"command":"make\nmake install"}"#);
    c.start(0);
    c.push_output("transient\n");
    c.finish(ok(BASH_OK, 3_200));
    both(
        &c,
        9_999,
        expect![[r#"
            ✓ bash make … · exit 0 · 3.2s
              └ … 2 earlier lines
                line 3
                line 4
                line 5
                line 6
                line 7
            ---
            (the same at 120 columns)
        "#]],
    );
}

/// A line of 5,000 characters takes two rows in history, not the screen; the
/// transcript has it whole.
#[test]
fn a_huge_output_line_takes_two_rows_in_history() {
    let mut c = card("bash", r#"{"command":"cat min.js"}"#);
    c.finish(ok(
        &format!(
            "exit code: 0\nduration: 5 ms\nstdout:\n{}\nstderr: (empty)",
            "x".repeat(5000)
        ),
        5,
    ));
    let rows = |full: bool| {
        let lines = if full {
            c.lines_full(40, 10, &Theme::MONO)
        } else {
            c.lines(40, 10, &Theme::MONO)
        };
        lines_text(&lines, 40).lines().count()
    };
    assert_eq!((rows(false), rows(true) > 100), (3, true));
}

/// The transcript shows a long one-line command whole, under the cut header.
#[test]
fn the_transcript_shows_a_long_one_line_command_whole() {
    let command = format!("for i in $(seq 1 30); do echo {}; done", "word ".repeat(12));
    let mut c = card(
        "bash",
        &serde_json::json!({ "command": command }).to_string(),
    );
    c.finish(ok(BASH_OK, 5));
    let text = |full: bool| {
        let lines = if full {
            c.lines_full(50, 10, &Theme::MONO)
        } else {
            c.lines(50, 10, &Theme::MONO)
        };
        lines_text(&lines, 50).replace('\n', " ")
    };
    assert_eq!(
        (text(false).contains("done"), text(true).contains("done")),
        (false, true)
    );
}

#[test]
fn a_failing_bash_card_is_red_with_its_exit_code() {
    let mut c = card("bash", r#"{"command":"false"}"#);
    c.finish(ToolFinish {
        status: ToolStatus::Error,
        content: "exit code: 1\nduration: 5 ms\nstdout: (empty)\nstderr:\nerror: boom".into(),
        ..ok("", 5)
    });
    expect![[r#"
        ⟦red,bold:✗⟧ ⟦blue,bold:bash⟧ false⟦dim: · ⟧⟦red,bold:exit 1⟧⟦dim: · ⟧⟦dim:0.0s⟧
        ⟦dim:  └ ⟧⟦dim:error: boom⟧
    "#]]
    .assert_eq(&styled(&c.lines(40, 0, &Theme::COLOR)));
}

#[test]
fn a_timed_out_bash_card_says_so() {
    let mut c = card("bash", r#"{"command":"sleep 30","timeout_ms":100}"#);
    c.finish(ToolFinish {
        status: ToolStatus::Error,
        content: "timed out after 100 ms; process group 7 was killed\nexit code: none (killed by signal 9)\nduration: 101 ms\nstdout: (empty)\nstderr: (empty)".into(),
        ..ok("", 101)
    });
    both(
        &c,
        0,
        expect![[r#"
            ✗ bash sleep 30 · signal 9 · 0.1s
              └ timed out after 100 ms; process
                group 7 was killed
            ---
            ✗ bash sleep 30 · signal 9 · 0.1s
              └ timed out after 100 ms; process group 7 was killed
        "#]],
    );
}

#[test]
fn an_edit_card_shows_the_diff_from_the_recorded_file_content() {
    let before = "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n";
    let mut c = card(
        "edit",
        r#"{"path":"core/src/tools/some/deeply/nested/module.rs","old_string":"    2\n","new_string":"    20\n    21\n"}"#,
    );
    c.finish(ToolFinish {
        before: Before::Content(before.into()),
        ..ok("edited `x`: replaced 1 occurrence", 12)
    });
    both(
        &c,
        0,
        expect![[r#"
            ✓ edit …/nested/module.rs · +2 -1 · 0.0s
              └ @@ -3,5 +3,6 @@
                3 3  }
                4 4
                5 5  fn b() {
                6   -    2
                  6 +    20
                  7 +    21
                7 8  }
            ---
            ✓ edit core/src/tools/some/deeply/nested/module.rs · +2 -1 · 0.0s
            (lines 2-9 as above)
        "#]],
    );
}

#[test]
fn an_edit_without_a_recorded_change_diffs_old_string_against_new_string() {
    let mut c = card(
        "edit",
        r#"{"path":"a.rs","old_string":"x","new_string":"y"}"#,
    );
    c.finish(ok("edited", 1));
    expect![[r#"
        ✓ edit a.rs · +1 -1 · 0.0s
          └ @@ -1 +1 @@
            1   -x
              1 +y
    "#]]
    .assert_eq(&lines_text(&c.lines(40, 0, &Theme::COLOR), 40));
}

#[test]
fn a_write_card_of_a_new_file_is_all_additions_and_long_diffs_are_cut() {
    let content: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let args = serde_json::json!({"path": "notes.md", "content": content}).to_string();
    let mut c = card("write", &args);
    c.finish(ToolFinish {
        before: Before::Created,
        ..ok("created `notes.md` (40 lines, 292 bytes)", 2)
    });
    let lines = c.lines(40, 0, &Theme::COLOR);
    assert_eq!(lines.len(), 1 + DIFF_LINES);
    expect![[r#"
        ✓ write notes.md · +40 · 0.0s
          └ @@ -0,0 +1,40 @@
                1 +line 1
                2 +line 2
                3 +line 3
                4 +line 4
                5 +line 5
                6 +line 6
                7 +line 7
                8 +line 8
                9 +line 9
               10 +line 10
               11 +line 11
               12 +line 12
               13 +line 13
               14 +line 14
            … 26 more lines (Ctrl-T shows all)
    "#]]
    .assert_eq(&lines_text(&lines, 40));
    assert_eq!(c.lines_full(40, 0, &Theme::COLOR).len(), 1 + 41);
}

#[test]
fn read_only_tools_show_their_call_and_a_one_line_count() {
    let cases = [
        (
            "read",
            r#"{"path":"src/lib.rs","offset":10,"limit":21}"#,
            "    10\ta\n    11\tb\n[lines 10-11 of 90 shown; continue with offset 12]",
        ),
        (
            "list",
            r#"{"path":"src","recursive":true}"#,
            "a.rs\nb/\nb/c.rs",
        ),
        (
            "grep",
            r#"{"pattern":"fn main","path":"src","glob":"*.rs"}"#,
            "src/main.rs:3:fn main() {\nsrc/bin/x.rs:1:fn main() {}",
        ),
        ("glob", r#"{"pattern":"**/*.toml"}"#, "Cargo.toml"),
    ];
    let at = |width| -> String {
        cases
            .iter()
            .map(|(name, args, content)| {
                let mut c = card(name, args);
                c.finish(ok(content, 3));
                lines_text(&c.lines(width, 0, &Theme::COLOR), width)
            })
            .collect()
    };
    let text = narrow_and_wide(at(40), at(120));
    expect![[r#"
        ✓ read src/lib.rs:10-30 · 0.0s
          └ read 2 lines of 90
        ✓ list src (recursive) · 0.0s
          └ 3 entries
        ✓ grep fn main in src (*.rs) · 0.0s
          └ 2 matches in 2 files
        ✓ glob **/*.toml · 0.0s
          └ 1 file
        ---
        (the same at 120 columns)
    "#]]
    .assert_eq(&text);
}

#[test]
fn errors_denials_and_cancellations_look_different() {
    let mut failed = card("read", r#"{"path":"missing.rs"}"#);
    failed.finish(ToolFinish {
        status: ToolStatus::Error,
        content: "`missing.rs` does not exist; use `list` or `glob` to find files".into(),
        ..ok("", 1)
    });
    let mut denied = card("write", r#"{"path":"a.rs","content":"x"}"#);
    denied.finish(ToolFinish {
        status: ToolStatus::Error,
        content: "denied: the user did not allow `write`; the call was not run".into(),
        synthetic: Some(SyntheticReason::Denied),
        ..ok("", 0)
    });
    let mut cancelled = card("bash", r#"{"command":"sleep 30"}"#);
    cancelled.start(0);
    cancelled.finish(ToolFinish {
        status: ToolStatus::Cancelled,
        content: "bash cancelled by the user; side effects it already had were not undone; process group 9 was killed\nexit code: none (killed by signal 9)\nduration: 800 ms\nstdout: (empty)\nstderr: (empty)".into(),
        ..ok("", 800)
    });
    let mut text = String::new();
    for c in [&failed, &denied, &cancelled] {
        text.push_str(&styled(&c.lines(120, 0, &Theme::COLOR)));
    }
    expect![[r#"
        ⟦red,bold:✗⟧ ⟦blue,bold:read⟧ missing.rs⟦dim: · ⟧⟦dim:0.0s⟧
        ⟦dim:  └ ⟧⟦red,bold:`missing.rs` does not exist; use `list` or `glob` to find files⟧
        ⟦yellow:⊘⟧ ⟦blue,bold:write⟧ a.rs⟦dim: · ⟧⟦yellow:denied⟧
        ⟦dim:  └ ⟧⟦yellow:denied: the user did not allow `write`; the call was not run⟧
        ⟦yellow:■⟧ ⟦blue,bold:bash⟧ sleep 30⟦dim: · ⟧⟦yellow:cancelled⟧⟦dim: · ⟧⟦dim:signal 9⟧⟦dim: · ⟧⟦dim:0.8s⟧
    "#]]
    .assert_eq(&text);
}

#[test]
fn waiting_cards_and_unknown_tools_and_broken_arguments_still_render() {
    let mut asking = card(
        "edit",
        r#"{"path":"src/main.rs","old_string":"a","new_string":"b"}"#,
    );
    asking.ask();
    let queued = card("deploy", r#"{"target": "prod", "dry_run": false}"#);
    let broken = card("read", "{\"path\": \x1b[31m");
    let mut text = String::new();
    for width in [40, 120] {
        for c in [&asking, &queued, &broken] {
            text.push_str(&lines_text(&c.lines(width, 0, &Theme::COLOR), width));
        }
    }
    expect![[r#"
        ? edit …/main.rs · waiting for approval
        ○ deploy {"dry_run":false,"ta… · waiting
        ○ read {"path": ␛[31m · waiting
        ? edit src/main.rs · waiting for approval
        ○ deploy {"dry_run":false,"target":"prod"} · waiting
        ○ read {"path": ␛[31m · waiting
    "#]]
    .assert_eq(&text);
}

#[test]
fn no_card_state_overflows_or_panics_at_narrow_widths() {
    let mut cards = Vec::new();
    let mut running = card("bash", r#"{"command":"echo 日本語日本語日本語"}"#);
    running.start(0);
    running.push_output("日本語日本語日本語日本語\n");
    cards.push(running);
    let mut edit = card(
        "edit",
        r#"{"path":"a/very/long/path/to/file.rs","old_string":"x","new_string":"y"}"#,
    );
    edit.finish(ok("edited", 1));
    cards.push(edit);
    let mut bash = card("bash", r#"{"command":"x"}"#);
    bash.finish(ok(BASH_OK, 1));
    cards.push(bash);
    for c in &cards {
        for w in 1..=40 {
            for line in c.lines(w, 100, &Theme::MONO) {
                assert!(line.width() <= usize::from(w), "width {w}: {line:?}");
            }
        }
    }
}
