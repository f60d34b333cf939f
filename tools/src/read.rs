//! `read {path, offset?, limit?}`: a text file with 1-based line numbers, like
//! `cat -n`; binary files are refused. The file is opened beneath the workspace's
//! directory descriptor and streamed: at most the output cap of it is held. Records
//! the content hash for read-before-write.

use std::fs::File;
use std::io::Read as _;
use std::path::PathBuf;

use rustix::fs::Stat;

use serde::Deserialize;

use super::beneath::{Node, OpenError};
use super::caps::{CappedLines, Caps, floor_char_boundary};
use super::params::Param;
use super::workspace::Workspace;

pub(crate) const NAME: &str = "read";

pub(crate) const DESCRIPTION: &str = "Read a text file in the workspace. Output lines are \
prefixed with their 1-based line number and a tab, like `cat -n` (the prefix is not part of \
the file). `offset` is the first line to show (1-based, default 1) and `limit` the number of \
lines (default and cap 2000); long output is truncated and the result says how to continue. \
Binary files and files over 256 MiB are refused. A file must be read before `edit` or `write` may change it.";

pub(crate) const PARAMS: &[Param] = &[
    Param::text(
        "path",
        "File path, relative to the workspace root (or absolute inside it).",
    )
    .required(),
    Param::integer("offset", 1, "First line to show, 1-based (default 1)."),
    Param::integer(
        "limit",
        1,
        "Number of lines to show (default: up to the output cap).",
    ),
];

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    path: String,
    offset: Option<usize>,
    limit: Option<usize>,
}

/// How many leading bytes are scanned for a NUL byte.
const BINARY_SNIFF_BYTES: usize = 8192;

/// The largest file `read` (and so `edit` and `write`, which change only what `read`
/// returned) takes: 256 MiB. A larger one is refused from its `fstat`, before any of
/// it is read.
pub(crate) const MAX_FILE_BYTES: u64 = 256 << 20;

/// The bytes read from the file at a time.
const CHUNK_BYTES: usize = 64 * 1024;

/// A successful read: the text for the model, and the file and content hash for the
/// ledger (recorded by the caller only once the result is delivered, so a read
/// cancelled mid-way never counts as read).
#[derive(Debug)]
pub(crate) struct Read {
    pub(crate) text: String,
    pub(crate) path: PathBuf,
    pub(crate) hash: blake3::Hash,
}

/// Refuses a file over [`MAX_FILE_BYTES`] from its `fstat`.
fn check_size(stat: &Stat, given: &str) -> Result<(), String> {
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    if size > MAX_FILE_BYTES {
        return Err(format!(
            "`{given}` is {size} bytes, over the file tools' limit of {MAX_FILE_BYTES} bytes (256 MiB); search it with `grep`, or show part of it with `bash` (e.g. `sed -n '1,100p'`)"
        ));
    }
    Ok(())
}

/// The whole content of a regular file opened beneath the workspace (for `edit` and
/// `write`, which compare it with the ledger), refused over [`MAX_FILE_BYTES`].
pub(crate) fn read_whole(file: File, stat: &Stat, given: &str) -> Result<Vec<u8>, String> {
    check_size(stat, given)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read `{given}`: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "`{given}` grew past the file tools' limit of {MAX_FILE_BYTES} bytes while it was read"
        ));
    }
    Ok(bytes)
}

/// Why a streamed file is not text.
enum NotText {
    Nul(usize),
    Utf8(u64),
}

/// The streaming state of one read: the hash, the UTF-8 check across chunk
/// boundaries, and the current line (at most `keep` bytes of it are held).
struct Scan<'a> {
    hasher: blake3::Hasher,
    /// Bytes seen so far.
    offset: u64,
    /// An incomplete UTF-8 sequence at the end of the last chunk.
    pending: Vec<u8>,
    line: Vec<u8>,
    line_len: usize,
    /// The last byte of the current line (held or not).
    last: Option<u8>,
    keep: usize,
    lines: usize,
    first: usize,
    limit: usize,
    out: &'a mut CappedLines,
}

