//! A session's id as the user sees and types it: the id in its file name
//! (`<time>_<id>.jsonl`, as xcsh names session files; `--resume ID` matches it), else
//! its header's `session_id`. A fork copies its source's header byte for byte, so
//! that the hashes of the copied history stay valid; its own id is in its file name.

use std::path::Path;

/// The id in a session file's name: the part of the stem after its last `_`, if
/// there is one and it is not empty.
pub fn file_session_id(path: &Path) -> Option<&str> {
    let stem = path.file_stem()?.to_str()?;
    let (_, id) = stem.rsplit_once('_')?;
    (!id.is_empty()).then_some(id)
}

/// The id of the session in the file at `path` whose header says `header_id`.
pub fn session_id<'a>(path: &'a Path, header_id: &'a str) -> &'a str {
    file_session_id(path).unwrap_or(header_id)
}

/// A new session's id and file name, `<time>_<id>.jsonl` (the time in UTC, to the
/// millisecond; the id 12 hex digits of a hash of the time, the process and a
/// counter, so two sessions made at once in one process differ).
pub fn new_session_name(now: chrono::DateTime<chrono::Utc>) -> (String, String) {
    static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = blake3::Hasher::new();
    h.update(&now.timestamp_nanos_opt().unwrap_or_default().to_le_bytes());
    h.update(&std::process::id().to_le_bytes());
    let made = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if made > 0 {
        h.update(&made.to_le_bytes());
    }
    let id = h.finalize().to_hex()[..12].to_string();
    let name = format!("{}_{id}.jsonl", now.format("%Y-%m-%dT%H-%M-%S-%3fZ"));
    (id, name)
}

/// The header (first line) of the session file at `path`, verified; only that line
/// is read.
pub fn read_header(path: &Path) -> Result<crate::SessionHeader, crate::LogError> {
    let file = std::fs::File::open(path).map_err(|e| crate::LogError::io(path, e))?;
    let mut reader = crate::LogReader::new(path, std::io::BufReader::new(file));
    match reader.next() {
        Some(Ok((_, entry))) => match entry.body {
            crate::Body::Record(crate::Record::Session(header)) => Ok(*header),
            _ => Err(crate::LogError::NotASession {
                path: path.to_path_buf(),
            }),
        },
        Some(Err(e)) => Err(e),
        None => Err(crate::LogError::NotASession {
            path: path.to_path_buf(),
        }),
    }
}

/// Whether the session file at `path` is a sub-agent's (its header names a parent,
/// SPEC.md §29.2). A file whose header cannot be read is not.
pub fn is_child_session(path: &Path) -> bool {
    read_header(path).is_ok_and(|h| h.parent.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_in_the_file_name_wins_over_the_header() {
        let cases = [
            (
                "s/2026-01-05T09-00-00-000Z_4f2a9c01be7d.jsonl",
                "4f2a9c01be7d",
            ),
            ("elsewhere/fork.jsonl", "from-header"),
            ("trailing_.jsonl", "from-header"),
        ];
        for (path, want) in cases {
            assert_eq!(session_id(Path::new(path), "from-header"), want, "{path}");
        }
    }
}
