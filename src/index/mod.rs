//! Step 2 of the data path: the candidate index over fingerprints — multi-index hashing over
//! permuted SimHash blocks ([`layout`]), one search algorithm ([`probe`], [`probe_table`]) and the
//! [`TableIndex`] trait it runs on, with three implementations: the in-memory mirror
//! ([`mem::MemTables`]), the durable RocksDB tables ([`rocks::RocksTables`]) and the static
//! all-pairs tables ([`csr::CsrTables`]).
//!
//! **Pigeonhole (exact for every k).** With `r = ⌊k/m⌋` and `a = k − m·r`, any fingerprint within
//! distance `k` of the query has block `i` within distance `r` of the query's block `i` for some
//! `i ≤ a`, or within `r − 1` for some `i > a` (otherwise the distance would be at least
//! `(a+1)(r+1) + (m−a−1)·r = k+1`). A query therefore probes, in table `i`, every block value within
//! radius `r_i` (`r` for `i ≤ a`, `r − 1` after; tables with a negative radius are skipped) and keeps
//! the entries within `k`. `m = k+1` gives `r = 0`: exact block match, the classic layout. A candidate
//! is reported only from the first table in which it qualifies, so no set is needed to de-duplicate.
//! When the ball holds more block values than the index holds entries, a scan is cheaper and gives
//! the same result.
//!
//! Invariant: for every implementation, [`probe`] reports exactly the entries within `k`, each once
//! (one exactness suite runs over all three: `index/tests.rs`).

pub(crate) mod contain;
pub(crate) mod csr;
pub mod layout;
pub(crate) mod mem;
// The candidate index of the other methods (fingerprint/method.rs).
pub(crate) mod method;
pub(crate) mod rocks;
#[cfg(test)]
mod tests;
pub(crate) mod wide;

use crate::error::Result;
use crate::fingerprint::similarity::hamming;
pub use layout::{ball_size, for_each_neighbor, split_pays, Block, Layout, MAX_TABLES};

/// A set of `m` permuted tables over `(fingerprint, id)` entries: what the search needs from a
/// storage. Implementations differ only in where the entries live.
pub(crate) trait TableIndex {
    /// The block layout.
    fn layout(&self) -> &Layout;
    /// Number of entries (each entry is in every table).
    fn len(&self) -> u64;
    /// Calls `f(fp, id, distance)` for every entry of table `t` whose block `t` has one of `values`
    /// and whose fingerprint is within distance `k` of `q` (the implementation may reorder
    /// `values`, e.g. sort them for sequential seeks). The distance filter belongs to the storage so
    /// that in-memory ones can run it over contiguous fingerprints (`for_each_within`).
    fn buckets_within(&self, t: usize, values: &mut [u64], q: u64, k: u32, f: &mut impl FnMut(u64, u64, u32)) -> Result<()>;
    /// [`TableIndex::buckets_within`] for many queries at once: `probes` holds `(block value,
    /// query index)` pairs sorted by block value (a [`ProbeLists`] list, shared by the runs of one
    /// search); calls `f(query index, fp, id, distance)` for every entry of table `t` whose block
    /// is the probed value and whose fingerprint is within `k` of `qs[query index]`. The default
    /// runs the queries one after another; storages that can visit each bucket once for all the
    /// queries that probe it override it.
    fn buckets_within_many(
        &self,
        t: usize,
        probes: &[(u64, u32)],
        qs: &[u64],
        k: u32,
        f: &mut impl FnMut(usize, u64, u64, u32),
    ) -> Result<()> {
        one_query_at_a_time(self, t, probes, qs, k, f)
    }
    /// Calls `f(fp, id)` once for every entry.
    fn scan(&self, f: &mut impl FnMut(u64, u64)) -> Result<()>;
}

/// The part of a search that plan position `pos` contributes: entries within `k` of `q` in table
/// `plan[pos].0` (block within radius `plan[pos].1`) that no earlier table of the plan reports.
/// `values` is scratch space. Calls `f(id, fp, distance)`.
pub(crate) fn probe_table<T: TableIndex>(
    index: &T,
    plan: &[(usize, u32)],
    pos: usize,
    q: u64,
    k: u32,
    values: &mut Vec<u64>,
    f: &mut impl FnMut(u64, u64, u32),
) -> Result<()> {
    let layout = index.layout();
    let (t, r) = plan[pos];
    values.clear();
    for_each_neighbor(layout.block(t, q), layout.blocks()[t].width, r, &mut |v| values.push(v));
    index.buckets_within(t, values, q, k, &mut |fp, id, d| {
        if !layout.seen_earlier(plan, pos, fp, q) {
            f(id, fp, d);
        }
    })
}

