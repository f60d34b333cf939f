//! Unit tests of the before-image store.

use super::*;

fn store() -> (tempfile::TempDir, BlobStore) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = BlobStore::new(dir.path().join("blobs"));
    (dir, store)
}

fn dispatch(dir: &Path, entry: u64) -> Dispatch {
    let session_path = dir.join("s.jsonl");
    std::fs::write(&session_path, "").expect("session file");
    Dispatch {
        session_id: "sess-1".into(),
        session_path,
        entry: EntryId(entry),
    }
}

/// The names in the store's directory, sorted.
fn names(store: &BlobStore) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(store.dir())
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn the_same_content_is_stored_once_under_its_blake3_name() {
    let (_dir, store) = store();
    let a = store.put(b"hello\n").expect("put");
    let b = store.put(b"hello\n").expect("put again");
    assert_eq!(a, b);
    assert_eq!(a, BlobId(blake3::hash(b"hello\n").to_hex().to_string()));
    assert_eq!(names(&store), vec![a.0.clone(), "lock".to_owned()]);
    assert_eq!(
        std::fs::read(store.blob_path(&a)).expect("read"),
        b"hello\n"
    );
}

#[test]
fn a_blob_is_written_beside_under_a_temporary_name_and_renamed_whole() {
    let (_dir, store) = store();
    // A temporary file a writer that died left behind is never taken for the blob.
    std::fs::create_dir_all(store.dir()).expect("mkdir");
    std::fs::write(store.dir().join(".tmp-1-0"), "half").expect("temp");
    let id = store.put(b"whole content").expect("put");
    assert_eq!(
        std::fs::read(store.blob_path(&id)).expect("read"),
        b"whole content"
    );
    // A blob cut short (its length differs from the content's) is rewritten.
    std::fs::write(store.blob_path(&id), "whole").expect("truncate");
    assert_eq!(store.put(b"whole content").expect("put"), id);
    assert_eq!(
        std::fs::read(store.blob_path(&id)).expect("read"),
        b"whole content"
    );
    let swept = store.sweep().expect("sweep");
    assert_eq!(
        swept,
        Swept {
            manifests: 0,
            blobs: 1,
            temps: 1
        }
    );
    assert_eq!(names(&store), vec!["lock".to_owned()]);
}

#[test]
fn a_manifest_names_two_files_one_of_which_did_not_exist() {
    let (dir, store) = store();
    let d = dispatch(dir.path(), 7);
    let a = dir.path().join("a.txt");
    let b = dir.path().join("b.txt");
    let saved = store
        .save(
            &d,
            &CallId("call_1".into()),
            "write",
            &[
                BeforeImage {
                    path: &a,
                    before: Some(b"old a\n"),
                    after: b"new a\n",
                },
                BeforeImage {
                    path: &b,
                    before: None,
                    after: b"new b\n",
                },
            ],
        )
        .expect("save");
    let expected = Manifest {
        version: MANIFEST_VERSION,
        session_id: "sess-1".into(),
        session_path: d.session_path.clone(),
        entry: EntryId(7),
        call_id: CallId("call_1".into()),
        tool: "write".into(),
        files: vec![
            ManifestFile {
                path: a.clone(),
                before: Some(BlobId::of(b"old a\n")),
                after: blake3::hash(b"new a\n").to_hex().to_string(),
            },
            ManifestFile {
                path: b.clone(),
                before: None,
                after: blake3::hash(b"new b\n").to_hex().to_string(),
            },
        ],
    };
    assert_eq!(saved, expected);
    assert_eq!(
        store.manifest("sess-1", EntryId(7)).expect("read"),
        Some(expected.clone())
    );
    assert_eq!(store.manifest("sess-1", EntryId(8)).expect("read"), None);
    assert_eq!(
        store.manifests_of("sess-1").expect("list"),
        vec![expected.clone()]
    );
    assert_eq!(store.manifests_of("sess-2").expect("list"), Vec::new());

    // Restoring puts a back byte for byte and removes b.
    std::fs::write(&a, "new a\n").expect("a");
    std::fs::write(&b, "new b\n").expect("b");
    for file in &expected.files {
        store.restore(file).expect("restore");
    }
    assert_eq!(std::fs::read(&a).expect("a"), b"old a\n");
    assert!(!b.exists());
    // Restoring again changes nothing (b is already gone).
    for file in &expected.files {
        store.restore(file).expect("restore twice");
    }
    assert_eq!(std::fs::read(&a).expect("a"), b"old a\n");
}

