//! Batch all-pairs: every pair of stored documents within Hamming distance k (optionally verified by
//! Jaccard ≥ t), each pair once, plus the distribution tables of seed 000 and the duplicate groups.
//!
//! Fingerprints (16 bytes per document) are loaded into static in-memory tables: per block a
//! counting-sorted array with a direct offset index (CSR), using a layout chosen for the all-pairs
//! cost rather than the database's. Every document is probed against them in parallel; a pair is
//! emitted only by its smaller id, and only from the first table in which it qualifies.

use std::collections::BTreeMap;

use crate::db::{Db, MAX_DISTANCE};
use crate::error::{Error, Result};
use crate::simhash::hamming;
use crate::tables::{ball_size, for_each_neighbor, Layout};
use crate::verify::jaccard;

/// One pair (a < b by doc id).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Pair {
    /// Smaller doc id.
    pub a: u64,
    /// Larger doc id.
    pub b: u64,
    /// Hamming distance.
    pub hamming: u32,
    /// Exact Jaccard (when verified).
    pub jaccard: Option<f64>,
}

/// Static multi-index over a fixed fingerprint list.
pub struct PairIndex {
    layout: Layout,
    fps: Vec<u64>,
    /// Per table: offsets by block value (len 2^w + 1) and entry indices sorted by block value.
    tables: Vec<(Vec<u32>, Vec<u32>)>,
}

/// Largest block width indexed with a direct offset array.
const MAX_CSR_BITS: u32 = 24;

/// The table count minimizing the estimated all-pairs probe cost for `n` fingerprints at distance `k`.
pub fn pairs_layout(n: usize, k: u32) -> Layout {
    let mut best: Option<(f64, Layout)> = None;
    for m in 3..=32u32 {
        let Some(l) = Layout::new(m) else { continue };
        if l.blocks().iter().any(|b| b.width > MAX_CSR_BITS) {
            continue;
        }
        let cost: f64 = l
            .plan(k)
            .iter()
            .map(|&(i, r)| {
                let probes = ball_size(l.blocks()[i].width, r) as f64;
                probes * 4.0 + probes * n as f64 / (1u64 << l.blocks()[i].width) as f64
            })
            .sum();
        if best.as_ref().is_none_or(|(c, _)| cost < *c) {
            best = Some((cost, l));
        }
    }
    best.map(|b| b.1)
        .unwrap_or_else(|| Layout::new(32).unwrap_or_else(|| unreachable!("32 blocks is a valid layout")))
}

impl PairIndex {
    /// Builds the index over `fps` (index = position).
    pub fn new(fps: Vec<u64>, layout: Layout) -> Self {
        let tables = (0..layout.tables() as usize)
            .map(|i| {
                let w = layout.blocks()[i].width;
                let mut offsets = vec![0u32; (1usize << w) + 1];
                for &fp in &fps {
                    offsets[layout.block(i, fp) as usize + 1] += 1;
                }
                for j in 1..offsets.len() {
                    offsets[j] += offsets[j - 1];
                }
                let mut fill = offsets.clone();
                let mut entries = vec![0u32; fps.len()];
                for (idx, &fp) in fps.iter().enumerate() {
                    let b = layout.block(i, fp) as usize;
                    entries[fill[b] as usize] = idx as u32;
                    fill[b] += 1;
                }
                (offsets, entries)
            })
            .collect();
        PairIndex { layout, fps, tables }
    }

    /// Calls `f(j, distance)` for every indexed fingerprint within `k` of `q`, once each.
    pub fn probe(&self, q: u64, k: u32, mut f: impl FnMut(u32, u32)) {
        let plan = self.layout.plan(k);
        for (pos, &(i, r)) in plan.iter().enumerate() {
            self.probe_table(&plan, pos, i, r, q, k, &mut f);
        }
    }

    /// The part of [`PairIndex::probe`] that table `t` (at position `pos` of `plan`, radius `r`)
    /// contributes: entries within `k` of `q` that no earlier table of the plan reports.
    #[allow(clippy::too_many_arguments)]
    fn probe_table(&self, plan: &[(usize, u32)], pos: usize, t: usize, r: u32, q: u64, k: u32, mut f: impl FnMut(u32, u32)) {
        let (offsets, entries) = &self.tables[t];
        let w = self.layout.blocks()[t].width;
        for_each_neighbor(self.layout.block(t, q), w, r, &mut |v| {
            let (s, e) = (offsets[v as usize] as usize, offsets[v as usize + 1] as usize);
            for &j in &entries[s..e] {
                let fp = self.fps[j as usize];
                let d = hamming(fp, q);
                if d <= k && !self.layout.seen_earlier(plan, pos, fp, q) {
                    f(j, d);
                }
            }
        });
    }
}