/// [`TableIndex::buckets_within_many`] as one [`TableIndex::buckets_within`] per query, with all
/// of that query's probed values (`probes` in any order; grouped by query here, so a storage whose
/// buckets share ranges scans each range once per query).
pub(crate) fn one_query_at_a_time<T: TableIndex + ?Sized>(
    index: &T,
    t: usize,
    probes: &[(u64, u32)],
    qs: &[u64],
    k: u32,
    f: &mut impl FnMut(usize, u64, u64, u32),
) -> Result<()> {
    let mut by_query = probes.to_vec();
    by_query.sort_by_key(|p| p.1);
    let mut values = Vec::new();
    for run in by_query.chunk_by(|a, b| a.1 == b.1) {
        values.clear();
        values.extend(run.iter().map(|p| p.0));
        let i = run[0].1 as usize;
        index.buckets_within(t, &mut values, qs[i], k, &mut |fp, id, d| f(i, fp, id, d))?;
    }
    Ok(())
}

/// The bucket walk of a batched search ([`TableIndex::buckets_within_many`] of the CSR run and of
/// the mirror's delta): calls `visit(value, run)` once per distinct value of `probes` (sorted by
/// value), `run` being that value's `(value, query index)` probes. The storage then reads each
/// probed bucket once for all the queries that probe it, in ascending order, which the hardware
/// prefetcher follows.
pub(crate) fn for_each_probed_bucket(probes: &[(u64, u32)], mut visit: impl FnMut(u64, &[(u64, u32)])) {
    debug_assert!(probes.is_sorted_by_key(|p| p.0), "probes sorted by block value");
    for run in probes.chunk_by(|a, b| a.0 == b.0) {
        visit(run[0].0, run);
    }
}

/// Most queries [`probe_many`] sends to a storage together (their indices are `u32`; larger lists go
/// in parts).
const MAX_QUERIES_AT_ONCE: usize = 1 << 20;

/// [`probe`] for many queries at once: calls `f(query index, id, fp, distance)` exactly once for
/// every query `qs[i]` and every entry within distance `k` of it. Table by table, the probes of all
/// the queries go to the storage together ([`TableIndex::buckets_within_many`]), so a storage can
/// visit each bucket once for every query that probes it — the crawler loop's workers check a chunk
/// of documents this way. Same plan and first-qualifying-table rule as [`probe`], so the result is
/// the same, query by query.
pub(crate) fn probe_many<T: TableIndex>(index: &T, qs: &[u64], k: u32, f: &mut impl FnMut(usize, u64, u64, u32)) -> Result<()> {
    probe_many_lists(index, &mut ProbeLists::new(qs.to_vec(), k), f)
}

/// [`probe_many`] with probe lists that outlive the call ([`ProbeLists`]), so that several runs of
/// one index (the mirror's delta and its sealed runs, which share its layout) are searched with
/// one set of probe lists.
pub(crate) fn probe_many_lists<T: TableIndex>(index: &T, lists: &mut ProbeLists, f: &mut impl FnMut(usize, u64, u64, u32)) -> Result<()> {
    let layout = index.layout();
    let k = lists.k;
    for c in 0..lists.parts.len() {
        let base = c * MAX_QUERIES_AT_ONCE;
        let qs = &lists.qs[base..(base + MAX_QUERIES_AT_ONCE).min(lists.qs.len())];
        let mut f = |i: usize, id: u64, fp: u64, d: u32| f(base + i, id, fp, d);
        if qs.len() < 2 || layout.probes(k) > index.len() {
            // Few queries, or a ball larger than the index: one query at a time (a scan).
            for (i, &q) in qs.iter().enumerate() {
                probe(index, q, k, &mut |id, fp, d| f(i, id, fp, d))?;
            }
            continue;
        }
        let plan = layout.plan(k);
        let part = lists.parts[c].get_or_insert_with(|| build_probe_lists(layout, &plan, qs));
        for (pos, (&(t, _), probes)) in plan.iter().zip(part.iter()).enumerate() {
            index.buckets_within_many(t, probes, qs, k, &mut |i, fp, id, d| {
                if !layout.seen_earlier(&plan, pos, fp, qs[i]) {
                    f(i, id, fp, d);
                }
            })?;
        }
    }
    Ok(())
}

