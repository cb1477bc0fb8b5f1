//! Batch all-pairs: every pair of stored documents within Hamming distance k (optionally verified by
//! Jaccard ≥ t), each pair once, plus Zhang & Lu's distribution tables and the duplicate groups.
//!
//! Fingerprints (16 bytes per document) are loaded into static in-memory tables
//! ([`CsrTables`](crate::index::csr)), using a layout chosen for the all-pairs cost rather than the
//! database's. Every document is probed against them in parallel with the index's one search; a
//! pair is emitted only by its smaller id, and only from the first table in which it qualifies.

use std::collections::BTreeMap;

use crate::db::groups::components;
use crate::db::{Db, MAX_DISTANCE};
use crate::error::{Error, Result};
use crate::fingerprint::similarity::for_each_within_many;
use crate::fingerprint::similarity::{jaccard, MethodScore};
use crate::index::csr::{CsrTables, MAX_CSR_BITS};
use crate::index::{ball_size, for_each_neighbor, Layout, TableIndex};
use crate::intmap::IntMap;

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
    /// The method's own similarity (methods other than simhash and weighted-simhash;
    /// `hamming` is then its distance).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<MethodScore>,
}

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
    // Some layout of 3..=32 blocks always qualifies (32 blocks are 2 bits wide).
    best.map_or_else(
        || Layout::new(32).unwrap_or_else(|| unreachable!("32 blocks is a valid layout")),
        |b| b.1,
    )
}

/// All pairs of `fps` within `k` as index pairs `(i, j, distance)` with `i < j`, using `threads`.
///
/// A bucket join over the index's layout and probe plan: for each table of the plan and each of
/// its buckets `v`, every entry of `v` is compared with every entry of each bucket `u` within the
/// table's radius of `v` — the bucket `v` stays in the cache while its neighbours stream past, so
/// the cost is one memory access per bucket pair instead of one per (document, probe) as when each
/// document is queried on its own. The pairs are exactly those the index's search reports (the
/// same plan, the same `for_each_within` filter): a pair is kept once, from the first table of the
/// plan in which it qualifies (`Layout::seen_earlier`), by its smaller index. Workers take chunks
/// of buckets from a shared counter. A panicking worker ends the call with [`Error::Panicked`],
/// never a shorter result.
pub fn all_pairs_fps(fps: &[u64], k: u32, threads: usize) -> Result<Vec<(u32, u32, u32)>> {
    const CHUNK: u64 = 64;
    let index = CsrTables::new(fps.to_vec(), pairs_layout(fps.len(), k));
    let layout = index.layout();
    let plan = layout.plan(k);
    let threads = threads.max(1);
    let mut out: Vec<(u32, u32, u32)> = Vec::new();
    for pos in 0..plan.len() {
        let (t, r) = plan[pos];
        let width = layout.blocks()[t].width;
        let buckets = 1u64 << width;
        let next = std::sync::atomic::AtomicU64::new(0);
        let found: Result<Vec<Vec<(u32, u32, u32)>>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    let (index, plan, next) = (&index, &plan, &next);
                    s.spawn(move || -> Result<Vec<(u32, u32, u32)>> {
                        crate::failpoint::panic_point("pairs.worker");
                        let mut local = Vec::new();
                        let mut values = Vec::new();
                        loop {
                            let first = next.fetch_add(CHUNK, std::sync::atomic::Ordering::Relaxed);
                            if first >= buckets {
                                return Ok(local);
                            }
                            for v in first..(first + CHUNK).min(buckets) {
                                let (afps, aids) = index.bucket(t, v);
                                if afps.is_empty() {
                                    continue;
                                }
                                values.clear();
                                for_each_neighbor(v, width, r, &mut |u| values.push(u));
                                for &u in &values {
                                    let (bfps, bids) = index.bucket(t, u);
                                    let queries = afps.iter().zip(aids).map(|(&x, &i)| ((i, x), x));
                                    for_each_within_many(bfps, queries, k, |(i, x), j, d| {
                                        if i < bids[j] && !index.layout().seen_earlier(plan, pos, bfps[j], x) {
                                            local.push((i, bids[j], d));
                                        }
                                    });
                                }
                            }
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| Err(Error::panicked("pairs worker", p.as_ref()))))
                .collect()
        });
        out.extend(found?.into_iter().flatten());
    }
    out.sort_unstable();
    Ok(out)
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
    /// Fewest equal supershingles (broder, broder-charikar; default: the spec's).
    pub min_shared: Option<u32>,
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
    /// Pairs and distinct documents per Hamming distance 0..=k (Zhang & Lu's Table 1).
    pub by_hamming: Vec<DistRow>,
    /// Pairs and distinct documents per Jaccard range (Zhang & Lu's Table 2; verified pairs only).
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
/// same bounds as [`Db::query`]); [`Error::Corruption`] when a shingle set to verify is damaged;
/// [`Error::Panicked`] when a worker thread panics (a bug), never a shorter result.
pub fn pairs(db: &Db, opts: &PairsOptions) -> Result<PairsReport> {
    check_pairs_options(opts)?;
    let threads = crate::index::threads_or_cores(opts.threads);
    let docs = db.fingerprints();
    let fps: Vec<u64> = docs.iter().map(|d| d.1).collect();
    let t0 = std::time::Instant::now();
    let (raw, scores) = candidate_pairs(db, &docs, &fps, opts, threads)?;
    let hamming_seconds = t0.elapsed().as_secs_f64();
    let t1 = std::time::Instant::now();
    let out = verify_pairs(db, &docs, raw, scores, opts)?;
    let verify_seconds = t1.elapsed().as_secs_f64();
    let (by_hamming, by_jaccard) = distributions(&out, opts);
    Ok(PairsReport {
        docs: docs.len() as u64,
        pairs: out,
        by_hamming,
        by_jaccard,
        hamming_seconds,
        verify_seconds,
    })
}

