//! The languages the highlighter knows, as data: fence names, word lists, comment and
//! string markers and a few switches, read by the one lexer in [`super::lexer`].

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

const fn string(open: &'static str, escapes: bool, multiline: bool) -> StringForm {
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

const BASE: Language = Language {
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

const C_COMMENT: Option<(&str, &str)> = Some(("/*", "*/"));
const C_STRINGS: &[StringForm] = &[string("\"", true, false)];
const C_TYPES: &[&str] = &[
    "bool", "char", "double", "float", "int", "long", "short", "signed", "unsigned", "void",
    "size_t", "ssize_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
    "uint32_t", "uint64_t", "FILE",
];
const C_KEYWORDS: &[&str] = &[
    "auto", "break", "case", "const", "continue", "default", "do", "else", "enum", "extern", "for",
    "goto", "if", "inline", "register", "restrict", "return", "sizeof", "static", "struct",
    "switch", "typedef", "union", "volatile", "while",
];
const SH_KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "in", "function", "select", "return", "local", "declare", "readonly", "break", "continue",
    "time",
];
const SH_BUILTINS: &[&str] = &[
    "echo", "cd", "exit", "export", "source", "printf", "read", "test", "set", "unset", "shift",
    "trap", "eval", "exec", "alias", "kill", "wait", "pwd", "true", "false",
];
const SH_STRINGS: &[StringForm] = &[string("\"", true, true), string("'", false, true)];

const RUST: Language = Language {
    names: &["rust", "rs"],
    keywords: &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
        "extern", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
        "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "type",
        "unsafe", "use", "where", "while", "yield",
    ],
    types: &[
        "bool", "char", "str", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32",
        "i64", "i128", "isize", "f32", "f64",
    ],
    literals: &["true", "false"],
    line_comments: &["//"],
    block_comment: C_COMMENT,
    nested_comments: true,
    strings: &[string("\"", true, true)],
    string_prefixes: &["b", "c"],
    raw_strings: true,
    char_literals: true,
    lifetimes: true,
    macros: true,
    hash_attributes: true,
    capitalized_types: true,
    ..BASE
};

const PYTHON: Language = Language {
    names: &["python", "py", "python3", "py3", "pyw", "pyi"],
    keywords: &[
        "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
        "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with",
        "yield", "match", "case",
    ],
    types: &[
        "int",
        "str",
        "float",
        "bool",
        "list",
        "dict",
        "set",
        "tuple",
        "bytes",
        "object",
        "type",
        "complex",
        "frozenset",
    ],
    literals: &["True", "False", "None", "self", "cls"],
    line_comments: &["#"],
    strings: &[
        string("\"\"\"", true, true),
        string("'''", true, true),
        string("\"", true, false),
        string("'", true, false),
    ],
    string_prefixes: &[
        "rb", "br", "fr", "rf", "r", "b", "f", "u", "RB", "BR", "FR", "RF", "R", "B", "F", "U",
    ],
    decorators: true,
    capitalized_types: true,
    ..BASE
};

const JAVASCRIPT: Language = Language {
    names: &[
        "javascript",
        "js",
        "mjs",
        "cjs",
        "jsx",
        "typescript",
        "ts",
        "tsx",
        "mts",
        "cts",
        "node",
    ],
    keywords: &[
        "abstract",
        "as",
        "async",
        "await",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "declare",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "finally",
        "for",
        "from",
        "function",
        "get",
        "if",
        "implements",
        "import",
        "in",
        "instanceof",
        "interface",
        "keyof",
        "let",
        "namespace",
        "new",
        "of",
        "private",
        "protected",
        "public",
        "readonly",
        "return",
        "set",
        "static",
        "super",
        "switch",
        "this",
        "throw",
        "try",
        "type",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "yield",
    ],
    types: &[
        "any", "bigint", "boolean", "never", "number", "object", "string", "symbol", "unknown",
    ],
    literals: &["true", "false", "null", "undefined", "NaN", "Infinity"],
    line_comments: &["//"],
    block_comment: C_COMMENT,
    strings: &[
        string("`", true, true),
        string("\"", true, false),
        string("'", true, false),
    ],
    decorators: true,
    capitalized_types: true,
    word_chars: "$",
    ..BASE
};

const SHELL: Language = Language {
    names: &[
        "sh",
        "bash",
        "zsh",
        "shell",
        "console",
        "shellsession",
        "ksh",
    ],
    keywords: SH_KEYWORDS,
    builtins: SH_BUILTINS,
    line_comments: &["#"],
    comment_after_space: true,
    strings: SH_STRINGS,
    dollar_variables: true,
    word_chars: "-./",
    ..BASE
};

