//! The memory store: one Markdown file per note, `$XCSH_HOME/memory/<name>.md`
//! (scope `user`) and `<workspace root>/.xcsh/memory/<name>.md` (scope `project`),
//! each a front matter with a one-line `description` and then the body. Plain files
//! a person edits; a broken one is reported (named) and left out of the index.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use xcsh_log::memory::{
    MemoryScope, NoteRef, ProposedNote, SnapshotRecord, bad_note_description, bad_note_name,
};

use crate::beneath::{open_root, replace_file};

/// A note read from its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub scope: MemoryScope,
    pub name: String,
    pub description: String,
    pub body: String,
    pub path: PathBuf,
    /// blake3 (hex) of the file's bytes.
    pub hash: String,
}

impl Note {
    pub fn reference(&self) -> NoteRef {
        NoteRef {
            scope: self.scope,
            name: self.name.clone(),
            hash: self.hash.clone(),
        }
    }
}

/// A note file that could not be read as a note, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenNote {
    pub path: PathBuf,
    pub why: String,
}

impl std::fmt::Display for BrokenNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "memory note {} is left out: {}",
            self.path.display(),
            self.why
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("{0}")]
    BadName(String),
    #[error("no memory note `{0}`")]
    NotFound(String),
    #[error("memory note {path}: {why}", path = .0.path.display(), why = .0.why)]
    Broken(BrokenNote),
    #[error("cannot write memory note {path}: {why}", path = .0.display(), why = .1)]
    Write(PathBuf, String),
    #[error("cannot read {path}: {err}", path = .0.display(), err = .1)]
    Io(PathBuf, std::io::Error),
}

/// The index a turn's requests carry: its text, the blake3 (hex) of the text, the
/// notes it lists, and the files left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryIndex {
    pub text: String,
    pub hash: String,
    pub notes: Vec<NoteRef>,
    pub broken: Vec<BrokenNote>,
}

/// The two folders of notes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryStore {
    user: PathBuf,
    project: PathBuf,
}

impl MemoryStore {
    /// The store of `$XCSH_HOME` (`home`) and the workspace root `root`.
    pub fn new(home: &Path, root: &Path) -> MemoryStore {
        MemoryStore {
            user: home.join("memory"),
            project: root.join(".xcsh").join("memory"),
        }
    }

    /// The folder of a scope's notes.
    pub fn dir(&self, scope: MemoryScope) -> &Path {
        match scope {
            MemoryScope::User => &self.user,
            MemoryScope::Project => &self.project,
        }
    }

    /// Every note of both scopes, by (scope, name), and the broken files. A
    /// missing folder has no notes.
    pub fn list(&self) -> (BTreeMap<(MemoryScope, String), Note>, Vec<BrokenNote>) {
        let mut notes = BTreeMap::new();
        let mut broken = Vec::new();
        for scope in [MemoryScope::User, MemoryScope::Project] {
            let dir = self.dir(scope);
            let entries = match std::fs::read_dir(dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    broken.push(BrokenNote {
                        path: dir.to_path_buf(),
                        why: format!("cannot read the folder: {e}"),
                    });
                    continue;
                }
            };
            let mut paths: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "md"))
                .collect();
            paths.sort();
            for path in paths {
                match read_note(scope, &path) {
                    Ok(note) => {
                        notes.insert((scope, note.name.clone()), note);
                    }
                    Err(why) => broken.push(BrokenNote { path, why }),
                }
            }
        }
        (notes, broken)
    }

    /// The index as it is now.
    pub fn index(&self) -> MemoryIndex {
        let (notes, broken) = self.list();
        let text = index_text(notes.values());
        MemoryIndex {
            hash: blake3::hash(text.as_bytes()).to_hex().to_string(),
            text,
            notes: notes.values().map(Note::reference).collect(),
            broken,
        }
    }

    /// The note `name` of `scope`, or of either scope (the project's first) when
    /// `scope` is `None`.
    pub fn read(&self, scope: Option<MemoryScope>, name: &str) -> Result<Note, MemoryError> {
        if let Some(why) = bad_note_name(name) {
            return Err(MemoryError::BadName(why));
        }
        let scopes = match scope {
            Some(s) => vec![s],
            None => vec![MemoryScope::Project, MemoryScope::User],
        };
        for scope in scopes {
            let path = self.dir(scope).join(format!("{name}.md"));
            match std::fs::symlink_metadata(&path) {
                Ok(_) => {
                    return read_note(scope, &path)
                        .map_err(|why| MemoryError::Broken(BrokenNote { path, why }));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(MemoryError::Io(path, e)),
            }
        }
        Err(MemoryError::NotFound(name.to_string()))
    }

    /// Writes `note` (a new file, or a replacement): a temporary file beside it,
    /// fsynced, renamed over it (the tools' atomic replace). Returns what was
    /// written.
    pub fn write(&self, note: &ProposedNote) -> Result<NoteRef, MemoryError> {
        if let Some(why) =
            bad_note_name(&note.name).or_else(|| bad_note_description(&note.description))
        {
            return Err(MemoryError::BadName(why));
        }
        let dir = self.dir(note.scope);
        let file = format!("{}.md", note.name);
        let fail = |why: String| MemoryError::Write(dir.join(&file), why);
        std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
        let root = open_root(dir).map_err(|e| fail(e.to_string()))?;
        let text = render_note(&note.description, &note.body);
        replace_file(
            std::os::fd::AsFd::as_fd(&root),
            Path::new(&file),
            text.as_bytes(),
            false,
        )
        .map_err(|e| fail(e.message(&file, "write")))?;
        Ok(NoteRef {
            scope: note.scope,
            name: note.name.clone(),
            hash: blake3::hash(text.as_bytes()).to_hex().to_string(),
        })
    }

    /// Writes each note, then takes the snapshot: every note now, which were
    /// written, and the ones that could not be.
    pub fn write_all(&self, notes: &[ProposedNote]) -> SnapshotRecord {
        let mut written = Vec::new();
        let mut errors = Vec::new();
        for note in notes {
            match self.write(note) {
                Ok(r) => written.push(r),
                Err(e) => errors.push(e.to_string()),
            }
        }
        let (all, broken) = self.list();
        errors.extend(broken.iter().map(ToString::to_string));
        SnapshotRecord {
            notes: all.values().map(Note::reference).collect(),
            written,
            errors,
        }
    }

    /// Deletes the note (`/memory forget NAME`); returns what it was.
    pub fn forget(&self, scope: Option<MemoryScope>, name: &str) -> Result<NoteRef, MemoryError> {
        let note = self.read(scope, name)?;
        std::fs::remove_file(&note.path).map_err(|e| MemoryError::Io(note.path.clone(), e))?;
        Ok(note.reference())
    }
}

