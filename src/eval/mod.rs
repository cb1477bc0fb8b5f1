//! Evaluation of the near-duplicate decision rule against exact Jaccard truth.
//!
//! fpdb declares two documents near-duplicates when their SimHash fingerprints are within
//! Hamming distance `k` (the candidate step, answered by the permuted tables) **and** the exact
//! Jaccard similarity of their shingle sets is at least `t` (the verification step). This module
//! measures how well that rule recovers the pairs whose exact Jaccard similarity is at least a
//! *truth threshold*, over a grid of `k` and `t` — the experiment of Zhang & Lu (CiteSeerX),
//! Figures 1 (precision/recall vs `k`) and 3 (precision/recall vs `t` at `k = 8`).
//!
//! * [`jaccard_join`] finds **every** pair at Jaccard `>= t` exactly (prefix-filtered all-pairs
//!   join, seconds on ~40K documents), which is the ground truth.
//! * [`evaluate`] scores the rule on a `k × t` grid, plus the SimHash-only rule (`hamming <= k`,
//!   no verification) per `k`, the Hamming-distance histogram of the true pairs, and — when the
//!   documents carry labels — precision against "same label" as a second, independent truth.
//! * [`GridReport::to_markdown`], [`GridReport::svg_vs_k`], [`GridReport::svg_vs_t`] and
//!   [`svg_line_plot`] write the results for docs/; [`GridReport`] is also `serde::Serialize`.
//!
//! The module is self-contained (std, `serde`, `serde_json`): it takes shingle sets and SimHash
//! values computed elsewhere.
//!
//! # Conventions
//! * The Jaccard similarity of two empty sets is defined as **0** (not 1): documents with no
//!   shingles (shorter than one n-gram) carry no evidence and are never near-duplicates. More
//!   generally a pair sharing no shingle is never reported, even for `t <= 0`.
//! * Metrics with a zero denominator are defined in [`Confusion`].

mod join;
// The methods side by side (`fpdb eval --methods`).
pub mod methods;
mod report;
#[cfg(feature = "semantic")]
pub mod semantic;
mod svg;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::Instant;

pub use report::{DEFAULT_K, DEFAULT_T};
pub use svg::svg_line_plot;

/// Number of Hamming distances between two 64-bit fingerprints: `0..=64`.
pub const HAMMING_BINS: usize = 65;

/// One document as the evaluation sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvalDoc {
    /// External key (for reports and debugging only).
    pub key: String,
    /// Optional class label (e.g. licence id, source package); pairs with equal labels form the
    /// optional second truth.
    pub label: Option<String>,
    /// Shingle hashes, sorted ascending, unique.
    pub shingles: Vec<u32>,
    /// 64-bit SimHash fingerprint.
    pub simhash: u64,
}

/// Every pair `(i, j)`, `i < j`, of `sets` with exact Jaccard `>= t`, as `(i, j, jaccard)`
/// sorted by `(i, j)`. Exact: the same pairs an `O(n²)` loop over
/// [`jaccard`](crate::fingerprint::similarity::jaccard) would keep.
///
/// Pairs that share no element are never reported (so `t <= 0` means "any overlap", and empty
/// sets never match). `t > 1` or NaN gives no pairs. Sets should be sorted and unique; other
/// inputs are treated as the sets of their elements. Uses prefix filtering (see the `join`
/// submodule) on all available cores.
///
/// # Panics
/// If `sets.len() >= u32::MAX` (pair indices are `u32`) or the sets hold more than `u32::MAX`
/// elements in total.
pub fn jaccard_join(sets: &[&[u32]], t: f64) -> Vec<(u32, u32, f64)> {
    join::join_with_threads(sets, t, crate::index::cores())
}

