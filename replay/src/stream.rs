//! Replaying a session file in one streaming pass: the branch is known first (from
//! the session's valid derived index, or from a quick scan of each line's `id`,
//! `parent` and `type`), then the file is read on other threads (in batches
//! decoded on two, every line verified exactly as `read_session` does) while this
//! one feeds the branch's entries to the machine; nothing else is kept, so memory
//! does not grow with the session. The outcome is reported only once the whole file
//! has been read and verified, so a damaged line anywhere fails the replay as it
//! does when the log is read whole.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::rc::Rc;
use std::sync::mpsc;

use xcsh_core::log::index::{Kind, open_existing_index};
use xcsh_core::log::{Entry, LogError, LogReader};
use xcsh_core::machine::EntryId;

use crate::{Outcome, Replay, ReplayOptions, Runner};

/// A streamed replay and the leaf it replayed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReplay {
    pub replay: Replay,
    pub leaf: EntryId,
}

/// What is known of each line before it is decoded.
struct Skeleton {
    ids: Vec<u64>,
    parents: Vec<Option<u64>>,
    labels: Vec<bool>,
}

/// Replays the branch that ends at `leaf` (default: the session's leaf) of the
/// session file at `path`, reading it once (see the module documentation). `None`
/// when this way does not apply and the caller should read the log whole and use
/// [`crate::replay`]: the lines do not have the writer's shape, `leaf` or
/// `options.until` is not where it must be, or the file disagrees with its scan
/// (then the whole-log path reports exactly what is wrong). `Some(Err)` is an
/// error reading the log, as [`xcsh_core::log::read_session`] would report it.
pub fn replay_file(
    path: &Path,
    leaf: Option<EntryId>,
    options: &ReplayOptions,
) -> Option<Result<FileReplay, LogError>> {
    let skeleton = match open_existing_index(path) {
        Ok(Some(index)) => {
            let d = index.data();
            Skeleton {
                ids: (0..d.len()).map(|p| d.id(p).0).collect(),
                parents: (0..d.len())
                    .map(|p| d.parent(p).map(|q| d.id(q).0))
                    .collect(),
                labels: (0..d.len()).map(|p| d.kind(p) == Kind::Label).collect(),
            }
        }
        Ok(None) | Err(_) => scan(path)?,
    };
    let n = skeleton.ids.len();
    let position: HashMap<u64, usize> = skeleton
        .ids
        .iter()
        .enumerate()
        .map(|(i, id)| (*id, i))
        .collect();
    if position.len() != n || n == 0 {
        return None;
    }
    let leaf = match leaf {
        Some(l) => l,
        None => EntryId(
            (0..n)
                .rev()
                .find(|&i| !skeleton.labels[i])
                .map_or(0, |i| skeleton.ids[i]),
        ),
    };
    let mut on_branch = vec![false; n];
    let mut at = Some(*position.get(&leaf.0)?);
    let mut steps = 0;
    while let Some(i) = at {
        on_branch[i] = true;
        steps += 1;
        if steps > n {
            return None;
        }
        at = match skeleton.parents[i] {
            Some(p) => Some(*position.get(&p)?),
            None => None,
        };
    }
    if let Some(until) = options.until
        && !position.get(&until.0).is_some_and(|&i| on_branch[i])
    {
        return None;
    }
    stream(path, &skeleton, &on_branch, options)
        .map(|r| r.map(|replay| FileReplay { replay, leaf }))
}