/// A note file's text: the front matter with its description, then the body.
pub fn render_note(description: &str, body: &str) -> String {
    format!(
        "---\ndescription: {description}\n---\n\n{}\n",
        body.trim_end()
    )
}

/// The (description, body) of a note file's text, or why it is not a note: it
/// must start with a `---` line, hold a `description: …` line (other `key: value`
/// lines are allowed), and close with a `---` line.
pub fn parse_note(text: &str) -> Result<(String, String), String> {
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("it does not start with a front matter (a `---` line)".into());
    }
    let mut description = None;
    let mut consumed = text.find('\n').map_or(text.len(), |i| i + 1);
    let mut closed = false;
    for line in lines {
        consumed += line.len();
        let l = line.trim_end();
        if l == "---" {
            closed = true;
            break;
        }
        if let Some((key, value)) = l.split_once(':') {
            if key.trim() == "description" {
                description = Some(value.trim().to_string());
            }
        } else if !l.trim().is_empty() {
            return Err(format!("front matter line `{l}` is not `key: value`"));
        }
    }
    if !closed {
        return Err("its front matter is not closed by a `---` line".into());
    }
    let description = description.ok_or("its front matter has no `description`")?;
    if let Some(why) = bad_note_description(&description) {
        return Err(why);
    }
    let body = text[consumed..].trim().to_string();
    Ok((description, body))
}

/// The index text: a heading, one line on how to read a note, then one line per
/// note `- scope/name: description`, sorted by scope then name.
pub fn index_text<'a>(notes: impl IntoIterator<Item = &'a Note>) -> String {
    let mut text = String::from(
        "# Memory\n\nNotes kept from earlier sessions (scope/name: description). Read one in full with the `memory_read` tool before relying on it.\n\n",
    );
    let mut any = false;
    for n in notes {
        any = true;
        text.push_str(&format!(
            "- {}/{}: {}\n",
            n.scope.name(),
            n.name,
            n.description
        ));
    }
    if !any {
        text.push_str("(no notes yet)\n");
    }
    text
}

