//! Replaying a session file in one streaming pass: worker threads read, decode and
//! verify the file (every line exactly as `read_session` does, see
//! [`xcsh_log::parallel`]) and take each entry apart into what the machine
//! consumes, while this thread finds the branch (from the session's valid derived
//! index, or from a quick scan of each line's `id`, `parent` and `type`) and then
//! feeds the branch's entries to the machine; nothing else is kept, so memory does
//! not grow with the session. A branch that diverges is replayed a second time,
//! keeping what the divergence report shows (see [`crate::fast`]). The outcome is
//! reported only once the whole file has been read and verified, so a damaged line
//! anywhere fails the replay as it does when the log is read whole.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::rc::Rc;

use xcsh_log::index::{Kind, open_existing_index};
use xcsh_log::parallel::{ParallelRead, Window, read_parallel};
use xcsh_log::{Entry, LogError};
use xcsh_machine::EntryId;

use crate::runner::{Fed, Runner};
use crate::{Outcome, Replay, ReplayOptions, Torn};

/// A streamed replay and the leaf it replayed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReplay {
    pub replay: Replay,
    pub leaf: EntryId,
}

/// An entry taken apart on a decoding worker: what the fast pass needs of it.
struct Taken {
    id: EntryId,
    parent: Option<EntryId>,
    fed: Fed,
}

impl Taken {
    fn of(entry: Entry) -> Taken {
        let (id, parent) = (entry.id, entry.parent);
        Taken {
            id,
            parent,
            fed: Fed::of(entry),
        }
    }
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
/// error reading the log, as [`xcsh_log::read_session`] would report it.
pub fn replay_file(
    path: &Path,
    leaf: Option<EntryId>,
    options: &ReplayOptions,
) -> Option<Result<FileReplay, LogError>> {
    let mut plan = None;
    if options.until.is_none() {
        match fast(path, leaf, options, &mut plan)? {
            Ok(Some(replay)) => return Some(Ok(replay)),
            Err(e) => return Some(Err(e)),
            // It diverges: replay again, keeping what the report shows.
            Ok(None) => {}
        }
    }
    let plan = match plan {
        Some(p) => p,
        None => Plan::new(path, leaf, options)?,
    };
    full(path, &plan, options)
}

/// The replay of a clean branch, holding no entry (see [`crate::runner`]);
/// `Ok(None)` when it diverges.
/// `plan` is the plan once made.
fn fast(
    path: &Path,
    leaf: Option<EntryId>,
    options: &ReplayOptions,
    plan: &mut Option<Plan>,
) -> Option<Result<Option<FileReplay>, LogError>> {
    let file = File::open(path).ok()?;
    // The workers start decoding while this thread finds the branch.
    let mut planned: Option<Option<Plan>> = None;
    let mut runner: Runner<'_, ()> = Runner::new(options);
    let mut mismatch = false;
    let mut diverged = false;
    let read = read_parallel(path, file, Window::default(), Taken::of, |line, fed| {
        let Some(p) = planned.get_or_insert_with(|| Plan::new(path, leaf, options)) else {
            return false;
        };
        let i = line as usize - 1;
        if p.skeleton.ids.get(i) != Some(&fed.id.0)
            || p.skeleton.parents.get(i) != Some(&fed.parent.map(|p| p.0))
        {
            mismatch = true;
            return false;
        }
        if p.on_branch[i] && runner.feed(fed.id, fed.fed, (), Some(line)).is_some() {
            diverged = true;
            return false;
        }
        true
    });
    let p = match planned {
        Some(p) => p,
        None => Plan::new(path, leaf, options),
    }?;
    let leaf = p.leaf;
    *plan = Some(p);
    if diverged {
        return Some(Ok(None));
    }
    let read = match read {
        Ok(r) => r,
        Err(e) => return Some(Err(e)),
    };
    let lines = plan.as_ref().map_or(0, |p| p.skeleton.ids.len());
    if mismatch || read.stopped || read.lines as usize != lines {
        return None;
    }
    // Every line was read and verified: now the outcome stands (`None`: the
    // machine made a decision the log does not record, or the run was cut off).
    let mut replay = runner.finish();
    replay.torn = torn(&read);
    Some(Ok(
        matches!(replay.outcome, Outcome::Clean).then_some(FileReplay { replay, leaf })
    ))
}

/// The replay with everything a report shows: the last entries fed are kept.
fn full(path: &Path, plan: &Plan, options: &ReplayOptions) -> Option<Result<FileReplay, LogError>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) => return Some(Err(LogError::io(path, e))),
    };
    let mut runner: Runner<'_, Rc<Entry>> = Runner::new(options);
    let mut ended: Option<Outcome> = None;
    let mut mismatch = false;
    let read = read_parallel(
        path,
        file,
        Window::default(),
        |entry| (Fed::cloned(&entry), entry),
        |line, (fed, entry)| {
            let i = line as usize - 1;
            if ended.is_some() {
                return true;
            }
            if plan.skeleton.ids.get(i) != Some(&entry.id.0)
                || plan.skeleton.parents.get(i) != Some(&entry.parent.map(|p| p.0))
            {
                mismatch = true;
                return false;
            }
            if plan.on_branch[i] {
                ended = runner.feed(entry.id, fed, Rc::new(entry), Some(line));
            }
            true
        },
    );
    let read = match read {
        Ok(r) => r,
        Err(e) => return Some(Err(e)),
    };
    // Every line was read and verified: now the outcome stands.
    if mismatch || read.stopped || read.lines as usize != plan.skeleton.ids.len() {
        return None;
    }
    let mut replay = match ended {
        Some(outcome) => runner.end(outcome),
        None => runner.finish(),
    };
    replay.torn = torn(&read);
    Some(Ok(FileReplay {
        replay,
        leaf: plan.leaf,
    }))
}

