//! The one builder of the [`Tree`] (`build_indexed`), over a session's derived
//! index: a file's (walked without reading the log's lines) or, for a log read
//! already, the one built in memory ([`super::build`]); with `full`, one node per
//! entry, labels among them, each entry's text fetched from the log.

use super::*;

/// The children of each position (labels left out), without a list per position:
/// the entry right after a parent is its child in the usual case (a branch's entries
/// are appended in order); the other children (a `branch` record, the entry after a
/// label, a continued older branch) are few and kept in a map, in file order.
struct Children<'a> {
    d: &'a ArchivedIndexData,
    /// Labels are children too (with `full`; otherwise they are annotations).
    full: bool,
    others: HashMap<usize, Vec<usize>>,
    /// One bit per position: whether `others` has children of it (a map lookup
    /// per entry would cost more than the whole walk).
    has_others: Vec<u64>,
}

impl Children<'_> {
    /// The entry right after `pos` when it is a child of `pos`, and the others.
    fn of(&self, pos: usize) -> (Option<usize>, &[usize]) {
        let d = self.d;
        let next = pos + 1;
        let next = (next < d.len()
            && d.parent(next) == Some(pos)
            && (self.full || d.kind(next) != Kind::Label))
            .then_some(next);
        let others = if self.has_others[pos / 64] & (1 << (pos % 64)) != 0 {
            self.others.get(&pos).map_or(&[][..], Vec::as_slice)
        } else {
            &[]
        };
        (next, others)
    }

    /// The only child of `pos`, if it has exactly one.
    fn only(&self, pos: usize) -> Option<usize> {
        match self.of(pos) {
            (Some(next), []) => Some(next),
            (None, [only]) => Some(*only),
            _ => None,
        }
    }

    /// Every child of `pos`, in file order.
    fn all(&self, pos: usize) -> Vec<usize> {
        let (next, others) = self.of(pos);
        next.into_iter().chain(others.iter().copied()).collect()
    }
}

struct Builder<'a> {
    d: &'a ArchivedIndexData,
    session_id: &'a str,
    /// One node per entry.
    full: bool,
    children: Children<'a>,
    labels: BTreeMap<EntryId, Vec<Label>>,
    /// Whether a label targets the entry at each position.
    labeled: Vec<bool>,
    leaf: usize,
    straight: Straight,
    fetch: &'a mut dyn FnMut(usize) -> Option<String>,
}

impl Builder<'_> {
    fn starts_turn(&self, pos: usize) -> bool {
        matches!(
            self.d.kind(pos),
            Kind::UserMessage | Kind::Branch | Kind::Compact
        )
    }

    /// The nodes from `start` down its chain; at a branch point the other branches
    /// recurse and one goes on ([`Straight`]), so the depth of recursion is at most
    /// log2 of the entries. Each node absorbs its entries as the walk passes them
    /// (nothing is collected per node).
    fn lane(&mut self, start: usize) -> Vec<Node> {
        let mut lane = Vec::new();
        let mut first = start;
        loop {
            let mut node = self.node(first);
            self.absorb(&mut node, first);
            let mut last = first;
            while !self.full
                && let Some(only) = self.children.only(last)
                && !self.starts_turn(only)
            {
                last = only;
                self.absorb(&mut node, last);
            }
            node.last = self.d.id(last);
            match self.children.all(last).as_slice() {
                [next] => first = *next,
                [] => {
                    lane.push(node);
                    return lane;
                }
                many => {
                    let on = self.straight.pick(many);
                    node.branches = many
                        .iter()
                        .filter(|&&k| k != on)
                        .map(|&k| self.lane(k))
                        .collect();
                    first = on;
                }
            }
            lane.push(node);
        }
    }

    /// The node that starts at `first` (its entries are added by [`Self::absorb`]).
    fn node(&mut self, first: usize) -> Node {
        let d = self.d;
        let (kind, text) = match d.kind(first) {
            Kind::Session => {
                let mut text = format!("{} {}", self.session_id, d.cwd.as_str());
                if let Some(f) = d.forked_from.as_ref().filter(|_| self.full) {
                    text.push_str(&format!(
                        " (forked from {} @ {})",
                        f.0.as_str(),
                        f.1.to_native()
                    ));
                }
                ("session".into(), text)
            }
            _ if self.full => (
                d.type_name(first).to_string(),
                (self.fetch)(first).unwrap_or_default(),
            ),
            Kind::UserMessage => {
                // The preview is whitespace-collapsed already.
                // Without the files its `@` mentions attached: what was typed.
                let preview = xcsh_log::mention::preview(d.str(&d.prompts[d.aux(first)].preview));
                ("turn".into(), crate::common::quoted(&cut(preview, 50)))
            }
            Kind::Compact => ("compact".into(), "/compact".into()),
            Kind::Branch => (
                "branch".into(),
                format!(
                    "new branch (the leaf was #{})",
                    d.branches[d.aux(first)].to_native()
                ),
            ),
            _ => (
                "entries".into(),
                format!(
                    "{} {}",
                    d.type_name(first),
                    (self.fetch)(first).unwrap_or_default()
                ),
            ),
        };
        Node {
            first: d.id(first),
            last: d.id(first),
            kind,
            text,
            steps: 0,
            tool_calls: 0,
            tokens: 0,
            stop: None,
            steers: 0,
            follow_ups: 0,
            labels: Vec::new(),
            compactions: Vec::new(),
            leaf: false,
            branches: Vec::new(),
            children: Vec::new(),
        }
    }

    /// Adds the entry at `pos` to `node`'s counts.
    fn absorb(&self, node: &mut Node, pos: usize) {
        let d = self.d;
        node.leaf |= pos == self.leaf;
        match d.kind(pos) {
            Kind::Step => {
                let s = &d.steps[d.aux(pos)];
                node.steps += 1;
                let usage = xcsh_machine::Usage {
                    input_tokens: s.input_tokens.to_native(),
                    output_tokens: s.output_tokens.to_native(),
                    cache_read_tokens: s.cache_read_tokens.to_native(),
                    cache_write_tokens: s.cache_write_tokens.to_native(),
                    estimated: s.estimated,
                };
                node.tokens = node.tokens.saturating_add(usage.spend());
                if s.outcome == 0 {
                    node.tool_calls += s.tool_calls.to_native();
                }
            }
            Kind::RunFinished => {
                node.stop = Some(stop_text(&d.stop_reason(&d.finishes[d.aux(pos)])));
            }
            Kind::Delivered => match d.aux(pos) {
                1 => node.steers += 1,
                _ => node.follow_ups += 1,
            },
            Kind::Compacted => {
                let c = &d.compactions[d.aux(pos)];
                node.compactions.push(Compaction {
                    entry: d.id(pos),
                    tokens_before: c.tokens_before.to_native(),
                    tokens_after: c.tokens_after.to_native(),
                });
            }
            _ => {}
        }
        if !self.full
            && self.labeled[pos]
            && let Some(labels) = self.labels.get(&d.id(pos))
        {
            node.labels.extend(labels.iter().cloned());
        }
    }
}

