//! Tests of the approval question.

use expect_test::expect;

use super::*;
use crate::testkit::{lines_text, styled};

const FILE: &str = "fn main() {\n    println!(\"hi\");\n}\n";
const EDIT: &str = r#"{"path":"src/main.rs","old_string":"\"hi\"","new_string":"\"hello\""}"#;

fn edit() -> Approval {
    Approval::new(
        "edit",
        EDIT,
        preview("edit", EDIT, Some(FILE), "/work/repo"),
    )
}

fn at(a: &Approval, width: u16, rows: usize, mode: Mode<'_>) -> String {
    lines_text(&a.lines(width, rows, mode, &Theme::COLOR), width)
}

/// The question as the user chooses, at 40 columns and at 120.
fn choosing_at_40_and_120(a: &Approval) -> String {
    crate::testkit::narrow_and_wide(
        at(a, 40, 20, Mode::Choosing),
        at(a, 120, 20, Mode::Choosing),
    )
}

#[test]
fn an_edit_approval_shows_the_diff_of_the_file_as_it_is_now() {
    let a = edit();
    expect![[r#"
        ? allow edit src/main.rs · +1 -1
          @@ -1,3 +1,3 @@
          1 1  fn main() {
          2   -    println!("hi");
            2 +    println!("hello");
          3 3  }
          y once · a always edit
          A this exact call · n deny
          m deny with a message
        ---
        (lines 1-6 as above)
          y once · a always edit · A this exact call · n deny · m deny with a message
    "#]]
    .assert_eq(&choosing_at_40_and_120(&a));
}

/// The header says how many more questions wait behind this one; at a width where
/// the call would not keep 8 columns with it, the count goes first.
#[test]
fn the_header_says_how_many_more_questions_wait_behind_this_one() {
    let args = r#"{"command":"cargo test"}"#;
    let bash = Approval::new("bash", args, preview("bash", args, None, "/w")).with_waiting(2);
    let one_more = edit().with_waiting(1);
    let header = |a: &Approval, width: u16| lines_text(&[a.header(width, &Theme::COLOR)], width);
    expect![[r#"
        ? allow bash · 2 more waiting
        ? allow edit src/main.rs · +1 -1 · 1 more waiting
        ? allow edit src/main.rs · +1 -1 · 1 more waiting
        ? allow edit src/main.rs · +1 -1
        ? allow edit src/main.rs · +1 -1
    "#]]
    .assert_eq(&format!(
        "{}{}{}{}{}",
        header(&bash, 40),
        header(&one_more, 120),
        header(&one_more, 50),
        header(&one_more, 40),
        header(&edit().with_waiting(0), 120),
    ));
    expect![[r#"
        ⟦yellow:? ⟧allow ⟦blue,bold:edit⟧ src/main.rs⟦dim: · ⟧⟦green:+1⟧ ⟦red:-1⟧⟦dim: · 1 more waiting⟧
    "#]].assert_eq(&styled(&[one_more.header(120, &Theme::COLOR)]));
}

#[test]
fn the_answer_keys_are_styled_as_keys() {
    expect![[r#"
        ⟦yellow:? ⟧allow ⟦blue,bold:edit⟧ src/main.rs⟦dim: · ⟧⟦green:+1⟧ ⟦red:-1⟧
          ⟦cyan,bold:y⟧⟦dim: once⟧⟦dim: · ⟧⟦cyan,bold:a⟧⟦dim: always edit⟧⟦dim: · ⟧⟦cyan,bold:A⟧⟦dim: this exact call⟧⟦dim: · ⟧⟦cyan,bold:n⟧⟦dim: deny⟧⟦dim: · ⟧⟦cyan,bold:m⟧⟦dim: deny with a message⟧
    "#]]
    .assert_eq(&styled(&edit().lines(120, 2, Mode::Choosing, &Theme::COLOR)));
}

#[test]
fn a_long_diff_is_cut_to_the_height_budget_and_says_how_to_see_it_all() {
    let content: String = (1..=50).map(|i| format!("line {i}\n")).collect();
    let args = serde_json::json!({"path": "big.txt", "content": content}).to_string();
    let a = Approval::new("write", &args, preview("write", &args, None, "/w"));
    let lines = a.lines(40, 10, Mode::Choosing, &Theme::COLOR);
    assert_eq!(lines.len(), 10);
    expect![[r#"
        ? allow write big.txt · +50
          new file
          @@ -0,0 +1,50 @@
              1 +line 1
              2 +line 2
              3 +line 3
          … 47 more lines (Ctrl-T shows all)
          y once · a always write
          A this exact call · n deny
          m deny with a message
    "#]]
    .assert_eq(&lines_text(&lines, 40));
    assert_eq!(a.preview_lines(40, &Theme::COLOR).len(), 52);
}

#[test]
fn a_bash_approval_shows_the_whole_command_and_where_it_runs() {
    let args = r#"{"command":"cargo build --release && ./target/release/tool --input data/very/long/path.json\necho done","timeout_ms":60000}"#;
    let a = Approval::new(
        "bash",
        args,
        preview("bash", args, None, "/home/user/projects/xcsh"),
    );
    expect![[r#"
        ? allow bash
          $ cargo build --release &&
            ./target/release/tool --input
            data/very/long/path.json
            echo done
          in …/projects/xcsh · timeout 1m 00s
          y once · a always bash
          A this exact call · n deny
          m deny with a message
        ---
        ? allow bash
          $ cargo build --release && ./target/release/tool --input data/very/long/path.json
            echo done
          in /home/user/projects/xcsh · timeout 1m 00s
          y once · a always bash · A this exact call · n deny · m deny with a message
    "#]]
    .assert_eq(&choosing_at_40_and_120(&a));
}

#[test]
fn other_tools_show_their_arguments_pretty_printed() {
    let args = r#"{"target":"prod","flags":["--force"]}"#;
    let a = Approval::new("deploy", args, preview("deploy", args, None, "/w"));
    expect![[r#"
        ? allow deploy {"flags":["--force"],"target":"prod"}
          {
            "flags": [
              "--force"
            ],
            "target": "prod"
          }
          y once · a always deploy · A this exact call · n deny · m deny with a message
    "#]]
    .assert_eq(&at(&a, 120, 20, Mode::Choosing));
}

#[test]
fn an_edit_that_would_not_apply_says_so_and_shows_old_against_new() {
    let a = Approval::new(
        "edit",
        EDIT,
        preview("edit", EDIT, Some("nothing here\n"), "/w"),
    );
    let missing = Approval::new("edit", EDIT, preview("edit", EDIT, None, "/w"));
    expect![[r#"
        ? allow edit src/main.rs · +1 -1
          old_string is not in the file: the edit will fail
          @@ -1 +1 @@
          1   -"hi"
            1 +"hello"
          y once · a always edit · A this exact call · n deny · m deny with a message
        ? allow edit src/main.rs · +1 -1
          the file does not exist: the edit will fail
          @@ -1 +1 @@
          1   -"hi"
            1 +"hello"
          y once · a always edit · A this exact call · n deny · m deny with a message
    "#]]
    .assert_eq(&format!(
        "{}{}",
        at(&a, 120, 8, Mode::Choosing),
        at(&missing, 120, 8, Mode::Choosing),
    ));
}

#[test]
fn typing_a_denial_message_shows_the_text_and_how_to_send_it() {
    let a = edit();
    let mode = Mode::Message {
        text: "use the logger instead of println, it is configured in src/log.rs",
    };
    expect![[r#"
        ? allow edit src/main.rs · +1 -1
          @@ -1,3 +1,3 @@
          … 4 more lines (Ctrl-T shows all)
          deny, and tell the model instead:
          › use the logger instead of println,
            it is configured in src/log.rs▏
          Enter sends · Esc back
        ---
        (lines 1-2 as above)
          1 1  fn main() {
          2   -    println!("hi");
            2 +    println!("hello");
          3 3  }
          deny, and tell the model instead:
          › use the logger instead of println, it is configured in src/log.rs▏
          Enter sends · Esc back
    "#]]
    .assert_eq(&crate::testkit::narrow_and_wide(
        at(&a, 40, 7, mode),
        at(&a, 120, 20, mode),
    ));
}

#[test]
fn keys_map_to_choices_and_scopes() {
    let keys: Vec<Option<Choice>> = "yaAnmx".chars().map(Choice::from_key).collect();
    assert_eq!(
        keys,
        [
            Some(Choice::Once),
            Some(Choice::Tool),
            Some(Choice::Call),
            Some(Choice::Deny),
            Some(Choice::DenyWithMessage),
            None
        ]
    );
    assert_eq!(Choice::Tool.scope(), Some(ApprovalScope::Tool));
    assert_eq!(Choice::DenyWithMessage.scope(), None);
}

#[test]
fn the_question_never_overflows_its_width_or_its_rows() {
    let a = edit();
    for w in 1..=40 {
        for rows in [1, 3, 6, 30] {
            for mode in [
                Mode::Choosing,
                Mode::Message {
                    text: "日本語のメッセージ",
                },
            ] {
                let lines = a.lines(w, rows, mode, &Theme::MONO);
                assert!(
                    lines.iter().all(|l| l.width() <= usize::from(w)),
                    "width {w}"
                );
                let tail = a.tail(w, mode, &Theme::MONO).len();
                assert!(lines.len() <= rows.max(tail), "width {w} rows {rows}");
            }
        }
    }
}