/// The torn last line a read found, if any.
fn torn(read: &ParallelRead) -> Option<Torn> {
    read.torn
        .as_ref()
        .map(|bytes| Torn::after(read.lines, bytes.len() as u64))
}

/// What is known before the entries are decoded: each line's id and parent, and
/// which lines are on the replayed branch.
struct Plan {
    skeleton: Skeleton,
    on_branch: Vec<bool>,
    leaf: EntryId,
}

impl Plan {
    /// `None` when the streaming replay does not apply (see [`replay_file`]).
    fn new(path: &Path, leaf: Option<EntryId>, options: &ReplayOptions) -> Option<Plan> {
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
        let position = Positions::of(&skeleton.ids)?;
        if n == 0 {
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
        let mut at = Some(position.get(leaf.0)?);
        let mut steps = 0;
        while let Some(i) = at {
            on_branch[i] = true;
            steps += 1;
            if steps > n {
                return None;
            }
            at = match skeleton.parents[i] {
                Some(p) => Some(position.get(p)?),
                None => None,
            };
        }
        if let Some(until) = options.until
            && !position.get(until.0).is_some_and(|i| on_branch[i])
        {
            return None;
        }
        Some(Plan {
            skeleton,
            on_branch,
            leaf,
        })
    }
}

/// The position of each id among the lines: a vector indexed by id when the ids
/// are dense (as the writer makes them), else a map.
enum Positions {
    Dense(Vec<u32>),
    Sparse(HashMap<u64, usize>),
}

/// Not a position in [`Positions::Dense`].
const ABSENT: u32 = u32::MAX;

impl Positions {
    /// `None` if an id appears twice.
    fn of(ids: &[u64]) -> Option<Positions> {
        let n = ids.len();
        let max = ids.iter().copied().max().unwrap_or(0);
        let dense = u32::try_from(n).is_ok_and(|n| n < ABSENT)
            && usize::try_from(max).is_ok_and(|m| m < 2 * n + 4096);
        if dense {
            let mut pos = vec![ABSENT; max as usize + 1];
            for (i, &id) in ids.iter().enumerate() {
                let slot = &mut pos[id as usize];
                if *slot != ABSENT {
                    return None;
                }
                *slot = i as u32;
            }
            return Some(Positions::Dense(pos));
        }
        let map: HashMap<u64, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        (map.len() == n).then_some(Positions::Sparse(map))
    }

