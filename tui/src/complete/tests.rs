//! Tests of the completion popups.

use super::*;

fn paths(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn ranked(query: &str, list: &[&str]) -> Vec<String> {
    let candidates = paths(list);
    rank(query, &candidates, 10)
        .into_iter()
        .map(|i| candidates[i].clone())
        .collect()
}

/// Asserts that `query` ranks `candidates` as `want`.
#[track_caller]
fn check(query: &str, candidates: &[&str], want: &[&str]) {
    assert_eq!(
        ranked(query, candidates),
        paths(want),
        "{query:?} among {candidates:?}"
    );
}

/// One ranking test a row, `name: query, [candidates] => [ranked as];` (each a
/// `#[test]` calling `check`).
macro_rules! ranking_tests {
    ($($name:ident: $query:expr, [$($candidate:expr),*] => [$($want:expr),*];)*) => {
        $(
            #[test]
            fn $name() {
                check($query, &[$($candidate),*], &[$($want),*]);
            }
        )*
    };
}

ranking_tests! {
    a_match_at_a_path_segment_beats_one_inside_a_word:
        "main", ["src/domain/mod.rs", "src/main.rs"] => ["src/main.rs", "src/domain/mod.rs"];
    a_contiguous_run_beats_scattered_letters:
        "abc", ["a_b_c.rs", "xabcx.rs", "abc.rs"] => ["abc.rs", "a_b_c.rs", "xabcx.rs"];
    matches_after_an_underscore_beat_matches_mid_word:
        "tc", ["src/latch.rs", "src/tool_card.rs"] => ["src/tool_card.rs", "src/latch.rs"];
    equal_scores_go_to_the_shorter_path:
        "lib", ["core/src/lib.rs", "src/lib.rs", "tui/src/lib.rs"] => ["src/lib.rs", "tui/src/lib.rs", "core/src/lib.rs"];
    an_empty_query_lists_the_shortest_paths_first:
        "", ["b/long.rs", "a.rs", "c.rs"] => ["a.rs", "c.rs", "b/long.rs"];
}

#[test]
fn the_query_must_be_a_case_insensitive_subsequence() {
    check("RME", &["README.md", "src/x.rs"], &["README.md"]);
    assert_eq!(ranked("zz", &["README.md"]), Vec::<String>::new());
}

#[test]
fn positions_mark_the_best_alignment() {
    let mut m = Matcher::new("edr");
    assert_eq!(
        m.positions("tui/src/editor.rs").map(|(_, p)| p),
        Some(vec![8, 9, 15])
    );
    let mut m = Matcher::new("main");
    assert_eq!(
        m.positions("src/domain/main.rs").map(|(_, p)| p),
        Some(vec![11, 12, 13, 14])
    );
}

#[test]
fn fifty_thousand_paths_rank_without_trouble() {
    let candidates: Vec<String> = (0..50_000)
        .map(|i| format!("crate{}/src/module_{}/file_{i}.rs", i % 97, i % 13))
        .collect();
    let best = rank("mod7file_4999", &candidates, 5);
    assert_eq!(
        best.first().map(|&i| candidates[i].as_str()),
        Some("crate52/src/module_7/file_4999.rs")
    );
}

#[test]
fn mentions_are_at_signs_at_the_start_or_after_whitespace() {
    assert_eq!(
        mentions("@src/lib.rs and see @tui/src/editor.rs, mail a@b.c, @src/lib.rs again (@x.md)"),
        paths(&["src/lib.rs", "tui/src/editor.rs"])
    );
    assert_eq!(
        mentions("fix @README.md.\n@Cargo.toml"),
        paths(&["README.md", "Cargo.toml"])
    );
    assert_eq!(mentions("@ alone and @@"), paths(&["@"]));
    assert_eq!(
        mentions("read @\"docs dir/my notes.md\" and @\"unclosed"),
        paths(&["docs dir/my notes.md", "\"unclosed"])
    );
}

/// What the `@` popup writes is a mention of the same path, white space or not.
#[test]
fn a_completed_path_is_mentioned_back_whole() {
    let written: Vec<String> = ["src/lib.rs", "docs dir/my notes.md"]
        .iter()
        .map(|p| super::mention_of(p))
        .collect();
    assert_eq!(
        (written.clone(), mentions(&written.concat())),
        (
            vec![
                "@src/lib.rs ".to_string(),
                "@\"docs dir/my notes.md\" ".to_string()
            ],
            paths(&["src/lib.rs", "docs dir/my notes.md"])
        )
    );
}

#[test]
fn the_file_index_respects_gitignore_and_skips_hidden_files() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    for (path, body) in [
        (".gitignore", "target/\n*.log\n"),
        ("src/main.rs", ""),
        ("src/app.log", ""),
        ("target/debug/xcsh", ""),
        (".hidden/secret", ""),
        ("README.md", ""),
    ] {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("dirs");
        std::fs::write(path, body).expect("a file");
    }
    let index = FileIndex::scan(root, DEFAULT_FILE_LIMIT);
    assert_eq!(index.paths(), paths(&["README.md", "src/main.rs"]));
    assert!(!index.truncated());
    let capped = FileIndex::scan(root, 1);
    assert_eq!((capped.paths().len(), capped.truncated()), (1, true));
}