/// For each position of a plan, its `(block value, query index)` probes, sorted by value.
type PlanProbes = Vec<Vec<(u64, u32)>>;

/// The probes of a batched search ([`probe_many_lists`]) for a set of queries: for each part of at
/// most [`MAX_QUERIES_AT_ONCE`] queries and each position of the plan, the `(block value, query
/// index)` pairs sorted by block value. A part's lists are built when a run first needs them (never
/// when every run is answered by a scan) and kept for the next run: building and sorting them was
/// a fifth of the crawler loop's workers' time, paid twice per chunk while the mirror's delta and
/// its sealed runs each built their own.
/// The lists are built in the layout of the first index that needs them, so they serve only runs
/// of one layout.
pub(crate) struct ProbeLists {
    qs: Vec<u64>,
    k: u32,
    parts: Vec<Option<PlanProbes>>,
}

impl ProbeLists {
    /// Probe lists (not built yet) for the queries `qs` at distance `k`.
    pub(crate) fn new(qs: Vec<u64>, k: u32) -> Self {
        let parts = vec![None; qs.len().div_ceil(MAX_QUERIES_AT_ONCE)];
        ProbeLists { qs, k, parts }
    }
}

/// For each position of `plan`, every `(block value, query index)` probe of `qs`, sorted by value
/// (equal values in query order).
fn build_probe_lists(layout: &Layout, plan: &[(usize, u32)], qs: &[u64]) -> PlanProbes {
    plan.iter()
        .map(|&(t, r)| {
            let width = layout.blocks()[t].width;
            // The ball's offsets (a probe is the query's block XOR one of them), found once.
            let mut masks = Vec::new();
            for_each_neighbor(0, width, r, &mut |m| masks.push(m));
            let blocks = qs.iter().map(|&q| layout.block(t, q));
            if width > 16 || qs.len() * masks.len() < 64 {
                let mut probes: Vec<(u64, u32)> = Vec::new();
                for (i, b) in blocks.enumerate() {
                    probes.extend(masks.iter().map(|&m| (b ^ m, i as u32)));
                }
                probes.sort_by_key(|p| p.0);
                return probes;
            }
            // A counting sort fused with the generation: count every probe's value, then write
            // each probe straight to its sorted place.
            let mut counts = vec![0u32; (1usize << width) + 1];
            for b in blocks.clone() {
                for &m in &masks {
                    counts[(b ^ m) as usize + 1] += 1;
                }
            }
            for j in 1..counts.len() {
                counts[j] += counts[j - 1];
            }
            let mut probes = vec![(0u64, 0u32); qs.len() * masks.len()];
            for (i, b) in blocks.enumerate() {
                for &m in &masks {
                    let v = b ^ m;
                    let c = &mut counts[v as usize];
                    probes[*c as usize] = (v, i as u32);
                    *c += 1;
                }
            }
            probes
        })
        .collect()
}

/// [`probe`] with the probed buckets split across `threads` threads (the calling thread and
/// `threads − 1` pool threads): a k = 12 query at 10M documents and more streams megabytes of bucket
/// fingerprints, and one core's share of the memory bandwidth is what bounds it. The buckets of
/// every table of the plan are cut into `threads` parts of about equal expected entries; each part
/// runs the same filter as [`probe`] (a candidate is kept only in the first table of the plan
/// where it qualifies, a rule of the fingerprint alone), so every entry within `k` is reported
/// exactly once, in no particular order. `threads ≤ 1`, or a plan that [`probe`] answers by a scan,
/// is [`probe`] itself. The threads beyond the caller's come from a persistent pool
/// ([`query_pool`]); without one the parts run on the caller, one after another.
pub(crate) fn probe_split<T: TableIndex + Sync>(
    index: &T,
    q: u64,
    k: u32,
    threads: usize,
    f: &mut impl FnMut(u64, u64, u32),
) -> Result<()> {
    probe_split_on(index, q, k, threads, query_pool(), f)
}

