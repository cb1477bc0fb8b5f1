//! method: the near-duplicate methods side by side on one labelled corpus (`fpdb eval --methods`),
//! in memory, no database: per method, the pairs its rule finds (its own index over every
//! document, each document queried against all of them), scored against
//!
//! * the **exact-Jaccard truth** — every pair whose shingle sets (the base spec's, word trigrams by
//!   default) have Jaccard ≥ `truth_t`, found by the exact join ([`super::jaccard_join`]); and
//! * the **labels** — every pair of labelled documents with the same label,
//!
//! both for the rule alone (the method as its paper ran it) and for the rule followed by fpdb's
//! exact Jaccard verification (≥ `verify_t`), with candidates per document, sketching µs per
//! document, the method's key+value bytes per document and query latency percentiles. It also runs
//! Henzinger's own analyses (precision by B-similarity, by C-similarity range, the combined
//! algorithm's threshold sweep) and Fan & Huang's (best F1 per number of lexicons, and the lexicons'
//! keep share).
//!
//! **Bytes per document** are the raw key and value bytes of the method's own RocksDB entries:
//! SimHash tables `8 + 16·m` (the doc record's SimHash and one 16-byte key per table); a sketch
//! `8 + 8·words` (key and value) plus 18 bytes per bucket entry; weighted-simhash adds its IDF
//! table spread over the documents. RocksDB's per-entry overhead and the shingle segments (the same
//! for every method) are not counted; a durable database of the bucket methods keeps the SimHash
//! tables too (`8 + 16·m` more).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::{jaccard_join, svg_line_plot, Confusion, Scored};
use crate::db::auto_tables;
use crate::fingerprint::method::{LexiconParams, Method};
use crate::fingerprint::similarity::{jaccard, MethodScore, Rule};
use crate::fingerprint::spec::FingerprintSpec;
use crate::fingerprint::weighted::IdfTable;
use crate::fingerprint::{Fingerprint, Fingerprinter};
use crate::index::layout::Layout;
use crate::index::mem::MemTables;
use crate::index::method::{search, BucketIndex, MemBuckets, MethodIndex};

// The report's Markdown and SVG rendering.
mod render;

/// One document of the corpus.
#[derive(Clone, Debug)]
pub struct CorpusDoc {
    /// Key (reports only).
    pub key: String,
    /// Label: documents with equal labels are "the same document" for the label truth.
    pub label: Option<String>,
    /// Text.
    pub text: String,
}

/// What to compare.
#[derive(Clone, Debug)]
pub struct MethodsOptions {
    /// The base spec: its shingles define the Jaccard truth and the verification.
    pub spec: FingerprintSpec,
    /// Truth: exact Jaccard ≥ this.
    pub truth_t: f64,
    /// Verification: exact Jaccard ≥ this.
    pub verify_t: f64,
    /// The methods and each one's k (differing bits; ignored by broder).
    pub methods: Vec<(Method, u32)>,
    /// Run Henzinger's and Fan & Huang's analyses too.
    pub analyses: bool,
}

/// The names `--methods all` stands for, with each method's default k.
pub fn all_methods(idf: Arc<IdfTable>) -> Vec<(Method, u32)> {
    let mut v: Vec<Method> = ["simhash", "broder", "charikar", "broder-charikar", "multi-lexicon"]
        .iter()
        .filter_map(|n| n.parse().ok())
        .collect();
    v.insert(4, Method::weighted(idf));
    v.into_iter()
        .map(|m| {
            let k = m.default_max_distance();
            (m, k)
        })
        .collect()
}

