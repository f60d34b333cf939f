//! Syntax highlighting of fenced code blocks (syntect, pure-Rust regex backend).
//!
//! OWNER: helper "markdown".
