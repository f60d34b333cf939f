//! `edit` and `write` keep the before-image of the file they change (SPEC.md §21.6):
//! durable before the change, named by the dispatch entry, released once the
//! result is durable; a store that cannot be written stops the call.

use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;
use xcsh_log::blobs::{BlobId, BlobStore, Dispatch, Manifest, ManifestFile};
use xcsh_machine::{CallId, EntryId, ToolCall, ToolOutcome, ToolStatus};
use xcsh_tools::{CallContext, StandardTools, ToolExecutor, ToolOptions};

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    session: PathBuf,
    store: BlobStore,
    tools: StandardTools,
}

fn fixture_with_store(store_dir: impl FnOnce(&Path) -> PathBuf) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let outer = dir.path().canonicalize().expect("canonical");
    let root = outer.join("ws");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::fs::write(root.join("f.txt"), "old\n").expect("f.txt");
    let session = outer.join("s.jsonl");
    std::fs::write(&session, "").expect("session");
    let store = BlobStore::new(store_dir(&outer));
    let tools = StandardTools::with_options(
        &root,
        ToolOptions {
            blobs: Some(store.clone()),
            ..ToolOptions::default()
        },
    )
    .expect("tools");
    Fixture {
        _dir: dir,
        root,
        session,
        store,
        tools,
    }
}

fn fixture() -> Fixture {
    fixture_with_store(|outer| outer.join("blobs"))
}

fn call(id: &str, name: &str, args: serde_json::Value) -> ToolCall {
    ToolCall {
        id: CallId(id.into()),
        name: name.into(),
        arguments: args.to_string(),
    }
}

impl Fixture {
    fn dispatch(&self, entry: u64) -> Dispatch {
        Dispatch {
            session_id: "s1".into(),
            session_path: self.session.clone(),
            entry: EntryId(entry),
        }
    }

    async fn run(&self, call: ToolCall, entry: u64) -> ToolOutcome {
        let context = CallContext {
            dispatch: Some(self.dispatch(entry)),
            ..CallContext::new(CancellationToken::new())
        };
        self.tools.execute_with(call, context).await
    }

    /// `write {path, content}` as call `w`, dispatched by `entry`.
    async fn write(&self, path: &str, content: &str, entry: u64) -> ToolOutcome {
        let args = serde_json::json!({"path": path, "content": content});
        self.run(call("w", "write", args), entry).await
    }

    async fn read_f(&self) {
        let out = self
            .run(call("r", "read", serde_json::json!({"path": "f.txt"})), 1)
            .await;
        assert_eq!(out.status, ToolStatus::Ok, "{}", out.content);
    }

    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.store.dir())
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

fn hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

#[tokio::test]
async fn an_edit_saves_the_content_it_replaces_and_releases_it_once_its_result_is_durable() {
    let fx = fixture();
    fx.read_f().await;
    let out = fx
        .run(
            call(
                "e",
                "edit",
                serde_json::json!({"path": "f.txt", "old_string": "old", "new_string": "new"}),
            ),
            4,
        )
        .await;
    assert_eq!(out.status, ToolStatus::Ok, "{}", out.content);
    let path = fx.root.join("f.txt");
    assert_eq!(
        fx.store.manifest("s1", EntryId(4)).expect("manifest"),
        Some(Manifest {
            version: 1,
            session_id: "s1".into(),
            session_path: fx.session.clone(),
            entry: EntryId(4),
            call_id: CallId("e".into()),
            tool: "edit".into(),
            files: vec![ManifestFile {
                path: path.clone(),
                before: Some(BlobId::of(b"old\n")),
                after: hash("new\n"),
            }],
        })
    );
    assert_eq!(
        std::fs::read(fx.store.blob_path(&BlobId::of(b"old\n"))).expect("blob"),
        b"old\n"
    );
    assert_eq!(std::fs::read_to_string(&path).expect("f"), "new\n");
    fx.tools.results_durable(&[fx.dispatch(4)]);
    assert_eq!(fx.names(), vec!["lock".to_owned()]);
}

#[tokio::test]
async fn a_write_that_creates_a_file_records_that_it_did_not_exist() {
    let fx = fixture();
    let out = fx.write("new/g.txt", "hi\n", 2).await;
    assert_eq!(out.status, ToolStatus::Ok, "{}", out.content);
    let manifest = fx
        .store
        .manifest("s1", EntryId(2))
        .expect("manifest")
        .expect("kept");
    assert_eq!(
        manifest.files,
        vec![ManifestFile {
            path: fx.root.join("new/g.txt"),
            before: None,
            after: hash("hi\n"),
        }]
    );
    let mut expected = vec!["lock".to_owned(), "s1@2.manifest".to_owned()];
    expected.sort();
    assert_eq!(fx.names(), expected);
}

#[tokio::test]
async fn a_store_that_cannot_be_written_stops_the_write_and_keeps_the_file() {
    // The store's directory would be below a regular file: it cannot be made.
    let fx = fixture_with_store(|outer| outer.join("s.jsonl").join("blobs"));
    fx.read_f().await;
    let out = fx.write("f.txt", "new\n", 3).await;
    assert_eq!(out.status, ToolStatus::Error);
    let expected = format!(
        "`write` did not change `f.txt`: its content could not be saved first for undo ({}: Not a directory (os error 20))",
        fx.store.dir().display()
    );
    assert_eq!(out.content, expected);
    assert_eq!(
        std::fs::read_to_string(fx.root.join("f.txt")).expect("f"),
        "old\n"
    );
}

#[tokio::test]
async fn a_call_run_without_its_dispatch_keeps_no_before_image() {
    let fx = fixture();
    let out = fx
        .tools
        .execute(
            call(
                "w",
                "write",
                serde_json::json!({"path": "g.txt", "content": "x"}),
            ),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(out.status, ToolStatus::Ok, "{}", out.content);
    assert!(!fx.store.dir().exists());
}
