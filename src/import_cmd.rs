//! `xcsh import` (SPEC.md §33): a session of Codex, pi or Claude Code as an ordinary
//! xcsh log, so that `tree`, `log`, `stats`, `check`, `diff` and `export` work on it.
//! Prints, per source record kind, how many records were mapped to xcsh entries and
//! how many kept verbatim as `foreign` entries.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use xcsh_import::{ImportOptions, Imported};

use crate::exit::Exit;
use xcsh_log::foreign::SourceFormat;

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The session file to import (with --all: a directory, imported file by file).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The new xcsh log (default: beside FILE, NAME.xcsh.jsonl for NAME.jsonl); with
    /// --all, the directory the logs go into (default: beside each source).
    #[arg(short = 'o', long = "out", value_name = "OUT")]
    out: Option<PathBuf>,
    /// The source format, instead of detecting it.
    #[arg(long, value_name = "codex|pi|claude", value_parser = parse_format)]
    from: Option<SourceFormat>,
    /// Keep a malformed line as a foreign entry (and count it) instead of failing.
    #[arg(long)]
    lenient: bool,
    /// Import every *.jsonl file under the directory FILE (sub-folders included).
    #[arg(long)]
    all: bool,
}

fn parse_format(s: &str) -> Result<SourceFormat, String> {
    SourceFormat::parse(s).ok_or_else(|| format!("{s:?}: expected codex, pi or claude"))
}

pub fn main(args: ImportArgs) -> Result<ExitCode> {
    let opts = ImportOptions {
        from: args.from,
        lenient: args.lenient,
    };
    if !args.all {
        let out = args
            .out
            .clone()
            .unwrap_or_else(|| xcsh_import::default_output(&args.file));
        let imported = xcsh_import::import(&args.file, &out, opts)?;
        report(&imported);
        return Ok(Exit::Ok.into());
    }
    let files = xcsh_import::session_files(&args.file)?;
    let mut failed = 0;
    for file in &files {
        let out = out_in_dir(&args.file, file, args.out.as_deref());
        match xcsh_import::import(file, &out, opts) {
            Ok(imported) => report(&imported),
            Err(e) => {
                failed += 1;
                eprintln!("xcsh: {e}");
            }
        }
    }
    println!(
        "imported {} of {} file(s) under {}",
        files.len() - failed,
        files.len(),
        args.file.display()
    );
    Ok(if failed == 0 { Exit::Ok } else { Exit::Failed }.into())
}

/// Where `--all` writes the import of `file` (found under `dir`): beside it, or in
/// `out` under the same relative path.
fn out_in_dir(dir: &Path, file: &Path, out: Option<&Path>) -> PathBuf {
    let beside = xcsh_import::default_output(file);
    match out {
        None => beside,
        Some(out) => {
            let rel = beside.strip_prefix(dir).unwrap_or(&beside);
            out.join(rel)
        }
    }
}

fn report(i: &Imported) {
    println!(
        "{} -> {} ({} session {})",
        i.source.display(),
        i.out.display(),
        i.format,
        i.session_id
    );
    print!("{}", i.summary.render());
    let kept = i.summary.kept_total();
    if kept > 0 {
        println!("{kept} record(s) have no xcsh equivalent: kept verbatim as foreign entries");
    }
}
