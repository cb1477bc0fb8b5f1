//! Duplicate groups: the connected components of the verified-duplicate graph. The one components
//! routine of the crate (the writer splits a group with it; all-pairs builds groups with it), and
//! the one merge of groups (a new document joining its duplicates' groups; a link found after the
//! insert joining two).

use std::collections::HashSet;

use crate::intmap::IntMap;

use super::pending::Pending;
use super::state::{State, Writer};

/// Merges the groups `gids` (and `new`, a document of this batch not in `pend` yet, alone in its
/// group) into one whose id is the smallest: every other member regrouped in `pend`, the members
/// in `w.members` (groups of one are not kept), each group touched. Returns its id and size.
pub(super) fn merge_groups(st: &State, w: &mut Writer, pend: &mut Pending, gids: &[u64], new: Option<u64>) -> (u64, usize) {
    let gid = gids.iter().copied().chain(new).min().unwrap_or(0);
    let mut merged: Vec<u64> = new.into_iter().collect();
    for &g in gids {
        match w.members.remove(&g) {
            Some(m) => merged.extend(m),
            None => merged.push(g),
        }
    }
    merged.sort_unstable();
    merged.dedup();
    for &m in &merged {
        if Some(m) != new && pend.group_of(st, m) != gid {
            pend.set_group(m, gid);
        }
    }
    let size = merged.len();
    if size > 1 {
        w.members.insert(gid, merged);
    }
    pend.touched_groups.extend(gids.iter().copied().chain([gid]));
    (gid, size)
}

/// Connected components of `nodes` under `edges` (only edges between nodes of the set count).
pub(crate) fn components(nodes: &[u64], edges: &IntMap<u64, Vec<u64>>) -> Vec<Vec<u64>> {
    let inside: HashSet<u64> = nodes.iter().copied().collect();
    let mut seen: HashSet<u64> = HashSet::new();
    let mut out = Vec::new();
    for &n in nodes {
        if !seen.insert(n) {
            continue;
        }
        let mut comp = vec![n];
        let mut stack = vec![n];
        while let Some(x) = stack.pop() {
            for &y in edges.get(&x).map(Vec::as_slice).unwrap_or(&[]) {
                if inside.contains(&y) && seen.insert(y) {
                    comp.push(y);
                    stack.push(y);
                }
            }
        }
        comp.sort_unstable();
        out.push(comp);
    }
    out
}