/// A candidate pair: (index in the fingerprints, index in the fingerprints, Hamming distance).
type RawPair = (u32, u32, u32);

/// Refuses a `k` above [`MAX_DISTANCE`] or a `t` outside 0..=1 (the bounds of [`Db::query`]).
fn check_pairs_options(opts: &PairsOptions) -> Result<()> {
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
    Ok(())
}

/// The pairs within `k` as `(index in docs, index in docs, distance)`, sorted by the first, plus
/// each pair's score when the method's own index found them (empty for the SimHash tables).
fn candidate_pairs(
    db: &Db,
    docs: &[(u64, u64, u64)],
    fps: &[u64],
    opts: &PairsOptions,
    threads: usize,
) -> Result<(Vec<RawPair>, Vec<MethodScore>)> {
    // The other methods' pairs come from their index (every pair under the rule, once).
    let mut scores: Vec<MethodScore> = Vec::new();
    if db.spec().method.uses_simhash_tables() {
        return Ok((all_pairs_fps(fps, opts.max_distance, threads)?, scores));
    }
    let index_of = |id: u64| docs.binary_search_by_key(&id, |d| d.0).ok().map(|i| i as u32);
    let mut raw = Vec::new();
    for (a, b, s) in db.method_pairs(opts.max_distance, opts.min_shared)? {
        if let (Some(i), Some(j)) = (index_of(a), index_of(b)) {
            raw.push((i, j, s.distance()));
            scores.push(s);
        }
    }
    Ok((raw, scores))
}

/// The candidate pairs as [`Pair`]s, those under `min_jaccard` (when asked) left out.
fn verify_pairs(db: &Db, docs: &[(u64, u64, u64)], raw: Vec<RawPair>, scores: Vec<MethodScore>, opts: &PairsOptions) -> Result<Vec<Pair>> {
    let mut out = Vec::with_capacity(raw.len());
    let mut cache: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (n, (i, j, d)) in raw.into_iter().enumerate() {
        let (a, b) = (docs[i as usize].0, docs[j as usize].0);
        let jac = match opts.min_jaccard {
            None => None,
            Some(t) => {
                let jv = cached_jaccard(db, docs, &mut cache, i, j)?;
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
            score: scores.get(n).cloned(),
        });
    }
    Ok(out)
}

/// Jaccard of `docs[i]` and `docs[j]`, their shingle sets read once into `cache` and evicted when
/// no later pair needs them (pairs are sorted by `i`).
fn cached_jaccard(db: &Db, docs: &[(u64, u64, u64)], cache: &mut BTreeMap<u32, Vec<u32>>, i: u32, j: u32) -> Result<f64> {
    for x in [i, j] {
        if let std::collections::btree_map::Entry::Vacant(e) = cache.entry(x) {
            let id = docs[x as usize].0;
            // A document deleted since the fingerprints were read: say so, do not
            // compare against an empty set.
            let set = db.shingles(id)?.ok_or_else(|| Error::InvalidInput {
                key: db.key_of(id),
                message: format!("doc {id} was deleted while `pairs` ran; run it again"),
            })?;
            e.insert(set);
        }
    }
    let jv = jaccard(&cache[&i], &cache[&j]).jaccard;
    // Evict sets no later pair needs (pairs are sorted by i).
    while let Some((&first, _)) = cache.first_key_value() {
        if first < i {
            cache.pop_first();
        } else {
            break;
        }
    }
    Ok(jv)
}

