//! One chunk of Markdown rendered through pulldown-cmark's events, and the code block
//! lines shared with the streamed top-level fences.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::table::Table;
use crate::Theme;
use crate::highlight::CodeHighlighter;
use crate::text::{Flow, indented, width_of};
use crate::theme::Role;

fn neutral(text: &str) -> String {
    xcsh_inspect::terminal::neutralize(text).replace('\t', "    ")
}

/// The lines of one code block: its fence lines (fenced blocks only) and its code,
/// highlighted line by line.
#[derive(Debug, Clone)]
pub(super) struct CodeBlock {
    /// The language shown on the opening fence; `None` for an indented block.
    fence: Option<String>,
    highlighter: CodeHighlighter,
}

impl CodeBlock {
    /// A fenced block with `info` (the text after the opening fence).
    pub(super) fn fenced(info: &str) -> CodeBlock {
        let lang = info
            .split(|c: char| c.is_whitespace() || c == ',' || c == '{' || c == '}')
            .find(|w| !w.is_empty())
            .unwrap_or("")
            .trim_start_matches('.');
        CodeBlock {
            fence: Some(neutral(lang)),
            highlighter: CodeHighlighter::new(lang),
        }
    }

    fn indented() -> CodeBlock {
        CodeBlock {
            fence: None,
            highlighter: CodeHighlighter::new(""),
        }
    }

    /// The opening fence line (`` ```rust ``), dimmed.
    pub(super) fn header(&self, theme: &Theme) -> Option<Line<'static>> {
        let lang = self.fence.as_ref()?;
        Some(Line::from(Span::styled(
            format!("```{lang}"),
            theme.style(Role::Dim),
        )))
    }

    /// The closing fence line, dimmed.
    pub(super) fn footer(&self, theme: &Theme) -> Option<Line<'static>> {
        self.fence
            .as_ref()
            .map(|_| Line::from(Span::styled("```", theme.style(Role::Dim))))
    }

    /// One line of code (without its newline), unwrapped.
    pub(super) fn line(&mut self, text: &str, theme: &Theme) -> Line<'static> {
        let mut spans = self.highlighter.line(text, theme);
        if self.fence.is_none() {
            spans.insert(0, Span::raw("    "));
        }
        Line::from(spans)
    }
}

impl CodeBlock {
    /// A line of code still being streamed (the tail's partial line), not
    /// highlighted: it is drawn on every frame until it completes, and then
    /// highlighted once (`line`), so a frame never pays the highlighter.
    pub(super) fn plain_line(&self, text: &str, theme: &Theme) -> Line<'static> {
        let mut spans = vec![Span::styled(neutral(text), theme.style(Role::Text))];
        if self.fence.is_none() {
            spans.insert(0, Span::raw("    "));
        }
        Line::from(spans)
    }
}

/// `src` (one chunk) rendered at `width`. `final_`: the message is complete (an
/// unclosed fence gets its closing line).
pub(super) fn render_chunk(
    src: &str,
    width: u16,
    theme: &Theme,
    final_: bool,
) -> Vec<Line<'static>> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut writer = Writer::new(width, theme);
    for (event, range) in Parser::new_ext(src, options).into_offset_iter() {
        writer.event(event, &src[range], final_);
    }
    writer.out
}

#[derive(Debug)]
enum Kind {
    Root,
    Quote,
    List {
        next: Option<u64>,
        loose: bool,
    },
    Item {
        marker: Vec<Span<'static>>,
        first: bool,
    },
}

#[derive(Debug)]
struct Container {
    kind: Kind,
    has_content: bool,
}

struct Link {
    dest: String,
    /// Where the link's text starts in the inline spans.
    start: usize,
}

struct Code {
    block: CodeBlock,
    text: String,
    closed: bool,
}

struct Writer<'t> {
    width: u16,
    theme: &'t Theme,
    out: Vec<Line<'static>>,
    containers: Vec<Container>,
    /// The current logical line of an open paragraph, heading or cell.
    inline: Vec<Span<'static>>,
    /// A paragraph, heading, or a tight item's text is open.
    in_inline: bool,
    /// The open inline block is a tight item's text (no Paragraph tag).
    implicit: bool,
    styles: Vec<Style>,
    links: Vec<Link>,
    code: Option<Code>,
    table: Option<Table>,
}

