//! Fuzzy matching of a query against paths: the query's characters in order
//! (a subsequence, case-insensitive), scored by the best alignment.
//!
//! The score (higher is better) adds, for each matched character, a base score and
//! a bonus for where it falls: at the start, after `/` (a path segment), after `_`,
//! `-`, `.` or a space, or at a camelCase hump; a character right after the previous
//! match inherits the bonus of its run (so contiguous runs win); each gap costs
//! (more to open than to extend). Ties go to the shorter path, then the
//! alphabetically first. The alignment is a dynamic programme over query ×
//! candidate (as fzf's), run only on candidates that contain the query as a
//! subsequence; the scratch space is reused so that a keystroke over 50,000 paths
//! allocates nothing per path.

const SCORE_MATCH: i32 = 16;
const GAP_START: i32 = -3;
const GAP_EXTEND: i32 = -1;
const BONUS_SEGMENT: i32 = 10;
const BONUS_BOUNDARY: i32 = 8;
const BONUS_CAMEL: i32 = 7;
const BONUS_CONSECUTIVE: i32 = 4;
/// The first query character's bonus counts this many times.
const FIRST_MULTIPLIER: i32 = 2;
/// Candidates longer than this (in characters) are aligned greedily.
const MAX_ALIGNED: usize = 1024;
const NONE: i32 = i32::MIN / 2;

/// A query compiled for matching many candidates.
#[derive(Debug, Clone)]
pub struct Matcher {
    query: Vec<char>,
    /// Scratch: the candidate's characters, lowercased, and its original ones.
    lower: Vec<char>,
    orig: Vec<char>,
    /// Scratch: the alignment's score, run bonus and predecessor per cell.
    score: Vec<i32>,
    run: Vec<i32>,
    from: Vec<u32>,
}

fn lower(c: char) -> char {
    if c.is_ascii() {
        c.to_ascii_lowercase()
    } else {
        c.to_lowercase().next().unwrap_or(c)
    }
}

fn bonus(prev: Option<char>, c: char) -> i32 {
    match prev {
        None | Some('/') => BONUS_SEGMENT,
        Some('_' | '-' | '.' | ' ') => BONUS_BOUNDARY,
        Some(p) if p.is_lowercase() && c.is_uppercase() => BONUS_CAMEL,
        Some(p) if !p.is_alphanumeric() && c.is_alphanumeric() => BONUS_BOUNDARY,
        Some(_) => 0,
    }
}

impl Matcher {
    pub fn new(query: &str) -> Matcher {
        Matcher {
            query: query
                .chars()
                .filter(|c| !c.is_whitespace())
                .map(lower)
                .collect(),
            lower: Vec::new(),
            orig: Vec::new(),
            score: Vec::new(),
            run: Vec::new(),
            from: Vec::new(),
        }
    }

    /// Whether the query is empty (every candidate matches with score 0).
    pub fn is_empty(&self) -> bool {
        self.query.is_empty()
    }

    fn is_subsequence(&self, candidate: &str) -> bool {
        let mut q = self.query.iter().copied().peekable();
        for c in candidate.chars() {
            match q.peek() {
                Some(&want) if lower(c) == want => {
                    q.next();
                }
                Some(_) => {}
                None => break,
            }
        }
        q.peek().is_none()
    }

    /// The score of `candidate`, or `None` if the query is not a subsequence of it.
    pub fn score(&mut self, candidate: &str) -> Option<i32> {
        self.align(candidate, false).map(|(score, _)| score)
    }

    /// The score and the matched character indices of `candidate`.
    pub fn positions(&mut self, candidate: &str) -> Option<(i32, Vec<usize>)> {
        self.align(candidate, true)
    }