#[test]
fn the_command_popup_lists_prefix_matches_before_substring_matches() {
    let completer = Completer::new(&[
        ("/label", "name the entry"),
        ("/at", "continue"),
        ("/tree", "tree"),
    ]);
    let popup = completer.popup("/a", 2).expect("a popup");
    let values: Vec<&str> = popup.items().iter().map(|i| i.value.as_str()).collect();
    assert_eq!(values, ["at", "label"]);
    assert!(completer.popup("/a b", 4).is_none());
    assert!(completer.popup("/zzz", 4).is_none());
}

#[test]
fn a_mention_popup_with_no_match_says_so() {
    let mut e = crate::editor::Editor::default();
    e.set_files(Arc::new(FileIndex::from_paths(paths(&["src/main.rs"]))));
    e.on_paste("@qqq");
    let buffer = crate::testkit::draw(40, 2, |f| {
        e.render(Rect::new(0, 0, 40, 2), f.buffer_mut(), &Theme::MONO)
    });
    expect_test::expect![[r#"
        no matching files
        › @qqq
    "#]]
    .assert_eq(&crate::testkit::text(&buffer));
}

#[test]
fn a_long_path_is_shortened_from_the_left() {
    let item = PopupItem {
        value: "core/src/machine/very/deep/path/lib.rs".into(),
        detail: String::new(),
        positions: vec![],
    };
    let line = file_line(&item, 20, &Theme::MONO);
    assert_eq!(
        crate::testkit::lines_text(&[line], 20),
        "…/deep/path/lib.rs\n"
    );
}

#[test]
fn enter_runs_a_command_unless_its_help_names_a_required_argument() {
    let completer = Completer::new(&[
        ("queue", "TEXT: a follow-up"),
        ("model", "[NAME]: show or switch the model"),
        ("usage", "tokens spent: in and out"),
    ]);
    let run = |typed: &str| {
        let popup = completer.popup(typed, typed.len()).expect("a popup");
        popup.command_to_run()
    };
    assert_eq!(run("/que"), None);
    assert_eq!(run("/mo"), Some("/model".into()));
    assert_eq!(run("/us"), Some("/usage".into()));
}

#[test]
fn shorter_prefix_matches_come_first_and_an_alias_takes_its_commands_place() {
    let completer = Completer::new(&[
        ("queue", "TEXT: a follow-up"),
        ("compact", "summarize"),
        ("clear", "clear the screen"),
        ("exit", "leave"),
    ])
    .with_alias("quit", "exit");
    let values = |typed: &str| -> Vec<String> {
        let popup = completer.popup(typed, typed.len()).expect("a popup");
        popup.items().iter().map(|i| i.value.clone()).collect()
    };
    assert_eq!(values("/q"), ["quit", "queue"]);
    assert_eq!(values("/c"), ["clear", "compact"]);
    assert_eq!(values("/"), ["queue", "compact", "clear", "exit"]);
}
