//! Duplicate groups: the connected components of the verified-duplicate graph. The one components
//! routine of the crate (the writer splits a group with it; all-pairs builds groups with it).

use std::collections::HashSet;

use crate::intmap::IntMap;

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
