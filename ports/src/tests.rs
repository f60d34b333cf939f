//! Tests of the ports' shared types (the progress sink).

use std::sync::Mutex;

use super::*;

type Seen = Arc<Mutex<Vec<(OutputStream, String)>>>;

fn collecting() -> (ToolProgress, Seen) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let progress = ToolProgress::new(move |stream, text| {
        sink.lock().unwrap().push((stream, text.to_owned()));
    });
    (progress, seen)
}

#[test]
fn progress_reaches_the_sink_through_every_clone() {
    let (progress, seen) = collecting();
    progress.report(OutputStream::Stdout, "a\n");
    progress.clone().report(OutputStream::Stderr, "b\n");
    progress.report(OutputStream::Stdout, "");
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            (OutputStream::Stdout, "a\n".to_owned()),
            (OutputStream::Stderr, "b\n".to_owned())
        ]
    );
}

#[test]
fn progress_stops_at_the_byte_budget_on_a_character_boundary() {
    let (progress, seen) = collecting();
    progress.report(OutputStream::Stdout, &"x".repeat(MAX_PROGRESS_BYTES - 1));
    // "é" is two bytes: only one is left, so nothing of it is sent.
    progress.report(OutputStream::Stdout, "é");
    assert!(progress.is_active());
    progress.report(OutputStream::Stdout, "yz");
    progress.report(OutputStream::Stdout, "more");
    assert!(!progress.is_active());
    let seen = seen.lock().unwrap();
    let sent: usize = seen.iter().map(|(_, t)| t.len()).sum();
    assert_eq!(sent, MAX_PROGRESS_BYTES);
    assert_eq!(seen.last().unwrap().1, "y");
    assert_eq!(seen.len(), 2);
}

#[test]
fn the_none_sink_is_inactive_and_drops_reports() {
    let progress = ToolProgress::none();
    assert!(!progress.is_active());
    progress.report(OutputStream::Stdout, "dropped");
}
