//! Benchmark: 100,000 stream deltas of a generated assistant answer through
//! [`MarkdownStream`] into a ratatui `TestBackend`, frames drawn as the UI draws them.
//!
//! OWNER: helper "markdown".
//!
//! The answer (prose with inline code and emphasis, nested lists, Rust and shell code
//! blocks, a table, headings) arrives in deltas of 2..10 characters, one every 0.5 ms
//! of a SIMULATED clock; a frame is drawn whenever 1/60 s of that clock has passed
//! since the last one (so every 34 deltas): the lines finished since the last frame
//! (`take_finished`) are drawn once with a `Paragraph` into a buffer of their height,
//! as `insert_before` draws them above the viewport (the terminal keeps them in its
//! scrollback from then on; TestBackend's emulation of that scrollback, a growing
//! Vec of cells, would cost more than the renderer and is left out), and the
//! unfinished tail (`tail`) is drawn with a `Paragraph` at the bottom of a 120×40
//! `TestBackend` (`Terminal::draw`, diff and all). `cargo bench -p xcsh-tui --bench stream` prints the number
//! of frames (`frames_drawn N`) before divan's table; `scripts/bench.sh` (section
//! "tui", `TUI_ONLY=1`) divides the median by the number of deltas.

use std::hint::black_box;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};
use xcsh_tui::Theme;
use xcsh_tui::highlight::CodeHighlighter;
use xcsh_tui::markdown::{MarkdownStream, render};

const DELTAS: usize = 100_000;
const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;
/// Simulated time between deltas and between frames, in microseconds.
const DELTA_US: u64 = 500;
const FRAME_US: u64 = 1_000_000 / 60;

fn main() {
    let deltas = deltas();
    let frames = stream_into_terminal(&deltas);
    println!("frames_drawn {frames}");
    println!("deltas {}", deltas.len());
    println!("bytes {}", deltas.iter().map(String::len).sum::<usize>());
    divan::main();
}

/// A deterministic pseudo-random sequence (a 64-bit LCG), so every run streams the
/// same answer in the same deltas.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        usize::try_from((self.0 >> 33) % n as u64).unwrap_or(0)
    }
}

/// One section of the answer, varied by `i`.
fn section(i: usize, rng: &mut Lcg, langs: [&str; 2]) -> String {
    let words = [
        "the", "parser", "reads", "each", "line", "and", "returns", "a", "field", "when", "it",
        "sees", "comma", "so", "that", "caller", "never", "loses", "data", "between", "two",
        "calls", "because", "buffer", "keeps", "what", "was", "left", "over",
    ];
    let mut prose = |n: usize| {
        let mut s = String::new();
        for k in 0..n {
            if k > 0 {
                s.push(' ');
            }
            match rng.next(12) {
                0 => s.push_str("`parse_line`"),
                1 => s.push_str("**important**"),
                2 => s.push_str("*note*"),
                _ => s.push_str(words[rng.next(words.len())]),
            }
        }
        s.push('.');
        s
    };
    let [rust, sh] = langs;
    let mut out = format!(
        "## Step {i}: fixing the reader\n\n{}\n\n{}\n\n",
        prose(60),
        prose(35)
    );
    out.push_str(&format!(
        "- first {}\n- second {}\n  - nested {}\n  - nested {}\n- third {}\n\n",
        prose(8),
        prose(12),
        prose(6),
        prose(9),
        prose(5)
    ));
    out.push_str(&format!(
        "```{rust}\nfn parse_line_{i}(line: &str) -> Vec<&str> {{\n    // split on commas, keeping the last field\n    let mut fields = Vec::new();\n    for (n, field) in line.split(',').enumerate() {{\n        fields.push(field.trim());\n        if n > {i} {{ break; }}\n    }}\n    fields\n}}\n```\n\n"
    ));
    out.push_str(&format!("{}\n\n", prose(25)));
    out.push_str(&format!(
        "| Case | Input | Expected | Status |\n|------|-------|----------|:------:|\n| {i}a | `a,b` | two fields | ok |\n| {i}b | `a,` | two, the last empty | fixed |\n| {i}c | `` | none | ok |\n\n"
    ));
    out.push_str(&format!(
        "```{sh}\ncargo test -p reader\ngit diff --stat\n```\n\n"
    ));
    out.push_str(&format!(
        "1. {}\n2. {}\n3. {}\n\n",
        prose(10),
        prose(14),
        prose(7)
    ));
    out
}

/// The answer cut into `DELTAS` deltas of 2..10 characters; its code blocks in
/// `langs` (Rust and shell, or a language no highlighter knows, for a reference).
fn deltas_in(langs: [&str; 2]) -> Vec<String> {
    let mut rng = Lcg(7);
    let mut out = Vec::with_capacity(DELTAS);
    let mut i = 0;
    while out.len() < DELTAS {
        let text: Vec<char> = section(i, &mut rng, langs).chars().collect();
        i += 1;
        let mut at = 0;
        while at < text.len() && out.len() < DELTAS {
            let n = 2 + rng.next(9);
            let end = (at + n).min(text.len());
            out.push(text[at..end].iter().collect());
            at = end;
        }
    }
    out
}

