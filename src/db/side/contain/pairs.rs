//! Every containment pair of the live documents (`fpdb pairs --containment`).

use crate::error::{Error, Result};
use crate::fingerprint::containment::{stored_keys, KeyKind};
use crate::fingerprint::similarity::containment_at_least;

use super::api::ContainmentIndex;
use super::contain_cfg;
use super::search::{contain_index, Candidates};
use crate::db::options::check_c;
use crate::db::types::ContainPair;

impl ContainmentIndex<'_> {
    /// Every pair of live documents with containment ≥ `c` in either direction, each once (a < b),
    /// using `threads` threads (0 = one per core). Each document is looked up with its stored set;
    /// a pair is reported by its smaller id, or — when the larger one is short and the smaller has
    /// samples, so that only the larger's search finds the smaller — by the larger. Refused without
    /// the index.
    pub fn pairs(&self, c: f64, threads: usize) -> Result<Vec<ContainPair>> {
        let c = check_c(c)?;
        let cfg = contain_cfg(&self.db.inner)?;
        let threads = crate::index::threads_or_cores(threads);
        let side = self.db.contain_side()?;
        self.db.read_rocks(|st| {
            let mem = side.mem();
            let mut ids: Vec<u64> = st.docs.keys().copied().collect();
            ids.sort_unstable();
            let index = contain_index(&self.db.inner, &mem, cfg)?;
            let short = &mem.short;
            let capped = cfg.max_samples.is_some();
            let chunk = ids.len().div_ceil(threads.max(1)).max(1);
            let parts: Result<Vec<Vec<ContainPair>>> = std::thread::scope(|s| {
                let handles: Vec<_> = ids
                    .chunks(chunk)
                    .map(|part| {
                        let index = &index;
                        s.spawn(move || -> Result<Vec<ContainPair>> {
                            let mut out = Vec::new();
                            for &x in part {
                                let Some(mx) = st.docs.get(&x) else { continue };
                                let set = st.segs.read(mx.loc, x)?;
                                let x_has_samples = stored_keys(&set, cfg.sampling()).0 == KeyKind::Sample;
                                let mut cands = Candidates::new(&set, cfg, c);
                                let found = index.candidates(&set, short, |y, kind, keys| cands.add(y, kind, keys))?;
                                // A candidate is short exactly when it was found through short keys.
                                let len_of = |y: u64| st.docs.get(&y).map(|m| m.loc.count as usize);
                                for (y, y_kind) in cands.passing(found.frequent, len_of) {
                                    let y_short = y_kind == KeyKind::Short;
                                    // With a sample cap, a set inside a capped one may share
                                    // none of its keys: the pair is then found from the capped
                                    // side only, so both sides report and the sort dedups.
                                    if y == x || !(y > x || (y_short && x_has_samples) || capped) {
                                        continue;
                                    }
                                    let Some(my) = st.docs.get(&y) else { continue };
                                    let other = st.segs.read(my.loc, y)?;
                                    if let Some(r) = containment_at_least(&set, &other, c) {
                                        let (a, b, a_in_b, b_in_a) = if x < y {
                                            (x, y, r.a_in_b, r.b_in_a)
                                        } else {
                                            (y, x, r.b_in_a, r.a_in_b)
                                        };
                                        out.push(ContainPair {
                                            a,
                                            b,
                                            a_in_b,
                                            b_in_a,
                                            jaccard: r.jaccard,
                                            shared: r.shared,
                                        });
                                    }
                                }
                            }
                            Ok(out)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|p| Err(Error::panicked("containment pairs worker", p.as_ref())))
                    })
                    .collect()
            });
            let mut pairs: Vec<ContainPair> = parts?.into_iter().flatten().collect();
            pairs.sort_by_key(|p| (p.a, p.b));
            pairs.dedup_by_key(|p| (p.a, p.b));
            Ok(pairs)
        })
    }
}
