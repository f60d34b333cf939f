//! The ordering invariants, checked along every branch (root → each entry that is
//! not a label and has no child but labels, as `xcsh tree` and `xcsh sessions` count
//! branches) by following the recorded entries: settlements, what may follow a run's
//! finish, where steers and follow-ups are delivered, compactions. One depth-first
//! walk from the root follows every branch at once, copying a branch's state at its
//! branch points, so the work is linear in the entries however many branches share
//! how long a history.

use std::collections::{HashMap, VecDeque};

use xcsh_log::{Body, Entry, Record, memory_record, setting_record};
use xcsh_machine::{
    CallId, Decision, EntryId, FinishReason, StepOutcome, SyntheticReason, UserOrigin,
};

use super::{Findings, Scanned};

/// No position (no parent, or one that is not in the file).
const NONE: usize = usize::MAX;

fn is_label(e: &Entry) -> bool {
    matches!(e.body, Body::Record(Record::Label { .. }))
}

/// Checks every branch of a file that may be damaged: a chain that does not reach a
/// parentless entry (a missing parent, a cycle) was reported by the structure checks
/// and is not followed. Returns the number of branches followed.
pub(crate) fn check(
    scanned: &[Scanned],
    index: &HashMap<EntryId, usize>,
    f: &mut Findings,
) -> usize {
    for s in scanned {
        let e = &s.entry;
        if let Body::Record(Record::Label { target, .. }) = &e.body
            && !index.contains_key(target)
        {
            f.order(
                "label_target_missing",
                format!(
                    "label {} names entry {target}, which is not in the file",
                    e.id
                ),
                vec![e.id],
            );
        }
    }
    let entries: Vec<&Entry> = scanned.iter().map(|s| &s.entry).collect();
    let parent: Vec<usize> = entries
        .iter()
        .map(|e| {
            e.parent
                .and_then(|p| index.get(&p).copied())
                .unwrap_or(NONE)
        })
        .collect();
    Graph::new(&entries, &parent, index)
        .walk(f, false)
        .unwrap_or(0)
}

/// The ordering checks of a whole session whose entries passed the strict reader
/// (so every parent comes before its child and every chain reaches the header).
/// Returns the number of branches when there is no finding (the caller then needs
/// no more); `None` when there is one (the caller runs [`check`] for the report).
pub(crate) fn check_clean(entries: &[Entry]) -> Option<usize> {
    let index: HashMap<EntryId, usize> =
        entries.iter().enumerate().map(|(i, e)| (e.id, i)).collect();
    let mut parent = vec![NONE; entries.len()];
    for (i, e) in entries.iter().enumerate() {
        if let Body::Record(Record::Label { target, .. }) = &e.body
            && !index.contains_key(target)
        {
            return None;
        }
        if let Some(p) = e.parent {
            let &pi = index.get(&p)?;
            if pi >= i {
                return None;
            }
            parent[i] = pi;
        } else if i != 0 {
            return None;
        }
    }
    let refs: Vec<&Entry> = entries.iter().collect();
    let mut f = Findings::default();
    Graph::new(&refs, &parent, &index).walk(&mut f, true)
}

/// The entries as the walk follows them.
struct Graph<'a> {
    entries: &'a [&'a Entry],
    index: &'a HashMap<EntryId, usize>,
    /// The parent's position of each entry ([`NONE`]: none, or not in the file).
    parent: &'a [usize],
    /// A branch ends at each of these: not a label, and no child but labels.
    ends: Vec<bool>,
    /// The children of position `p` on the way to a branch end, in file order:
    /// `kids[start[p]..start[p + 1]]`.
    start: Vec<u32>,
    kids: Vec<u32>,
}

