//! The session files under a folder: every `*.jsonl` file in it and its sub-folders,
//! for the commands that take a folder of sessions (`xcsh replay DIR`, `xcsh import --all`).

use std::path::{Path, PathBuf};

use crate::LogError;

/// Every `*.jsonl` file under `dir`, sub-folders too (a link to a folder is not
/// followed), sorted by path.
pub fn jsonl_files_under(dir: &Path) -> Result<Vec<PathBuf>, LogError> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let io = |source| LogError::io(&d, source);
        for entry in std::fs::read_dir(&d).map_err(io)? {
            let entry = entry.map_err(io)?;
            let path = entry.path();
            if entry.file_type().map_err(io)?.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}
