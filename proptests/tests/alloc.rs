//! Reading a session log allocates in proportion to the file, whatever its entry
//! ids: a counting global allocator (this test binary only) measures the peak heap
//! of `read_session` over a log of valid lines (hash chain intact) whose ids are
//! dense, and over one whose ids jump by 4096 from line to line.
#![cfg(not(feature = "broken-steer"))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::DateTime;
use xcsh_log::{Body, Entry, EntryHash, Record, SessionHeader, read_session};
use xcsh_machine::EntryId;
use xcsh_proptests::scratch_dir;

struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// One measurement at a time (the test harness runs tests on several threads).
static MEASURING: Mutex<()> = Mutex::new(());

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A log of `lines` steer records, each the child of the one before, with entry
/// ids `0, stride, 2·stride, …`, every hash chained as the writer chains them.
fn log_with_id_stride(lines: u64, stride: u64) -> Vec<u8> {
    let ts = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
    let header = Body::Record(Record::Session(Box::new(SessionHeader::new("s", "/w"))));
    let (mut bytes, mut hash): (Vec<u8>, EntryHash) =
        Entry::encode(EntryId(0), None, None, ts, &header);
    for n in 1..lines {
        let body = Body::Record(Record::Steer { text: "s".into() });
        let (line, h) = Entry::encode(
            EntryId(n * stride),
            Some(EntryId((n - 1) * stride)),
            Some(&hash),
            ts,
            &body,
        );
        bytes.extend_from_slice(&line);
        hash = h;
    }
    bytes
}

/// Peak heap bytes while reading `bytes` as a session file.
fn peak_reading(bytes: &[u8]) -> usize {
    let dir = scratch_dir();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, bytes).unwrap();
    let _one = MEASURING.lock().unwrap();
    PEAK.store(NOW.load(Ordering::Relaxed), Ordering::Relaxed);
    let base = NOW.load(Ordering::Relaxed);
    let log = read_session(&path).expect("a valid log");
    let peak = PEAK.load(Ordering::Relaxed) - base;
    assert_eq!(log.entries.len(), bytes.split(|&b| b == b'\n').count() - 1);
    peak
}

/// Reading `bytes` as a session file peaks below 32 bytes of heap per byte of it.
#[track_caller]
fn allocates_in_proportion_to_the_file(bytes: Vec<u8>) {
    let peak = peak_reading(&bytes);
    assert!(
        peak < 32 * bytes.len(),
        "{peak} bytes at peak for a {}-byte file",
        bytes.len()
    );
}

#[test]
fn reading_a_log_with_dense_ids_allocates_in_proportion_to_the_file() {
    allocates_in_proportion_to_the_file(log_with_id_stride(2000, 1));
}

/// The reader's hash index used to extend its dense vector for any id up to 4096
/// past its end, so ids that climb by 4096 a line grew it by 4096 slots (33 bytes
/// each) per line: 420 MB at peak for this 357 KB file of 2000 lines (~1200×). Ids
/// come from the file, so a crafted (or edited and re-hashed) log made any reader
/// (`read_session`, `SessionWriter::open`, `xcsh check`) allocate ~1200× its size.
/// The regression test of that bug.
#[test]
fn reading_a_log_whose_ids_climb_by_4096_allocates_in_proportion_to_the_file() {
    allocates_in_proportion_to_the_file(log_with_id_stride(2000, 4096));
}
