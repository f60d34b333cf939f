//! Names made of a narrow set of characters from any text: a session folder's slug
//! (the binary's `sessions.rs`), an MCP tool's name (`xcsh_mcp::naming`).

/// `text` with every character that is not an ASCII letter or digit or one of
/// `keep` replaced by `with`.
pub fn sanitized(text: &str, keep: &[char], with: char) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || keep.contains(&c) {
                c
            } else {
                with
            }
        })
        .collect()
}
