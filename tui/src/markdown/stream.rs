//! A Markdown message that arrives delta by delta: its finished chunks are rendered
//! once (for the terminal's scrollback), its unfinished tail on every frame.
//!
//! The source is cut into top-level chunks at lines where a new block surely starts,
//! judged from complete lines only (so a cut, once found, never moves):
//!
//! - before a line at column 0 that follows a blank line, unless the chunk holds a
//!   list and the line is a list item (the list goes on) — a blank line ends a
//!   paragraph, a quote, a table, and a list that a non-item line follows;
//! - before an ATX heading at column 0 and after it (a heading is one line);
//! - before a code fence opening at column 0 and after its closing fence: such a
//!   chunk is a top-level code block, whose lines are finished one by one as they
//!   complete (highlighting goes forward line by line), so a long code block streams
//!   into the scrollback instead of being re-rendered on every frame.
//!
//! Nothing is cut inside a fence, nor before an indented line (it may continue a list
//! item or an indented code block). Each chunk is rendered on its own and non-empty
//! chunks are joined by one blank line; [`super::render`] is this same stream fed
//! the whole document, so the lines taken while streaming plus those of `finish` are
//! exactly the lines of the whole message rendered at once.

use std::cell::RefCell;
use std::collections::VecDeque;

use ratatui::text::Line;

use super::block::{CodeBlock, render_chunk};
use crate::Theme;
use crate::text::break_at_width;

/// A streaming assistant message rendered as Markdown. Transient view state: what
/// it holds is the text of one message being streamed, nothing else.
#[derive(Debug, Default)]
pub struct MarkdownStream {
    source: String,
    /// The start of the first line not scanned yet (the incomplete last line).
    scanned: usize,
    scanner: Scanner,
    /// The chunks not taken entirely yet, in order; the last one is open.
    chunks: VecDeque<Chunk>,
    /// Some line was taken already: the next non-empty chunk starts with a blank line.
    taken_any: bool,
    /// Bumped by every take, for the tail's cache.
    generation: u64,
    tail_cache: RefCell<Option<TailCache>>,
}

#[derive(Debug)]
struct TailCache {
    key: (usize, u64, u16, bool),
    lines: Vec<Line<'static>>,
}

#[derive(Debug)]
struct Chunk {
    start: usize,
    end: Option<usize>,
    fence: Option<Fence>,
    /// Some of its lines were taken.
    started: bool,
}

/// A top-level fenced code block being streamed.
#[derive(Debug, Clone)]
struct Fence {
    block: CodeBlock,
    header_taken: bool,
    /// The start of the first code line not taken yet.
    next_line: usize,
    /// The start of its closing fence line, once seen.
    close: Option<usize>,
}

impl MarkdownStream {
    pub fn new() -> MarkdownStream {
        MarkdownStream::default()
    }

    /// The message's text so far.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Appends `delta`; scans only the lines it completes (amortized O(delta)).
    pub fn push(&mut self, delta: &str) {
        let old = self.source.len();
        self.source.push_str(delta);
        let mut from = old;
        while let Some(i) = self.source[from..].find('\n') {
            let end = from + i + 1;
            let start = self.scanned;
            self.scan_line(start, end);
            self.scanned = end;
            from = end;
        }
        self.ensure_chunk();
    }

    fn ensure_chunk(&mut self) {
        if self.chunks.is_empty() {
            self.chunks.push_back(Chunk {
                start: self.scanned,
                end: None,
                fence: None,
                started: false,
            });
        }
    }

    /// Ends the open chunk at `at` and opens the next there (nothing for an empty cut).
    fn cut(&mut self, at: usize) {
        self.ensure_chunk();
        let Some(last) = self.chunks.back_mut() else {
            return;
        };
        if last.start == at {
            return;
        }
        last.end = Some(at);
        self.chunks.push_back(Chunk {
            start: at,
            end: None,
            fence: None,
            started: false,
        });
    }

