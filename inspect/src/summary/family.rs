//! `xcsh sessions` on families (SPEC.md §29.6): every sub-agent's session listed
//! under the session whose `task` call started it (indented), never at the top
//! level. The links are followed by the one loader (`xcsh_log::family`) from each
//! session that is not itself a child; a child no result links to (its parent was
//! cut off before recording the result) goes under the parent its header names.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use xcsh_log::family::{Depth, Member, Opened, load_with};

use super::SessionSummary;

/// `list` (summaries with a size, in the order to show) reordered: each session,
/// then its family below it, depth first; `parent` and `depth` set.
pub fn family_order<T>(list: Vec<(SessionSummary, T)>) -> Vec<(SessionSummary, T)> {
    let list = list
        .into_iter()
        .map(|(s, t)| {
            let opened = crate::family::open_indexed(Path::new(&s.path))
                .ok()
                .map(|o| Opened {
                    header: o.header,
                    links: o.links,
                    data: (),
                });
            (s, opened, t)
        })
        .collect();
    family_order_opened(list)
}

/// [`family_order`] of sessions whose header and links were read already (with
/// their summaries, through the one opening of each index): `None` for one that
/// could not be.
pub fn family_order_opened<T>(
    list: Vec<(SessionSummary, Option<Opened<()>>, T)>,
) -> Vec<(SessionSummary, T)> {
    let key = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    // What each listed session's header and links say.
    let mut opened: HashMap<PathBuf, Opened<()>> = HashMap::new();
    let list: Vec<(SessionSummary, T)> = list
        .into_iter()
        .map(|(s, o, t)| {
            if let Some(o) = o {
                opened.insert(key(Path::new(&s.path)), o);
            }
            (s, t)
        })
        .collect();
    let ids: HashMap<String, PathBuf> = list
        .iter()
        .map(|(s, _)| (s.id.clone(), key(Path::new(&s.path))))
        .collect();
    // A session whose header names a listed parent is a child: not a root.
    let header_parent = |path: &PathBuf| {
        opened
            .get(path)
            .and_then(|o| o.header.parent.as_ref())
            .and_then(|p| ids.get(&p.session_id))
            .filter(|p| *p != path)
            .cloned()
    };
    let mut placed: Vec<(PathBuf, usize, Option<String>)> = Vec::new();
    let mut done: std::collections::HashSet<PathBuf> = Default::default();
    let place = |root: &Path,
                 depth0: usize,
                 parent0: Option<String>,
                 placed: &mut Vec<(PathBuf, usize, Option<String>)>,
                 done: &mut std::collections::HashSet<PathBuf>| {
        let family = load_with(root, Depth::All, &mut |p| {
            opened
                .get(&key(p))
                .map(|o| Opened {
                    header: o.header.clone(),
                    links: o.links.clone(),
                    data: (),
                })
                .ok_or_else(|| xcsh_log::LogError::io(p, std::io::ErrorKind::NotFound.into()))
        });
        let Ok(family) = family else { return };
        fn walk(
            m: &Member<()>,
            depth: usize,
            parent: Option<String>,
            key: &dyn Fn(&Path) -> PathBuf,
            placed: &mut Vec<(PathBuf, usize, Option<String>)>,
            done: &mut std::collections::HashSet<PathBuf>,
        ) {
            let k = key(&m.path);
            if !done.insert(k.clone()) {
                return;
            }
            placed.push((k, depth, parent));
            for c in &m.children {
                if let Some(kid) = c.state.member() {
                    walk(
                        kid,
                        depth + 1,
                        Some(m.session_id.clone()),
                        key,
                        placed,
                        done,
                    );
                }
            }
        }
        walk(&family, depth0, parent0, &key, placed, done);
    };
    for (s, _) in &list {
        let k = key(Path::new(&s.path));
        if header_parent(&k).is_none() {
            place(Path::new(&s.path), 0, None, &mut placed, &mut done);
        }
    }
    // Children no result links to: under the parent their header names.
    let mut pending: Vec<PathBuf> = list
        .iter()
        .map(|(s, _)| key(Path::new(&s.path)))
        .filter(|k| !done.contains(k))
        .collect();
    while let Some(k) = pending.first().cloned() {
        pending.remove(0);
        if done.contains(&k) {
            continue;
        }
        let parent = header_parent(&k);
        let at = parent.as_ref().and_then(|p| {
            placed
                .iter()
                .rposition(|(q, _, _)| q == p)
                .map(|i| (i, placed[i].1))
        });
        let parent_id =
            parent.and_then(|p| ids.iter().find(|(_, v)| **v == p).map(|(i, _)| i.clone()));
        match (at, parent_id) {
            (Some((i, d)), Some(pid)) => {
                let mut sub = Vec::new();
                place(&k, d + 1, Some(pid), &mut sub, &mut done);
                // After the parent's subtree.
                let end = placed[i + 1..]
                    .iter()
                    .position(|(_, dd, _)| *dd <= d)
                    .map_or(placed.len(), |j| i + 1 + j);
                placed.splice(end..end, sub);
            }
            _ => {
                // Its parent is not listed (or it is its own): at the top level.
                place(&k, 0, None, &mut placed, &mut done);
            }
        }
    }
    let order: Vec<PathBuf> = list.iter().map(|(s, _)| key(Path::new(&s.path))).collect();
    let mut by_key: HashMap<PathBuf, (SessionSummary, T)> = list
        .into_iter()
        .map(|(s, t)| (key(Path::new(&s.path)), (s, t)))
        .collect();
    let mut out = Vec::new();
    for (k, depth, parent) in placed {
        if let Some((mut s, t)) = by_key.remove(&k) {
            s.depth = depth;
            s.parent = parent;
            out.push((s, t));
        }
    }
    // Anything not placed (unreadable): at the end, in the order given.
    out.extend(order.iter().filter_map(|k| by_key.remove(k)));
    out
}