    fn align(&mut self, candidate: &str, track: bool) -> Option<(i32, Vec<usize>)> {
        if self.query.is_empty() {
            return Some((0, Vec::new()));
        }
        if !self.is_subsequence(candidate) {
            return None;
        }
        self.orig.clear();
        self.orig.extend(candidate.chars());
        self.lower.clear();
        self.lower.extend(self.orig.iter().copied().map(lower));
        let (m, n) = (self.query.len(), self.lower.len());
        if n > MAX_ALIGNED {
            return Some(self.greedy(track));
        }
        let cells = m * n;
        self.score.clear();
        self.score.resize(cells, NONE);
        self.run.clear();
        self.run.resize(cells, 0);
        if track {
            self.from.clear();
            self.from.resize(cells, u32::MAX);
        }
        for i in 0..m {
            // The best predecessor in row i-1 ending two or more columns back, with
            // the gap's cost so far, and its column.
            let mut gap_best = NONE;
            let mut gap_from = u32::MAX;
            for j in 0..n {
                if i > 0 && j >= 2 {
                    let k = j - 2;
                    let open = self.score[(i - 1) * n + k];
                    let extended = gap_best.saturating_add(GAP_EXTEND);
                    if open > NONE && open + GAP_START >= extended {
                        gap_best = open + GAP_START;
                        gap_from = k as u32;
                    } else {
                        gap_best = extended;
                    }
                }
                if self.lower[j] != self.query[i] {
                    continue;
                }
                let b = bonus(j.checked_sub(1).map(|p| self.orig[p]), self.orig[j]);
                let cell = i * n + j;
                if i == 0 {
                    self.score[cell] = SCORE_MATCH + b * FIRST_MULTIPLIER;
                    self.run[cell] = b;
                    continue;
                }
                let mut best = NONE;
                if gap_best > NONE / 2 {
                    best = gap_best + SCORE_MATCH + b;
                    self.run[cell] = b;
                    if track {
                        self.from[cell] = gap_from;
                    }
                }
                if j > 0 {
                    let diag = self.score[(i - 1) * n + j - 1];
                    if diag > NONE {
                        let carried = self.run[(i - 1) * n + j - 1].max(b).max(BONUS_CONSECUTIVE);
                        let consecutive = diag + SCORE_MATCH + carried;
                        if consecutive >= best {
                            best = consecutive;
                            self.run[cell] = carried;
                            if track {
                                self.from[cell] = (j - 1) as u32;
                            }
                        }
                    }
                }
                self.score[cell] = best;
            }
        }
        let last = (m - 1) * n;
        let (end, best) = (0..n)
            .map(|j| (j, self.score[last + j]))
            .filter(|&(_, s)| s > NONE / 2)
            .max_by_key(|&(j, s)| (s, std::cmp::Reverse(j)))?;
        let mut positions = Vec::new();
        if track {
            positions.resize(m, 0);
            let mut j = end;
            for i in (0..m).rev() {
                positions[i] = j;
                if i > 0 {
                    j = self.from[i * n + j] as usize;
                }
            }
        }
        Some((best, positions))
    }

    /// For very long candidates: the first match of each query character.
    fn greedy(&self, track: bool) -> (i32, Vec<usize>) {
        let mut positions = Vec::with_capacity(self.query.len());
        let mut j = 0;
        for &q in &self.query {
            while self.lower[j] != q {
                j += 1;
            }
            positions.push(j);
            j += 1;
        }
        let mut score = 0;
        for (i, &p) in positions.iter().enumerate() {
            score += SCORE_MATCH + bonus(p.checked_sub(1).map(|k| self.orig[k]), self.orig[p]);
            if i > 0 && positions[i - 1] + 1 != p {
                score += GAP_START + GAP_EXTEND * (p - positions[i - 1] - 2) as i32;
            }
        }
        (score, if track { positions } else { Vec::new() })
    }
}

/// The indices of the best `limit` of `candidates` for `query`, best first (ties:
/// shorter, then alphabetically first).
pub fn rank<S: AsRef<str>>(query: &str, candidates: &[S], limit: usize) -> Vec<usize> {
    let mut matcher = Matcher::new(query);
    let mut scored: Vec<(i32, usize)> = candidates
        .iter()
        .enumerate()
        .filter_map(|(i, c)| matcher.score(c.as_ref()).map(|s| (s, i)))
        .collect();
    let order = |a: &(i32, usize), b: &(i32, usize)| {
        let (ca, cb) = (candidates[a.1].as_ref(), candidates[b.1].as_ref());
        b.0.cmp(&a.0).then(ca.len().cmp(&cb.len())).then(ca.cmp(cb))
    };
    if scored.len() > limit && limit > 0 {
        scored.select_nth_unstable_by(limit - 1, order);
        scored.truncate(limit);
    }
    scored.sort_unstable_by(order);
    scored.truncate(limit);
    scored.into_iter().map(|(_, i)| i).collect()
}
