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
