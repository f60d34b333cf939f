//! Build script: gathers what decides how this build's machine behaves into
//! `$OUT_DIR/machine_build.txt`, which `log::resume::machine_build` hashes into the id a
//! resume snapshot is tagged with (SPEC §12.11): every source file of `src/`
//! (but its tests), the crate version, the enabled cargo features, and the name and
//! version of every package in the workspace's `Cargo.lock`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let machine = manifest.join("src");
    println!("cargo:rerun-if-changed={}", machine.display());
    println!("cargo:rerun-if-changed=build.rs");

    let mut out = String::new();
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&machine)
        .expect("src is readable")
        .map(|e| e.expect("src is readable").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .filter(|p| p.file_name().is_some_and(|n| n != "tests.rs"))
        .collect();
    sources.sort();
    for path in &sources {
        let text = std::fs::read_to_string(path).expect("machine sources are UTF-8");
        let name = path.file_name().expect("a file").to_string_lossy();
        writeln!(out, "source {name} {}", text.len()).expect("a String");
        out.push_str(&text);
        out.push('\n');
    }
    writeln!(
        out,
        "version {}",
        std::env::var("CARGO_PKG_VERSION").expect("set by cargo")
    )
    .expect("a String");

    let mut features: Vec<String> = std::env::vars()
        .filter_map(|(k, _)| k.strip_prefix("CARGO_FEATURE_").map(str::to_owned))
        .collect();
    features.sort();
    writeln!(out, "features {}", features.join(",")).expect("a String");

    match find_lock(&manifest) {
        Some(lock) => {
            println!("cargo:rerun-if-changed={}", lock.display());
            let text = std::fs::read_to_string(&lock).unwrap_or_default();
            out.push_str("packages\n");
            out.push_str(&packages(&text));
        }
        None => out.push_str("packages unknown (no Cargo.lock)\n"),
    }

    let dest =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo")).join("machine_build.txt");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}

/// The `Cargo.lock` of the workspace this crate is built in: the nearest one above it.
fn find_lock(manifest: &Path) -> Option<PathBuf> {
    manifest
        .ancestors()
        .map(|dir| dir.join("Cargo.lock"))
        .find(|lock| lock.is_file())
}

/// `name version` of every `[[package]]` of a lock file, one per line, in its order
/// (cargo keeps it sorted).
fn packages(lock: &str) -> String {
    let mut out = String::new();
    let mut name = None;
    for line in lock.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_owned());
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            writeln!(out, "{n} {}", v.trim_matches('"')).expect("a String");
        }
    }
    out
}