impl<'a> Graph<'a> {
    fn new(
        entries: &'a [&'a Entry],
        parent: &'a [usize],
        index: &'a HashMap<EntryId, usize>,
    ) -> Graph<'a> {
        let n = entries.len();
        let mut ends: Vec<bool> = entries.iter().map(|e| !is_label(e)).collect();
        for (i, e) in entries.iter().enumerate() {
            if parent[i] != NONE && !is_label(e) {
                ends[parent[i]] = false;
            }
        }
        // Entries on the way to a branch end (each marked once, so a cycle stops).
        let mut walked = vec![false; n];
        for (i, _) in ends.iter().enumerate().filter(|(_, end)| **end) {
            let mut c = i;
            while c != NONE && !walked[c] {
                walked[c] = true;
                c = parent[c];
            }
        }
        let mut start = vec![0u32; n + 1];
        for i in 0..n {
            if walked[i] && parent[i] != NONE {
                start[parent[i] + 1] += 1;
            }
        }
        for i in 1..=n {
            start[i] += start[i - 1];
        }
        let mut fill = start.clone();
        let mut kids = vec![0u32; start[n] as usize];
        for i in 0..n {
            if walked[i] && parent[i] != NONE {
                kids[fill[parent[i]] as usize] = u32::try_from(i).unwrap_or(u32::MAX);
                fill[parent[i]] += 1;
            }
        }
        Graph {
            entries,
            index,
            parent,
            ends,
            start,
            kids,
        }
    }

    fn kids(&self, v: usize) -> &[u32] {
        &self.kids[self.start[v] as usize..self.start[v + 1] as usize]
    }

    /// Follows every branch from each parentless entry, depth first, each entry with
    /// the state of the branch up to it and the next entry of each branch through
    /// it. Returns the number of branch ends reached; with `first_only`, `None` as
    /// soon as there is a finding.
    fn walk(&self, f: &mut Findings, first_only: bool) -> Option<usize> {
        let n = self.entries.len();
        let mut branches = 0;
        let mut path: Vec<&Entry> = Vec::new();
        // The depth on the current path of each entry on it (`NONE`: not on it).
        let mut on_path: Vec<usize> = vec![NONE; n];
        let mut path_pos: Vec<usize> = Vec::new();
        let roots = (0..n).filter(|&r| self.parent[r] == NONE && self.entries[r].parent.is_none());
        for root in roots {
            let mut stack: Vec<(usize, usize, Branch)> = vec![(root, 0, Branch::default())];
            while let Some((v, depth, state)) = stack.pop() {
                while path.len() > depth {
                    path.pop();
                    if let Some(p) = path_pos.pop() {
                        on_path[p] = NONE;
                    }
                }
                path.push(self.entries[v]);
                path_pos.push(v);
                on_path[v] = depth;
                let pos_of = |id: EntryId| {
                    self.index
                        .get(&id)
                        .map(|&p| on_path[p])
                        .filter(|&d| d != NONE)
                };
                let later = |call: &CallId| self.later_dispatches(v, call);
                let look = Lookups {
                    pos_of: &pos_of,
                    later: &later,
                };
                if self.ends[v] {
                    branches += 1;
                }
                match self.kids(v) {
                    [] => {
                        let mut state = state;
                        state.visit(&path, depth, &look, f);
                    }
                    [only] => {
                        let mut state = state;
                        path.push(self.entries[*only as usize]);
                        state.visit(&path, depth, &look, f);
                        path.pop();
                        stack.push((*only as usize, depth + 1, state));
                    }
                    many => {
                        for &c in many.iter().rev() {
                            let mut next = state.clone();
                            let c = c as usize;
                            path.push(self.entries[c]);
                            next.visit(&path, depth, &look, f);
                            path.pop();
                            stack.push((c, depth + 1, next));
                        }
                    }
                }
                if first_only && !f.is_empty() {
                    return None;
                }
            }
        }
        Some(branches)
    }

    /// On the branches through the entry at `v`: the first dispatch of `call` after
    /// it in the same run (before the next prompt or `compact`) on each, in file
    /// order, and whether some branch has none.
    fn later_dispatches(&self, v: usize, call: &CallId) -> (Vec<EntryId>, bool) {
        let mut found = Vec::new();
        let mut without = self.ends[v];
        let mut stack: Vec<u32> = self.kids(v).to_vec();
        while let Some(c) = stack.pop() {
            let c = c as usize;
            match &self.entries[c].body {
                Body::Record(Record::UserMessage { .. } | Record::Compact { .. }) => {
                    without = true;
                    continue;
                }
                Body::Decision(Decision::ToolDispatched { call: d, .. }) if d.id == *call => {
                    found.push(c);
                    continue;
                }
                _ => {}
            }
            without |= self.ends[c];
            stack.extend_from_slice(self.kids(c));
        }
        found.sort_unstable();
        found.dedup();
        (
            found.into_iter().map(|c| self.entries[c].id).collect(),
            without,
        )
    }
}

