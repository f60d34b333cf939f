//! Times the log reader on a session file: `read_session` (batched, two threads) and
//! the line-by-line `LogReader` (one thread), each verifying every line.
//!
//! `cargo run --release -p xcsh-core --example read_log -- FILE`

use std::io::BufReader;
use std::time::Instant;

use xcsh_core::log::{LogReader, read_session};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: read_log FILE");
        std::process::exit(2);
    };
    let path = std::path::PathBuf::from(path);
    let t = Instant::now();
    let n = match read_session(&path) {
        Ok(log) => log.entries.len(),
        Err(e) => {
            eprintln!("read_log: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "read_session: {n} entries in {:.3} s",
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let file = std::fs::File::open(&path).unwrap_or_else(|e| {
        eprintln!("read_log: {e}");
        std::process::exit(1)
    });
    let mut count = 0usize;
    for item in LogReader::new(&path, BufReader::with_capacity(4 << 20, file)) {
        if let Err(e) = item {
            eprintln!("read_log: {e}");
            std::process::exit(1);
        }
        count += 1;
    }
    println!(
        "LogReader line by line: {count} entries in {:.3} s",
        t.elapsed().as_secs_f64()
    );
}
