//! `xcsh stats` on a family (SPEC.md §29.6): the session's own stats, then a
//! `family` table with one row per member (the session and every sub-agent under
//! it, indented by generation) and the family's total, each from the member's
//! derived index. A session without children is shown exactly as before.

use std::path::Path;

use serde::Serialize;
use xcsh_log::family::{Depth, load_with};

use super::{Stats, compute_indexed, render_last};
use crate::error::InspectError;

/// A session's stats with its family's, when it has children.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FamilyStats {
    #[serde(flatten)]
    pub session: Stats,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family: Option<Family>,
}

/// Usage per member and in total.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Family {
    pub members: Vec<MemberUsage>,
    pub total: MemberUsage,
    /// Children missing, broken or mislinked, one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// One member's usage (the total row: the family's).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MemberUsage {
    pub session: String,
    /// 0 for the session itself, 1 for its children, …
    pub depth: usize,
    /// The session whose `task` call started it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    pub runs: u32,
    pub steps: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub spend: u64,
    #[serde(skip_serializing_if = "super::is_false")]
    pub estimated: bool,
    /// How its last run ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
}

impl MemberUsage {
    fn of(session: &str, depth: usize, parent: Option<String>, s: &Stats) -> MemberUsage {
        MemberUsage {
            session: session.to_string(),
            depth,
            parent,
            runs: u32::try_from(s.runs.len()).unwrap_or(u32::MAX),
            steps: u32::try_from(s.steps.len()).unwrap_or(u32::MAX),
            input_tokens: s.total.input_tokens,
            output_tokens: s.total.output_tokens,
            cache_read_tokens: s.total.cache_read_tokens,
            cache_write_tokens: s.total.cache_write_tokens,
            spend: s.runs.iter().map(|r| r.spend).fold(0, u64::saturating_add),
            estimated: s.total.estimated,
            stop: s.runs.last().and_then(|r| r.stop.clone()),
        }
    }

    fn add(&mut self, m: &MemberUsage) {
        self.runs = self.runs.saturating_add(m.runs);
        self.steps = self.steps.saturating_add(m.steps);
        self.input_tokens = self.input_tokens.saturating_add(m.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(m.output_tokens);
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(m.cache_read_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(m.cache_write_tokens);
        self.spend = self.spend.saturating_add(m.spend);
        self.estimated |= m.estimated;
    }
}

/// The stats of the session at `path` and, when it has `task` children, of its
/// whole family.
pub fn compute_family_path(path: &Path) -> Result<FamilyStats, InspectError> {
    let family = load_with(path, Depth::All, &mut |p| {
        let o = crate::family::open_indexed(p)?;
        let stats = compute_indexed(o.data.data());
        Ok(xcsh_log::family::Opened {
            header: o.header,
            links: o.links,
            data: stats,
        })
    })?;
    let problems = family.problems();
    let has_children = !family.children.is_empty();
    let mut members = Vec::new();
    collect(&family, None, &mut members);
    let mut total = MemberUsage {
        session: "total".into(),
        ..MemberUsage::default()
    };
    for m in &members {
        total.add(m);
    }
    Ok(FamilyStats {
        family: has_children.then_some(Family {
            members,
            total,
            problems,
        }),
        session: family.data,
    })
}

fn collect(m: &xcsh_log::family::Member<Stats>, parent: Option<&str>, out: &mut Vec<MemberUsage>) {
    out.push(MemberUsage::of(
        &m.session_id,
        m.depth,
        parent.map(str::to_string),
        &m.data,
    ));
    for c in &m.children {
        if let Some(k) = c.state.member() {
            collect(k, Some(&m.session_id), out);
        }
    }
}

const FAMILY_HEAD: [&str; 9] = [
    "session", "runs", "steps", "input", "output", "cache r", "cache w", "spend", "stop",
];

/// The session's tables, then the family's (with its problems).
pub fn render_family(stats: &FamilyStats, last: Option<usize>) -> String {
    let mut out = render_last(&stats.session, last);
    let Some(f) = &stats.family else {
        return out;
    };
    let mut right = vec![true; FAMILY_HEAD.len()];
    right[0] = false;
    right[8] = false;
    let mut cells = super::Cells::new(&FAMILY_HEAD, right);
    for m in f.members.iter().chain([&f.total]) {
        cells.cell(&format!("{}{}", "  ".repeat(m.depth), m.session));
        cells.num(u64::from(m.runs));
        cells.num(u64::from(m.steps));
        cells.tokens(m.input_tokens, m.estimated);
        cells.tokens(m.output_tokens, m.estimated);
        cells.num(m.cache_read_tokens);
        cells.num(m.cache_write_tokens);
        cells.tokens(m.spend, m.estimated);
        cells.cell(m.stop.as_deref().unwrap_or(""));
    }
    out.push_str(&format!("\nfamily ({} session(s))\n", f.members.len()));
    out.push_str(&cells.render());
    out.push('\n');
    for p in &f.problems {
        out.push_str(&format!("! {p}\n"));
    }
    out
}