/// All pairs of `fps` within `k` as index pairs `(i, j, distance)` with `i < j`, using `threads`.
///
/// A panic in a worker thread is re-raised in the caller (never a shorter result). `k` is not
/// checked here: [`pairs`] bounds it by [`MAX_DISTANCE`]; the probe cost grows with the Hamming ball.
///
/// Table by table (in probe-plan order), the queries run in the table's own block-value order — the
/// order of its CSR entries — so consecutive queries probe neighbouring offsets and buckets and the
/// caches are reused; a pair is kept from the first table in which it qualifies.
pub fn all_pairs_fps(fps: &[u64], k: u32, threads: usize) -> Vec<(u32, u32, u32)> {
    let index = PairIndex::new(fps.to_vec(), pairs_layout(fps.len(), k));
    let plan = index.layout.plan(k);
    let threads = threads.max(1);
    let chunk = fps.len().div_ceil(threads).max(1);
    let mut out: Vec<(u32, u32, u32)> = Vec::new();
    for (pos, &(t, r)) in plan.iter().enumerate() {
        let order = &index.tables[t].1;
        let found: Vec<(u32, u32, u32)> = std::thread::scope(|s| {
            let handles: Vec<_> = order
                .chunks(chunk)
                .map(|part| {
                    let (index, plan) = (&index, &plan);
                    s.spawn(move || {
                        crate::failpoint_panic!("pairs.worker");
                        let mut local = Vec::new();
                        for &i in part {
                            let q = index.fps[i as usize];
                            index.probe_table(plan, pos, t, r, q, k, |j, d| {
                                if i < j {
                                    local.push((i, j, d));
                                }
                            });
                        }
                        local
                    })
                })
                .collect();
            // Every worker's pairs, or the first worker's panic, re-raised here with its own payload:
            // a panic in this pure computation is a bug, and a shorter result would hide it.
            let mut found = Vec::new();
            for h in handles {
                match h.join() {
                    Ok(local) => found.extend(local),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            found
        });
        out.extend(found);
    }
    out.sort_unstable();
    out
}

/// Options of [`pairs`].
#[derive(Clone, Debug)]
pub struct PairsOptions {
    /// Maximum Hamming distance.
    pub max_distance: u32,
    /// Keep only pairs with Jaccard ≥ t (verifies every pair); `None` = Hamming only.
    pub min_jaccard: Option<f64>,
    /// Threads (0 = one per core).
    pub threads: usize,
}

/// A row of a distribution table.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct DistRow {
    /// Row label (a distance, or a Jaccard range).
    pub label: String,
    /// Pairs in the row.
    pub pairs: u64,
    /// Distinct documents in those pairs.
    pub docs: u64,
}

/// Pairs and their summaries.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct PairsReport {
    /// Documents considered.
    pub docs: u64,
    /// The pairs (a < b), sorted.
    pub pairs: Vec<Pair>,
    /// Pairs and distinct documents per Hamming distance 0..=k (seed 000, Table 1).
    pub by_hamming: Vec<DistRow>,
    /// Pairs and distinct documents per Jaccard range (seed 000, Table 2; verified pairs only).
    pub by_jaccard: Vec<DistRow>,
    /// Seconds spent in the Hamming search.
    pub hamming_seconds: f64,
    /// Seconds spent verifying Jaccard.
    pub verify_seconds: f64,
}

fn dist_row(label: String, pairs: &[&Pair]) -> DistRow {
    let mut docs: Vec<u64> = pairs.iter().flat_map(|p| [p.a, p.b]).collect();
    docs.sort_unstable();
    docs.dedup();
    DistRow {
        label,
        pairs: pairs.len() as u64,
        docs: docs.len() as u64,
    }
}