impl Scan<'_> {
    fn chunk(&mut self, chunk: &[u8]) -> Result<(), NotText> {
        self.hasher.update(chunk);
        let start = self.offset - self.pending.len() as u64;
        let joined;
        let data: &[u8] = if self.pending.is_empty() {
            chunk
        } else {
            joined = [self.pending.as_slice(), chunk].concat();
            &joined
        };
        match std::str::from_utf8(data) {
            Ok(_) => self.pending.clear(),
            Err(e) if e.error_len().is_some() => {
                return Err(NotText::Utf8(start + e.valid_up_to() as u64));
            }
            Err(e) => self.pending = data[e.valid_up_to()..].to_vec(),
        }
        self.offset += chunk.len() as u64;
        let mut rest = chunk;
        while let Some(at) = memchr::memchr(b'\n', rest) {
            self.take(&rest[..at]);
            self.end_line(true);
            rest = &rest[at + 1..];
        }
        self.take(rest);
        Ok(())
    }

    fn take(&mut self, bytes: &[u8]) {
        let room = self.keep.saturating_sub(self.line.len()).min(bytes.len());
        self.line.extend_from_slice(&bytes[..room]);
        self.line_len += bytes.len();
        if let Some(b) = bytes.last() {
            self.last = Some(*b);
        }
    }

    /// Ends the current line (`newline`: at a `\n`, whose preceding `\r` is
    /// dropped, as `str::lines` does).
    fn end_line(&mut self, newline: bool) {
        let mut len = self.line_len;
        if newline && self.last == Some(b'\r') {
            if len == self.line.len() {
                self.line.pop();
            }
            len -= 1;
        }
        self.lines += 1;
        if self.lines >= self.first && self.lines - self.first < self.limit {
            // Complete lines of valid UTF-8 but for a prefix cut mid-character.
            let valid = match std::str::from_utf8(&self.line) {
                Ok(text) => text,
                Err(e) => std::str::from_utf8(&self.line[..e.valid_up_to()]).unwrap_or(""),
            };
            let shown = &valid[..floor_char_boundary(valid, self.keep)];
            let number = format!("{:>6}\t", self.lines);
            self.out
                .push_prefix(&format!("{number}{shown}"), number.len() + len);
        }
        self.line.clear();
        self.line_len = 0;
        self.last = None;
    }
}

