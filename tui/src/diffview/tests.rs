//! Tests of the unified diff view.

use expect_test::expect;

use super::*;
use crate::testkit::{lines_text, styled};

const BEFORE: &str = "fn main() {\n    let a = 1;\n    let b = 2;\n    println!(\"{}\", a + b);\n}\n\nfn helper() -> u32 {\n    1\n}\n\nfn other() {}\nfn more() {}\nfn last() {}\n";

fn after() -> String {
    BEFORE
        .replace("let b = 2;", "let b = 40;\n    let c = 2;")
        .replace("fn last() {}", "fn last() -> bool { true }")
}

#[test]
fn a_two_hunk_diff_has_headers_gutters_and_markers_at_120_columns() {
    let diff = Diff::new(Some(BEFORE), &after());
    assert_eq!(
        diff.stat(),
        DiffStat {
            added: 3,
            removed: 2
        }
    );
    expect![[r#"
        @@ -1,6 +1,7 @@
         1  1  fn main() {
         2  2      let a = 1;
         3    -    let b = 2;
            3 +    let b = 40;
            4 +    let c = 2;
         4  5      println!("{}", a + b);
         5  6  }
         6  7
        @@ -10,4 +11,4 @@
        10 11
        11 12  fn other() {}
        12 13  fn more() {}
        13    -fn last() {}
           14 +fn last() -> bool { true }
    "#]]
    .assert_eq(&lines_text(&diff.lines(120, &Theme::COLOR), 120));
}

#[test]
fn removed_and_added_lines_carry_the_diff_roles_and_the_gutter_is_dim() {
    let diff = Diff::new(Some("a\nb\n"), "a\nc\n");
    expect![[r#"
        ⟦cyan,dim:@@ -1,2 +1,2 @@⟧
        ⟦dim:1 1 ⟧ a
        ⟦dim:2   ⟧⟦red:-⟧⟦red:b⟧
        ⟦dim:  2 ⟧⟦green:+⟧⟦green:c⟧
    "#]]
    .assert_eq(&styled(&diff.lines(40, &Theme::COLOR)));
}

#[test]
fn long_lines_wrap_under_the_gutter_at_40_columns() {
    let before = "short\n";
    let after = "short\nthis added line is long enough that it has to wrap at forty columns\n";
    expect![[r#"
        @@ -1 +1,2 @@
        1 1  short
          2 +this added line is long enough that
             it has to wrap at forty columns
    "#]]
    .assert_eq(&lines_text(
        &Diff::new(Some(before), after).lines(40, &Theme::COLOR),
        40,
    ));
}

#[test]
fn a_new_file_is_all_added_lines_with_only_new_numbers() {
    let diff = Diff::new(None, "one\ntwo\nthree\n");
    assert_eq!(
        diff.stat(),
        DiffStat {
            added: 3,
            removed: 0
        }
    );
    expect![[r#"
        @@ -0,0 +1,3 @@
          1 +one
          2 +two
          3 +three
    "#]]
    .assert_eq(&lines_text(&diff.lines(40, &Theme::COLOR), 40));
}

#[test]
fn a_long_diff_is_cut_with_the_count_of_hidden_rows_and_the_hint() {
    let diff = Diff::new(Some(BEFORE), &after());
    let lines = diff.lines_cut(120, 5, " (Ctrl-T shows all)", &Theme::COLOR);
    expect![[r#"
        @@ -1,6 +1,7 @@
         1  1  fn main() {
         2  2      let a = 1;
         3    -    let b = 2;
        … 11 more lines (Ctrl-T shows all)
    "#]]
    .assert_eq(&lines_text(&lines, 120));
}

/// At a width where its lines wrap, the count is of the diff's lines left out, as
/// at 120 columns, not of the screen rows they would take.
#[test]
fn a_cut_diff_counts_lines_not_wrapped_rows() {
    let diff = Diff::new(Some(BEFORE), &after());
    let hidden = |width| {
        let lines = diff.lines_cut(width, 5, "", &Theme::COLOR);
        let text = lines_text(&lines, width);
        let last = text.lines().last().unwrap_or("").to_owned();
        last.split_whitespace().nth(1).map(str::to_owned)
    };
    // At 30 columns some lines wrap: more rows than lines.
    let rows = |width| diff.lines(width, &Theme::COLOR).len();
    assert_eq!(
        (hidden(120), hidden(30), rows(30) > rows(120)),
        (Some("11".into()), Some("11".into()), true)
    );
}

#[test]
fn the_stat_reads_like_git_diff_stat() {
    let stat = Diff::new(Some(BEFORE), &after()).stat();
    expect![[r#"
        ⟦green:+3⟧ ⟦red:-2⟧
    "#]]
    .assert_eq(&styled(&[Line::from(stat.spans(&Theme::COLOR))]));
    let none = Diff::new(Some("same\n"), "same\n");
    assert!(none.is_empty());
    assert_eq!(
        styled(&[Line::from(none.stat().spans(&Theme::MONO))]),
        "⟦dim:no changes⟧\n"
    );
}

#[test]
fn escape_sequences_in_a_diff_are_shown_not_obeyed_and_tiny_widths_do_not_panic() {
    let diff = Diff::new(Some("a\n"), "\x1b]52;c;evil\x07\n");
    let text = lines_text(&diff.lines(40, &Theme::MONO), 40);
    assert!(text.contains("␛]52;c;evil␇"), "{text}");
    for w in 1..=12 {
        let lines = diff.lines(w, &Theme::MONO);
        assert!(
            lines.iter().all(|l| l.width() <= usize::from(w)),
            "width {w}"
        );
    }
}

#[test]
fn the_first_versions_unified_api_still_gives_the_whole_diff() {
    let lines = unified("a\n", "b\n", &Theme::MONO);
    assert_eq!(lines_text(&lines, 40), "@@ -1 +1 @@\n1   -a\n  1 +b\n");
}