/// Every pair of stored documents within `k` (and Jaccard ≥ t when asked).
///
/// Errors: [`Error::InvalidOption`] when `k` exceeds [`MAX_DISTANCE`] or `t` is outside 0..=1 (the
/// same bounds as [`Db::query`]); [`Error::Corruption`] when a shingle set to verify is damaged. A
/// panicking worker thread (a bug) panics the caller with the worker's payload.
pub fn pairs(db: &Db, opts: &PairsOptions) -> Result<PairsReport> {
    if opts.max_distance > MAX_DISTANCE {
        return Err(Error::InvalidOption {
            name: "max_distance",
            message: format!("must be within 0..={MAX_DISTANCE}, got {}", opts.max_distance),
        });
    }
    if let Some(t) = opts.min_jaccard.filter(|t| !(0.0..=1.0).contains(t)) {
        return Err(Error::InvalidOption {
            name: "min_jaccard",
            message: format!("must be within 0.0..=1.0, got {t}"),
        });
    }
    let threads = if opts.threads == 0 {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    } else {
        opts.threads
    };
    let docs = db.fingerprints();
    let fps: Vec<u64> = docs.iter().map(|d| d.1).collect();
    let t0 = std::time::Instant::now();
    let raw = all_pairs_fps(&fps, opts.max_distance, threads);
    let hamming_seconds = t0.elapsed().as_secs_f64();
    let t1 = std::time::Instant::now();
    let mut out = Vec::with_capacity(raw.len());
    let mut cache: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (i, j, d) in raw {
        let (a, b) = (docs[i as usize].0, docs[j as usize].0);
        let jac = match opts.min_jaccard {
            None => None,
            Some(t) => {
                for x in [i, j] {
                    if let std::collections::btree_map::Entry::Vacant(e) = cache.entry(x) {
                        let id = docs[x as usize].0;
                        // `None`: deleted since the snapshot of fingerprints; such a pair is dropped
                        // below, never scored against an empty set.
                        if let Some(set) = db.shingles(id)? {
                            e.insert(set);
                        }
                    }
                }
                // Evict sets no later pair needs (pairs are sorted by i).
                while let Some((&first, _)) = cache.first_key_value() {
                    if first < i {
                        cache.pop_first();
                    } else {
                        break;
                    }
                }
                let jv = match (cache.get(&i), cache.get(&j)) {
                    (Some(a), Some(b)) => jaccard(a, b).jaccard,
                    _ => continue,
                };
                if jv < t {
                    continue;
                }
                Some(jv)
            }
        };
        out.push(Pair {
            a,
            b,
            hamming: d,
            jaccard: jac,
        });
    }
    let verify_seconds = t1.elapsed().as_secs_f64();
    let by_hamming = (0..=opts.max_distance)
        .map(|d| dist_row(d.to_string(), &out.iter().filter(|p| p.hamming == d).collect::<Vec<_>>()))
        .collect();
    let mut by_jaccard = Vec::new();
    if opts.min_jaccard.is_some() {
        let edges = [1.0001, 0.9, 0.8, 0.7, 0.6, 0.5, 0.0];
        for w in edges.windows(2) {
            let (hi, lo) = (w[0], w[1]);
            let rows: Vec<&Pair> = out.iter().filter(|p| p.jaccard.is_some_and(|j| j >= lo && j < hi)).collect();
            by_jaccard.push(dist_row(format!("{lo:.1}-{:.1}", hi.min(1.0)), &rows));
        }
    }
    Ok(PairsReport {
        docs: docs.len() as u64,
        pairs: out,
        by_hamming,
        by_jaccard,
        hamming_seconds,
        verify_seconds,
    })
}

/// Connected components of the pair graph: `(canonical id, members)` for components of ≥ 2 docs,
/// canonical = smallest (earliest) id, sorted by canonical.
pub fn groups(pairs: &[Pair]) -> Vec<(u64, Vec<u64>)> {
    let mut parent: BTreeMap<u64, u64> = BTreeMap::new();
    fn find(parent: &mut BTreeMap<u64, u64>, x: u64) -> u64 {
        let mut root = x;
        while let Some(&p) = parent.get(&root) {
            if p == root {
                break;
            }
            root = p;
        }
        let mut cur = x;
        while cur != root {
            let next = parent.get(&cur).copied().unwrap_or(root);
            parent.insert(cur, root);
            cur = next;
        }
        root
    }
    for p in pairs {
        parent.entry(p.a).or_insert(p.a);
        parent.entry(p.b).or_insert(p.b);
        let (ra, rb) = (find(&mut parent, p.a), find(&mut parent, p.b));
        if ra != rb {
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            parent.insert(hi, lo);
        }
    }
    let ids: Vec<u64> = parent.keys().copied().collect();
    let mut comps: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for id in ids {
        let r = find(&mut parent, id);
        comps.entry(r).or_default().push(id);
    }
    comps.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn all_pairs_equals_brute_force() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut fps: Vec<u64> = (0..400).map(|_| rng.gen()).collect();
        for i in 0..200 {
            let base = fps[i];
            let flips = rng.gen_range(0..12);
            let mut f = base;
            for _ in 0..flips {
                f ^= 1 << rng.gen_range(0..64);
            }
            fps.push(f);
        }
        for k in [0, 3, 8, 12] {
            let got = all_pairs_fps(&fps, k, 2);
            let mut want = Vec::new();
            for i in 0..fps.len() {
                for j in i + 1..fps.len() {
                    let d = hamming(fps[i], fps[j]);
                    if d <= k {
                        want.push((i as u32, j as u32, d));
                    }
                }
            }
            assert_eq!(got, want, "k = {k}");
        }
    }

    #[test]
    fn groups_are_components_with_smallest_canonical() {
        let p = |a, b| Pair {
            a,
            b,
            hamming: 0,
            jaccard: None,
        };
        let g = groups(&[p(5, 9), p(2, 9), p(3, 4)]);
        assert_eq!(g, vec![(2, vec![2, 5, 9]), (3, vec![3, 4])]);
    }
}
