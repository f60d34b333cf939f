//! The names MCP tools reach the model by: `mcp__SERVER__TOOL`, made of the
//! characters every provider accepts in a function name (`[A-Za-z0-9_-]`), at most
//! 64 of them.

/// The prefix of every MCP tool's name.
pub const PREFIX: &str = "mcp__";

/// The separator between the server's name and the tool's.
const SEPARATOR: &str = "__";

/// The longest name the providers accept for a function.
pub const MAX_LEN: usize = 64;

/// The name the model calls the tool `tool` of the server `server` by: every
/// character outside `[A-Za-z0-9_-]` of the tool's name becomes `_`, and a name past
/// [`MAX_LEN`] keeps its head and ends in 8 hex digits of the blake3 of the whole.
pub fn qualified(server: &str, tool: &str) -> String {
    let clean = xcsh_log::sanitized(tool, &['_', '-'], '_');
    let name = format!("{PREFIX}{server}{SEPARATOR}{clean}");
    if name.len() <= MAX_LEN {
        return name;
    }
    let hash = blake3::hash(format!("{server}/{tool}").as_bytes()).to_hex();
    let head = &name[..MAX_LEN - 9];
    format!("{head}_{}", &hash[..8])
}

/// Whether `name` is an MCP tool's (it starts with [`PREFIX`]).
pub fn is_mcp(name: &str) -> bool {
    name.starts_with(PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_name_is_prefixed_with_the_server() {
        assert_eq!(qualified("everything", "echo"), "mcp__everything__echo");
    }

    #[test]
    fn characters_providers_reject_become_underscores() {
        assert_eq!(qualified("fs", "read.file v2"), "mcp__fs__read_file_v2");
    }

    #[test]
    fn a_long_name_is_cut_to_64_with_a_hash_of_the_whole() {
        let long = "t".repeat(80);
        let name = qualified("srv", &long);
        assert_eq!(name.len(), MAX_LEN);
        assert!(name.starts_with("mcp__srv__ttt"), "{name}");
        assert_ne!(name, qualified("srv", &"t".repeat(81)));
    }
}