/// What following an entry of a branch looks up: `pos_of` gives the position of an
/// entry on the path, `later` the dispatches of a call after the entry
/// ([`Graph::later_dispatches`]).
#[derive(Clone, Copy)]
struct Lookups<'a> {
    pos_of: &'a dyn Fn(EntryId) -> Option<usize>,
    later: &'a dyn Fn(&CallId) -> (Vec<EntryId>, bool),
}

/// The state of one branch as its entries are followed.
#[derive(Default, Clone)]
struct Branch {
    /// The `user_message` of the run in progress.
    run: Option<EntryId>,
    /// The `run_finished` of the last run, until the next prompt; and whether an
    /// entry after it was reported already.
    finished: Option<(EntryId, bool)>,
    recovered: bool,
    /// `step_started` awaiting its `step` record: (step, entry).
    streaming: Option<(u32, EntryId)>,
    /// The last `step` record of the run, and the calls it requested (if completed).
    last_step: Option<(EntryId, Vec<CallId>)>,
    /// Dispatched and not settled, in dispatch order.
    unsettled: Vec<(CallId, EntryId)>,
    dispatched: HashMap<CallId, EntryId>,
    /// Calls settled in this run, and by which entry.
    settled: HashMap<CallId, EntryId>,
    steers: VecDeque<EntryId>,
    follow_ups: VecDeque<EntryId>,
    /// Queued entries delivered already, and by which entry.
    delivered: HashMap<EntryId, EntryId>,
    /// A follow-up delivered since the last step started.
    follow_up_at_boundary: Option<EntryId>,
}

impl Branch {
    fn reset(&mut self) {
        *self = Branch::default();
    }

    /// Follows `path[i]`, the next entry of the branch (`path[i + 1]`, if any, is the
    /// one after it).
    fn visit(&mut self, path: &[&Entry], i: usize, look: &Lookups<'_>, f: &mut Findings) {
        let e = path[i];
        {
            let ignored_input = e.body.is_input()
                && path
                    .get(i + 1)
                    .is_some_and(|n| matches!(n.body, Body::Decision(Decision::Ignored { .. })));
            let neutral = ignored_input
                || matches!(
                    e.body,
                    Body::Decision(Decision::Ignored { .. })
                        | Body::Record(
                            Record::Label { .. }
                                | Record::Branch { .. }
                                | Record::Undo { .. }
                                | setting_record!()
                                | Record::Foreign(_)
                                | memory_record!()
                        )
                );
            if let Some((fin, reported)) = &mut self.finished
                && !neutral
                && !matches!(
                    e.body,
                    Body::Record(Record::UserMessage { .. } | Record::Compact { .. })
                )
                && !*reported
            {
                *reported = true;
                f.order(
                    "after_finish",
                    format!(
                        "entry {} ({}) follows the run's finish {fin} on the same branch; only a new prompt (or an ignored input, a label, a branch, an undo) may",
                        e.id,
                        e.type_name()
                    ),
                    vec![*fin, e.id],
                );
            }
            if ignored_input {
                return;
            }
            self.entry(path, i, look, f);
        }
    }