/// One method's row.
#[derive(Clone, Debug, Serialize)]
pub struct MethodRow {
    /// The method with its parameters.
    pub method: String,
    /// k (differing bits) where the method has one.
    pub k: Option<u32>,
    /// The rule alone against the Jaccard truth.
    pub rule: Scored,
    /// The rule, then exact Jaccard ≥ verify_t, against the Jaccard truth.
    pub verified: Scored,
    /// The rule alone against the labels.
    pub labels_rule: Option<Scored>,
    /// The rule and the verification against the labels.
    pub labels_verified: Option<Scored>,
    /// Pairs the rule finds.
    pub pairs: u64,
    /// Documents a query gets from the rule (what the Jaccard verifier then reads), mean.
    pub candidates_per_doc: f64,
    /// Fingerprinting (normalize, shingles, SimHash, sketch), µs per document.
    pub sketch_us_per_doc: f64,
    /// Key and value bytes of the method's entries per document (module docs).
    pub bytes_per_doc: f64,
    /// Query latency (index probe + the rule, in memory), median µs.
    pub query_p50_us: f64,
    /// Query latency, 99th percentile µs.
    pub query_p99_us: f64,
}

/// One row of a paper analysis: the pairs in a bucket and their precision.
#[derive(Clone, Debug, Serialize)]
pub struct Bucket {
    /// The bucket (a B-similarity, a C-similarity range, a threshold).
    pub label: String,
    /// Pairs in it.
    pub pairs: u64,
    /// Precision against the Jaccard truth.
    pub precision: f64,
    /// Precision against the labels (pairs with both documents labelled).
    pub label_precision: Option<f64>,
    /// For the combined sweep: correct pairs kept / correct pairs of Algorithm B (Henzinger's R),
    /// against the Jaccard truth.
    pub r: Option<f64>,
    /// The same against the labels.
    pub label_r: Option<f64>,
}

/// Fan & Huang's Table 1 row: the best F1 over k for a number of lexicons (or a keep share).
#[derive(Clone, Debug, Serialize)]
pub struct LexiconRow {
    /// Lexicons L.
    pub lexicons: u32,
    /// Keep share, ‰.
    pub keep_permille: u32,
    /// The k of the best F1 against the Jaccard truth, and its scores.
    pub best_k: u32,
    /// Scores at `best_k`.
    pub best: Scored,
    /// The best F1 against the labels, and its k.
    pub label_best: Option<(u32, Scored)>,
}

/// The comparison.
#[derive(Clone, Debug, Serialize)]
pub struct MethodsReport {
    /// Documents.
    pub docs: usize,
    /// The base spec.
    pub spec: String,
    /// Truth threshold.
    pub truth_t: f64,
    /// Verification threshold.
    pub verify_t: f64,
    /// Pairs with Jaccard ≥ truth_t.
    pub true_pairs: u64,
    /// Pairs of labelled documents with the same label (`None` without labels).
    pub label_pairs: Option<u64>,
    /// One row per method.
    pub rows: Vec<MethodRow>,
    /// Henzinger's Table 2: Algorithm B's pairs by B-similarity.
    pub broder_by_b: Vec<Bucket>,
    /// Henzinger's Table 5: Algorithm C's pairs by C-similarity range.
    pub charikar_by_c: Vec<Bucket>,
    /// Henzinger's Table 11: B's pairs kept at C-similarity ≥ 351..359.
    pub combined_sweep: Vec<Bucket>,
    /// Fan & Huang's Table 1: best F1 per lexicon count 1..10.
    pub lexicon_best: Vec<LexiconRow>,
    /// The keep share at L = 5.
    pub keep_sweep: Vec<LexiconRow>,
    /// Seconds for the whole comparison.
    pub seconds: f64,
}

/// Pair key `i << 32 | j`, `i < j`.
#[inline]
fn pk(i: u32, j: u32) -> u64 {
    (u64::from(i.min(j)) << 32) | u64::from(i.max(j))
}

struct Truth<'a> {
    pairs: HashSet<u64>,
    labels: Vec<Option<u32>>,
    label_pairs: Option<u64>,
    shingles: &'a [Vec<u32>],
}