/// The report's distributions: pairs and docs per Hamming distance (0..=max(k, largest found)),
/// and per Jaccard band when Jaccard was asked.
fn distributions(out: &[Pair], opts: &PairsOptions) -> (Vec<DistRow>, Vec<DistRow>) {
    let top = out.iter().map(|p| p.hamming).max().unwrap_or(0).max(opts.max_distance);
    let by_hamming = (0..=top)
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
    (by_hamming, by_jaccard)
}

/// Connected components of the pair graph: `(canonical id, members)` for components of ≥ 2 docs,
/// canonical = smallest (earliest) id, sorted by canonical. (The crate's one components routine.)
pub fn groups(pairs: &[Pair]) -> Vec<(u64, Vec<u64>)> {
    groups_of(pairs.iter().map(|p| (p.a, p.b)))
}

/// The duplicate groups of a pairs `report` as the database forms them (`fpdb pairs --groups`,
/// Python's `Db.pairs`): the components of the text pairs; in a database created with `--groups
/// union`, or when `semantic` asks (`Some((β, indexed))`: β, else the database's; the sign-code
/// index, else the exact scan), of the text pairs and the semantic pairs at cos ≥ β together.
pub fn report_groups(db: &Db, report: &PairsReport, semantic: Option<(Option<f32>, bool)>) -> Result<Vec<(u64, Vec<u64>)>> {
    #[cfg(feature = "semantic")]
    {
        use crate::semantic::{Groups, SearchMode};
        let union = db.semantic().spec().is_some_and(|s| s.groups == Groups::Union);
        let (beta, indexed) = match (semantic, union) {
            (Some(s), _) => s,
            (None, true) => (None, false),
            (None, false) => return Ok(db.decisions().groups(&text_edges(report))),
        };
        let mode = if indexed { SearchMode::Indexed } else { SearchMode::Exact };
        let semantic = db.semantic().pairs(beta, mode)?;
        let mut edges = text_edges(report);
        edges.extend(semantic.into_iter().map(|(a, b, _)| (a, b)));
        Ok(db.decisions().groups(&edges))
    }
    #[cfg(not(feature = "semantic"))]
    {
        match semantic {
            None => Ok(db.decisions().groups(&text_edges(report))),
            Some(_) => Err(Error::InvalidOption {
                name: "semantic",
                message: "this fpdb was built without the `semantic` feature; build it with `--features semantic`".into(),
            }),
        }
    }
}

/// The text pairs of a report as edges, best (highest Jaccard) first: the order in which the
/// groups under the curator decisions take them.
fn text_edges(report: &PairsReport) -> Vec<(u64, u64)> {
    let mut pairs: Vec<&Pair> = report.pairs.iter().collect();
    pairs.sort_by(|p, q| {
        q.jaccard
            .unwrap_or(0.0)
            .total_cmp(&p.jaccard.unwrap_or(0.0))
            .then((p.a, p.b).cmp(&(q.a, q.b)))
    });
    pairs.into_iter().map(|p| (p.a, p.b)).collect()
}

/// [`groups`] of an edge list.
fn groups_of(pairs: impl IntoIterator<Item = (u64, u64)>) -> Vec<(u64, Vec<u64>)> {
    let mut edges: IntMap<u64, Vec<u64>> = IntMap::default();
    for (a, b) in pairs {
        edges.entry(a).or_default().push(b);
        edges.entry(b).or_default().push(a);
    }
    let mut nodes: Vec<u64> = edges.keys().copied().collect();
    nodes.sort_unstable();
    components(&nodes, &edges).into_iter().map(|c| (c[0], c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::similarity::hamming;
    use rand::{Rng, SeedableRng};

    #[test]
    fn all_pairs_equals_brute_force() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut fps: Vec<u64> = (0..400).map(|_| rng.gen()).collect();
        // Exact repeats and a dense cluster: pairs inside one bucket and across its neighbours.
        let (f3, f5, f9) = (fps[3], fps[5], fps[9]);
        fps.extend([f3, f3, f5]);
        fps.extend((0..40).map(|b| f9 ^ (1u64 << b)));
        for i in 0..200 {
            let base = fps[i];
            let flips = rng.gen_range(0..12);
            let mut f = base;
            for _ in 0..flips {
                f ^= 1 << rng.gen_range(0..64);
            }
            fps.push(f);
        }
        for (k, threads) in [(0, 2), (3, 2), (8, 3), (12, 2), (12, 1), (16, 2)] {
            let got = all_pairs_fps(&fps, k, threads).unwrap();
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
            score: None,
        };
        let g = groups(&[p(5, 9), p(2, 9), p(3, 4)]);
        assert_eq!(g, vec![(2, vec![2, 5, 9]), (3, vec![3, 4])]);
    }
}