impl<'t> Writer<'t> {
    fn new(width: u16, theme: &'t Theme) -> Writer<'t> {
        Writer {
            width,
            theme,
            out: Vec::new(),
            containers: vec![Container {
                kind: Kind::Root,
                has_content: false,
            }],
            inline: Vec::new(),
            in_inline: false,
            implicit: false,
            styles: vec![theme.style(Role::Text)],
            links: Vec::new(),
            code: None,
            table: None,
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, patch: Style) {
        let s = self.style().patch(patch);
        self.styles.push(s);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    /// The spans inline content goes to: the current table cell or the logical line.
    fn sink(&mut self) -> &mut Vec<Span<'static>> {
        match &mut self.table {
            Some(table) => table.cell(),
            None => &mut self.inline,
        }
    }

    fn push_span(&mut self, text: String, style: Style) {
        if text.is_empty() {
            return;
        }
        let sink = self.sink();
        if let Some(last) = sink.last_mut()
            && last.style == style
        {
            last.content.to_mut().push_str(&text);
            return;
        }
        sink.push(Span::styled(text, style));
    }

    /// The prefixes of the next line (first row, other rows) from the containers.
    fn prefixes(&self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = Vec::new();
        let mut rest = Vec::new();
        for c in &self.containers {
            match &c.kind {
                Kind::Quote => {
                    let bar = Span::styled("│ ", self.theme.style(Role::Quote));
                    first.push(bar.clone());
                    rest.push(bar);
                }
                Kind::Item { marker, first: f } => {
                    let pad = Span::raw(" ".repeat(width_of(marker)));
                    if *f {
                        first.extend(marker.iter().cloned());
                    } else {
                        first.push(pad.clone());
                    }
                    rest.push(pad);
                }
                Kind::Root | Kind::List { .. } => {}
            }
        }
        (first, rest)
    }

    fn emitted(&mut self) {
        for c in &mut self.containers {
            if let Kind::Item { first, .. } = &mut c.kind {
                *first = false;
            }
        }
    }

    /// `line` wrapped at words under the containers' prefixes.
    fn emit_wrapped(&mut self, line: Line<'static>) {
        let (first, rest) = self.prefixes();
        self.out
            .extend(indented(&line, self.width, first, rest, Flow::Words));
        self.emitted();
    }

    /// `line` cut at the width (no reflow) under the containers' prefixes.
    fn emit_cut(&mut self, line: Line<'static>) {
        let (first, rest) = self.prefixes();
        self.out
            .extend(indented(&line, self.width, first, rest, Flow::Width));
        self.emitted();
    }

    /// A blank line between blocks: only the quote bars.
    fn blank(&mut self) {
        let (_, rest) = self.prefixes();
        let mut spans: Vec<Span<'static>> = rest;
        while let Some(last) = spans.last_mut() {
            let trimmed = last.content.trim_end().to_string();
            if trimmed.is_empty() {
                spans.pop();
            } else {
                last.content = trimmed.into();
                break;
            }
        }
        self.out.push(Line::from(spans));
    }

    /// The columns a block's lines get under the current prefixes.
    fn avail(&self) -> usize {
        let (first, rest) = self.prefixes();
        usize::from(self.width.max(1))
            .saturating_sub(width_of(&first).max(width_of(&rest)))
            .max(1)
    }

    /// A block starts in the innermost container: a blank line before it when the
    /// container separates its blocks and has one already.
    fn begin_block(&mut self) {
        self.end_implicit();
        let n = self.containers.len();
        let separates = match &self.containers[n - 1].kind {
            Kind::Root | Kind::Quote => true,
            Kind::List { loose, .. } => *loose,
            Kind::Item { .. } => {
                n >= 2 && matches!(self.containers[n - 2].kind, Kind::List { loose: true, .. })
            }
        };
        if self.containers[n - 1].has_content && separates {
            self.blank();
        }
        self.containers[n - 1].has_content = true;
    }

    fn flush_inline(&mut self) {
        let spans = std::mem::take(&mut self.inline);
        self.emit_wrapped(Line::from(spans));
    }

    fn end_implicit(&mut self) {
        if self.implicit {
            self.flush_inline();
            self.implicit = false;
            self.in_inline = false;
        }
    }

    /// Inline content outside a paragraph (a tight list item's text) opens one.
    fn ensure_inline(&mut self) {
        if !self.in_inline && self.table.is_none() {
            self.begin_block();
            self.in_inline = true;
            self.implicit = true;
        }
    }

    fn event(&mut self, event: Event<'_>, raw: &str, final_: bool) {
        if let Some(code) = &mut self.code {
            match event {
                Event::Text(t) => code.text.push_str(&t),
                Event::End(TagEnd::CodeBlock) => self.end_code(final_),
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag, raw),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => {
                self.ensure_inline();
                let style = self.style();
                self.push_span(neutral(&t), style);
            }
            Event::Code(t) => {
                self.ensure_inline();
                let style = self.style().patch(self.theme.style(Role::InlineCode));
                let t = neutral(&t);
                let t = if self.theme.color {
                    t
                } else {
                    format!("`{t}`")
                };
                self.push_span(t, style);
            }
            Event::InlineHtml(t)
            | Event::InlineMath(t)
            | Event::DisplayMath(t)
            | Event::FootnoteReference(t) => {
                self.ensure_inline();
                let style = self.style();
                self.push_span(neutral(&t), style);
            }
            Event::Html(t) => {
                for line in t.lines() {
                    self.emit_wrapped(Line::from(Span::styled(
                        neutral(line),
                        self.theme.style(Role::Text),
                    )));
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if self.table.is_some() {
                    let style = self.style();
                    self.push_span(" ".into(), style);
                } else {
                    self.ensure_inline();
                    self.flush_inline();
                }
            }
            Event::Rule => {
                self.begin_block();
                let rule = "─".repeat(self.avail());
                self.emit_cut(Line::from(Span::styled(rule, self.theme.style(Role::Dim))));
            }
            Event::TaskListMarker(done) => {
                self.ensure_inline();
                let (text, role) = if done {
                    ("[x] ", Role::Success)
                } else {
                    ("[ ] ", Role::Dim)
                };
                self.push_span(text.into(), self.theme.style(role));
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>, raw: &str) {
        match tag {
            Tag::Paragraph => {
                let n = self.containers.len();
                if matches!(self.containers[n - 1].kind, Kind::Item { .. })
                    && let Kind::List { loose, .. } = &mut self.containers[n - 2].kind
                {
                    *loose = true;
                }
                self.begin_block();
                self.in_inline = true;
            }
            Tag::Heading { level, .. } => {
                self.begin_block();
                self.in_inline = true;
                self.push_style(self.theme.style(Role::Heading));
                let marks = "#".repeat(heading_level(level));
                let style = self.style();
                self.push_span(format!("{marks} "), style);
            }
            Tag::BlockQuote(_) => {
                self.begin_block();
                self.containers.push(Container {
                    kind: Kind::Quote,
                    has_content: false,
                });
                self.push_style(self.theme.style(Role::Quote));
            }
            Tag::CodeBlock(kind) => {
                self.begin_block();
                let block = match kind {
                    CodeBlockKind::Fenced(info) => CodeBlock::fenced(&info),
                    CodeBlockKind::Indented => CodeBlock::indented(),
                };
                self.code = Some(Code {
                    closed: is_closed_fence(raw),
                    block,
                    text: String::new(),
                });
            }
            Tag::HtmlBlock => self.begin_block(),
            Tag::List(start) => {
                self.begin_block();
                self.containers.push(Container {
                    kind: Kind::List {
                        next: start,
                        loose: false,
                    },
                    has_content: false,
                });
            }
            Tag::Item => {
                self.begin_block();
                let n = self.containers.len();
                let marker = match &mut self.containers[n - 1].kind {
                    Kind::List { next: Some(k), .. } => {
                        let m = format!("{k}. ");
                        *k += 1;
                        m
                    }
                    _ => "- ".to_string(),
                };
                self.containers.push(Container {
                    kind: Kind::Item {
                        marker: vec![Span::styled(marker, self.theme.style(Role::Text))],
                        first: true,
                    },
                    has_content: false,
                });
            }
            Tag::Table(aligns) => {
                self.begin_block();
                self.table = Some(Table::new(aligns));
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.row();
                }
            }
            Tag::TableCell => {
                if let Some(t) = &mut self.table {
                    t.new_cell();
                }
            }
            Tag::Emphasis => self.push_style(Style::default().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(Style::default().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => {
                self.push_style(Style::default().add_modifier(Modifier::CROSSED_OUT))
            }
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.ensure_inline();
                self.push_style(self.theme.style(Role::Link));
                let start = self.sink().len();
                self.links.push(Link {
                    dest: neutral(&dest_url),
                    start,
                });
            }
            Tag::Superscript
            | Tag::Subscript
            | Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush_inline();
                self.in_inline = false;
            }
            TagEnd::Heading(_) => {
                self.flush_inline();
                self.in_inline = false;
                self.pop_style();
            }
            TagEnd::BlockQuote(_) => {
                self.end_implicit();
                self.containers.pop();
                self.pop_style();
            }
            TagEnd::List(_) => {
                self.end_implicit();
                self.containers.pop();
            }
            TagEnd::Item => {
                self.end_implicit();
                if let Some(Container {
                    kind: Kind::Item { first: true, .. },
                    ..
                }) = self.containers.last()
                {
                    // An empty item still shows its marker.
                    self.emit_wrapped(Line::default());
                }
                self.containers.pop();
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    let avail = self.avail();
                    for line in table.lines(avail, self.theme) {
                        if line.spans.is_empty() {
                            self.blank();
                        } else {
                            self.emit_cut(line);
                        }
                    }
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link | TagEnd::Image => {
                self.pop_style();
                if let Some(link) = self.links.pop() {
                    let sink = self.sink();
                    let start = link.start.min(sink.len());
                    let text: String = sink[start..].iter().map(|s| s.content.as_ref()).collect();
                    let same = text == link.dest
                        || link.dest.strip_prefix("mailto:") == Some(text.as_str())
                        || link.dest.is_empty();
                    if !same {
                        self.push_span(format!(" ({})", link.dest), self.theme.style(Role::Dim));
                    }
                }
            }
            TagEnd::CodeBlock
            | TagEnd::HtmlBlock
            | TagEnd::TableHead
            | TagEnd::TableRow
            | TagEnd::TableCell
            | TagEnd::Superscript
            | TagEnd::Subscript
            | TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => {}
        }
    }

    fn end_code(&mut self, final_: bool) {
        let Some(mut code) = self.code.take() else {
            return;
        };
        if let Some(h) = code.block.header(self.theme) {
            self.emit_cut(h);
        }
        for line in code.text.lines() {
            let line = code.block.line(line, self.theme);
            self.emit_cut(line);
        }
        if (code.closed || final_)
            && let Some(f) = code.block.footer(self.theme)
        {
            self.emit_cut(f);
        }
    }
}

fn heading_level(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Whether a fenced code block's source (`raw`, fences included) ends with its
/// closing fence.
fn is_closed_fence(raw: &str) -> bool {
    let mut lines = raw.trim_end().lines();
    let Some(first) = lines.next() else {
        return false;
    };
    let Some(last) = lines.last() else {
        return false;
    };
    let first = first.trim_start_matches([' ', '>']);
    let last = last.trim_start_matches([' ', '>']).trim_end();
    let Some(c) = first.chars().next() else {
        return false;
    };
    let open = first.chars().take_while(|&x| x == c).count();
    (c == '`' || c == '~') && last.chars().all(|x| x == c) && last.width() >= open
}
