//! Tests of the derived index: built, written, reused, extended and rebuilt.

use super::*;
use crate::{SessionWriter, read_session};
use xcsh_journal::synth::{SynthOptions, generate};

fn write_big(dir: &Path, entries: u64) -> PathBuf {
    let path = dir.join("s.jsonl");
    generate(&path, SynthOptions { entries, seed: 3 }).unwrap();
    path
}

fn same_as_log(index: &SessionIndex, log: &super::super::SessionLog) {
    let d = index.data();
    assert_eq!(d.len(), log.entries.len());
    for (i, e) in log.entries.iter().enumerate() {
        assert_eq!(d.id(i), e.id);
        assert_eq!(d.parent(i).map(|p| d.id(p)), e.parent);
        assert_eq!(d.hash(i), e.hash);
        assert_eq!(d.type_name(i), e.type_name());
    }
    assert_eq!(d.id(d.leaf()), log.leaf());
}

#[test]
fn an_index_is_built_written_reused_extended_and_rebuilt_when_stale() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_big(dir.path(), 4_000);
    assert!(std::fs::metadata(&path).unwrap().len() >= INDEX_MIN_BYTES);
    let first = open_index(&path).unwrap();
    assert!(matches!(
        first.source,
        IndexSource::Rebuilt {
            reason: "there is none"
        }
    ));
    let log = read_session(&path).unwrap();
    same_as_log(&first, &log);
    // The offsets point at the lines.
    let bytes = std::fs::read(&path).unwrap();
    let d = first.data();
    for i in [0, 1, d.len() / 2, d.len() - 1] {
        let (a, b) = d.line_range(i);
        let line = std::str::from_utf8(&bytes[a as usize..b as usize]).unwrap();
        assert_eq!(Entry::decode(line).unwrap(), log.entries[i]);
    }
    drop(first);
    assert_eq!(open_index(&path).unwrap().source, IndexSource::Valid);

    // Two lines appended: read and added.
    let (mut w, _) = SessionWriter::open(&path).unwrap();
    let leaf = log.leaf();
    let ts = log.entries[0].ts;
    let (a, _) = w
        .append(leaf, ts, &Body::Record(Record::Steer { text: "x".into() }))
        .unwrap();
    w.append(a, ts, &Body::Record(Record::Interrupt {}))
        .unwrap();
    drop(w);
    let extended = open_index(&path).unwrap();
    assert_eq!(extended.source, IndexSource::Extended { lines: 2 });
    same_as_log(&extended, &read_session(&path).unwrap());
    drop(extended);
    assert_eq!(open_index(&path).unwrap().source, IndexSource::Valid);

    // An edited last line: stale, rebuilt (and the edit is then an error).
    let mut edited = std::fs::read(&path).unwrap();
    let n = edited.len();
    let at = edited[..n - 1].iter().rposition(|&b| b == b'\n').unwrap() + 20;
    edited[at] = if edited[at] == b'1' { b'2' } else { b'1' };
    std::fs::write(&path, &edited).unwrap();
    assert!(open_index(&path).is_err());
    // A corrupt index file is rebuilt.
    std::fs::write(&path, &bytes).unwrap();
    std::fs::write(index_path(&path), b"garbage").unwrap();
    assert!(matches!(
        open_index(&path).unwrap().source,
        IndexSource::Rebuilt {
            reason: "it does not validate"
        }
    ));
    // A truncated log: rebuilt from what is there.
    let cut = d_len_half(&bytes);
    std::fs::write(&path, &bytes[..cut]).unwrap();
    let again = open_index(&path).unwrap();
    assert!(matches!(again.source, IndexSource::Rebuilt { .. }));
    same_as_log(&again, &read_session(&path).unwrap());
}

fn d_len_half(bytes: &[u8]) -> usize {
    bytes[..bytes.len() / 2]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1
}

#[test]
fn previews_collapse_whitespace_and_keep_the_start() {
    assert_eq!(preview("  a \n b\tc  "), "a b c");
    let long = "word ".repeat(100);
    let p = preview(&long);
    assert_eq!(p.chars().count(), PREVIEW_CHARS);
    assert!(long.starts_with(&p));
}

/// An index written by an earlier version (whose kinds were integer codes in
/// another order) is not read: it is rebuilt from the log, with its kinds right.
#[test]
fn an_index_of_an_earlier_version_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_big(dir.path(), 4_000);
    let built = open_index(&path).unwrap();
    let mut old: IndexData = rkyv::deserialize::<IndexData, RkyvError>(built.data()).unwrap();
    drop(built);
    old.version = INDEX_VERSION - 1;
    assert!(write_index(&path, &old));
    let reopened = open_index(&path).unwrap();
    assert_eq!(
        reopened.source,
        IndexSource::Rebuilt {
            reason: "it is of another version"
        }
    );
    same_as_log(&reopened, &read_session(&path).unwrap());
    let d = reopened.data();
    let log = read_session(&path).unwrap();
    for (i, e) in log.entries.iter().enumerate() {
        assert_eq!(d.kind(i), Kind::of(&e.body));
    }
}