    fn scan_line(&mut self, start: usize, end: usize) {
        let text = self.source[start..end].trim_end_matches(['\n', '\r']);
        match self.scanner.line(text) {
            Cut::None => {}
            Cut::Before => self.cut(start),
            Cut::Around => {
                self.cut(start);
                self.cut(end);
            }
            Cut::FenceOpen => {
                let info = text.trim_start_matches(['`', '~']).trim().to_string();
                self.cut(start);
                if let Some(last) = self.chunks.back_mut() {
                    last.fence = Some(Fence {
                        block: CodeBlock::fenced(&info),
                        header_taken: false,
                        next_line: end,
                        close: None,
                    });
                }
            }
            Cut::FenceClose => {
                if let Some(Chunk { fence: Some(f), .. }) = self.chunks.back_mut() {
                    f.close = Some(start);
                }
                self.cut(end);
            }
        }
        self.ensure_chunk();
    }

    /// The lines of the chunks finished since the last call (and of the complete
    /// lines of a top-level code block still streaming): they never change, and are
    /// returned once.
    pub fn take_finished(&mut self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        while let Some(chunk) = self.chunks.front_mut() {
            let lines = chunk_lines(chunk, &self.source, self.scanned, width, theme, Mode::Take);
            if !lines.is_empty() {
                if !chunk.started && self.taken_any {
                    out.push(Line::default());
                }
                chunk.started = true;
                self.taken_any = true;
                out.extend(lines);
                self.generation += 1;
            }
            if chunk.end.is_none() {
                break;
            }
            self.chunks.pop_front();
            self.generation += 1;
        }
        out
    }

    /// The lines of what is not taken yet, the unfinished tail above all, rendered as
    /// it stands (re-rendered each frame; cached by source length and width).
    pub fn tail(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let key = (self.source.len(), self.generation, width, theme.color);
        if let Some(cache) = self.tail_cache.borrow().as_ref()
            && cache.key == key
        {
            return cache.lines.clone();
        }
        let mut out = Vec::new();
        let mut taken_any = self.taken_any;
        for chunk in &self.chunks {
            let mut chunk = Chunk {
                start: chunk.start,
                end: chunk.end,
                fence: chunk.fence.clone(),
                started: chunk.started,
            };
            let lines = chunk_lines(
                &mut chunk,
                &self.source,
                self.scanned,
                width,
                theme,
                Mode::Peek,
            );
            if !lines.is_empty() {
                if !chunk.started && taken_any {
                    out.push(Line::default());
                }
                taken_any = true;
                out.extend(lines);
            }
        }
        *self.tail_cache.borrow_mut() = Some(TailCache {
            key,
            lines: out.clone(),
        });
        out
    }

    /// The message is complete: the lines not taken yet. The stream is empty after.
    pub fn finish(&mut self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let len = self.source.len();
        if self.scanned < len {
            let start = self.scanned;
            self.scan_line(start, len);
            self.scanned = len;
        }
        self.ensure_chunk();
        if let Some(last) = self.chunks.back_mut() {
            last.end = Some(len);
        }
        // Every chunk is closed now: taking them all is the final rendering.
        let out = self.take_finished(width, theme);
        *self = MarkdownStream::new();
        out
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Lines that are final (closed chunks; a streaming fence's complete lines).
    Take,
    /// Everything not taken, as it stands.
    Peek,
}

/// The lines of `chunk` not taken yet that `mode` gives; advances a fence's progress.
fn chunk_lines(
    chunk: &mut Chunk,
    source: &str,
    scanned: usize,
    width: u16,
    theme: &Theme,
    mode: Mode,
) -> Vec<Line<'static>> {
    let Some(fence) = &mut chunk.fence else {
        return match (chunk.end, mode) {
            (Some(end), _) => render_chunk(&source[chunk.start..end], width, theme, true),
            (None, Mode::Take) => Vec::new(),
            (None, Mode::Peek) => render_chunk(&source[chunk.start..], width, theme, false),
        };
    };
    let mut out = Vec::new();
    if !fence.header_taken {
        if let Some(header) = fence.block.header(theme) {
            out.extend(break_at_width(&header, width));
        }
        fence.header_taken = true;
    }
    // Code lines: up to the closing fence, the chunk's end, or the scanned lines.
    let code_end = fence
        .close
        .or(chunk.end)
        .unwrap_or(scanned)
        .max(fence.next_line);
    for line in source[fence.next_line..code_end].split_inclusive('\n') {
        let line = fence.block.line(line.trim_end_matches(['\n', '\r']), theme);
        out.extend(break_at_width(&line, width));
    }
    fence.next_line = code_end;
    match (chunk.end, mode) {
        (Some(_), _) => {
            if let Some(footer) = fence.block.footer(theme) {
                out.extend(break_at_width(&footer, width));
            }
        }
        (None, Mode::Take) => {}
        (None, Mode::Peek) => {
            let partial = &source[scanned.max(fence.next_line)..];
            if !partial.is_empty() {
                let line = fence.block.plain_line(partial, theme);
                out.extend(break_at_width(&line, width));
            }
        }
    }
    out
}

/// What a complete line means for the chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    None,
    /// A new chunk starts at this line.
    Before,
    /// This line is a chunk of its own (an ATX heading).
    Around,
    /// A top-level code fence opens here (a chunk of its own until it closes).
    FenceOpen,
    /// The top-level fence closes with this line; a new chunk starts after it.
    FenceClose,
}