    fn get(&self, id: u64) -> Option<usize> {
        match self {
            Positions::Dense(pos) => usize::try_from(id)
                .ok()
                .and_then(|i| pos.get(i))
                .filter(|&&p| p != ABSENT)
                .map(|&p| p as usize),
            Positions::Sparse(map) => map.get(&id).copied(),
        }
    }
}

/// The `id`, `parent` and whether it is a label, of every complete line, read from
/// the start of each line as the writer writes it (`{"v":1,"id":N,"parent":P,"ts":
/// "…","type":"…"`); `None` if a line does not start so.
fn scan(path: &Path) -> Option<Skeleton> {
    let size = std::fs::metadata(path).ok()?.len();
    // A big file is scanned in two halves at once, split after a newline.
    let split = if size >= 8 << 20 {
        line_start_after(path, size / 2)
    } else {
        None
    };
    let Some(split) = split else {
        return scan_range(path, 0, size);
    };
    let (first, second) = std::thread::scope(|s| {
        let second = s.spawn(|| scan_range(path, split, size - split));
        let first = scan_range(path, 0, split);
        // Scanning does not panic; if it did, the streaming replay does not apply.
        (first, second.join().ok().flatten())
    });
    let (mut sk, rest) = (first?, second?);
    sk.ids.extend(rest.ids);
    sk.parents.extend(rest.parents);
    sk.labels.extend(rest.labels);
    Some(sk)
}

/// Where the first line that starts after byte `at` of the file starts, if any.
fn line_start_after(path: &Path, at: u64) -> Option<u64> {
    use std::io::{Seek, SeekFrom};
    let mut file = File::open(path).ok()?;
    file.seek(SeekFrom::Start(at)).ok()?;
    let mut reader = BufReader::with_capacity(64 << 10, file);
    let mut skipped = 0u64;
    loop {
        let buf = reader.fill_buf().ok()?;
        if buf.is_empty() {
            return None;
        }
        if let Some(nl) = memchr::memchr(b'\n', buf) {
            return Some(at + skipped + nl as u64 + 1);
        }
        let n = buf.len();
        skipped += n as u64;
        reader.consume(n);
    }
}

/// [`scan`] of the `len` bytes from `start` (which starts a line); a last line
/// without its newline is left out.
fn scan_range(path: &Path, start: u64, len: u64) -> Option<Skeleton> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = File::open(path).ok()?;
    file.seek(SeekFrom::Start(start)).ok()?;
    // Room for lines of 256 bytes and more; a buffer that stays in the cache.
    let guess = usize::try_from(len / 256).unwrap_or(0);
    let mut reader = BufReader::with_capacity(256 << 10, file.take(len));
    let mut sk = Skeleton {
        ids: Vec::with_capacity(guess),
        parents: Vec::with_capacity(guess),
        labels: Vec::with_capacity(guess),
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

#[cfg(test)]
mod tests {
    use super::*;
    use xcsh_journal::synth::{SynthOptions, generate};
    use xcsh_log::{Body, EntryHash, read_session};
    use xcsh_machine::{Decision, RunEnd};

    /// Writes `entries` with a fresh hash chain (ids and parents as they are).
    fn rewrite(path: &Path, entries: &[Entry]) {
        let mut hashes: HashMap<EntryId, EntryHash> = HashMap::new();
        let mut bytes = Vec::new();
        for e in entries {
            let parent_hash = e.parent.and_then(|p| hashes.get(&p));
            let (line, hash) = Entry::encode(e.id, e.parent, parent_hash, e.ts, &e.body);
            hashes.insert(e.id, hash);
            bytes.extend_from_slice(&line);
        }
        std::fs::write(path, bytes).unwrap();
    }

    /// The streaming replay reports what the replay of the log read whole reports,
    /// clean or diverging (the report of a divergence comes from a second pass).
    #[test]
    fn streaming_replay_matches_the_whole_log_replay() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        generate(
            &path,
            SynthOptions {
                entries: 3_000,
                seed: 3,
            },
        )
        .unwrap();
        let log = read_session(&path).unwrap();
        let entries = log.entries.clone();
        let decisions: Vec<usize> = (0..entries.len())
            .filter(|&i| matches!(entries[i].body, Body::Decision(_)))
            .collect();
        let mut cases = vec![None];
        cases.extend([5, decisions.len() / 2, decisions.len() - 1].map(|k| Some(decisions[k])));
        for case in cases {
            let mut altered = entries.clone();
            if let Some(i) = case {
                let d = match &mut altered[i].body {
                    Body::Decision(d) => d,
                    _ => unreachable!("a decision"),
                };
                *d = match d {
                    Decision::RunFinished(RunEnd { steps, .. }) => Decision::RunFinished(RunEnd {
                        reason: xcsh_machine::StopReason::Crashed,
                        steps: *steps,
                        usage: Default::default(),
                        undelivered: vec![],
                    }),
                    _ => Decision::StepStarted {
                        step: xcsh_machine::StepNo(999),
                        messages: 0,
                        context_hash: "x".into(),
                    },
                };
            }
            rewrite(&path, &altered);
            let log = read_session(&path).unwrap();
            let options = ReplayOptions::default();
            let whole = crate::replay(&log, log.leaf(), &options).unwrap();
            let streamed = replay_file(&path, None, &options).unwrap().unwrap();
            assert_eq!(streamed.replay, whole, "case {case:?}");
            assert_eq!(streamed.leaf, log.leaf());
            assert_eq!(matches!(whole.outcome, Outcome::Clean), case.is_none());
        }
    }
}
