//! The other methods' API on [`Db`]: a document's stored sketch, every pair satisfying a rule.

use crate::db::handle::Db;
use crate::db::state::State;
use crate::error::Result;
use crate::fingerprint::similarity::MethodScore;
use crate::fingerprint::Fingerprint;

impl Db {
    /// A published document's stored method sketch (empty for the SimHash methods, which have none).
    pub(in crate::db) fn stored_sketch(&self, st: &State, id: u64) -> Vec<u64> {
        self.inner.sides.method.as_ref().and_then(|m| m.sketch(st, id)).unwrap_or_default()
    }

    /// Every pair of published documents `(a < b)` satisfying `rule`, each once, with its score,
    /// sorted (the method side of [`crate::pairs`]).
    pub(crate) fn method_pairs(&self, max_distance: u32, min_shared: Option<u32>) -> Result<Vec<(u64, u64, MethodScore)>> {
        let rule = self.inner.rule(Some(max_distance), min_shared)?;
        let side = self.inner.sides.method.as_ref();
        self.with_state(|st| {
            let mut ids: Vec<u64> = st.docs.keys().copied().collect();
            ids.sort_unstable();
            let mut out = Vec::new();
            for &a in &ids {
                let Some(meta) = st.docs.get(&a) else { continue };
                let fp = Fingerprint {
                    simhash: meta.simhash,
                    shingles: Vec::new(),
                    sketch: side.and_then(|m| m.sketch(st, a)).unwrap_or_default(),
                };
                let mut row = Vec::new();
                self.candidates(st, &fp, rule, |b, s| {
                    if b > a {
                        row.push((a, b, s));
                    }
                })?;
                row.sort_unstable_by_key(|r| r.1);
                out.extend(row);
            }
            Ok(out)
        })
    }
}