    fn entry(&mut self, path: &[&Entry], i: usize, look: &Lookups<'_>, f: &mut Findings) {
        let Lookups { pos_of, later } = *look;
        let e = path[i];
        let id = e.id;
        match &e.body {
            Body::Record(r) => {
                match r {
                    Record::Branch { .. } => {
                        // Written only at a settled boundary: nothing is in progress.
                        self.reset();
                    }
                    Record::UserMessage { .. } | Record::Compact { .. } => {
                        if let (Some(run), None) = (self.run, self.finished) {
                            f.order(
                            "prompt_in_run",
                            format!(
                                "{} {id} was applied while the run started by {run} was in progress (it should have been ignored)",
                                e.type_name()
                            ),
                            vec![run, id],
                        );
                        }
                        self.reset();
                        self.run = Some(id);
                    }
                    Record::Steer { .. } | Record::FollowUp { .. } => {
                        if self.run.is_none() || self.finished.is_some() {
                            f.order(
                            "queued_outside_run",
                            format!("{} {id} was queued with no run in progress (it should have been ignored)", e.type_name()),
                            vec![id],
                        );
                        } else if matches!(r, Record::Steer { .. }) {
                            self.steers.push_back(id);
                        } else {
                            self.follow_ups.push_back(id);
                        }
                    }
                    Record::Recovered { .. } => self.recovered = true,
                    // Reverting files changes no conversation.
                    Record::Undo { .. } => {}
                    // Moving the session, or its provider, changes no conversation
                    // either.
                    setting_record!() => {}
                    // A record of another agent kept verbatim changes nothing here.
                    Record::Foreign(_) => {}
                    // Memory is around the turn, not in it (SPEC.md §28).
                    memory_record!() => {}
                    Record::Step(s) => {
                        match self.streaming {
                        Some((n, _)) if n == s.step.0 => {}
                        Some((n, started)) => f.order(
                            "step_mismatch",
                            format!("step record {id} is for step {} but step {n} started ({started})", s.step),
                            vec![started, id],
                        ),
                        None => f.order(
                            "step_without_start",
                            format!("step record {id} (step {}) has no `step_started` before it", s.step),
                            vec![id],
                        ),
                    }
                        self.streaming = None;
                        // A step that failed (or "completed" with finish `error`) keeps no
                        // calls: they get no answer.
                        let calls = match s.outcome {
                            StepOutcome::Completed
                                if s.message.finish != Some(FinishReason::Error) =>
                            {
                                s.message.tool_calls.iter().map(|c| c.id.clone()).collect()
                            }
                            StepOutcome::Completed
                            | StepOutcome::Failed { .. }
                            | StepOutcome::Aborted => Vec::new(),
                        };
                        self.last_step = Some((id, calls));
                    }
                    Record::ToolResult(t) => self.result(path[i].id, &t.call_id, later, f),
                    Record::Session(_)
                    | Record::Label { .. }
                    | Record::Interrupt {}
                    | Record::CompactionSummary { .. }
                    | Record::LateEvent { .. }
                    | Record::ApprovalAnswer { .. }
                    | Record::CheckFailed { .. } => {}
                }
            }
            Body::Decision(d) => {
                match d {
                    Decision::StepStarted { step, .. } => {
                        if let Some((n, started)) = self.streaming {
                            f.order(
                            "step_in_step",
                            format!("step {step} started ({id}) while step {n} ({started}) was streaming"),
                            vec![started, id],
                        );
                        }
                        if let Some((call, d)) = self.unsettled.first() {
                            f.order(
                            "step_with_unsettled_call",
                            format!("step {step} started ({id}) while call {call} ({d}) was unsettled"),
                            vec![*d, id],
                        );
                        }
                        self.unanswered(id, f);
                        self.streaming = Some((step.0, id));
                        self.follow_up_at_boundary = None;
                    }
                    Decision::ToolDispatched { call, .. } => {
                        match &self.last_step {
                        Some((step, calls)) if !calls.contains(&call.id) => f.order(
                            "dispatch_not_requested",
                            format!("call {} was dispatched ({id}) but the step before it ({step}) did not ask for it", call.id),
                            vec![*step, id],
                        ),
                        None => f.order(
                            "dispatch_not_requested",
                            format!("call {} was dispatched ({id}) with no step before it", call.id),
                            vec![id],
                        ),
                        Some(_) => {}
                    }
                        if let Some(first) = self.dispatched.get(&call.id) {
                            f.order(
                                "dispatched_twice",
                                format!("call {} was dispatched twice: {first} and {id}", call.id),
                                vec![*first, id],
                            );
                        } else {
                            self.dispatched.insert(call.id.clone(), id);
                            // A result seen before its dispatch was reported already.
                            if !self.settled.contains_key(&call.id) {
                                self.unsettled.push((call.id.clone(), id));
                            }
                        }
                    }
                    Decision::SyntheticResult { call, reason, .. } => {
                        if *reason == SyntheticReason::DuplicateId {
                            // Answers a second call with the same id; the first runs.
                            return;
                        }
                        if let Some(first) = self.settled.get(&call.id) {
                            let mut w: Vec<EntryId> =
                                self.dispatched.get(&call.id).copied().into_iter().collect();
                            w.extend([*first, id]);
                            f.order(
                                "settled_twice",
                                format!(
                                    "call {} is settled twice: by {first} and again by {id}",
                                    call.id
                                ),
                                w,
                            );
                            return;
                        }
                        self.settle(&call.id, id);
                    }
                    Decision::Delivered { origin, queued, .. } => {
                        self.delivered(id, *origin, *queued, f)
                    }
                    Decision::CompactionStarted { first_kept, .. }
                    | Decision::Compacted { first_kept, .. } => {
                        if pos_of(*first_kept).is_none_or(|j| j >= i) {
                            f.order(
                            "first_kept_off_path",
                            format!("compaction {id} keeps from entry {first_kept}, which is not before it on its branch"),
                            vec![id],
                        );
                        }
                    }
                    Decision::RunFinished { .. } => {
                        if let Some((call, d)) = self.unsettled.first() {
                            f.order(
                                "finished_with_unsettled_call",
                                format!(
                                    "the run finished ({id}) while call {call} ({d}) was unsettled"
                                ),
                                vec![*d, id],
                            );
                        }
                        if let Some((n, started)) = self.streaming
                            && !self.recovered
                        {
                            f.order(
                            "finished_mid_step",
                            format!("the run finished ({id}) while step {n} ({started}) was streaming, without a recovery"),
                            vec![started, id],
                        );
                        }
                        self.unanswered(id, f);
                        let run = self.run;
                        self.reset();
                        self.run = run;
                        self.finished = Some((id, false));
                    }
                    Decision::Approval { .. } | Decision::Ignored { .. } => {}
                }
            }
            Body::Unknown { .. } => {}
        }
    }

