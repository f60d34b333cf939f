//! The one lexer behind [`super::CodeHighlighter`]: it cuts a line of code into
//! classified tokens by the rules of a [`Language`], carrying what is still open at
//! the line's end (a block comment, a multi-line string, a markup tag) to the next.

use super::languages::{Language, Mode, StringForm};

/// A token's class; [`super`] gives each a style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    Keyword,
    Type,
    Function,
    Macro,
    String,
    /// An escape inside a string (`\n`) or an entity in markup (`&amp;`).
    Escape,
    /// A number or a built-in constant.
    Number,
    Comment,
    /// `#[derive]`, `@decorator`, `#include`, a markup attribute's name.
    Attribute,
    /// `$var`, a key (`key:` in YAML, `"key":` in JSON), a TOML section.
    Variable,
    /// A markup tag's name.
    Tag,
    Operator,
    Punctuation,
    Plain,
    /// Diff lines: added, removed, a hunk header, a file header.
    Inserted,
    Deleted,
    Hunk,
    Header,
}

/// What a line leaves open for the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum State {
    #[default]
    Code,
    /// Inside a block comment, `depth` deep (nesting languages).
    Comment { depth: u32 },
    /// Inside a multi-line string closed by `close` and then `hashes` `#`s.
    String {
        close: &'static str,
        hashes: usize,
        escapes: bool,
    },
    /// Inside a markup tag (between `<name` and `>`).
    Tag,
}

/// One token: its class and its byte range in the line.
pub type Piece = (Token, usize, usize);

/// The tokens of `line` (without its newline), covering it in order; `state` is what
/// the line before left open, and becomes what this one leaves open.
pub fn lex(lang: &Language, state: &mut State, line: &str) -> Vec<Piece> {
    let mut lexer = Lexer {
        lang,
        line,
        out: Vec::new(),
    };
    match lang.mode {
        Mode::Code => lexer.code(state),
        Mode::Markup => lexer.markup(state),
        Mode::Diff => lexer.diff(),
    }
    lexer.out
}

struct Lexer<'l, 's> {
    lang: &'l Language,
    line: &'s str,
    out: Vec<Piece>,
}

fn is_word_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn char_at(text: &str, at: usize) -> Option<char> {
    text.get(at..).and_then(|rest| rest.chars().next())
}

impl Lexer<'_, '_> {
    fn push(&mut self, token: Token, start: usize, end: usize) {
        if start >= end {
            return;
        }
        if let Some(last) = self.out.last_mut()
            && last.0 == token
            && last.2 == start
        {
            last.2 = end;
            return;
        }
        self.out.push((token, start, end));
    }

    fn rest(&self, at: usize) -> &str {
        self.line.get(at..).unwrap_or("")
    }

    fn is_word_char(&self, c: char) -> bool {
        c.is_alphanumeric() || c == '_' || self.lang.word_chars.contains(c)
    }

    /// The end of the word starting at `at`.
    fn word_end(&self, at: usize) -> usize {
        let rest = self.rest(at);
        at + rest
            .char_indices()
            .find(|&(_, c)| !self.is_word_char(c))
            .map_or(rest.len(), |(i, _)| i)
    }

    fn whitespace_end(&self, at: usize) -> usize {
        let rest = self.rest(at);
        at + (rest.len() - rest.trim_start().len())
    }

    fn in_list(&self, list: &[&str], word: &str) -> bool {
        if self.lang.case_insensitive {
            list.iter().any(|w| w.eq_ignore_ascii_case(word))
        } else {
            list.contains(&word)
        }
    }

    fn diff(&mut self) {
        let line = self.line;
        let token = if ["+++", "---", "diff ", "index "]
            .iter()
            .any(|p| line.starts_with(p))
        {
            Token::Header
        } else if line.starts_with("@@") {
            Token::Hunk
        } else if line.starts_with('+') {
            Token::Inserted
        } else if line.starts_with('-') {
            Token::Deleted
        } else {
            Token::Plain
        };
        self.push(token, 0, line.len());
    }

