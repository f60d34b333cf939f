//! Test support shared by the end-to-end tests of the real binary.

#![allow(dead_code)]

pub mod env;
pub mod mock_server;
pub mod sse;
pub mod tmux;

use std::time::{Duration, Instant};

/// `text` with every time measured, `in N ms`, written `in _ ms`.
pub fn untimed(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(" in ") {
        let (head, tail) = rest.split_at(at + 4);
        out.push_str(head);
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(" ms") {
            out.push('_');
            rest = &tail[digits..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// Asserts that `haystack` contains `needle`, showing both when it does not.
#[track_caller]
pub fn assert_contains(haystack: &str, needle: &str) {
    assert!(
        haystack.contains(needle),
        "{haystack}\n(expected it to contain {needle:?})"
    );
}

/// Asserts that `haystack` does not contain `needle`, showing both when it does.
#[track_caller]
pub fn assert_lacks(haystack: &str, needle: &str) {
    assert!(
        !haystack.contains(needle),
        "{haystack}\n(expected it not to contain {needle:?})"
    );
}

/// Asserts that `haystack` starts with `prefix`, showing both when it does not.
#[track_caller]
pub fn assert_starts_with(haystack: &str, prefix: &str) {
    assert!(
        haystack.starts_with(prefix),
        "{haystack}\n(expected it to start with {prefix:?})"
    );
}

/// Calls `read` every `every` until `done` holds for what it returned, and returns
/// that (a bound, not a pace: it returns as soon as `done` holds); once `limit` has
/// passed, fails with `failure(last read)`.
pub fn poll<T>(
    limit: Duration,
    every: Duration,
    mut read: impl FnMut() -> T,
    mut done: impl FnMut(&T) -> bool,
    failure: impl Fn(&T) -> String,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        let seen = read();
        if done(&seen) {
            return seen;
        }
        assert!(Instant::now() < deadline, "{}", failure(&seen));
        std::thread::sleep(every);
    }
}