/// Counts of a binary decision against a truth set.
///
/// Zero-denominator conventions (chosen so an empty prediction is never rewarded by F1):
/// * `precision()` with no predicted pairs (`tp + fp == 0`) is **1.0** — nothing predicted,
///   nothing wrong (the usual start of a precision/recall curve).
/// * `recall()` with no true pairs (`tp + fn == 0`) is **1.0** — nothing to find.
/// * `f1()` is `2tp / (2tp + fp + fn)`, which is **0.0** whenever `tp == 0` and something was
///   either predicted or missed, and **1.0** only in the fully vacuous case (all three zero).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confusion {
    /// Predicted and true.
    pub tp: u64,
    /// Predicted, not true.
    pub fp: u64,
    /// True, not predicted.
    #[serde(rename = "fn")]
    pub fn_: u64,
}

impl Confusion {
    /// `tp / (tp + fp)`; 1.0 when nothing was predicted.
    pub fn precision(&self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }

    /// `tp / (tp + fn)`; 1.0 when there is nothing to find.
    pub fn recall(&self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }

    /// `2tp / (2tp + fp + fn)` (the harmonic mean of precision and recall); 1.0 when all three
    /// counts are zero.
    pub fn f1(&self) -> f64 {
        let (num, den) = self.f1_fraction();
        num as f64 / den as f64
    }

    /// F1 as an exact fraction `(numerator, denominator)`, denominator > 0.
    fn f1_fraction(&self) -> (u128, u128) {
        let num = 2 * self.tp as u128;
        let den = num + self.fp as u128 + self.fn_ as u128;
        if den == 0 {
            (1, 1)
        } else {
            (num, den)
        }
    }

    /// Number of predicted pairs, `tp + fp`.
    pub fn predicted(&self) -> u64 {
        self.tp + self.fp
    }
}

fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        1.0
    } else {
        num as f64 / den as f64
    }
}

/// Counts plus their derived metrics (the metrics are stored so the JSON is self-describing).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Scored {
    /// The raw counts.
    #[serde(flatten)]
    pub counts: Confusion,
    /// [`Confusion::precision`].
    pub precision: f64,
    /// [`Confusion::recall`].
    pub recall: f64,
    /// [`Confusion::f1`].
    pub f1: f64,
}

impl From<Confusion> for Scored {
    fn from(c: Confusion) -> Self {
        Scored {
            counts: c,
            precision: c.precision(),
            recall: c.recall(),
            f1: c.f1(),
        }
    }
}

/// The SimHash-only rule at one `k`: predicted = every pair with `hamming <= k`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HammingRow {
    /// Hamming radius.
    pub k: u32,
    /// Number of document pairs (of all `n(n-1)/2`) within Hamming distance `k`.
    pub pairs_within_k: u64,
    /// Scores against the Jaccard truth.
    pub score: Scored,
}

/// The fpdb rule at one grid point: predicted = `hamming <= k && jaccard >= t`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GridCell {
    /// Hamming radius of the candidate step.
    pub k: u32,
    /// Jaccard threshold of the verification step.
    pub t: f64,
    /// Scores against the Jaccard truth.
    pub score: Scored,
}

/// Scores of the fpdb rule against the "same label" truth.
///
/// Only pairs whose two documents both carry a label take part: predicted pairs with an
/// unlabelled side are left out, and the truth is every pair of labelled documents with equal
/// labels (whatever their similarity — so recall here is only meaningful where a label really
/// means "the same text").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelReport {
    /// Documents with a label.
    pub labelled_docs: usize,
    /// Distinct labels.
    pub distinct_labels: usize,
    /// Pairs of labelled documents with the same label (the truth).
    pub same_label_pairs: u64,
    /// Pairs of labelled documents with equal label and exact Jaccard `>= truth_t`.
    pub same_label_true_pairs: u64,
    /// Jaccard-truth pairs (both labelled) whose labels differ: near-identical texts with
    /// different labels (hard negatives for a label classifier).
    pub different_label_true_pairs: u64,
    /// One cell per `(k, t)`, same order as [`GridReport::grid`].
    pub grid: Vec<GridCell>,
}