    fn code(&mut self, state: &mut State) {
        let lang = self.lang;
        let mut at = self.resume(state, 0);
        let first_word = self.whitespace_end(0);
        if lang.sections && at == 0 && self.rest(first_word).starts_with('[') {
            let end = self.rest(0).rfind(']').map_or(self.line.len(), |i| i + 1);
            self.push(Token::Plain, 0, first_word);
            self.push(Token::Variable, first_word, end);
            at = end;
        }
        while at < self.line.len() {
            let Some(c) = char_at(self.line, at) else {
                break;
            };
            let rest = self.rest(at);
            if c.is_whitespace() {
                let end = self.whitespace_end(at);
                self.push(Token::Plain, at, end);
                at = end;
                continue;
            }
            if let Some((open, _)) = lang.block_comment
                && rest.starts_with(open)
            {
                *state = State::Comment { depth: 1 };
                at = self.comment(state, at, at + open.len());
                continue;
            }
            let word_starts = self.line[..at]
                .chars()
                .next_back()
                .is_none_or(char::is_whitespace);
            if lang.line_comments.iter().any(|m| rest.starts_with(m))
                && (!lang.comment_after_space || word_starts)
            {
                self.push(Token::Comment, at, self.line.len());
                return;
            }
            if let Some(end) = self.string(state, at) {
                at = self.key(end, at);
                continue;
            }
            at = self.other(c, at, first_word);
        }
    }

    /// Continues what the line before left open; the position after it.
    fn resume(&mut self, state: &mut State, at: usize) -> usize {
        match *state {
            State::Comment { .. } => self.comment(state, at, at),
            State::String {
                close,
                hashes,
                escapes,
            } => self.string_body(state, at, at, close, hashes, escapes, true),
            State::Code | State::Tag => at,
        }
    }

    /// A block comment from `start` (its body from `from`) to its close or the line's
    /// end; the position after it.
    fn comment(&mut self, state: &mut State, start: usize, from: usize) -> usize {
        let Some((open, close)) = self.lang.block_comment else {
            *state = State::Code;
            return start;
        };
        let State::Comment { mut depth } = *state else {
            return start;
        };
        let mut at = from;
        while at < self.line.len() {
            let rest = self.rest(at);
            if rest.starts_with(close) {
                at += close.len();
                depth -= 1;
                if depth == 0 {
                    *state = State::Code;
                    self.push(Token::Comment, start, at);
                    return at;
                }
            } else if self.lang.nested_comments && rest.starts_with(open) {
                at += open.len();
                depth += 1;
            } else {
                at += rest.chars().next().map_or(1, char::len_utf8);
            }
        }
        *state = State::Comment { depth };
        self.push(Token::Comment, start, self.line.len());
        self.line.len()
    }

    /// A string starting at `at`, if one does; the position after it (or after the
    /// part of it on this line).
    fn string(&mut self, state: &mut State, at: usize) -> Option<usize> {
        let lang = self.lang;
        let rest = self.rest(at);
        let prefix = lang
            .string_prefixes
            .iter()
            .copied()
            .find(|p| {
                rest.starts_with(p)
                    && lang
                        .strings
                        .iter()
                        .any(|s| rest[p.len()..].starts_with(s.open))
            })
            .map_or(0, str::len);
        let (open_len, close, hashes, escapes, multiline) =
            if let Some((open_len, hashes)) = self.raw_open(rest) {
                (open_len, "\"", hashes, false, true)
            } else if let Some(form) = self.form(&rest[prefix..]) {
                (
                    prefix + form.open.len(),
                    form.close,
                    0,
                    form.escapes,
                    form.multiline,
                )
            } else {
                return self.char_literal(at);
            };
        Some(self.string_body(state, at, at + open_len, close, hashes, escapes, multiline))
    }

    /// The length of a Rust raw string's opening (`r#"`, `br"`) starting `rest`, and
    /// its number of `#`s.
    fn raw_open(&self, rest: &str) -> Option<(usize, usize)> {
        if !self.lang.raw_strings {
            return None;
        }
        let after_r = rest.strip_prefix("br").or_else(|| rest.strip_prefix('r'))?;
        let hashes = after_r.len() - after_r.trim_start_matches('#').len();
        after_r[hashes..]
            .starts_with('"')
            .then_some((rest.len() - after_r.len() + hashes + 1, hashes))
    }