/// [`probe_split`] with the parts beyond the caller's on `pool`, or all on the calling thread one
/// after another without one.
fn probe_split_on<T: TableIndex + Sync>(
    index: &T,
    q: u64,
    k: u32,
    threads: usize,
    pool: Option<&rayon_core::ThreadPool>,
    f: &mut impl FnMut(u64, u64, u32),
) -> Result<()> {
    let layout = index.layout();
    if threads <= 1 || layout.probes(k) > index.len() {
        return probe(index, q, k, f);
    }
    let plan = layout.plan(k);
    // Every probe as (plan position, block value), with its table's expected bucket size as weight.
    let mut probes: Vec<(usize, u64)> = Vec::new();
    let mut weights: Vec<f64> = Vec::new();
    for (pos, &(t, r)) in plan.iter().enumerate() {
        let width = layout.blocks()[t].width;
        let w = 1.0 / 2f64.powi(width as i32);
        for_each_neighbor(layout.block(t, q), width, r, &mut |v| {
            probes.push((pos, v));
            weights.push(w);
        });
    }
    let total: f64 = weights.iter().sum();
    let mut cuts = vec![0usize];
    let mut acc = 0.0;
    for (i, w) in weights.iter().enumerate() {
        acc += w;
        if acc >= total * cuts.len() as f64 / threads as f64 && cuts.len() < threads {
            cuts.push(i + 1);
        }
    }
    cuts.push(probes.len());
    let part = |probes: &[(usize, u64)]| -> Result<Vec<(u64, u64, u32)>> {
        let mut hits = Vec::new();
        let mut values = Vec::new();
        for run in probes.chunk_by(|a, b| a.0 == b.0) {
            let pos = run[0].0;
            values.clear();
            values.extend(run.iter().map(|p| p.1));
            index.buckets_within(plan[pos].0, &mut values, q, k, &mut |fp, id, d| {
                if !layout.seen_earlier(&plan, pos, fp, q) {
                    hits.push((id, fp, d));
                }
            })?;
        }
        Ok(hits)
    };
    let parts: Vec<&[(usize, u64)]> = cuts.windows(2).map(|c| &probes[c[0]..c[1]]).collect();
    let mut results: Vec<Result<Vec<(u64, u64, u32)>>> = parts.iter().map(|_| Ok(Vec::new())).collect();
    let (first, others) = results.split_first_mut().unwrap_or_else(|| unreachable!("threads ≥ 2 parts"));
    match pool {
        Some(pool) => pool.in_place_scope(|s| {
            for (slot, p) in others.iter_mut().zip(&parts[1..]) {
                let part = &part;
                s.spawn(move |_| *slot = part(p));
            }
            *first = part(parts[0]);
        }),
        None => {
            for (slot, p) in std::iter::once(first).chain(others.iter_mut()).zip(&parts) {
                *slot = part(p);
            }
        }
    }
    for r in results {
        for (id, fp, d) in r? {
            f(id, fp, d);
        }
    }
    Ok(())
}

/// The machine's cores (what `std::thread::available_parallelism` says, read once).
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `threads`, or one per core ([`cores`]) for 0: what every "0 = one per core" option resolves to.
pub(crate) fn threads_or_cores(threads: usize) -> usize {
    if threads == 0 {
        cores()
    } else {
        threads
    }
}

/// The threads that help a split query ([`probe_split`]): one process-wide pool, one thread per
/// core beyond the caller's, started on first use and idle (asleep) between queries. `None` where
/// the threads cannot be started, and in a child forked after they were (a fork copies the pool
/// but not its threads: work sent there would wait forever); the parts then run on the caller.
fn query_pool() -> Option<&'static rayon_core::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<(u32, rayon_core::ThreadPool)>> = std::sync::OnceLock::new();
    let (pid, pool) = POOL
        .get_or_init(|| {
            let n = cores().saturating_sub(1).max(1);
            rayon_core::ThreadPoolBuilder::new()
                .num_threads(n)
                .thread_name(|i| format!("fpdb-query-{i}"))
                .build()
                .ok()
                .map(|pool| (std::process::id(), pool))
        })
        .as_ref()?;
    (*pid == std::process::id()).then_some(pool)
}

/// Calls `f(id, fp, distance)` exactly once for every entry within distance `k` of `q`.
pub(crate) fn probe<T: TableIndex>(index: &T, q: u64, k: u32, f: &mut impl FnMut(u64, u64, u32)) -> Result<()> {
    let layout = index.layout();
    if layout.probes(k) > index.len() {
        return index.scan(&mut |fp, id| {
            let d = hamming(fp, q);
            if d <= k {
                f(id, fp, d);
            }
        });
    }
    let plan = layout.plan(k);
    let mut values = Vec::new();
    for pos in 0..plan.len() {
        probe_table(index, &plan, pos, q, k, &mut values, f)?;
    }
    Ok(())
}
