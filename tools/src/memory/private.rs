//! What keeps the files a user marked private out of a memory extraction's input
//! (SPEC.md §28.6): a path matched by a `.xcshignore` or `.gitignore` in the
//! workspace root or a folder between it and the file is private; the content a
//! turn holds of such a file is replaced by [`PRIVATE_MARKER`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use xcsh_machine::{CallId, Message};

/// What replaces the content of a private file.
pub const PRIVATE_MARKER: &str = "[private file: content withheld from memory]";

/// The tools whose `path` argument names a file whose content the call's
/// arguments (`edit`, `write`) or result (`read`) carry.
const FILE_TOOLS: [&str; 3] = ["read", "edit", "write"];

/// The private-path matcher of a workspace.
#[derive(Debug)]
pub struct Private {
    root: PathBuf,
    /// The ignore rules of each folder (its `.gitignore` and `.xcshignore`), read
    /// once.
    rules: HashMap<PathBuf, Gitignore>,
}

impl Private {
    pub fn new(root: &Path) -> Private {
        Private {
            root: root.to_path_buf(),
            rules: HashMap::new(),
        }
    }

    /// Whether `path` (relative to the root, or absolute inside it) is private.
    pub fn is_private(&mut self, path: &str) -> bool {
        let given = Path::new(path);
        let abs = if given.is_absolute() {
            given.to_path_buf()
        } else {
            self.root.join(given)
        };
        let Ok(rel) = abs.strip_prefix(&self.root) else {
            return false;
        };
        let mut dir = self.root.clone();
        let mut parts: Vec<_> = rel.components().collect();
        parts.pop();
        for i in 0..=parts.len() {
            if i > 0 {
                dir.push(parts[i - 1]);
            }
            let gi = self.rules.entry(dir.clone()).or_insert_with(|| {
                let mut b = GitignoreBuilder::new(&dir);
                for name in [".gitignore", ".xcshignore"] {
                    let file = dir.join(name);
                    if file.is_file() {
                        let _ = b.add(file);
                    }
                }
                b.build().unwrap_or_else(|_| Gitignore::empty())
            });
            if gi.matched_path_or_any_parents(&abs, false).is_ignore() {
                return true;
            }
        }
        false
    }

    /// The turn with the content of private files replaced by the marker: the
    /// result of a `read` of one and the content arguments of an `edit` or
    /// `write` of one; the lines of a `grep` result that name one.
    pub fn filter(&mut self, messages: &mut [Message]) {
        let mut private_calls: Vec<CallId> = Vec::new();
        for m in messages.iter_mut() {
            match m {
                Message::Assistant { tool_calls, .. } => {
                    for call in tool_calls.iter_mut() {
                        if !FILE_TOOLS.contains(&call.name.as_str()) {
                            continue;
                        }
                        let Ok(mut args) =
                            serde_json::from_str::<serde_json::Value>(&call.arguments)
                        else {
                            continue;
                        };
                        let private = args
                            .get("path")
                            .and_then(|p| p.as_str())
                            .is_some_and(|p| self.is_private(p));
                        if !private {
                            continue;
                        }
                        private_calls.push(call.id.clone());
                        if let Some(obj) = args.as_object_mut() {
                            for (key, value) in obj.iter_mut() {
                                if key != "path" && value.is_string() {
                                    *value = PRIVATE_MARKER.into();
                                }
                            }
                        }
                        call.arguments = args.to_string();
                    }
                }
                Message::ToolResult {
                    call_id,
                    name,
                    content,
                    ..
                } => {
                    if private_calls.contains(call_id) && name == "read" {
                        *content = PRIVATE_MARKER.to_string();
                    } else if name == "grep" {
                        *content = content
                            .lines()
                            .map(|l| match l.split_once(':') {
                                Some((path, _)) if self.is_private(path) => {
                                    format!("{path}: {PRIVATE_MARKER}")
                                }
                                Some(_) | None => l.to_string(),
                            })
                            .collect::<Vec<_>>()
                            .join("\n");
                    }
                }
                Message::User { .. } | Message::Summary { .. } => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xcsh_machine::{ToolCall, UserOrigin};

    #[test]
    fn private_files_content_is_replaced_in_the_turn() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        std::fs::create_dir_all(root.join("conf")).unwrap();
        std::fs::write(root.join("conf/.xcshignore"), "secret.toml\n").unwrap();
        let mut p = Private::new(root);
        assert!(p.is_private("target/x"));
        assert!(p.is_private("a/b.log"));
        assert!(p.is_private("conf/secret.toml"));
        assert!(!p.is_private("secret.toml"));
        assert!(!p.is_private("src/main.rs"));
        let call = |id: &str, name: &str, args: &str| ToolCall {
            id: CallId(id.into()),
            name: name.into(),
            arguments: args.into(),
        };
        let result = |id: &str, name: &str, content: &str| Message::ToolResult {
            call_id: CallId(id.into()),
            name: name.into(),
            is_error: false,
            content: content.into(),
        };
        let mut turn = vec![
            Message::User {
                origin: UserOrigin::Prompt,
                text: "look".into(),
            },
            Message::Assistant {
                text: String::new(),
                reasoning: String::new(),
                reasoning_signature: String::new(),
                reasoning_blocks: Vec::new(),
                tool_calls: vec![
                    call("c1", "read", r#"{"path":"conf/secret.toml"}"#),
                    call("c2", "read", r#"{"path":"src/main.rs"}"#),
                    call("c3", "write", r#"{"path":"run.log","content":"pw=1"}"#),
                    call("c4", "grep", r#"{"pattern":"pw"}"#),
                ],
            },
            result("c1", "read", "password = hunter2"),
            result("c2", "read", "fn main() {}"),
            result("c3", "write", "wrote run.log"),
            result("c4", "grep", "run.log:1:pw=1\nsrc/main.rs:1:pw"),
        ];
        p.filter(&mut turn);
        let Message::Assistant { tool_calls, .. } = &turn[1] else {
            panic!("{turn:?}");
        };
        assert_eq!(
            tool_calls
                .iter()
                .map(|c| c.arguments.as_str())
                .collect::<Vec<_>>(),
            [
                r#"{"path":"conf/secret.toml"}"#,
                r#"{"path":"src/main.rs"}"#,
                r#"{"content":"[private file: content withheld from memory]","path":"run.log"}"#,
                r#"{"pattern":"pw"}"#,
            ]
        );
        assert_eq!(
            turn[2..].to_vec(),
            vec![
                result("c1", "read", PRIVATE_MARKER),
                result("c2", "read", "fn main() {}"),
                result("c3", "write", "wrote run.log"),
                result(
                    "c4",
                    "grep",
                    "run.log: [private file: content withheld from memory]\nsrc/main.rs:1:pw"
                ),
            ]
        );
    }
}
