//! Where sessions live (`$XCSH_HOME/sessions/<workspace-slug>/<time>_<id>.jsonl`),
//! how `--continue` / `--resume` find one, and `xcsh sessions`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use chrono::Utc;
use clap::Args;

#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// List the sessions of every workspace, not only this one.
    #[arg(long)]
    all: bool,
    /// One JSON object per line instead of a table.
    #[arg(long)]
    json: bool,
}

/// `$XCSH_HOME`, or `~/.xcsh`.
pub fn home() -> Result<PathBuf> {
    if let Some(h) = std::env::var_os("XCSH_HOME") {
        return Ok(PathBuf::from(h));
    }
    let home = std::env::var_os("HOME").context("neither XCSH_HOME nor HOME is set")?;
    Ok(PathBuf::from(home).join(".xcsh"))
}

pub fn sessions_root() -> Result<PathBuf> {
    Ok(home()?.join("sessions"))
}

/// The directory of this workspace's sessions: its absolute path made into one name.
pub fn workspace_dir(cwd: &Path) -> Result<PathBuf> {
    let slug: String = cwd
        .display()
        .to_string()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    Ok(sessions_root()?.join(slug.trim_matches('-')))
}

/// A new session's id and path. The id only needs to be unique, not secret: blake3
/// of the time and the process id.
pub fn new_session(cwd: &Path) -> Result<(String, PathBuf)> {
    let now = Utc::now();
    let mut h = blake3::Hasher::new();
    h.update(&now.timestamp_nanos_opt().unwrap_or_default().to_le_bytes());
    h.update(&std::process::id().to_le_bytes());
    let id = h.finalize().to_hex()[..12].to_string();
    let name = format!("{}_{id}.jsonl", now.format("%Y-%m-%dT%H-%M-%S-%3fZ"));
    Ok((id, workspace_dir(cwd)?.join(name)))
}

fn session_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(files),
        Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
    };
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "jsonl") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn all_session_files() -> Result<Vec<PathBuf>> {
    let root = sessions_root()?;
    let mut files = Vec::new();
    let dirs = match std::fs::read_dir(&root) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(files),
        Err(e) => return Err(e).with_context(|| format!("cannot list {}", root.display())),
    };
    for dir in dirs {
        files.extend(session_files(&dir?.path())?);
    }
    files.sort();
    Ok(files)
}

/// The newest session of this workspace (`--continue`).
pub fn newest(cwd: &Path) -> Result<PathBuf> {
    let dir = workspace_dir(cwd)?;
    session_files(&dir)?.pop().with_context(|| {
        format!(
            "no session to continue in this workspace ({} is empty); start one with `xcsh run`",
            dir.display()
        )
    })
}

/// A session named by path, id, or unambiguous id prefix (`--resume`).
pub fn resolve(name: &str) -> Result<PathBuf> {
    let as_path = Path::new(name);
    if as_path.is_file() {
        return Ok(as_path.to_path_buf());
    }
    let matches: Vec<PathBuf> = all_session_files()?
        .into_iter()
        .filter(|p| xcsh_core::log::file_session_id(p).is_some_and(|id| id.starts_with(name)))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!("session {name}: no session file or session id matches"),
        many => bail!(
            "session {name}: the prefix matches {} sessions; give more of the id:\n  {}",
            many.len(),
            many.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join("\n  ")
        ),
    }
}

pub fn main(args: SessionsArgs) -> Result<ExitCode> {
    let cwd = std::env::current_dir()?;
    let files = if args.all {
        all_session_files()?
    } else {
        session_files(&workspace_dir(&cwd)?)?
    };
    let mut summaries = Vec::new();
    for path in files {
        // A fork keeps its source's header; its own id is in its file name, and that
        // is the id `--resume` takes and the summary shows.
        let summary = xcsh_inspect::summarize_path(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        summaries.push(summary);
    }
    if args.json {
        for s in &summaries {
            println!("{}", serde_json::to_string(s)?);
        }
    } else {
        println!("{}", xcsh_inspect::sessions_table(&summaries));
    }
    Ok(ExitCode::SUCCESS)
}