/// Reads the file on another thread and feeds the branch to the machine here.
fn stream(
    path: &Path,
    skeleton: &Skeleton,
    on_branch: &[bool],
    options: &ReplayOptions,
) -> Option<Result<Replay, LogError>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) => return Some(Err(LogError::io(path, e))),
    };
    let (tx, rx) = mpsc::sync_channel::<Result<Vec<(u32, Entry)>, LogError>>(3);
    std::thread::scope(|s| {
        s.spawn(move || {
            // Another thread reads, decoding each batch on two threads and verifying
            // it, while this one replays.
            let mut reader = LogReader::new(path, BufReader::with_capacity(4 << 20, file));
            loop {
                let mut batch = Vec::new();
                match reader.next_batch(&mut batch) {
                    None => return,
                    Some(result) => {
                        let failed = result.err();
                        if !batch.is_empty() && tx.send(Ok(batch)).is_err() {
                            return;
                        }
                        if let Some(e) = failed {
                            let _ = tx.send(Err(e));
                            return;
                        }
                    }
                }
            }
        });
        let mut runner: Runner<'_, Rc<Entry>> = Runner::new(options);
        let mut ended: Option<Outcome> = None;
        let mut lines = 0usize;
        let mut mismatch = false;
        for item in rx.iter() {
            let batch = match item {
                Ok(b) => b,
                Err(e) => return Some(Err(e)),
            };
            for (line, entry) in batch {
                let i = line as usize - 1;
                lines = lines.max(line as usize);
                if ended.is_some() || mismatch {
                    continue;
                }
                if skeleton.ids.get(i) != Some(&entry.id.0)
                    || skeleton.parents.get(i) != Some(&entry.parent.map(|p| p.0))
                {
                    mismatch = true;
                    continue;
                }
                if on_branch[i] {
                    ended = runner.feed(Rc::new(entry), Some(line));
                }
            }
        }
        // Every line was read and verified: now the outcome stands.
        if mismatch || lines != skeleton.ids.len() {
            return None;
        }
        Some(Ok(match ended {
            Some(outcome) => runner.end(outcome),
            None => runner.finish(),
        }))
    })
}

/// The `id`, `parent` and whether it is a label, of every complete line, read from
/// the start of each line as the writer writes it (`{"v":1,"id":N,"parent":P,"ts":
/// "…","type":"…"`); `None` if a line does not start so.
fn scan(path: &Path) -> Option<Skeleton> {
    let file = File::open(path).ok()?;
    let mut reader = BufReader::with_capacity(4 << 20, file);
    let mut sk = Skeleton {
        ids: Vec::new(),
        parents: Vec::new(),
        labels: Vec::new(),
    };
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let buf = reader.fill_buf().ok()?;
        if buf.is_empty() {
            return Some(sk);
        }
        let n = buf.len();
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', buf) {
            if carry.is_empty() {
                head(&buf[start..nl], &mut sk)?;
            } else {
                carry.extend_from_slice(&buf[start..nl]);
                head(&carry, &mut sk)?;
                carry.clear();
            }
            start = nl + 1;
        }
        carry.extend_from_slice(&buf[start..]);
        reader.consume(n);
    }
}

/// Reads `{"v":D,"id":N(,"parent":P)?,"ts":"…","type":"T"` off the start of a line.
fn head(line: &[u8], sk: &mut Skeleton) -> Option<()> {
    fn number(s: &[u8]) -> Option<(u64, &[u8])> {
        let digits = s.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > 19 {
            return None;
        }
        let v = std::str::from_utf8(&s[..digits]).ok()?.parse().ok()?;
        Some((v, &s[digits..]))
    }
    let rest = line.strip_prefix(b"{\"v\":")?;
    let (_, rest) = number(rest)?;
    let rest = rest.strip_prefix(b",\"id\":")?;
    let (id, rest) = number(rest)?;
    let (parent, rest) = match rest.strip_prefix(b",\"parent\":") {
        Some(r) => {
            let (p, r) = number(r)?;
            (Some(p), r)
        }
        None => (None, rest),
    };
    let rest = rest.strip_prefix(b",\"ts\":\"")?;
    let close = memchr::memchr(b'"', rest)?;
    let rest = rest[close + 1..].strip_prefix(b",\"type\":\"")?;
    sk.ids.push(id);
    sk.parents.push(parent);
    sk.labels.push(rest.starts_with(b"label\""));
    Some(())
}