fn read_note(scope: MemoryScope, path: &Path) -> Result<Note, String> {
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or("its name is not UTF-8")?
        .to_string();
    if let Some(why) = bad_note_name(&name) {
        return Err(why);
    }
    let meta = std::fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if !meta.file_type().is_file() {
        return Err("it is not a regular file".into());
    }
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let text = String::from_utf8(bytes).map_err(|_| "it is not UTF-8".to_string())?;
    let (description, body) = parse_note(&text)?;
    Ok(Note {
        scope,
        name,
        description,
        body,
        path: path.to_path_buf(),
        hash: blake3::hash(text.as_bytes()).to_hex().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, MemoryStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = MemoryStore::new(&dir.path().join("home"), &dir.path().join("ws"));
        (dir, store)
    }

    fn proposed(scope: MemoryScope, name: &str, description: &str, body: &str) -> ProposedNote {
        ProposedNote {
            scope,
            name: name.into(),
            description: description.into(),
            body: body.into(),
        }
    }

    #[test]
    fn notes_written_are_listed_read_and_indexed_in_order() {
        let (_dir, store) = store();
        let snapshot = store.write_all(&[
            proposed(
                MemoryScope::Project,
                "tests",
                "Run tests with nextest",
                "cargo nextest run",
            ),
            proposed(
                MemoryScope::User,
                "style",
                "Prefers short answers",
                "Be brief.",
            ),
            proposed(MemoryScope::Project, "build", "How to build", "cargo build"),
        ]);
        assert_eq!(snapshot.errors, Vec::<String>::new());
        assert_eq!(
            snapshot
                .notes
                .iter()
                .map(|n| format!("{}/{}", n.scope.name(), n.name))
                .collect::<Vec<_>>(),
            ["user/style", "project/build", "project/tests"]
        );
        let index = store.index();
        assert_eq!(
            index.text,
            "# Memory\n\nNotes kept from earlier sessions (scope/name: description). Read one in full with the `memory_read` tool before relying on it.\n\n- user/style: Prefers short answers\n- project/build: How to build\n- project/tests: Run tests with nextest\n"
        );
        assert_eq!(
            index.hash,
            blake3::hash(index.text.as_bytes()).to_hex().to_string()
        );
        assert_eq!(index.notes, snapshot.notes);
        let note = store.read(None, "build").unwrap();
        assert_eq!(
            std::fs::read_to_string(&note.path).unwrap(),
            "---\ndescription: How to build\n---\n\ncargo build\n"
        );
        assert_eq!(
            (note.description.as_str(), note.body.as_str()),
            ("How to build", "cargo build")
        );
        assert_eq!(note.path, _dir.path().join("ws/.xcsh/memory/build.md"));
    }

    #[test]
    fn a_broken_note_is_named_and_left_out_of_the_index() {
        let (dir, store) = store();
        let project = dir.path().join("ws/.xcsh/memory");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(
            project.join("good.md"),
            "---\ndescription: fine\nname: good\n---\nbody\n",
        )
        .unwrap();
        std::fs::write(project.join("nofront.md"), "just text\n").unwrap();
        std::fs::write(project.join("nodesc.md"), "---\ntitle: x\n---\nbody\n").unwrap();
        std::fs::write(project.join("Bad Name.md"), "---\ndescription: x\n---\n").unwrap();
        std::fs::write(project.join("open.md"), "---\ndescription: x\n").unwrap();
        let index = store.index();
        assert_eq!(
            index
                .text
                .lines()
                .filter(|l| l.starts_with("- "))
                .collect::<Vec<_>>(),
            ["- project/good: fine"]
        );
        let why: Vec<(String, String)> = index
            .broken
            .iter()
            .map(|b| {
                (
                    b.path.file_name().unwrap().to_string_lossy().into_owned(),
                    b.why.clone(),
                )
            })
            .collect();
        assert_eq!(
            why,
            [
                ("Bad Name.md".to_string(), "`Bad Name` is not a note name (1 to 64 of a-z, 0-9, `-`, `_`, starting with a letter or digit)".to_string()),
                ("nodesc.md".to_string(), "its front matter has no `description`".to_string()),
                ("nofront.md".to_string(), "it does not start with a front matter (a `---` line)".to_string()),
                ("open.md".to_string(), "its front matter is not closed by a `---` line".to_string()),
            ]
        );
        assert!(matches!(
            store.read(None, "nofront"),
            Err(MemoryError::Broken(_))
        ));
    }

    #[test]
    fn an_empty_store_has_an_index_that_says_so_and_forget_deletes_a_note() {
        let (_dir, store) = store();
        assert!(store.index().text.ends_with("(no notes yet)\n"));
        store
            .write(&proposed(MemoryScope::User, "a", "A note", "x"))
            .unwrap();
        let gone = store.forget(None, "a").unwrap();
        assert_eq!((gone.scope, gone.name.as_str()), (MemoryScope::User, "a"));
        assert!(matches!(
            store.read(None, "a"),
            Err(MemoryError::NotFound(_))
        ));
        assert!(matches!(
            store.forget(None, "../x"),
            Err(MemoryError::BadName(_))
        ));
    }
}