pub(crate) fn run(ws: &Workspace, caps: Caps, args: Args) -> Result<Read, String> {
    let given = &args.path;
    let path = ws.resolve(given).map_err(|e| e.to_string())?;
    let (mut file, stat) = match ws.open(&path) {
        Ok(Node::File(file, stat)) => (file, stat),
        Ok(Node::Dir(_)) => {
            return Err(format!(
                "`{given}` is a directory; use the `list` tool to see its entries"
            ));
        }
        Err(OpenError::NotFound) => {
            return Err(format!(
                "`{given}` does not exist; use `list` or `glob` to find files"
            ));
        }
        Err(e) => return Err(e.message(given, "read")),
    };
    check_size(&stat, given)?;
    let offset = args.offset.unwrap_or(1).max(1);
    let limit = args.limit.unwrap_or(usize::MAX);
    let mut out = CappedLines::new(caps);
    let mut scan = Scan {
        hasher: blake3::Hasher::new(),
        offset: 0,
        pending: Vec::new(),
        line: Vec::new(),
        line_len: 0,
        last: None,
        keep: caps.max_bytes,
        lines: 0,
        first: offset,
        limit,
        out: &mut out,
    };
    let not_text = |why: NotText| match why {
        NotText::Nul(at) => format!(
            "`{given}` is a binary file (NUL byte at offset {at}); read only shows text files"
        ),
        NotText::Utf8(at) => format!(
            "`{given}` is a binary file (not valid UTF-8 at byte {at}); read only shows text files"
        ),
    };
    let failed = |e: std::io::Error| format!("cannot read `{given}`: {e}");
    // The first bytes are checked for a NUL before anything else is looked at.
    let mut head = Vec::with_capacity(BINARY_SNIFF_BYTES);
    (&mut file)
        .take(BINARY_SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(failed)?;
    if let Some(at) = memchr::memchr(0, &head) {
        return Err(not_text(NotText::Nul(at)));
    }
    scan.chunk(&head).map_err(not_text)?;
    let mut buf = vec![0u8; CHUNK_BYTES];
    let mut read_so_far = head.len() as u64;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(failed(e)),
        };
        read_so_far += n as u64;
        if read_so_far > MAX_FILE_BYTES {
            return Err(format!(
                "`{given}` grew past the file tools' limit of {MAX_FILE_BYTES} bytes while it was read"
            ));
        }
        scan.chunk(&buf[..n]).map_err(not_text)?;
    }
    if !scan.pending.is_empty() {
        let at = scan.offset - scan.pending.len() as u64;
        return Err(not_text(NotText::Utf8(at)));
    }
    if scan.line_len > 0 {
        scan.end_line(false);
    }
    let total = scan.lines;
    let hash = scan.hasher.finalize();
    let done = |text: String| Read { text, path, hash };

    if total == 0 {
        return Ok(done(format!("`{given}` is empty (0 lines)")));
    }
    if offset > total {
        return Err(format!(
            "`offset` {offset} is past the end of `{given}`, which has {total} lines"
        ));
    }
    let last_shown = offset - 1 + out.shown_lines();
    let hint = format!("continue with offset {}", last_shown + 1);
    let truncated = out.truncated();
    let offered_end = offset - 1 + out.total_lines();
    let mut result = out.finish(Some(&hint));
    if !truncated && offered_end < total {
        result.push_str(&format!(
            "\n[lines {offset}-{offered_end} of {total} shown; {hint}]"
        ));
    }
    Ok(done(result))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `read` of a file with `content`, as the model sees it.
    fn read_back(content: &[u8], caps: Caps, offset: Option<usize>) -> String {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("f"), content).expect("write");
        let ws = Workspace::new(dir.path()).expect("workspace");
        let args = Args {
            path: "f".to_owned(),
            offset,
            limit: None,
        };
        match run(&ws, caps, args) {
            Ok(read) => {
                assert_eq!(
                    read.hash,
                    blake3::hash(content),
                    "the hash is the whole file's"
                );
                read.text
            }
            Err(e) => e,
        }
    }

    #[test]
    fn streamed_lines_match_str_lines_across_chunk_boundaries() {
        // A two-byte character straddling the sniffed head and the first chunk's end.
        for at in [BINARY_SNIFF_BYTES - 1, BINARY_SNIFF_BYTES + CHUNK_BYTES - 1] {
            let mut content = "a".repeat(at - 3);
            content.push_str("\r\nxé\r\nlast\r");
            let caps = Caps {
                max_bytes: 1 << 20,
                max_lines: 10,
            };
            let want: String = content
                .lines()
                .enumerate()
                .map(|(i, l)| format!("{:>6}\t{l}\n", i + 1))
                .collect();
            assert_eq!(
                read_back(content.as_bytes(), caps, None),
                want.trim_end_matches('\n')
            );
        }
    }

    #[test]
    fn a_long_line_is_held_only_up_to_the_cap_and_counted_whole() {
        let caps = Caps {
            max_bytes: 20,
            max_lines: 10,
        };
        let content = format!("{}\r\nnext\n", "x".repeat(200_000));
        assert_eq!(
            read_back(content.as_bytes(), caps, None),
            "     1\txxxxxxxxxxxxx\n[output truncated: 1 of 2 lines, 20 of 200020 bytes shown; cap 10 lines / 20 bytes; continue with offset 2]"
        );
    }

    #[test]
    fn binary_content_is_refused_where_it_is_found() {
        let caps = Caps::default();
        let mut late = "a\n".repeat(50_000).into_bytes();
        late.extend_from_slice(b"\xff\n");
        assert_eq!(
            read_back(&late, caps, None),
            "`f` is a binary file (not valid UTF-8 at byte 100000); read only shows text files"
        );
        let mut cut = b"ok ".to_vec();
        cut.extend_from_slice("é".as_bytes().split_at(1).0);
        assert_eq!(
            read_back(&cut, caps, None),
            "`f` is a binary file (not valid UTF-8 at byte 3); read only shows text files"
        );
        assert_eq!(
            read_back(b"\xffab\0", caps, None),
            "`f` is a binary file (NUL byte at offset 3); read only shows text files"
        );
    }
}
