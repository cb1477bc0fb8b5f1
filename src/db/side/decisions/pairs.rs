//! `pairs --groups` under the decisions: the groups of an all-pairs report formed as the writer
//! forms them ([`group_under`]: a class's documents together, each pair in order unless a
//! `distinct` decision stands between its two groups).

use std::collections::BTreeSet;

use super::model::{group_under, Node};
use super::ops::CuratorDecisions;

impl CuratorDecisions<'_> {
    /// The groups of the pairs `edges` (best first) under the curator decisions: `(canonical id,
    /// members)` for groups of two or more, canonical = smallest id, sorted by canonical. Without
    /// decisions these are the connected components of the pairs.
    pub fn groups(&self, edges: &[(u64, u64)]) -> Vec<(u64, Vec<u64>)> {
        let st = self.db.inner.state.read();
        let side = self.db.decisions_side().ok();
        let mem = side.map(|s| s.mem().clone()).unwrap_or_default();
        let ids: BTreeSet<u64> = edges.iter().flat_map(|&(a, b)| [a, b]).chain(mem.ids.values().copied()).collect();
        let nodes: Vec<Node> = ids
            .iter()
            .map(|&id| (id, st.docs.get(&id).and_then(|m| mem.classes.class(&m.key))))
            .collect();
        group_under(&mem.classes, &nodes, edges)
            .groups
            .into_iter()
            .filter(|g| g.len() > 1)
            .map(|g| (g[0], g))
            .collect()
    }
}