#[test]
fn a_missing_file_and_a_missing_manifest_are_told_apart_from_damage() {
    let (dir, store) = store();
    // Nothing stored yet: no manifest, no error.
    assert_eq!(store.manifest("sess-1", EntryId(1)).expect("read"), None);
    assert_eq!(store.manifests_of("sess-1").expect("list"), Vec::new());
    // A blob that is gone cannot be restored, and says which.
    let target = dir.path().join("t.txt");
    std::fs::write(&target, "now").expect("t");
    let gone = ManifestFile {
        path: target.clone(),
        before: Some(BlobId::of(b"never stored")),
        after: String::new(),
    };
    let err = store.restore(&gone).expect_err("no blob");
    assert!(
        err.to_string().starts_with(
            &store
                .blob_path(&BlobId::of(b"never stored"))
                .display()
                .to_string()
        ),
        "{err}"
    );
    assert_eq!(std::fs::read(&target).expect("t"), b"now");
    // A blob whose content is not its name is refused and the target is untouched.
    let id = store.put(b"right").expect("put");
    std::fs::write(store.blob_path(&id), "wrong").expect("damage");
    let damaged = ManifestFile {
        path: target.clone(),
        before: Some(id),
        after: String::new(),
    };
    assert!(matches!(
        store.restore(&damaged),
        Err(BlobError::Damaged { .. })
    ));
    assert_eq!(std::fs::read(&target).expect("t"), b"now");
    // A damaged manifest is an error naming it.
    let path = store.manifest_path("sess-1", EntryId(3));
    std::fs::write(&path, "{").expect("manifest");
    let err = store.manifest("sess-1", EntryId(3)).expect_err("malformed");
    assert!(
        err.to_string()
            .starts_with(&format!("{}: not a before-image manifest", path.display())),
        "{err}"
    );
}

#[test]
fn release_removes_the_manifest_and_the_blobs_only_it_named() {
    let (dir, store) = store();
    let shared = dir.path().join("shared.txt");
    let own = dir.path().join("own.txt");
    let first = dispatch(dir.path(), 3);
    let second = dispatch(dir.path(), 5);
    store
        .save(
            &first,
            &CallId("c1".into()),
            "edit",
            &[
                BeforeImage {
                    path: &shared,
                    before: Some(b"shared"),
                    after: b"x",
                },
                BeforeImage {
                    path: &own,
                    before: Some(b"only the first"),
                    after: b"y",
                },
            ],
        )
        .expect("save first");
    store
        .save(
            &second,
            &CallId("c2".into()),
            "edit",
            &[BeforeImage {
                path: &shared,
                before: Some(b"shared"),
                after: b"z",
            }],
        )
        .expect("save second");
    let swept = store
        .release(&[("sess-1".into(), EntryId(3))])
        .expect("release");
    assert_eq!(
        swept,
        Swept {
            manifests: 0,
            blobs: 1,
            temps: 0
        }
    );
    let mut expected = vec![
        BlobId::of(b"shared").0,
        "lock".to_owned(),
        "sess-1@5.manifest".to_owned(),
    ];
    expected.sort();
    assert_eq!(names(&store), expected);
    // The session file deleted: its manifest goes at the next sweep, and the blob.
    std::fs::remove_file(&second.session_path).expect("delete the session");
    assert_eq!(
        store.sweep().expect("sweep"),
        Swept {
            manifests: 1,
            blobs: 1,
            temps: 0
        }
    );
    assert_eq!(names(&store), vec!["lock".to_owned()]);
}