    fn settle(&mut self, call: &CallId, by: EntryId) {
        self.settled.insert(call.clone(), by);
        self.unsettled.retain(|(c, _)| c != call);
    }

    fn result(
        &mut self,
        id: EntryId,
        call: &CallId,
        later: &dyn Fn(&CallId) -> (Vec<EntryId>, bool),
        f: &mut Findings,
    ) {
        if let Some(first) = self.settled.get(call) {
            let mut w: Vec<EntryId> = self.dispatched.get(call).copied().into_iter().collect();
            w.extend([*first, id]);
            f.order(
                "settled_twice",
                format!("call {call} is settled twice: by {first} and again by {id}"),
                w,
            );
            return;
        }
        if !self.dispatched.contains_key(call) {
            // Dispatched later in the same run, on some branch through this result?
            let (dispatches, without) = later(call);
            for d in dispatches {
                f.order(
                    "result_before_call",
                    format!("the result {id} of call {call} comes before its dispatch {d}"),
                    vec![id, d],
                );
            }
            if without {
                f.order(
                    "result_without_call",
                    format!("the result {id} is for call {call}, which was never dispatched on this branch"),
                    vec![id],
                );
            }
            self.settled.insert(call.clone(), id);
            return;
        }
        self.settle(call, id);
    }

