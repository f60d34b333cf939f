//! Test support shared by the end-to-end tests of the real binary.

#![allow(dead_code)]

pub mod env;
pub mod mock_server;
pub mod sse;
pub mod tmux;

use std::time::{Duration, Instant};

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