/// Wall-clock times of the evaluation steps, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Timings {
    /// [`jaccard_join`] at the lowest threshold.
    pub join_s: f64,
    /// Brute-force Hamming histogram over all `n(n-1)/2` pairs.
    pub hamming_s: f64,
    /// Whole [`evaluate`] call.
    pub total_s: f64,
}

/// Result of [`evaluate`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GridReport {
    /// Number of documents.
    pub n_docs: usize,
    /// `n(n-1)/2`.
    pub all_pairs: u64,
    /// Documents with an empty shingle set (they match nothing).
    pub empty_docs: usize,
    /// Truth: pairs with exact Jaccard `>= truth_t`.
    pub truth_t: f64,
    /// Number of true pairs.
    pub true_pairs: u64,
    /// Threshold of the single exact join everything is derived from (`min(ts ∪ {truth_t})`).
    pub join_t: f64,
    /// Pairs the join found at `join_t`.
    pub join_pairs: u64,
    /// Hamming radii evaluated (sorted, unique).
    pub ks: Vec<u32>,
    /// Jaccard thresholds evaluated (finite, sorted, unique).
    pub ts: Vec<f64>,
    /// `true_hamming_hist[d]`: true pairs at Hamming distance `d` (`0..=64`).
    pub true_hamming_hist: Vec<u64>,
    /// `all_hamming_hist[d]`: all document pairs at Hamming distance `d` (`0..=64`).
    pub all_hamming_hist: Vec<u64>,
    /// The SimHash-only rule, one row per `k`.
    pub hamming_only: Vec<HammingRow>,
    /// The fpdb rule, row-major: for each `k` (ascending), each `t` (ascending).
    pub grid: Vec<GridCell>,
    /// Grid point with the highest F1; ties go to the smaller `k`, then the larger `t`.
    /// `None` when the grid is empty.
    pub best: Option<GridCell>,
    /// Scores against the "same label" truth, when at least two documents are labelled.
    pub labels: Option<LabelReport>,
    /// Where the time went.
    pub timings: Timings,
}

impl GridReport {
    /// The grid cell at `(k, t)`, if both are in the grid (`t` compared exactly).
    pub fn cell(&self, k: u32, t: f64) -> Option<&GridCell> {
        self.grid.iter().find(|c| c.k == k && c.t == t)
    }

    /// The SimHash-only row at `k`, if `k` is in the grid.
    pub fn hamming_row(&self, k: u32) -> Option<&HammingRow> {
        self.hamming_only.iter().find(|r| r.k == k)
    }

    /// Serializes the report as pretty-printed JSON.
    pub fn to_json_pretty(&self) -> serde_json::Result<String> {
        serde_json::to_string_pretty(self)
    }
}

/// Scores the fpdb rule (`hamming(simhash) <= k && jaccard(shingles) >= t`) against the truth
/// "exact Jaccard `>= truth_t`", for every `k` in `ks` and `t` in `ts`; also the SimHash-only
/// rule per `k`, the Hamming histograms, the best operating point and (when documents carry
/// labels) the "same label" scores.
///
/// `ks` is sorted and deduplicated; `ts` is sorted and deduplicated with non-finite values
/// dropped. `k >= 64` accepts every pair. Cost: one [`jaccard_join`] at `min(ts ∪ {truth_t})`
/// plus an `O(n²)` popcount pass over the fingerprints (about a second for 40K documents).
///
/// # Panics
/// As [`jaccard_join`]: more than `u32::MAX - 1` documents or `u32::MAX` shingles in total.
pub fn evaluate(docs: &[EvalDoc], truth_t: f64, ks: &[u32], ts: &[f64]) -> GridReport {
    evaluate_with_threads(docs, truth_t, ks, ts, crate::index::cores())
}