const JSON: Language = Language {
    names: &["json", "jsonc", "json5", "jsonl", "geojson"],
    literals: &["true", "false", "null"],
    line_comments: &["//"],
    block_comment: C_COMMENT,
    strings: C_STRINGS,
    key_separator: Some(':'),
    ..BASE
};

const TOML: Language = Language {
    names: &["toml"],
    literals: &["true", "false", "inf", "nan"],
    line_comments: &["#"],
    strings: &[
        string("\"\"\"", true, true),
        string("'''", false, true),
        string("\"", true, false),
        string("'", false, false),
    ],
    key_separator: Some('='),
    sections: true,
    word_chars: "-.",
    ..BASE
};

const YAML: Language = Language {
    names: &["yaml", "yml"],
    literals: &["true", "false", "null", "yes", "no", "on", "off", "~"],
    line_comments: &["#"],
    comment_after_space: true,
    strings: &[string("\"", true, false), string("'", false, false)],
    key_separator: Some(':'),
    word_chars: "-./",
    ..BASE
};

const GO: Language = Language {
    names: &["go", "golang"],
    keywords: &[
        "break",
        "case",
        "chan",
        "const",
        "continue",
        "default",
        "defer",
        "else",
        "fallthrough",
        "for",
        "func",
        "go",
        "goto",
        "if",
        "import",
        "interface",
        "map",
        "package",
        "range",
        "return",
        "select",
        "struct",
        "switch",
        "type",
        "var",
    ],
    types: &[
        "bool",
        "byte",
        "complex64",
        "complex128",
        "error",
        "float32",
        "float64",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "rune",
        "string",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
        "any",
    ],
    literals: &["true", "false", "nil", "iota"],
    line_comments: &["//"],
    block_comment: C_COMMENT,
    strings: &[string("`", false, true), string("\"", true, false)],
    char_literals: true,
    ..BASE
};

const C: Language = Language {
    names: &["c", "h"],
    keywords: C_KEYWORDS,
    types: C_TYPES,
    literals: &["NULL", "true", "false"],
    line_comments: &["//"],
    block_comment: C_COMMENT,
    strings: C_STRINGS,
    string_prefixes: &["L", "u8", "u", "U"],
    char_literals: true,
    preprocessor: true,
    ..BASE
};

const CPP: Language = Language {
    names: &["cpp", "c++", "cc", "cxx", "hpp", "hh", "hxx"],
    keywords: &[
        "alignas",
        "auto",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "constexpr",
        "const_cast",
        "continue",
        "co_await",
        "co_return",
        "decltype",
        "default",
        "delete",
        "do",
        "dynamic_cast",
        "else",
        "enum",
        "explicit",
        "export",
        "extern",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "operator",
        "override",
        "private",
        "protected",
        "public",
        "reinterpret_cast",
        "return",
        "sizeof",
        "static",
        "static_cast",
        "struct",
        "switch",
        "template",
        "this",
        "throw",
        "try",
        "typedef",
        "typename",
        "union",
        "using",
        "virtual",
        "volatile",
        "while",
    ],
    types: C_TYPES,
    literals: &["nullptr", "NULL", "true", "false"],
    line_comments: &["//"],
    block_comment: C_COMMENT,
    strings: C_STRINGS,
    string_prefixes: &["L", "u8", "u", "U"],
    char_literals: true,
    preprocessor: true,
    ..BASE
};

const JAVA: Language = Language {
    names: &["java"],
    keywords: &[
        "abstract",
        "assert",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "default",
        "do",
        "else",
        "enum",
        "extends",
        "final",
        "finally",
        "for",
        "goto",
        "if",
        "implements",
        "import",
        "instanceof",
        "interface",
        "native",
        "new",
        "package",
        "private",
        "protected",
        "public",
        "record",
        "return",
        "static",
        "super",
        "switch",
        "synchronized",
        "this",
        "throw",
        "throws",
        "transient",
        "try",
        "var",
        "volatile",
        "while",
        "yield",
    ],
    types: &[
        "boolean", "byte", "char", "double", "float", "int", "long", "short", "void",
    ],
    literals: &["true", "false", "null"],
    line_comments: &["//"],
    block_comment: C_COMMENT,
    strings: &[string("\"\"\"", true, true), string("\"", true, false)],
    char_literals: true,
    decorators: true,
    capitalized_types: true,
    ..BASE
};