impl Truth<'_> {
    fn is_true(&self, i: u32, j: u32) -> bool {
        self.pairs.contains(&pk(i, j))
    }
    /// `Some(same label)` when both are labelled.
    fn same_label(&self, i: u32, j: u32) -> Option<bool> {
        match (self.labels[i as usize], self.labels[j as usize]) {
            (Some(a), Some(b)) => Some(a == b),
            _ => None,
        }
    }
    fn verified(&self, i: u32, j: u32, t: f64) -> bool {
        jaccard(&self.shingles[i as usize], &self.shingles[j as usize]).jaccard >= t
    }
    /// Scores of a set of predicted pairs (each once).
    fn score(&self, pairs: impl Iterator<Item = (u32, u32)> + Clone) -> (Scored, Option<Scored>) {
        let (mut c, mut l) = (Confusion::default(), Confusion::default());
        for (i, j) in pairs {
            if self.is_true(i, j) {
                c.tp += 1;
            } else {
                c.fp += 1;
            }
            match self.same_label(i, j) {
                Some(true) => l.tp += 1,
                Some(false) => l.fp += 1,
                None => {}
            }
        }
        c.fn_ = self.pairs.len() as u64 - c.tp;
        let labels = self.label_pairs.map(|n| {
            l.fn_ = n - l.tp;
            l.into()
        });
        (c.into(), labels)
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// The fingerprints of every document under `spec`, and the seconds it took.
fn fingerprints(spec: &FingerprintSpec, docs: &[CorpusDoc]) -> (Vec<Fingerprint>, f64) {
    let mut fpr = Fingerprinter::new(spec.clone());
    let t0 = Instant::now();
    let fps: Vec<Fingerprint> = docs.iter().map(|d| fpr.fingerprint(&d.text)).collect();
    (fps, t0.elapsed().as_secs_f64())
}

/// Every pair `(i < j)` satisfying `rule` under `method`, with its score, and each document's query
/// time (µs) against an index of all documents.
fn rule_pairs(method: &Method, fps: &[Fingerprint], rule: Rule) -> (Vec<(u32, u32, MethodScore)>, Vec<f64>) {
    let tables = auto_tables(rule.max_distance.min(32));
    let mut out = Vec::new();
    let mut times = Vec::with_capacity(fps.len());
    match MethodIndex::new(method, tables) {
        None => {
            let layout = Layout::new(tables).unwrap_or_else(|| unreachable!("auto_tables gives 1..=32"));
            let t = MemTables::from_entries(layout, fps.iter().enumerate().map(|(i, f)| (f.simhash, i as u64)));
            for (i, f) in fps.iter().enumerate() {
                let t0 = Instant::now();
                let mut row = Vec::new();
                t.probe(f.simhash, rule.max_distance, |id, _, d| {
                    if id > i as u64 {
                        row.push((i as u32, id as u32, MethodScore::Hamming(d)));
                    }
                });
                times.push(t0.elapsed().as_secs_f64() * 1e6);
                out.extend(row);
            }
        }
        Some(mi) => {
            let mut b = MemBuckets::new(mi.clone());
            for (i, f) in fps.iter().enumerate() {
                b.insert(i as u64, &f.sketch);
            }
            let n = fps.len() as u64;
            for (i, f) in fps.iter().enumerate() {
                let t0 = Instant::now();
                let mut row = Vec::new();
                let r = search(
                    &mi,
                    &b,
                    &f.sketch,
                    rule,
                    n,
                    |id| fps.get(id as usize).map(|f| f.sketch.as_slice()),
                    0..n,
                    |id, s| {
                        if id > i as u64 {
                            row.push((i as u32, id as u32, s));
                        }
                    },
                );
                // The in-memory buckets cannot fail.
                debug_assert!(r.is_ok());
                times.push(t0.elapsed().as_secs_f64() * 1e6);
                out.extend(row);
            }
        }
    }
    (out, times)
}

/// Key and value bytes of the method's entries for one document (module docs).
fn bytes_per_doc(method: &Method, k: u32, fps: &[Fingerprint]) -> f64 {
    let m = auto_tables(k.min(32));
    let tables = f64::from(8 + 16 * m);
    let n = fps.len().max(1) as f64;
    match MethodIndex::new(method, m) {
        None => tables + method.idf().map_or(0.0, |t| t.encode().len() as f64 / n),
        Some(mi) => {
            let entries: usize = fps
                .iter()
                .map(|f| {
                    let mut e = 0;
                    mi.entries(&f.sketch, &mut |_, _| e += 1);
                    e
                })
                .sum();
            (8 + 8 * method.sketch_words()) as f64 + 18.0 * entries as f64 / n
        }
    }
}

/// A bucket of pairs; `r`: the correct pairs of Algorithm B (against J, against the labels) for
/// Henzinger's R.
fn bucket(truth: &Truth, label: String, pairs: &[(u32, u32)], r: Option<(u64, Option<u64>)>) -> Bucket {
    let (s, l) = truth.score(pairs.iter().copied());
    let correct = s.counts.tp;
    let label_correct = l.map(|l| l.counts.tp);
    Bucket {
        label,
        pairs: pairs.len() as u64,
        precision: s.precision,
        label_precision: l.map(|l| l.precision),
        r: r.map(|(b, _)| if b == 0 { 1.0 } else { correct as f64 / b as f64 }),
        label_r: r.and_then(|(_, lb)| Some(label_correct? as f64 / lb?.max(1) as f64)),
    }
}

/// Fan & Huang's sweep: for each prefix of `lexicons` lexicons (L = 1..=lexicons, or only the last),
/// the best F1 over k = 0..=k_max.
fn lexicon_rows(
    base: &FingerprintSpec,
    docs: &[CorpusDoc],
    truth: &Truth,
    lexicons: u32,
    keep: u32,
    k_max: u32,
    all_l: bool,
) -> Vec<LexiconRow> {
    let method = Method::MultiLexicon(LexiconParams {
        lexicons,
        keep_permille: keep,
        shingle: 2,
    });
    let (fps, _) = fingerprints(&base.clone().with_method(method.clone()), docs);
    let ls: Vec<u32> = if all_l { (1..=lexicons).collect() } else { vec![lexicons] };
    let Some(h) = lexicon_histograms(&method, &fps, truth, lexicons, &ls, k_max) else {
        return Vec::new();
    };
    ls.iter()
        .enumerate()
        .map(|(li, &l)| {
            let (best_k, best) = best_f1(&h.all[li], &h.tru[li], truth.pairs.len() as u64);
            LexiconRow {
                lexicons: l,
                keep_permille: keep,
                best_k,
                best,
                label_best: truth.label_pairs.map(|n| best_f1(&h.lab_all[li], &h.lab_same[li], n)),
            }
        })
        .collect()
}

/// [`lexicon_rows`]' histograms: `x[L index][d]` counts the pairs whose best distance over the
/// first `ls[L index]` lexicons is `d` (≤ `k_max`); all of them, the true ones, the labelled ones
/// and those of the same label.
struct LexiconHistograms {
    all: Vec<Vec<u64>>,
    tru: Vec<Vec<u64>>,
    lab_all: Vec<Vec<u64>>,
    lab_same: Vec<Vec<u64>>,
}

/// Counts [`LexiconHistograms`] over the pairs the method index finds at `k_max` (`None`: no
/// index layout for `k_max`).
fn lexicon_histograms(
    method: &Method,
    fps: &[Fingerprint],
    truth: &Truth,
    lexicons: u32,
    ls: &[u32],
    k_max: u32,
) -> Option<LexiconHistograms> {
    let bins = k_max as usize + 1;
    let zero = vec![vec![0u64; bins]; ls.len()];
    let mut h = LexiconHistograms {
        all: zero.clone(),
        tru: zero.clone(),
        lab_all: zero.clone(),
        lab_same: zero,
    };
    // The index's probes, streamed: no score vector per pair (this sweep meets millions of pairs).
    let mi = MethodIndex::new(method, auto_tables(k_max))?;
    let mut b = MemBuckets::new(mi.clone());
    for (i, f) in fps.iter().enumerate() {
        b.insert(i as u64, &f.sketch);
    }
    let rule = Rule {
        max_distance: k_max,
        min_shared: 1,
    };
    let mut ids: Vec<u64> = Vec::new();
    for (i, f) in fps.iter().enumerate() {
        ids.clear();
        mi.probes(&f.sketch, rule, &mut |t, v| {
            let _ = b.bucket(t, v, &mut |id| {
                if id > i as u64 {
                    ids.push(id)
                }
            });
        });
        ids.sort_unstable();
        ids.dedup();
        let (qm, qf) = (f.sketch[0], &f.sketch[1..]);
        for &id in &ids {
            let (j, o) = (id as u32, &fps[id as usize].sketch);
            let both = qm & o[0];
            let (t, same) = (truth.is_true(i as u32, j), truth.same_label(i as u32, j));
            let mut best = u32::MAX;
            let mut li = 0;
            for lx in 0..lexicons as usize {
                if both >> lx & 1 == 1 {
                    best = best.min((qf[lx] ^ o[1 + lx]).count_ones());
                }
                if li < ls.len() && ls[li] as usize == lx + 1 {
                    if best <= k_max {
                        let b = best as usize;
                        h.all[li][b] += 1;
                        h.tru[li][b] += u64::from(t);
                        if let Some(same) = same {
                            h.lab_all[li][b] += 1;
                            h.lab_same[li][b] += u64::from(same);
                        }
                    }
                    li += 1;
                }
            }
        }
    }
    Some(h)
}

/// The best F1 over the thresholds k = 0.. of a histogram by distance (`all` pairs, `tru` of them
/// true, `n_true` true pairs in all), and its k.
fn best_f1(all: &[u64], tru: &[u64], n_true: u64) -> (u32, Scored) {
    let (mut a, mut t) = (0u64, 0u64);
    let mut best: Option<(u32, Scored)> = None;
    for k in 0..all.len() {
        a += all[k];
        t += tru[k];
        let s: Scored = Confusion {
            tp: t,
            fp: a - t,
            fn_: n_true - t,
        }
        .into();
        if best.as_ref().is_none_or(|b| s.f1 > b.1.f1) {
            best = Some((k as u32, s));
        }
    }
    best.unwrap_or((0, Confusion::default().into()))
}

/// Runs the comparison (see the module docs).
pub fn compare_methods(docs: &[CorpusDoc], opts: &MethodsOptions) -> MethodsReport {
    let started = Instant::now();
    let base = opts.spec.clone().with_method(Method::SimHash);
    let (base_fps, _) = fingerprints(&base, docs);
    let shingles: Vec<Vec<u32>> = base_fps.into_iter().map(|f| f.shingles).collect();
    let truth = truth_of(docs, &shingles, opts.truth_t);
    let rows = opts
        .methods
        .iter()
        .map(|(method, k)| method_row(&base, docs, &truth, method, *k, opts.verify_t))
        .collect();
    let (mut broder_by_b, mut charikar_by_c, mut combined_sweep, mut lexicon_best, mut keep_sweep) =
        (vec![], vec![], vec![], vec![], vec![]);
    if opts.analyses {
        (broder_by_b, combined_sweep) = paper_004_broder(&base, docs, &truth);
        charikar_by_c = paper_004_charikar(&base, docs, &truth);
        // Fan & Huang: best F1 per lexicon count (keep = the default share), and the keep share at L = 5.
        let keep = LexiconParams::default().keep_permille;
        lexicon_best = lexicon_rows(&base, docs, &truth, 10, keep, 12, true);
        for kp in [300, 500, 700, 900] {
            keep_sweep.extend(lexicon_rows(&base, docs, &truth, 5, kp, 12, false));
        }
    }
    MethodsReport {
        docs: docs.len(),
        spec: base.to_string(),
        truth_t: opts.truth_t,
        verify_t: opts.verify_t,
        true_pairs: truth.pairs.len() as u64,
        label_pairs: truth.label_pairs,
        rows,
        broder_by_b,
        charikar_by_c,
        combined_sweep,
        lexicon_best,
        keep_sweep,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// The truth of [`compare_methods`]: the pairs with exact Jaccard ≥ `truth_t` over `shingles`,
/// and the documents' labels (numbered in order of appearance) with the number of same-label pairs.
fn truth_of<'a>(docs: &[CorpusDoc], shingles: &'a [Vec<u32>], truth_t: f64) -> Truth<'a> {
    let sets: Vec<&[u32]> = shingles.iter().map(Vec::as_slice).collect();
    let pairs: HashSet<u64> = jaccard_join(&sets, truth_t).into_iter().map(|(i, j, _)| pk(i, j)).collect();
    let mut ids: HashMap<&str, u32> = HashMap::new();
    let labels: Vec<Option<u32>> = docs
        .iter()
        .map(|d| {
            d.label.as_deref().map(|l| {
                let n = ids.len() as u32;
                *ids.entry(l).or_insert(n)
            })
        })
        .collect();
    let mut per_label: HashMap<u32, u64> = HashMap::new();
    for l in labels.iter().flatten() {
        *per_label.entry(*l).or_insert(0) += 1;
    }
    let label_pairs = (per_label.values().sum::<u64>() >= 2).then(|| per_label.values().map(|c| c * (c - 1) / 2).sum());
    Truth {
        pairs,
        labels,
        label_pairs,
        shingles,
    }
}

/// One method's row of [`compare_methods`]: its rule's pairs at `k`, scored before and after
/// verification at `verify_t`, with its costs.
fn method_row(base: &FingerprintSpec, docs: &[CorpusDoc], truth: &Truth, method: &Method, k: u32, verify_t: f64) -> MethodRow {
    let spec = base.clone().with_method(method.clone());
    let (fps, secs) = fingerprints(&spec, docs);
    let min_shared = match method {
        Method::Broder(b) | Method::BroderCharikar(b, _) => b.min_shared,
        _ => 1,
    };
    let (found, mut times) = rule_pairs(
        method,
        &fps,
        Rule {
            max_distance: k,
            min_shared,
        },
    );
    times.sort_by(f64::total_cmp);
    let plain: Vec<(u32, u32)> = found.iter().map(|p| (p.0, p.1)).collect();
    let verified: Vec<(u32, u32)> = plain.iter().copied().filter(|&(i, j)| truth.verified(i, j, verify_t)).collect();
    let (rule, labels_rule) = truth.score(plain.iter().copied());
    let (ver, labels_verified) = truth.score(verified.iter().copied());
    MethodRow {
        method: method.to_string(),
        k: (!matches!(method, Method::Broder(_))).then_some(k),
        rule,
        verified: ver,
        labels_rule,
        labels_verified,
        pairs: plain.len() as u64,
        candidates_per_doc: 2.0 * plain.len() as f64 / docs.len().max(1) as f64,
        sketch_us_per_doc: secs * 1e6 / docs.len().max(1) as f64,
        bytes_per_doc: bytes_per_doc(method, k, &fps),
        query_p50_us: percentile(&times, 0.5),
        query_p99_us: percentile(&times, 0.99),
    }
}

/// Henzinger: Algorithm B's pairs (s = 2) by B-similarity, and the combined algorithm's sweep of
/// their C-similarity (from the combined sketch).
fn paper_004_broder(base: &FingerprintSpec, docs: &[CorpusDoc], truth: &Truth) -> (Vec<Bucket>, Vec<Bucket>) {
    let (mut broder_by_b, mut combined_sweep) = (vec![], vec![]);
    let comb = Method::BroderCharikar(Default::default(), Default::default());
    let (fps, _) = fingerprints(&base.clone().with_method(comb.clone()), docs);
    let (b_pairs, _) = rule_pairs(
        &comb,
        &fps,
        Rule {
            max_distance: 384,
            min_shared: 2,
        },
    );
    let scored: Vec<(u32, u32, u32, u32)> = b_pairs
        .iter()
        .filter_map(|(i, j, s)| match s {
            MethodScore::Combined { equal, agree, .. } => Some((*i, *j, *equal, *agree)),
            _ => None,
        })
        .collect();
    for b in 2..=6 {
        let p: Vec<(u32, u32)> = scored.iter().filter(|x| x.2 == b).map(|x| (x.0, x.1)).collect();
        broder_by_b.push(bucket(truth, format!("B = {b}"), &p, None));
    }
    let all_b: Vec<(u32, u32)> = scored.iter().map(|x| (x.0, x.1)).collect();
    broder_by_b.push(bucket(truth, "all (B ≥ 2)".into(), &all_b, None));
    let (sb, lb) = truth.score(all_b.iter().copied());
    for t in 351..=359u32 {
        let p: Vec<(u32, u32)> = scored.iter().filter(|x| x.3 >= t).map(|x| (x.0, x.1)).collect();
        combined_sweep.push(bucket(truth, format!("C ≥ {t}"), &p, Some((sb.counts.tp, lb.map(|l| l.counts.tp)))));
    }
    (broder_by_b, combined_sweep)
}

/// Henzinger: Algorithm C's pairs (k = 12) by the paper's C-similarity ranges.
fn paper_004_charikar(base: &FingerprintSpec, docs: &[CorpusDoc], truth: &Truth) -> Vec<Bucket> {
    let mut charikar_by_c = vec![];
    let ch: Method = Method::Charikar(Default::default());
    let (fps, _) = fingerprints(&base.clone().with_method(ch.clone()), docs);
    let (c_pairs, _) = rule_pairs(
        &ch,
        &fps,
        Rule {
            max_distance: 12,
            min_shared: 1,
        },
    );
    for (lo, hi) in [(372, 375), (376, 378), (379, 381), (382, 384)] {
        let p: Vec<(u32, u32)> = c_pairs
            .iter()
            .filter(|(_, _, s)| matches!(s, MethodScore::Projection { agree, .. } if (lo..=hi).contains(agree)))
            .map(|x| (x.0, x.1))
            .collect();
        charikar_by_c.push(bucket(truth, format!("{lo}–{hi}"), &p, None));
    }
    let all_c: Vec<(u32, u32)> = c_pairs.iter().map(|x| (x.0, x.1)).collect();
    charikar_by_c.push(bucket(truth, "all (≥ 372)".into(), &all_c, None));
    charikar_by_c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Vec<CorpusDoc> {
        let words: Vec<String> = (0..400).map(|i| format!("w{}", (i * 7919) % 1000)).collect();
        let mut docs = Vec::new();
        for b in 0..6 {
            let base: Vec<String> = words.iter().map(|w| format!("{w}x{b}")).collect();
            docs.push(CorpusDoc {
                key: format!("b{b}"),
                label: Some(format!("l{b}")),
                text: base.join(" "),
            });
            let mut copy = base.clone();
            copy[100] = "changed".into();
            docs.push(CorpusDoc {
                key: format!("c{b}"),
                label: Some(format!("l{b}")),
                text: copy.join(" "),
            });
        }
        docs
    }

    #[test]
    fn every_method_finds_the_planted_pairs_and_nothing_else() {
        let docs = corpus();
        let idf = Arc::new(IdfTable::from_texts(docs.iter().map(|d| d.text.as_str())));
        let opts = MethodsOptions {
            spec: FingerprintSpec::default(),
            truth_t: 0.9,
            verify_t: 0.9,
            methods: all_methods(idf),
            analyses: true,
        };
        let rep = compare_methods(&docs, &opts);
        assert_eq!(rep.true_pairs, 6);
        assert_eq!(rep.label_pairs, Some(6));
        assert_eq!(rep.rows.len(), 6);
        for r in &rep.rows {
            // Verified pairs are true by construction; a one-word edit keeps every pair under every
            // method (Broder's supershingles only with high probability: 5 of 6 at least here).
            let c = r.verified.counts;
            assert_eq!((c.fp, c.tp + c.fn_), (0, 6), "{}", r.method);
            assert!(c.tp >= if r.method.starts_with("broder") { 5 } else { 6 }, "{}: {c:?}", r.method);
            assert_eq!(r.labels_verified.unwrap().counts.tp, c.tp, "{}", r.method);
        }
        assert_eq!(rep.lexicon_best.len(), 10);
        assert_eq!(rep.combined_sweep.len(), 9);
        assert!(rep.to_markdown("test").contains("| simhash | 12 |"));
        assert_eq!(rep.svgs("t").len(), 2);
    }
}