/// Only the "same label" part of [`evaluate`] (`None` with fewer than two labelled documents).
/// Runs the same join, so it costs about as much as [`evaluate`] minus the `O(n²)` pass.
pub fn evaluate_labels(docs: &[EvalDoc], truth_t: f64, ks: &[u32], ts: &[f64]) -> Option<LabelReport> {
    let (ks, ts) = clean_grid(ks, ts);
    let join_t = join_threshold(truth_t, &ts);
    let sets: Vec<&[u32]> = docs.iter().map(|d| d.shingles.as_slice()).collect();
    let pairs = jaccard_join(&sets, join_t);
    label_report(docs, &pairs, truth_t, &ks, &ts)
}

fn clean_grid(ks: &[u32], ts: &[f64]) -> (Vec<u32>, Vec<f64>) {
    let mut ks = ks.to_vec();
    ks.sort_unstable();
    ks.dedup();
    let mut ts: Vec<f64> = ts.iter().copied().filter(|t| t.is_finite()).collect();
    ts.sort_by(f64::total_cmp);
    ts.dedup();
    (ks, ts)
}

/// The one join threshold everything derives from; `INFINITY` (no pairs) when nothing is valid.
fn join_threshold(truth_t: f64, ts: &[f64]) -> f64 {
    ts.iter()
        .copied()
        .chain(std::iter::once(truth_t))
        .filter(|t| !t.is_nan())
        .fold(f64::INFINITY, f64::min)
}

fn hamming(a: u64, b: u64) -> usize {
    crate::fingerprint::similarity::hamming(a, b) as usize
}

/// Pair counts bucketed by (number of grid thresholds the pair's Jaccard reaches, Hamming
/// distance): `buckets[m][d]`, `m` in `0..=ts.len()`. A pair with `m` reaches `ts[..m]`.
struct Buckets {
    counts: Vec<[u64; HAMMING_BINS]>,
}

impl Buckets {
    fn new(nt: usize) -> Self {
        Buckets {
            counts: vec![[0; HAMMING_BINS]; nt + 1],
        }
    }

    fn add(&mut self, m: usize, d: usize) {
        self.counts[m][d] += 1;
    }

    /// `out[t_idx][k]`: pairs with Jaccard `>= ts[t_idx]` and Hamming `<= k` for `k` in 0..=64.
    fn cumulative(&self, nt: usize) -> Vec<[u64; HAMMING_BINS]> {
        let mut out = vec![[0u64; HAMMING_BINS]; nt];
        // Suffix sums over m: thresholds reached by pairs with m > t_idx.
        let mut acc = [0u64; HAMMING_BINS];
        for ti in (0..nt).rev() {
            for (a, c) in acc.iter_mut().zip(&self.counts[ti + 1]) {
                *a += c;
            }
            let mut run = 0u64;
            for d in 0..HAMMING_BINS {
                run += acc[d];
                out[ti][d] = run;
            }
        }
        out
    }
}

fn cumulative(hist: &[u64]) -> Vec<u64> {
    hist.iter()
        .scan(0u64, |s, &x| {
            *s += x;
            Some(*s)
        })
        .collect()
}

fn k_bin(k: u32) -> usize {
    (k as usize).min(HAMMING_BINS - 1)
}

pub(crate) fn evaluate_with_threads(docs: &[EvalDoc], truth_t: f64, ks: &[u32], ts: &[f64], threads: usize) -> GridReport {
    let started = Instant::now();
    let n = docs.len();
    let (ks, ts) = clean_grid(ks, ts);
    let join_t = join_threshold(truth_t, &ts);

    let sets: Vec<&[u32]> = docs.iter().map(|d| d.shingles.as_slice()).collect();
    let t0 = Instant::now();
    let pairs = join::join_with_threads(&sets, join_t, threads);
    let join_s = t0.elapsed().as_secs_f64();

    let (true_hist, pred_all, pred_true) = bucket_pairs(docs, &pairs, truth_t, &ts);
    let true_pairs: u64 = true_hist.iter().sum();
    let true_cum = cumulative(&true_hist);

    let t1 = Instant::now();
    let simhashes: Vec<u64> = docs.iter().map(|d| d.simhash).collect();
    let all_hist = all_pairs_hamming_hist(&simhashes, threads);
    let hamming_s = t1.elapsed().as_secs_f64();
    let all_cum = cumulative(&all_hist);

    let hamming_only = hamming_rows(&ks, &all_cum, &true_cum, true_pairs);

    let grid = grid_cells(&ks, &ts, &pred_all, &pred_true, true_pairs);
    let best = best_cell(&grid);
    let labels = label_report(docs, &pairs, truth_t, &ks, &ts);

    GridReport {
        n_docs: n,
        all_pairs: all_pairs_count(n),
        empty_docs: docs.iter().filter(|d| d.shingles.is_empty()).count(),
        truth_t,
        true_pairs,
        join_t,
        join_pairs: pairs.len() as u64,
        ks,
        ts,
        true_hamming_hist: true_hist,
        all_hamming_hist: all_hist,
        hamming_only,
        grid,
        best,
        labels,
        timings: Timings {
            join_s,
            hamming_s,
            total_s: started.elapsed().as_secs_f64(),
        },
    }
}