const SQL: Language = Language {
    names: &["sql", "sqlite", "postgres", "postgresql", "mysql", "plsql"],
    keywords: &[
        "add",
        "all",
        "alter",
        "and",
        "as",
        "asc",
        "begin",
        "between",
        "by",
        "case",
        "check",
        "commit",
        "constraint",
        "create",
        "cross",
        "default",
        "delete",
        "desc",
        "distinct",
        "drop",
        "else",
        "end",
        "exists",
        "foreign",
        "from",
        "full",
        "group",
        "having",
        "if",
        "in",
        "index",
        "inner",
        "insert",
        "into",
        "is",
        "join",
        "key",
        "left",
        "like",
        "limit",
        "not",
        "offset",
        "on",
        "or",
        "order",
        "outer",
        "primary",
        "references",
        "returning",
        "right",
        "rollback",
        "select",
        "set",
        "table",
        "then",
        "transaction",
        "union",
        "unique",
        "update",
        "using",
        "values",
        "view",
        "when",
        "where",
        "with",
    ],
    types: &[
        "bigint",
        "blob",
        "boolean",
        "char",
        "date",
        "decimal",
        "double",
        "float",
        "int",
        "integer",
        "json",
        "numeric",
        "real",
        "serial",
        "smallint",
        "text",
        "time",
        "timestamp",
        "uuid",
        "varchar",
    ],
    literals: &["null", "true", "false"],
    case_insensitive: true,
    line_comments: &["--"],
    block_comment: C_COMMENT,
    strings: &[string("'", false, true), string("\"", false, false)],
    ..BASE
};

const HTML: Language = Language {
    names: &["html", "htm", "xhtml", "xml", "svg", "xsd", "xsl", "plist"],
    mode: Mode::Markup,
    block_comment: Some(("<!--", "-->")),
    strings: &[string("\"", false, false), string("'", false, false)],
    word_chars: "-:.",
    ..BASE
};

const CSS: Language = Language {
    names: &["css"],
    keywords: &["important", "from", "to", "and", "not", "only"],
    block_comment: C_COMMENT,
    strings: &[string("\"", true, false), string("'", true, false)],
    decorators: true,
    key_separator: Some(':'),
    word_chars: "-",
    ..BASE
};

const DIFF: Language = Language {
    names: &["diff", "patch", "udiff"],
    mode: Mode::Diff,
    ..BASE
};

const DOCKERFILE: Language = Language {
    names: &["dockerfile", "docker", "containerfile"],
    keywords: &[
        "from",
        "as",
        "run",
        "cmd",
        "label",
        "expose",
        "env",
        "add",
        "copy",
        "entrypoint",
        "volume",
        "user",
        "workdir",
        "arg",
        "onbuild",
        "stopsignal",
        "healthcheck",
        "shell",
        "maintainer",
    ],
    case_insensitive: true,
    keywords_at_line_start: true,
    line_comments: &["#"],
    comment_after_space: true,
    strings: SH_STRINGS,
    dollar_variables: true,
    word_chars: "-./",
    ..BASE
};

const MAKEFILE: Language = Language {
    names: &["makefile", "make", "mk", "mak", "gnumakefile"],
    keywords: &[
        "ifeq", "ifneq", "ifdef", "ifndef", "else", "endif", "include", "define", "endef",
        "export", "override", "unexport", "vpath",
    ],
    line_comments: &["#"],
    strings: SH_STRINGS,
    dollar_variables: true,
    key_separator: Some(':'),
    word_chars: "-./%",
    ..BASE
};

const RUBY: Language = Language {
    names: &["ruby", "rb", "rake", "gemspec"],
    keywords: &[
        "alias",
        "and",
        "begin",
        "break",
        "case",
        "class",
        "def",
        "defined?",
        "do",
        "else",
        "elsif",
        "end",
        "ensure",
        "for",
        "if",
        "in",
        "module",
        "next",
        "not",
        "or",
        "redo",
        "require",
        "rescue",
        "retry",
        "return",
        "self",
        "super",
        "then",
        "unless",
        "until",
        "when",
        "while",
        "yield",
        "attr_reader",
        "attr_accessor",
        "attr_writer",
        "puts",
    ],
    literals: &["true", "false", "nil"],
    line_comments: &["#"],
    strings: &[string("\"", true, true), string("'", false, true)],
    decorators: true,
    capitalized_types: true,
    ..BASE
};

const LUA: Language = Language {
    names: &["lua"],
    keywords: &[
        "and", "break", "do", "else", "elseif", "end", "for", "function", "goto", "if", "in",
        "local", "not", "or", "repeat", "return", "then", "until", "while",
    ],
    literals: &["true", "false", "nil"],
    line_comments: &["--"],
    block_comment: Some(("--[[", "]]")),
    strings: &[
        StringForm {
            open: "[[",
            close: "]]",
            escapes: false,
            multiline: true,
        },
        string("\"", true, false),
        string("'", true, false),
    ],
    ..BASE
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
