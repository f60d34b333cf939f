//! The before-image store (SPEC.md §21.6): what `edit`/`write` pay before they
//! replace a file. `save` of a 1 KiB file (a new blob each time, and the same
//! content again: deduplicated), of a new file (no blob), and of a 30 MiB file;
//! `release` of one manifest with its sweep.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use xcsh_log::blobs::{BeforeImage, BlobStore, Dispatch};
use xcsh_machine::{CallId, EntryId};

fn main() {
    divan::main();
}

static NEXT: AtomicU64 = AtomicU64::new(0);

struct Store {
    _dir: tempfile::TempDir,
    store: BlobStore,
    session: PathBuf,
    target: PathBuf,
}

fn store() -> Store {
    let dir = tempfile::tempdir().expect("tempdir");
    let session = dir.path().join("s.jsonl");
    std::fs::write(&session, "").expect("session");
    Store {
        store: BlobStore::new(dir.path().join("blobs")),
        target: dir.path().join("f.txt"),
        session,
        _dir: dir,
    }
}

impl Store {
    fn save(&self, before: Option<&[u8]>, after: &[u8]) -> usize {
        let dispatch = Dispatch {
            session_id: "bench".into(),
            session_path: self.session.clone(),
            entry: EntryId(NEXT.fetch_add(1, Ordering::Relaxed)),
        };
        let image = BeforeImage {
            path: &self.target,
            before,
            after,
        };
        self.store
            .save(&dispatch, &CallId("c".into()), "write", &[image])
            .expect("save")
            .files
            .len()
    }
}

#[divan::bench(sample_count = 50)]
fn save_1kib_new_blob(bencher: divan::Bencher) {
    let s = store();
    bencher
        .with_inputs(|| {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            format!("{n:>1024}").into_bytes()
        })
        .bench_refs(|before| s.save(Some(before), b"after"));
}

#[divan::bench(sample_count = 50)]
fn save_1kib_same_blob(bencher: divan::Bencher) {
    let s = store();
    let before = vec![b'a'; 1024];
    s.save(Some(&before), b"after");
    bencher.bench(|| s.save(Some(&before), b"after"));
}

#[divan::bench(sample_count = 50)]
fn save_new_file(bencher: divan::Bencher) {
    let s = store();
    bencher.bench(|| s.save(None, b"after"));
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn save_30mib_new_blob(bencher: divan::Bencher) {
    let s = store();
    bencher
        .with_inputs(|| {
            let mut v = vec![b'x'; 30 << 20];
            v[..8].copy_from_slice(&NEXT.fetch_add(1, Ordering::Relaxed).to_le_bytes());
            v
        })
        .bench_refs(|before| s.save(Some(before), b"after"));
}

#[divan::bench(sample_count = 20, sample_size = 1)]
fn release_one_manifest(bencher: divan::Bencher) {
    let s = store();
    bencher
        .with_inputs(|| {
            let entry = NEXT.load(Ordering::Relaxed);
            let n = entry.to_string();
            s.save(Some(n.as_bytes()), b"after");
            entry
        })
        .bench_values(|entry| {
            s.store
                .release(&[("bench".into(), EntryId(entry))])
                .expect("release")
        });
}