/// Buckets the joined pairs by Hamming distance: the true pairs' histogram (Jaccard ≥ `truth_t`),
/// and every pair and the true ones by the count of thresholds of `ts` their Jaccard reaches.
fn bucket_pairs(docs: &[EvalDoc], pairs: &[(u32, u32, f64)], truth_t: f64, ts: &[f64]) -> (Vec<u64>, Buckets, Buckets) {
    let nt = ts.len();
    let mut true_hist = vec![0u64; HAMMING_BINS];
    let mut pred_all = Buckets::new(nt);
    let mut pred_true = Buckets::new(nt);
    for &(i, j, jac) in pairs {
        let d = hamming(docs[i as usize].simhash, docs[j as usize].simhash);
        let m = ts.partition_point(|&t| t <= jac);
        let is_true = jac >= truth_t;
        pred_all.add(m, d);
        if is_true {
            true_hist[d] += 1;
            pred_true.add(m, d);
        }
    }
    (true_hist, pred_all, pred_true)
}

/// Scores the Hamming test alone (`d <= k`) for each `k`, from the cumulative histograms of all
/// pairs and of the `true_pairs` true ones.
fn hamming_rows(ks: &[u32], all_cum: &[u64], true_cum: &[u64], true_pairs: u64) -> Vec<HammingRow> {
    ks.iter()
        .map(|&k| {
            let within = all_cum[k_bin(k)];
            let tp = true_cum[k_bin(k)];
            HammingRow {
                k,
                pairs_within_k: within,
                score: Confusion {
                    tp,
                    fp: within - tp,
                    fn_: true_pairs - tp,
                }
                .into(),
            }
        })
        .collect()
}

fn all_pairs_count(n: usize) -> u64 {
    let n = n as u64;
    n * n.saturating_sub(1) / 2
}

/// Scores every `(k, t)` from the bucketed predictions; `truth` is the number of true pairs.
fn grid_cells(ks: &[u32], ts: &[f64], pred_all: &Buckets, pred_true: &Buckets, truth: u64) -> Vec<GridCell> {
    let all = pred_all.cumulative(ts.len());
    let tru = pred_true.cumulative(ts.len());
    let mut grid = Vec::with_capacity(ks.len() * ts.len());
    for &k in ks {
        for (ti, &t) in ts.iter().enumerate() {
            let predicted = all[ti][k_bin(k)];
            let tp = tru[ti][k_bin(k)];
            grid.push(GridCell {
                k,
                t,
                score: Confusion {
                    tp,
                    fp: predicted - tp,
                    fn_: truth - tp,
                }
                .into(),
            });
        }
    }
    grid
}

/// Highest F1 (compared as exact fractions); ties: smaller `k`, then larger `t`.
fn best_cell(grid: &[GridCell]) -> Option<GridCell> {
    let mut best: Option<GridCell> = None;
    for c in grid {
        best = match best {
            None => Some(*c),
            Some(b) => {
                let (n1, d1) = c.score.counts.f1_fraction();
                let (n2, d2) = b.score.counts.f1_fraction();
                let (lhs, rhs) = (n1 * d2, n2 * d1);
                let better = lhs > rhs || (lhs == rhs && (c.k < b.k || (c.k == b.k && c.t > b.t)));
                if better {
                    Some(*c)
                } else {
                    Some(b)
                }
            }
        };
    }
    best
}

