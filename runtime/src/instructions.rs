//! Project instructions for the system prompt: `~/.xcsh/AGENTS.md`, then every
//! `AGENTS.md` and `CLAUDE.md` from the git root down to the workspace (outer
//! first, so that the nearest file is read last and wins where they disagree).

use std::path::{Path, PathBuf};

/// The names looked for in each directory, in this order.
pub const INSTRUCTION_FILES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// One instruction file and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    pub path: PathBuf,
    pub text: String,
}

/// The git root of `dir`: the nearest ancestor (`dir` included) holding `.git` (a
/// directory, or the file of a worktree or submodule).
pub fn git_root(dir: &Path) -> Option<&Path> {
    dir.ancestors().find(|d| d.join(".git").exists())
}

/// The directories from the git root down to `workspace`; just `workspace` when it
/// is in no git repository.
pub fn search_dirs(workspace: &Path) -> Vec<PathBuf> {
    let Some(root) = git_root(workspace) else {
        return vec![workspace.to_path_buf()];
    };
    let mut up: Vec<PathBuf> = workspace
        .ancestors()
        .take_while(|d| *d != root)
        .map(Path::to_path_buf)
        .collect();
    up.push(root.to_path_buf());
    up.reverse();
    up
}

/// Reads the instruction files for `workspace`; `xcsh_home` holds the global
/// `AGENTS.md`. Unreadable files are skipped (a directory named AGENTS.md, say).
pub fn discover(workspace: &Path, xcsh_home: Option<&Path>) -> Vec<InstructionFile> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(home) = xcsh_home {
        candidates.push(home.join("AGENTS.md"));
    }
    for dir in search_dirs(workspace) {
        candidates.extend(INSTRUCTION_FILES.iter().map(|name| dir.join(name)));
    }
    candidates
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            Some(InstructionFile { path, text })
        })
        .collect()
}

/// The system prompt: `base`, then each instruction file under its path.
pub fn system_prompt(base: &str, files: &[InstructionFile]) -> String {
    let mut out = base.trim_end().to_string();
    if files.is_empty() {
        return out;
    }
    out.push_str("\n\n# Project instructions\n");
    for f in files {
        out.push_str(&format!(
            "\n## {}\n\n{}\n",
            f.path.display(),
            f.text.trim_end()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The directory `rel` under `base`, created with its parents.
    fn made(base: &Path, rel: &str) -> PathBuf {
        let dir = base.join(rel);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn files_are_found_from_the_git_root_down_to_the_workspace_global_first() {
        let dir = tempfile::tempdir().unwrap();
        let root = made(dir.path(), "repo");
        made(&root, ".git");
        let work = made(&root, "crates/app");
        let home = made(dir.path(), "home");
        std::fs::write(home.join("AGENTS.md"), "global rule").unwrap();
        std::fs::write(root.join("AGENTS.md"), "repo rule").unwrap();
        std::fs::write(root.join("crates/CLAUDE.md"), "crates rule").unwrap();
        std::fs::write(work.join("AGENTS.md"), "app rule").unwrap();
        // Above the git root: never read.
        std::fs::write(dir.path().join("AGENTS.md"), "outside").unwrap();
        let found = discover(&work, Some(&home));
        let texts: Vec<&str> = found.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(
            texts,
            ["global rule", "repo rule", "crates rule", "app rule"]
        );
        let prompt = system_prompt("base", &found[1..2]);
        assert_eq!(
            prompt,
            format!(
                "base\n\n# Project instructions\n\n## {}\n\nrepo rule\n",
                root.join("AGENTS.md").display()
            )
        );
    }

    #[test]
    fn outside_a_repository_only_the_workspace_is_searched() {
        let dir = tempfile::tempdir().unwrap();
        let work = made(dir.path(), "w");
        assert_eq!(search_dirs(&work), vec![work.clone()]);
        assert_eq!(system_prompt("base\n", &[]), "base");
    }
}