fn deltas() -> Vec<String> {
    deltas_in(["rust", "sh"])
}

/// Streams `deltas` as the UI does; returns the number of frames. Without `draw`, a
/// frame only takes the finished lines and renders the tail (no terminal).
fn stream_into_terminal(deltas: &[String]) -> usize {
    stream_frames(deltas, true)
}

fn stream_frames(deltas: &[String], draw_frames: bool) -> usize {
    let theme = Theme::COLOR;
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("a test terminal");
    let mut stream = MarkdownStream::new();
    let mut frames = 0;
    let mut last_frame = 0;
    let mut draw = move |finished: Vec<Line<'static>>, tail: Vec<Line<'static>>| {
        if !draw_frames {
            return;
        }
        // The finished lines are drawn once, as `insert_before` draws them above the
        // viewport (the terminal keeps them in its scrollback from then on).
        for batch in finished.chunks(usize::from(u16::MAX)) {
            let height = u16::try_from(batch.len()).unwrap_or(u16::MAX);
            let mut buffer = Buffer::empty(Rect::new(0, 0, WIDTH, height));
            Paragraph::new(batch.to_vec()).render(buffer.area, &mut buffer);
            black_box(&buffer);
        }
        // The tail, its last rows at the bottom of the screen.
        let rows = tail.len().min(usize::from(HEIGHT));
        let visible = tail[tail.len() - rows..].to_vec();
        terminal
            .draw(|f| {
                let area = f.area();
                let height = u16::try_from(rows).unwrap_or(HEIGHT);
                let at = Rect::new(0, area.height - height, area.width, height);
                f.render_widget(Paragraph::new(visible), at);
            })
            .expect("drawing into a TestBackend");
    };
    for (n, delta) in deltas.iter().enumerate() {
        stream.push(delta);
        let now = (n as u64 + 1) * DELTA_US;
        if now - last_frame >= FRAME_US {
            last_frame = now;
            let finished = stream.take_finished(WIDTH, &theme);
            draw(finished, stream.tail(WIDTH, &theme));
            frames += 1;
        }
    }
    let rest = stream.finish(WIDTH, &theme);
    draw(rest, Vec::new());
    frames + 1
}

/// The whole stream with its frames (divide by `DELTAS` for the cost per delta).
#[divan::bench(sample_count = 5, sample_size = 1)]
fn stream_100k_deltas_with_frames(bencher: divan::Bencher) {
    let deltas = deltas();
    bencher.bench_local(|| stream_into_terminal(&deltas));
}

/// The same frames without drawing them (the renderer's share of the cost).
#[divan::bench(sample_count = 5, sample_size = 1)]
fn stream_100k_deltas_without_drawing(bencher: divan::Bencher) {
    let deltas = deltas();
    bencher.bench_local(|| stream_frames(&deltas, false));
}

/// The same answer with its code blocks in a language no highlighter knows, drawn
/// (the cost without highlighting).
#[divan::bench(sample_count = 5, sample_size = 1)]
fn stream_100k_deltas_code_unhighlighted(bencher: divan::Bencher) {
    let deltas = deltas_in(["nosuchlang", "nosuchlang"]);
    bencher.bench_local(|| stream_into_terminal(&deltas));
}

/// Only `push` of every delta, no frame (the floor of the streaming cost).
#[divan::bench(sample_count = 5, sample_size = 1)]
fn push_100k_deltas(bencher: divan::Bencher) {
    let deltas = deltas();
    bencher.bench_local(|| {
        let mut stream = MarkdownStream::new();
        for d in &deltas {
            stream.push(d);
        }
        stream.source().len()
    });
}

/// The whole answer rendered at once (what the lines of the stream add up to).
#[divan::bench(sample_count = 5, sample_size = 1)]
fn render_whole_answer(bencher: divan::Bencher) {
    let text: String = deltas().concat();
    bencher.bench_local(|| render(&text, WIDTH, &Theme::COLOR).len());
}

/// Highlighting alone: the answer's Rust block (10 lines).
#[divan::bench(sample_count = 20, sample_size = 10)]
fn highlight_rust_block(bencher: divan::Bencher) {
    let text = section(1, &mut Lcg(7), ["rust", "sh"]);
    let code: Vec<&str> = text
        .split("```rust\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap_or("")
        .lines()
        .collect();
    bencher.bench_local(|| {
        let mut h = CodeHighlighter::new("rust");
        code.iter()
            .map(|line| h.line(line, &Theme::COLOR).len())
            .sum::<usize>()
    });
}
