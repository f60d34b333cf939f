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
    command_in(&store(root)?, session, arg)
}

/// [`command`] over `store`.
fn command_in(store: &MemoryStore, session: Option<&Path>, arg: &str) -> Result<String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use xcsh_tools::memory::render_note;

    #[test]
    fn slash_memory_shows_the_index_opens_a_note_and_forgets_one_with_an_entry() {
        let dir = tempfile::tempdir().unwrap();
        let store = MemoryStore::new(&dir.path().join("home"), &dir.path().join("ws"));
        // The project's note `build`, as `MemoryStore::write` writes one.
        let notes = dir.path().join("ws/.xcsh/memory");
        std::fs::create_dir_all(&notes).unwrap();
        std::fs::write(
            notes.join("build.md"),
            render_note("How to build", "cargo build"),
        )
        .unwrap();
        let session = dir.path().join("s.jsonl");
        let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/sessions/plain.jsonl");
        std::fs::copy(fixture, &session).unwrap();
        let index = command_in(&store, Some(&session), "").unwrap();
        assert!(
            index.ends_with("- project/build: How to build\n(/memory NAME opens a note, /memory forget NAME deletes one)"),
            "{index}"
        );
        let path = dir.path().join("ws/.xcsh/memory/build.md");
        assert_eq!(
            command_in(&store, Some(&session), "project/build").unwrap(),
            format!(
                "project/build: How to build\n{}\n\ncargo build",
                path.display()
            )
        );
        let before = xcsh_log::read_session(&session).unwrap();
        let said = command_in(&store, Some(&session), "forget build").unwrap();
        let after = xcsh_log::read_session(&session).unwrap();
        let last = after.entries.last().unwrap();
        assert_eq!(said, format!("forgot project/build (entry {})", last.id));
        assert_eq!(last.parent, Some(before.leaf()));
        let Body::Record(Record::MemoryForget(f)) = &last.body else {
            panic!("{:?}", last.body);
        };
        assert_eq!((f.scope, f.name.as_str()), (MemoryScope::Project, "build"));
        assert!(!path.exists());
        assert_eq!(
            command_in(&store, Some(&session), "forget build")
                .unwrap_err()
                .to_string(),
            "no memory note `build`"
        );
    }
}