/// The line classifier's state: the open fence, whether the last line was blank,
/// whether the open chunk holds a list.
#[derive(Debug, Default)]
struct Scanner {
    fence: Option<OpenFence>,
    prev_blank: bool,
    in_list: bool,
}

#[derive(Debug)]
struct OpenFence {
    ch: char,
    len: usize,
    indent: usize,
    top: bool,
}

impl Scanner {
    fn line(&mut self, text: &str) -> Cut {
        if let Some(f) = &self.fence {
            if is_close(text, f) {
                let top = f.top;
                self.fence = None;
                self.prev_blank = false;
                return if top { Cut::FenceClose } else { Cut::None };
            }
            return Cut::None;
        }
        if text.trim().is_empty() {
            self.prev_blank = true;
            return Cut::None;
        }
        let prev_blank = std::mem::replace(&mut self.prev_blank, false);
        let indent = indent_of(text);
        if indent >= 4 {
            return Cut::None;
        }
        let body = &text[indent..];
        if let Some((ch, len)) = fence_open(body) {
            self.fence = Some(OpenFence {
                ch,
                len,
                indent,
                top: indent == 0,
            });
            if indent == 0 {
                self.in_list = false;
                return Cut::FenceOpen;
            }
            return Cut::None;
        }
        let marker = is_list_item(body);
        if indent > 0 {
            self.in_list |= marker;
            return Cut::None;
        }
        if is_atx_heading(body) {
            self.in_list = false;
            return Cut::Around;
        }
        let cut = if prev_blank && !(marker && self.in_list) {
            self.in_list = false;
            Cut::Before
        } else {
            Cut::None
        };
        self.in_list |= marker;
        cut
    }
}

/// Leading spaces (a tab counts as 4).
fn indent_of(text: &str) -> usize {
    let mut n = 0;
    for b in text.bytes() {
        match b {
            b' ' => n += 1,
            b'\t' => n += 4,
            _ => break,
        }
        if n >= 4 {
            return 4;
        }
    }
    n
}

/// `` ``` `` or `~~~` (3 or more) opening a fence, with its character and length.
fn fence_open(body: &str) -> Option<(char, usize)> {
    let ch = body.chars().next().filter(|&c| c == '`' || c == '~')?;
    let len = body.chars().take_while(|&c| c == ch).count();
    if len < 3 {
        return None;
    }
    // A backtick fence's info string has no backtick (else it is inline code).
    if ch == '`' && body[len..].contains('`') {
        return None;
    }
    Some((ch, len))
}

fn is_close(text: &str, f: &OpenFence) -> bool {
    let indent = text.len() - text.trim_start_matches(' ').len();
    if indent >= 4 + f.indent {
        return false;
    }
    let body = text[indent..].trim_end();
    body.chars().count() >= f.len && body.chars().all(|c| c == f.ch)
}

fn is_atx_heading(body: &str) -> bool {
    let hashes = body.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&hashes) && matches!(body.as_bytes().get(hashes), None | Some(b' ' | b'\t'))
}

/// `-`, `*`, `+` or `1.` / `1)` followed by a space or the line's end.
fn is_list_item(body: &str) -> bool {
    let bytes = body.as_bytes();
    let after = match bytes.first() {
        Some(b'-' | b'*' | b'+') => 1,
        Some(b'0'..=b'9') => {
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            if digits > 9 || !matches!(bytes.get(digits), Some(b'.' | b')')) {
                return false;
            }
            digits + 1
        }
        _ => return false,
    };
    matches!(bytes.get(after), None | Some(b' ' | b'\t'))
}
