//! `xcsh memory [--json]` (the notes of the user and of this workspace: scope,
//! name, description, path) and the work of `/memory` in the interactive mode
//! (the index, a note in full, forgetting a note with a `memory_forget` entry).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use xcsh_log::memory::{ForgetRecord, MemoryScope};
use xcsh_log::{Body, Record, SessionWriter};
use xcsh_tools::memory::MemoryStore;

use crate::sessions;

#[derive(Debug, Args)]
pub struct MemoryArgs {
    /// One JSON object per note instead of a table.
    #[arg(long)]
    json: bool,
    /// The workspace whose project notes to list (default: the git root of the
    /// current directory, else the directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<std::path::PathBuf>,
}

/// The store of `$XCSH_HOME` and the workspace root `root`.
pub fn store(root: &Path) -> Result<MemoryStore> {
    Ok(MemoryStore::new(&sessions::home()?, root))
}

pub fn main(args: MemoryArgs) -> Result<ExitCode> {
    let root = match &args.workspace {
        Some(w) => sessions::explicit_workspace(w)?,
        None => sessions::workspace_root(&std::env::current_dir()?)?,
    };
    let (notes, broken) = store(&root)?.list();
    for b in &broken {
        eprintln!("xcsh: {b}");
    }
    if args.json {
        for n in notes.values() {
            println!(
                "{}",
                serde_json::json!({
                    "scope": n.scope.name(),
                    "name": n.name,
                    "description": n.description,
                    "path": n.path,
                    "hash": n.hash,
                })
            );
        }
    } else if notes.is_empty() {
        println!("no memory notes (memory is on with --memory or `memory = true`)");
    } else {
        let mut table = comfy_table::Table::new();
        table
            .load_preset(comfy_table::presets::UTF8_FULL_CONDENSED)
            .set_header(["scope", "name", "description", "path"]);
        for n in notes.values() {
            table.add_row([
                n.scope.name().to_string(),
                n.name.clone(),
                n.description.clone(),
                n.path.display().to_string(),
            ]);
        }
        println!("{table}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `/memory` (the index), `/memory NAME` (a note in full, `scope/name` allowed) and
/// `/memory forget NAME` (the file deleted, and a `memory_forget` entry appended at
/// the leaf of `session`, when there is one).
pub fn command(root: &Path, session: Option<&Path>, arg: &str) -> Result<String> {
    let store = store(root)?;
    let arg = arg.trim();
    if arg.is_empty() {
        let index = store.index();
        let mut text = index.text.trim_end().to_string();
        for b in &index.broken {
            text.push_str(&format!("\n{b}"));
        }
        text.push_str("\n(/memory NAME opens a note, /memory forget NAME deletes one)");
        return Ok(text);
    }
    if let Some(name) = arg.strip_prefix("forget").map(str::trim) {
        if name.is_empty() {
            anyhow::bail!("/memory forget NAME: give the note's name");
        }
        let (scope, name) = scoped(name)?;
        let gone = store.forget(scope, name)?;
        let said = format!("forgot {}/{}", gone.scope.name(), gone.name);
        let Some(path) = session else {
            return Ok(format!("{said} (no session yet to record it in)"));
        };
        let (mut writer, log) = SessionWriter::open(path)
            .with_context(|| format!("cannot record the forget in {}", path.display()))?;
        let (id, _) = writer.append(
            log.leaf(),
            chrono::Utc::now(),
            &Body::Record(Record::MemoryForget(ForgetRecord {
                scope: gone.scope,
                name: gone.name,
                hash: gone.hash,
            })),
        )?;
        writer.sync()?;
        return Ok(format!("{said} (entry {id})"));
    }
    let (scope, name) = scoped(arg)?;
    let note = store.read(scope, name)?;
    Ok(format!(
        "{}/{}: {}\n{}\n\n{}",
        note.scope.name(),
        note.name,
        note.description,
        note.path.display(),
        note.body
    ))
}

/// `NAME` or `scope/NAME`.
fn scoped(arg: &str) -> Result<(Option<MemoryScope>, &str)> {
    match arg.split_once('/') {
        Some((scope, name)) => match MemoryScope::parse(scope) {
            Some(s) => Ok((Some(s), name)),
            None => anyhow::bail!("/memory: `{scope}` is neither `user` nor `project`"),
        },
        None => Ok((None, arg)),
    }
}