    /// Calls the last step asked for that were neither dispatched nor answered.
    fn unanswered(&mut self, at: EntryId, f: &mut Findings) {
        if let Some((step, calls)) = &self.last_step {
            for c in calls {
                if !self.dispatched.contains_key(c) && !self.settled.contains_key(c) {
                    f.order(
                        "call_never_answered",
                        format!("call {c} of step {step} was neither run nor answered before {at}"),
                        vec![*step, at],
                    );
                }
            }
        }
        self.last_step = self.last_step.take().map(|(s, _)| (s, Vec::new()));
    }

    fn delivered(&mut self, id: EntryId, origin: UserOrigin, queued: EntryId, f: &mut Findings) {
        if let Some(first) = self.delivered.get(&queued) {
            f.order(
                "delivered_twice",
                format!("queued message {queued} was delivered twice: {first} and {id}"),
                vec![queued, *first, id],
            );
            return;
        }
        let queue = match origin {
            UserOrigin::Steer => &self.steers,
            UserOrigin::FollowUp | UserOrigin::Prompt | UserOrigin::Undo => &self.follow_ups,
        };
        let Some(pos) = queue.iter().position(|q| *q == queued) else {
            f.order(
                "delivered_unknown",
                format!("delivery {id} names {queued}, which is not a queued {} of this run on this branch", crate::common::serde_name(&origin)),
                vec![id],
            );
            return;
        };
        if let Some((n, started)) = self.streaming {
            f.order(
                "delivered_mid_step",
                format!("{} {queued} was delivered ({id}) while step {n} ({started}) was streaming; steers wait for a boundary", crate::common::serde_name(&origin)),
                vec![id, started],
            );
        } else if let Some((call, d)) = self.unsettled.first() {
            f.order(
                "delivered_mid_step",
                format!("{} {queued} was delivered ({id}) while call {call} ({d}) of the step was unsettled; steers wait for every call to settle", crate::common::serde_name(&origin)),
                vec![id, *d],
            );
        }
        if pos > 0 {
            f.order(
                "out_of_order",
                format!(
                    "{} {queued} was delivered ({id}) before {}, which arrived first",
                    crate::common::serde_name(&origin),
                    queue[0]
                ),
                vec![id, queued, queue[0]],
            );
        }
        if origin == UserOrigin::FollowUp {
            if let Some(s) = self.steers.front() {
                f.order(
                    "follow_up_before_steer",
                    format!("follow-up {queued} was delivered ({id}) while steer {s} was pending; steers go first"),
                    vec![id, *s],
                );
            }
            if let Some(prev) = self.follow_up_at_boundary {
                f.order(
                    "two_follow_ups",
                    format!("follow-ups were delivered twice ({prev}, {id}) at one would-be finish; one per finish"),
                    vec![prev, id],
                );
            }
            match &self.last_step {
                Some((step, calls)) if !calls.is_empty() => f.order(
                    "follow_up_not_at_finish",
                    format!("follow-up {queued} was delivered ({id}) after step {step}, which asked for tools; follow-ups wait until the run would finish"),
                    vec![id, *step],
                ),
                _ => {}
            }
            self.follow_up_at_boundary = Some(id);
        }
        let queue = match origin {
            UserOrigin::Steer => &mut self.steers,
            UserOrigin::FollowUp | UserOrigin::Prompt | UserOrigin::Undo => &mut self.follow_ups,
        };
        queue.remove(pos);
        self.delivered.insert(queued, id);
    }
}
