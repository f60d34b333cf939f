//! The file index walked again: what changed in the workspace since the first walk.

use std::path::Path;
use std::sync::Arc;

use super::{DEFAULT_FILE_LIMIT, FileIndex};
use crate::complete::Completer;

fn write(root: &Path, path: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("dirs");
    std::fs::write(path, "").expect("a file");
}

#[test]
fn a_file_created_after_the_first_walk_is_listed_once_refreshed() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    for path in [".gitignore", "src/main.rs", "old.txt"] {
        write(root, path);
    }
    std::fs::write(root.join(".gitignore"), "target/\n").expect("a file");
    let mut index = FileIndex::scan(root, DEFAULT_FILE_LIMIT);
    assert_eq!(index.paths(), ["old.txt", "src/main.rs"]);

    write(root, "src/parser.rs");
    write(root, "target/debug/xcsh");
    std::fs::remove_file(root.join("old.txt")).expect("removed");
    assert_eq!(
        index.paths(),
        ["old.txt", "src/main.rs"],
        "not walked again yet"
    );
    index.refresh();
    assert_eq!(index.paths(), ["src/main.rs", "src/parser.rs"]);

    // The popup of `@pars` finds it in the refreshed index.
    let mut completer = Completer::default();
    completer.set_files(Arc::new(index));
    let popup = completer.popup("@pars", 5).expect("a popup");
    let values: Vec<&str> = popup.items().iter().map(|i| i.value.as_str()).collect();
    assert_eq!(values, ["src/parser.rs"]);
}

#[test]
fn walking_again_keeps_the_limit_of_the_first_walk() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    write(root, "a.txt");
    let capped = FileIndex::scan(root, 1);
    write(root, "b.txt");
    let again = capped.refreshed();
    assert_eq!((again.paths().len(), again.truncated()), (1, true));
}

#[test]
fn an_index_of_given_paths_stays_as_it_is_when_refreshed() {
    let given = FileIndex::from_paths(vec!["b.rs".into(), "a.rs".into()]);
    assert_eq!(given.refreshed(), given);
}