/// Whether a label targets each position's entry: the labels' targets found by
/// binary search when ids ascend in file order (as the writer makes them), else
/// through a map of every id.
fn labeled_positions(d: &ArchivedIndexData, targets: &BTreeMap<EntryId, Vec<Label>>) -> Vec<bool> {
    let n = d.len();
    let mut labeled = vec![false; n];
    if targets.is_empty() {
        return labeled;
    }
    let ids = d.ids.as_slice();
    if ids.windows(2).all(|w| w[0] < w[1]) {
        for t in targets.keys() {
            if let Ok(p) = ids.binary_search_by_key(&t.0, |id| id.to_native()) {
                labeled[p] = true;
            }
        }
    } else {
        let wanted: std::collections::HashSet<u64> = targets.keys().map(|t| t.0).collect();
        for (p, id) in ids.iter().enumerate() {
            labeled[p] = wanted.contains(&id.to_native());
        }
    }
    labeled
}

/// The tree from an index of the session file at `path` (whose name gives the
/// session's id, [`xcsh_log::session_id`]); `full` shows every entry (labels
/// as entries too). `fetch` gives the text of the entry at a position
/// ([`crate::common::entry_text`]): for every node with
/// `full`, otherwise for the rare node that starts with an entry the index does not
/// describe.
pub fn build_indexed(
    d: &ArchivedIndexData,
    path: &Path,
    full: bool,
    fetch: &mut dyn FnMut(usize) -> Option<String>,
) -> Tree {
    let n = d.len();
    let mut labels: BTreeMap<EntryId, Vec<Label>> = BTreeMap::new();
    let mut others: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut forked_label = None;
    for pos in 0..n {
        let kind = d.kind(pos);
        if kind == Kind::Label {
            let l = &d.labels[d.aux(pos)];
            let target = EntryId(l.target.to_native());
            let name = d.str(&l.name);
            if forked_label.is_none() {
                forked_label = name
                    .strip_prefix(crate::fork::ORIGIN_PREFIX)
                    .map(str::to_string);
            }
            labels.entry(target).or_default().push(Label {
                entry: d.id(pos),
                target,
                name: name.to_string(),
            });
            if !full {
                continue;
            }
        }
        if let Some(p) = d.parent(pos)
            && p + 1 != pos
        {
            others.entry(p).or_default().push(pos);
        }
    }
    let leaf = d.leaf();
    // A branch point has a child that is not the entry right after it.
    let straight = Straight::new(
        n,
        |p| d.parent(p),
        |p| full || d.kind(p) != Kind::Label,
        leaf,
        !others.is_empty(),
    );
    let forked_from = d
        .forked_from
        .as_ref()
        .map(|f| format!("{} @ {}", f.0.as_str(), f.1.to_native()))
        .or(forked_label);
    let session_id = xcsh_log::session_id(path, d.session_id.as_str());
    let mut b = Builder {
        d,
        session_id,
        full,
        children: Children {
            d,
            full,
            has_others: {
                let mut bits = vec![0u64; n.div_ceil(64)];
                for &p in others.keys() {
                    bits[p / 64] |= 1 << (p % 64);
                }
                bits
            },
            others,
        },
        labeled: labeled_positions(d, &labels),
        labels,
        leaf,
        straight,
        fetch,
    };
    let root = if n == 0 { Vec::new() } else { b.lane(0) };
    Tree {
        full,
        session_id: session_id.to_string(),
        cwd: d.cwd.as_str().to_string(),
        forked_from,
        leaf: d.id(leaf),
        root,
    }
}