/// Histogram of the Hamming distances of all `n(n-1)/2` pairs (brute force, multithreaded).
pub(crate) fn all_pairs_hamming_hist(simhashes: &[u64], threads: usize) -> Vec<u64> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let n = simhashes.len();
    let next = AtomicUsize::new(0);
    // Rows are handed out in small chunks; row i costs n - i - 1, so chunks stay balanced.
    const ROWS: usize = 64;
    let worker = || {
        // Four interleaved histograms break the store-to-load dependency on repeated bins.
        let mut h = [[0u64; HAMMING_BINS]; 4];
        loop {
            let begin = next.fetch_add(ROWS, Ordering::Relaxed);
            if begin >= n {
                break;
            }
            for i in begin..(begin + ROWS).min(n) {
                let a = simhashes[i];
                let rest = &simhashes[i + 1..];
                let mut quads = rest.chunks_exact(4);
                for q in &mut quads {
                    h[0][hamming(a, q[0])] += 1;
                    h[1][hamming(a, q[1])] += 1;
                    h[2][hamming(a, q[2])] += 1;
                    h[3][hamming(a, q[3])] += 1;
                }
                for &b in quads.remainder() {
                    h[0][hamming(a, b)] += 1;
                }
            }
        }
        let mut out = [0u64; HAMMING_BINS];
        for part in &h {
            for (o, x) in out.iter_mut().zip(part) {
                *o += x;
            }
        }
        out
    };
    let mut total = vec![0u64; HAMMING_BINS];
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.max(1)).map(|_| scope.spawn(worker)).collect();
        for h in handles {
            match h.join() {
                Ok(part) => {
                    for (o, x) in total.iter_mut().zip(part.iter()) {
                        *o += x;
                    }
                }
                Err(e) => std::panic::resume_unwind(e),
            }
        }
    });
    total
}

/// The "same label" scores from the join's pairs (`None` with fewer than two labelled docs).
fn label_report(docs: &[EvalDoc], pairs: &[(u32, u32, f64)], truth_t: f64, ks: &[u32], ts: &[f64]) -> Option<LabelReport> {
    let mut groups: HashMap<&str, u64> = HashMap::new();
    for d in docs {
        if let Some(l) = &d.label {
            *groups.entry(l.as_str()).or_insert(0) += 1;
        }
    }
    let labelled_docs: u64 = groups.values().sum();
    if labelled_docs < 2 {
        return None;
    }
    let same_label_pairs: u64 = groups.values().map(|&c| c * (c - 1) / 2).sum();
    let nt = ts.len();
    let mut pred_all = Buckets::new(nt);
    let mut pred_same = Buckets::new(nt);
    let (mut same_true, mut diff_true) = (0u64, 0u64);
    for &(i, j, jac) in pairs {
        let (a, b) = (&docs[i as usize], &docs[j as usize]);
        let (Some(la), Some(lb)) = (&a.label, &b.label) else {
            continue;
        };
        let same = la == lb;
        if jac >= truth_t {
            if same {
                same_true += 1;
            } else {
                diff_true += 1;
            }
        }
        let d = hamming(a.simhash, b.simhash);
        let m = ts.partition_point(|&t| t <= jac);
        pred_all.add(m, d);
        if same {
            pred_same.add(m, d);
        }
    }
    Some(LabelReport {
        labelled_docs: labelled_docs as usize,
        distinct_labels: groups.len(),
        same_label_pairs,
        same_label_true_pairs: same_true,
        different_label_true_pairs: diff_true,
        grid: grid_cells(ks, ts, &pred_all, &pred_same, same_label_pairs),
    })
}
