//! The languages the highlighter knows, as data: fence names, word lists, comment and
//! string markers and a few switches, read by the one lexer in [`super::lexer`].

mod defs;

use defs::{
    C, CPP, CSS, DIFF, DOCKERFILE, GO, HTML, JAVA, JAVASCRIPT, JSON, LUA, MAKEFILE, PYTHON, RUBY,
    RUST, SHELL, SQL, TOML, YAML,
};

/// How a language's lines are cut into tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Words, numbers, strings, comments and operators.
    Code,
    /// Tags with attributes, text and entities between them (HTML, XML).
    Markup,
    /// Each line by its first characters (`+`, `-`, `@@`, headers).
    Diff,
}

/// A string delimited by `open` and `close`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StringForm {
    pub open: &'static str,
    pub close: &'static str,
    /// Whether `\x` is an escape (shown as one, and `\"` does not close the string).
    pub escapes: bool,
    /// Whether the string goes on past the end of its line; otherwise an unclosed
    /// string ends with its line.
    pub multiline: bool,
}

pub(super) const fn string(open: &'static str, escapes: bool, multiline: bool) -> StringForm {
    StringForm {
        open,
        close: open,
        escapes,
        multiline,
    }
}

/// One language's lexical rules.
#[derive(Debug)]
pub struct Language {
    /// The fence names it answers to (lowercase; the first is its name).
    pub names: &'static [&'static str],
    pub mode: Mode,
    pub keywords: &'static [&'static str],
    /// Built-in type names.
    pub types: &'static [&'static str],
    /// Built-in constants (`true`, `None`, `null`, …).
    pub literals: &'static [&'static str],
    /// Built-in commands or functions called without parentheses (shell).
    pub builtins: &'static [&'static str],
    /// Whether words match the lists whatever their case (SQL, Dockerfile).
    pub case_insensitive: bool,
    /// Whether keywords count only as a line's first word (Dockerfile instructions).
    pub keywords_at_line_start: bool,
    pub line_comments: &'static [&'static str],
    /// Whether a line comment must start a word (`#` in shell, not in `${#a}`).
    pub comment_after_space: bool,
    pub block_comment: Option<(&'static str, &'static str)>,
    /// Whether block comments nest (Rust).
    pub nested_comments: bool,
    /// Longest opening first (`"""` before `"`).
    pub strings: &'static [StringForm],
    /// Words glued to a string's opening quote that belong to it (`b"…"`, `f'…'`).
    pub string_prefixes: &'static [&'static str],
    /// Rust's raw strings, `r"…"`, `r#"…"#`, `br##"…"##`.
    pub raw_strings: bool,
    /// `'x'` and `'\n'` are character literals (and a lone `'` is not a string).
    pub char_literals: bool,
    /// `'a` is a lifetime or a label (Rust).
    pub lifetimes: bool,
    /// `name!` is a macro (Rust).
    pub macros: bool,
    /// `@name` is a decorator or annotation (Python, Java, TypeScript, CSS at-rules).
    pub decorators: bool,
    /// `#[…]` and `#![…]` are attributes (Rust).
    pub hash_attributes: bool,
    /// A line starting with `#` is a preprocessor directive (C, C++).
    pub preprocessor: bool,
    /// `$name`, `${…}`, `$(NAME)` are variables (shell, make, Dockerfile).
    pub dollar_variables: bool,
    /// A capitalized word is a type (a SCREAMING one a constant).
    pub capitalized_types: bool,
    /// A word or string followed by this character is a key (`key:` in YAML).
    pub key_separator: Option<char>,
    /// A line starting with `[` is a section header (TOML).
    pub sections: bool,
    /// Characters that continue a word besides letters, digits and `_`.
    pub word_chars: &'static str,
}

pub(super) const BASE: Language = Language {
    names: &[],
    mode: Mode::Code,
    keywords: &[],
    types: &[],
    literals: &[],
    builtins: &[],
    case_insensitive: false,
    keywords_at_line_start: false,
    line_comments: &[],
    comment_after_space: false,
    block_comment: None,
    nested_comments: false,
    strings: &[],
    string_prefixes: &[],
    raw_strings: false,
    char_literals: false,
    lifetimes: false,
    macros: false,
    decorators: false,
    hash_attributes: false,
    preprocessor: false,
    dollar_variables: false,
    capitalized_types: false,
    key_separator: None,
    sections: false,
    word_chars: "",
};

/// Every language, in the order fence names are looked up.
pub const LANGUAGES: &[&Language] = &[
    &RUST,
    &PYTHON,
    &JAVASCRIPT,
    &SHELL,
    &JSON,
    &TOML,
    &YAML,
    &GO,
    &C,
    &CPP,
    &JAVA,
    &SQL,
    &HTML,
    &CSS,
    &DIFF,
    &DOCKERFILE,
    &MAKEFILE,
    &RUBY,
    &LUA,
];

/// The language of a fence's language token (`rust`, `rs`, `py`, `sh`, `json`, …),
/// whatever its case; none for a language not in [`LANGUAGES`].
pub fn language_for(lang: &str) -> Option<&'static Language> {
    let lang = lang.trim();
    LANGUAGES
        .iter()
        .copied()
        .find(|l| l.names.iter().any(|n| n.eq_ignore_ascii_case(lang)))
}