    /// The string form opening `rest`.
    fn form(&self, rest: &str) -> Option<&'static StringForm> {
        let lang: &'static [StringForm] = self.lang.strings;
        lang.iter().find(|s| rest.starts_with(s.open))
    }

    /// `'x'`, `'\n'` (or a Rust lifetime `'a`) at `at`.
    fn char_literal(&mut self, at: usize) -> Option<usize> {
        let rest = self.rest(at);
        if !self.lang.char_literals || !rest.starts_with('\'') {
            return None;
        }
        let is_char = match char_at(rest, 1) {
            Some('\\') => true,
            Some('\'') | None => false,
            Some(c) => rest[1 + c.len_utf8()..].starts_with('\''),
        };
        if is_char {
            let mut state = State::Code;
            return Some(self.string_body(&mut state, at, at + 1, "'", 0, true, false));
        }
        match char_at(rest, 1) {
            Some(c) if self.lang.lifetimes && is_word_start(c) => {
                let end = self.word_end(at + 1);
                self.push(Token::Keyword, at, end);
                Some(end)
            }
            _ => None,
        }
    }

    /// A string's body from `from` (the string itself from `start`) to its close, or
    /// the line's end: there a multi-line string stays open in `state`.
    #[allow(clippy::too_many_arguments)]
    fn string_body(
        &mut self,
        state: &mut State,
        start: usize,
        from: usize,
        close: &'static str,
        hashes: usize,
        escapes: bool,
        multiline: bool,
    ) -> usize {
        let mut piece = start;
        let mut at = from;
        while at < self.line.len() {
            let rest = self.rest(at);
            if escapes && rest.starts_with('\\') {
                let len = 1 + char_at(rest, 1).map_or(0, char::len_utf8);
                self.push(Token::String, piece, at);
                self.push(Token::Escape, at, at + len);
                at += len;
                piece = at;
                continue;
            }
            if let Some(after) = rest.strip_prefix(close)
                && after.len() - after.trim_start_matches('#').len() >= hashes
            {
                let end = at + close.len() + hashes;
                self.push(Token::String, piece, end);
                *state = State::Code;
                return end;
            }
            at += rest.chars().next().map_or(1, char::len_utf8);
        }
        self.push(Token::String, piece, self.line.len());
        *state = if multiline {
            State::String {
                close,
                hashes,
                escapes,
            }
        } else {
            State::Code
        };
        self.line.len()
    }

    /// Makes the token ending at `end` (started at `start`) a key when the language's
    /// key separator follows it; `end`.
    fn key(&mut self, end: usize, start: usize) -> usize {
        if let Some(sep) = self.lang.key_separator
            && char_at(self.line, self.whitespace_end(end)) == Some(sep)
        {
            self.out.retain(|p| p.1 < start);
            if let Some(last) = self.out.last_mut() {
                last.2 = last.2.min(start);
            }
            self.push(Token::Variable, start, end);
        }
        end
    }

    /// A word, number, variable, attribute, operator or punctuation at `at`; the
    /// position after it.
    fn other(&mut self, c: char, at: usize, first_word: usize) -> usize {
        let lang = self.lang;
        let rest = self.rest(at);
        if is_word_start(c) || (c == '$' && lang.word_chars.contains('$')) {
            let end = self.word_end(at);
            return self.word(at, end, first_word);
        }
        if c.is_ascii_digit() || (c == '.' && char_at(rest, 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let mut end = at + 1;
            while let Some(d) = char_at(self.line, end) {
                let fraction =
                    d == '.' && char_at(self.line, end + 1).is_some_and(|n| n.is_ascii_digit());
                if d.is_alphanumeric() || d == '_' || fraction {
                    end += d.len_utf8();
                } else {
                    break;
                }
            }
            self.push(Token::Number, at, end);
            return self.key(end, at);
        }
        if lang.dollar_variables && c == '$' {
            let end = match char_at(rest, 1) {
                Some('{') => rest.find('}').map_or(self.line.len(), |i| at + i + 1),
                Some('(') => {
                    let name_end = self.word_end(at + 2);
                    if name_end > at + 2 && self.rest(name_end).starts_with(')') {
                        name_end + 1
                    } else {
                        at + 1
                    }
                }
                Some(n) if is_word_start(n) => self.word_end(at + 1),
                Some(n) if n.is_ascii_digit() || "@?#*!$-^<+".contains(n) => at + 2,
                _ => at + 1,
            };
            let token = if end > at + 1 {
                Token::Variable
            } else {
                Token::Operator
            };
            self.push(token, at, end);
            return end;
        }
        if lang.decorators && c == '@' && char_at(rest, 1).is_some_and(is_word_start) {
            let mut end = self.word_end(at + 1);
            while self.rest(end).starts_with('.')
                && char_at(self.line, end + 1).is_some_and(is_word_start)
            {
                end = self.word_end(end + 1);
            }
            self.push(Token::Attribute, at, end);
            return end;
        }
        if lang.hash_attributes && (rest.starts_with("#[") || rest.starts_with("#![")) {
            let mut depth = 0usize;
            let mut end = self.line.len();
            for (i, b) in rest.bytes().enumerate() {
                match b {
                    b'[' => depth += 1,
                    b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            end = at + i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            self.push(Token::Attribute, at, end);
            return end;
        }
        if lang.preprocessor && c == '#' && at == first_word {
            let name = self.whitespace_end(at + 1);
            let end = self.word_end(name);
            self.push(Token::Attribute, at, end);
            let path = self.whitespace_end(end);
            if self.rest(path).starts_with('<')
                && let Some(close) = self.rest(path).find('>')
            {
                self.push(Token::Plain, end, path);
                self.push(Token::String, path, path + close + 1);
                return path + close + 1;
            }
            return end;
        }
        let token = if "()[]{},;.".contains(c) {
            Token::Punctuation
        } else {
            Token::Operator
        };
        let end = at + c.len_utf8();
        self.push(token, at, end);
        end
    }

    /// Classifies the word `at..end`; the position after it.
    fn word(&mut self, at: usize, end: usize, first_word: usize) -> usize {
        let lang = self.lang;
        let word = &self.line[at..end];
        let next = char_at(self.line, end);
        let keyword_here = !lang.keywords_at_line_start || at == first_word;
        let (token, end) = if keyword_here && self.in_list(lang.keywords, word) {
            (Token::Keyword, end)
        } else if self.in_list(lang.literals, word) {
            (Token::Number, end)
        } else if self.in_list(lang.types, word) {
            (Token::Type, end)
        } else if self.in_list(lang.builtins, word) {
            (Token::Function, end)
        } else if lang.macros && next == Some('!') && char_at(self.line, end + 1) != Some('=') {
            (Token::Macro, end + 1)
        } else if lang.capitalized_types && word.starts_with(|c: char| c.is_uppercase()) {
            let screaming = word.len() > 1
                && word
                    .chars()
                    .all(|c| c.is_uppercase() || c.is_ascii_digit() || c == '_');
            if screaming {
                (Token::Number, end)
            } else {
                (Token::Type, end)
            }
        } else if next == Some('(') || self.after_definition_keyword() {
            (Token::Function, end)
        } else {
            (Token::Plain, end)
        };
        self.push(token, at, end);
        self.key(end, at)
    }

    /// Whether the last word before the current one is `fn`, `def`, `func` or
    /// `function` (so the current one is the name being defined).
    fn after_definition_keyword(&self) -> bool {
        let mut pieces = self.out.iter().rev();
        let last = match pieces.next() {
            Some(&(Token::Plain, start, end)) if self.line[start..end].trim().is_empty() => {
                pieces.next()
            }
            other => other,
        };
        last.is_some_and(|&(token, start, end)| {
            token == Token::Keyword
                && ["fn", "def", "func", "function"].contains(&&self.line[start..end])
        })
    }

    fn markup(&mut self, state: &mut State) {
        let mut at = self.resume(state, 0);
        while at < self.line.len() {
            let Some(c) = char_at(self.line, at) else {
                break;
            };
            let rest = self.rest(at);
            if *state == State::Tag {
                at = self.in_tag(state, c, at);
                continue;
            }
            if let Some((open, _)) = self.lang.block_comment
                && rest.starts_with(open)
            {
                *state = State::Comment { depth: 1 };
                at = self.comment(state, at, at + open.len());
                continue;
            }
            if c == '<' && char_at(rest, 1).is_some_and(|n| is_word_start(n) || "/!?".contains(n)) {
                let name =
                    at + 1 + rest[1..].len() - rest[1..].trim_start_matches(['/', '!', '?']).len();
                self.push(Token::Punctuation, at, name);
                let end = self.word_end(name);
                self.push(Token::Tag, name, end);
                *state = State::Tag;
                at = end;
                continue;
            }
            if c == '&'
                && let Some(semi) = rest.find(';')
                && semi > 1
                && rest[1..semi]
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '#')
            {
                self.push(Token::Escape, at, at + semi + 1);
                at += semi + 1;
                continue;
            }
            let next = c.len_utf8();
            let end = rest[next..]
                .find(['<', '&'])
                .map_or(self.line.len(), |i| at + next + i);
            self.push(Token::Plain, at, end);
            at = end;
        }
    }

    /// One token inside a markup tag at `at`; the position after it.
    fn in_tag(&mut self, state: &mut State, c: char, at: usize) -> usize {
        let rest = self.rest(at);
        if c.is_whitespace() {
            let end = self.whitespace_end(at);
            self.push(Token::Plain, at, end);
            return end;
        }
        if let Some(close) = ["/>", "?>", ">"].iter().find(|p| rest.starts_with(*p)) {
            *state = State::Code;
            self.push(Token::Punctuation, at, at + close.len());
            return at + close.len();
        }
        if let Some(form) = self.form(rest) {
            let mut inner = State::Tag;
            let end = self.string_body(
                &mut inner,
                at,
                at + form.open.len(),
                form.close,
                0,
                false,
                false,
            );
            return end;
        }
        if is_word_start(c) {
            let end = self.word_end(at);
            self.push(Token::Attribute, at, end);
            return end;
        }
        let token = if c == '=' {
            Token::Operator
        } else {
            Token::Punctuation
        };
        self.push(token, at, at + c.len_utf8());
        at + c.len_utf8()
    }
}
